//! Webhook deliveries, off the request path: a task takes the engine's due
//! tries (on a blocking thread: the engine's storage), sends each as an HTTP
//! `POST` with the Standard Webhooks headers, at most [`IN_FLIGHT`] at once
//! and each within [`TIMEOUT`], and records how each went (on a blocking
//! thread again). A slow or dead receiver holds one of the in-flight places
//! for at most [`TIMEOUT`]; a create never waits on it.
//!
//! A receiver's name is resolved here and each address checked: only public
//! addresses, unless private ones are allowed (a sandbox, or
//! `--webhook-allow-private`), so a name cannot lead a delivery into the
//! operator's network.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ach_core::engine::{Caller, Engine, Operation, Outcome, TryResult, WebhookAttempt};

use crate::writer::Writer;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_rustls::TlsConnector;
use tracing::{info, warn};

/// Most tries taken at once.
const BATCH: usize = 512;

/// Most tries in flight at once.
const IN_FLIGHT: usize = 256;

/// How long a receiver has to answer.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// How long the task waits when nothing was due.
const IDLE: Duration = Duration::from_millis(200);

/// Most bytes of an answer's body read (then the connection is dropped).
const ANSWER_BYTES: usize = 64 * 1024;

/// An HTTP/1.1 connection's sending half.
type Client = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// Most idle connections kept per receiver (scheme, host and port).
const IDLE_PER_RECEIVER: usize = IN_FLIGHT;

/// The sender's settings, and the connections kept alive between tries: a
/// new connection per delivery would run through the loopback's ports and
/// meet their TIME_WAIT (a second's SYN retry each) within a minute.
#[derive(Clone)]
pub struct Sender {
    tls: TlsConnector,
    allow_private: bool,
    idle: Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<Client>>>>,
}

impl Sender {
    /// An idle connection to `origin` still open, if any.
    fn idle(&self, origin: &str) -> Option<Client> {
        let mut idle = self.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let clients = idle.get_mut(origin)?;
        while let Some(client) = clients.pop() {
            if client.is_ready() {
                return Some(client);
            }
        }
        None
    }

    /// Keep `client` for the next try to `origin`.
    fn keep(&self, origin: String, client: Client) {
        let mut idle = self.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if idle.len() > 1024 {
            idle.clear();
        }
        let clients = idle.entry(origin).or_default();
        if clients.len() < IDLE_PER_RECEIVER {
            clients.push(client);
        }
    }
}

impl Sender {
    /// A sender that checks receivers' certificates against Mozilla's roots.
    pub fn new(allow_private: bool) -> Sender {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        let config =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map(|b| b.with_root_certificates(roots).with_no_client_auth());
        let config = match config {
            Ok(c) => c,
            Err(e) => {
                warn!(error = %e, "webhook TLS configuration failed; https receivers will fail");
                rustls::ClientConfig::builder()
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_no_client_auth()
            }
        };
        Sender { tls: TlsConnector::from(Arc::new(config)), allow_private, idle: Arc::default() }
    }
}

/// Deliver until `stop` turns true. Taking and recording go through the
/// writer, in the group commits the requests share (their own write
/// transactions would wait for the store between the writer's).
pub async fn run(
    engine: Arc<Engine>,
    writer: Writer,
    sender: Sender,
    metrics: crate::metrics::Shared,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        if *stop.borrow() {
            return;
        }
        let began = std::time::Instant::now();
        let take = Operation::TakeWebhooks { most: BATCH, timestamp: chrono::Utc::now().timestamp() };
        let attempts = match writer.execute(Caller::Operator, engine.prepare(take)).await {
            Ok(Outcome::WebhookAttempts { attempts }) => attempts,
            Ok(_) => Vec::new(),
            Err(e) => {
                warn!(error = %e, "webhook deliveries could not be taken; retrying");
                Vec::new()
            }
        };
        if attempts.is_empty() {
            metrics.webhooks(&[]);
            tokio::select! {
                _ = tokio::time::sleep(IDLE) => {}
                _ = stop.changed() => return,
            }
            continue;
        }
        let taken = began.elapsed();
        let results = send_all(&sender, attempts).await;
        metrics.webhooks(&results);
        let sent = began.elapsed();
        let delivered =
            results.iter().filter(|(_, _, r)| matches!(r, TryResult::Answered(200..=299))).count();
        let tries = results.len();
        let record = Operation::RecordWebhooks { results };
        if let Err(e) = writer.execute(Caller::Operator, engine.prepare(record)).await {
            warn!(error = %e, "webhook results could not be recorded; they will be tried again");
        }
        info!(
            tries,
            delivered,
            take_ms = taken.as_millis(),
            send_ms = (sent - taken).as_millis(),
            record_ms = (began.elapsed() - sent).as_millis(),
            "webhook deliveries"
        );
    }
}

/// Send every attempt, at most [`IN_FLIGHT`] at once.
async fn send_all(sender: &Sender, attempts: Vec<WebhookAttempt>) -> Vec<(String, String, TryResult)> {
    let mut results = Vec::with_capacity(attempts.len());
    let mut running = tokio::task::JoinSet::new();
    for a in attempts {
        while running.len() >= IN_FLIGHT {
            if let Some(Ok(done)) = running.join_next().await {
                results.push(done);
            }
        }
        let sender = sender.clone();
        crate::tasks::spawn_in(&mut running, async move {
            let result = match tokio::time::timeout(TIMEOUT, send(&sender, &a)).await {
                Ok(result) => result,
                Err(_) => TryResult::NoAnswer(format!("no answer within {} s", TIMEOUT.as_secs())),
            };
            (a.endpoint_id, a.delivery_id, result)
        });
    }
    while let Some(done) = running.join_next().await {
        if let Ok(done) = done {
            results.push(done);
        }
    }
    results
}

/// One try: its answer's status, or why there was none.
async fn send(sender: &Sender, a: &WebhookAttempt) -> TryResult {
    match try_send(sender, a).await {
        Ok(status) => TryResult::Answered(status),
        Err(why) => TryResult::NoAnswer(why),
    }
}

async fn try_send(sender: &Sender, a: &WebhookAttempt) -> Result<u16, String> {
    let uri: hyper::Uri = a.url.parse().map_err(|e| format!("the URL is not one: {e}"))?;
    let https = uri.scheme_str() == Some("https");
    let host =
        uri.host().ok_or("the URL has no host")?.trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let authority = uri.authority().map_or(host.clone(), |a| a.to_string());
    let request = hyper::Request::builder()
        .method("POST")
        .uri(path)
        .header("host", authority)
        .header("content-type", "application/json")
        .header("user-agent", concat!("achd/", env!("CARGO_PKG_VERSION"), " (webhooks)"))
        .header("webhook-id", &a.delivery_id)
        .header("webhook-timestamp", a.timestamp.to_string())
        .header("webhook-signature", &a.signature)
        .body(Full::new(Bytes::from(a.body.clone())))
        .map_err(|e| e.to_string())?;
    // A kept-alive connection to the same scheme, host and port, if one is idle.
    let origin = format!("{}://{host}:{port}", if https { "https" } else { "http" });
    let mut client = match sender.idle(&origin) {
        Some(client) => client,
        None => connect(sender, &host, port, https).await?,
    };
    let answer = client.send_request(request).await.map_err(|e| format!("HTTP failed: {e}"))?;
    let status = answer.status().as_u16();
    let mut body = answer.into_body();
    let mut read = 0;
    let mut whole = false;
    while read < ANSWER_BYTES {
        match body.frame().await {
            Some(Ok(frame)) => read += frame.data_ref().map_or(0, |d| d.len()),
            Some(Err(_)) => break,
            None => {
                whole = true;
                break;
            }
        }
    }
    if whole {
        sender.keep(origin, client);
    }
    Ok(status)
}

/// A new HTTP/1.1 connection to `host:port` (TLS for `https`), to a public
/// address unless private ones are allowed.
async fn connect(sender: &Sender, host: &str, port: u16, https: bool) -> Result<Client, String> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("{host} does not resolve: {e}"))?
        .collect();
    let addr = addrs
        .into_iter()
        .find(|a| sender.allow_private || ach_core::engine::is_public_address(a.ip()))
        .ok_or_else(|| format!("{host} resolves to no public address"))?;
    let tcp = TcpStream::connect(addr).await.map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    if https {
        let name =
            rustls::pki_types::ServerName::try_from(host.to_owned()).map_err(|e| format!("{host}: {e}"))?;
        let tls = sender.tls.connect(name, tcp).await.map_err(|e| format!("TLS with {host} failed: {e}"))?;
        handshake(TokioIo::new(tls)).await
    } else {
        handshake(TokioIo::new(tcp)).await
    }
}

/// HTTP/1.1 over `io`, its connection driven by a task of its own (which
/// ends when the connection closes or its client is dropped).
async fn handshake<T>(io: TokioIo<T>) -> Result<Client, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (client, connection) =
        hyper::client::conn::http1::handshake(io).await.map_err(|e| format!("HTTP failed: {e}"))?;
    crate::tasks::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}
