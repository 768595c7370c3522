//! The two listeners of `achd serve` (the public API and the operator plane):
//! accept TCP, complete TLS within its timeout, serve HTTP/1.1 on each
//! connection under the connection limits, run the clock's ticker, and on a
//! signal stop accepting and let the requests in flight finish.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tracing::{debug, error, info, warn};

use ach_core::engine::Engine;

use crate::connections::{ConnectionLimits, ConnectionSlots};
use crate::http::App;
use crate::logging::say;
use crate::shutdown::Signals;
use crate::write_timeout::WriteTimeout;
use crate::{http, logging};

/// Time to complete the TLS handshake after connecting.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Time to send a request's headers (and the longest an idle keep-alive
/// connection stays open).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long shutdown waits for requests in flight.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// One warning per this interval at most for a failing `accept`.
const ACCEPT_WARNINGS: Duration = Duration::from_secs(10);
/// How often production runs the cut-offs and settlements due.
const TICK: Duration = Duration::from_secs(5);

/// The send buffer of a connection (Linux doubles it for its bookkeeping):
/// what the kernel may hold of answers a client does not read, per connection.
const SEND_BUFFER: usize = 128 * 1024;

/// Accept TLS connections on the public address and the operator plane's (each
/// with its [`App`]) until a signal, then shut down gracefully.
pub(crate) async fn listen_and_serve(
    [(app, listen), (admin, admin_listen)]: [(Arc<App>, SocketAddr); 2],
    config: Arc<rustls::ServerConfig>,
    (sandbox, webhooks_private): (bool, bool),
    limits: ConnectionLimits,
) -> Result<(), String> {
    // Signals first: a SIGTERM right after the "listening" line is a clean stop.
    let mut signals = Signals::install().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let bind = |addr: SocketAddr| async move {
        let listener = TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| format!("cannot read the bound address: {e}"))?;
        Ok::<_, String>((listener, local))
    };
    let (admin_listener, admin_local) = bind(admin_listen).await?;
    let (listener, local) = bind(listen).await?;
    let (stop_ticker, stopped) = watch::channel(false);
    let ticker = (!sandbox).then(|| {
        crate::tasks::spawn(tick(Arc::clone(&app.engine), Arc::clone(&app.metrics), stopped.clone()))
    });
    let sender = crate::webhooks::Sender::new(webhooks_private);
    let deliveries = crate::tasks::spawn(crate::webhooks::run(
        Arc::clone(&app.engine),
        app.writer.clone(),
        sender,
        Arc::clone(&app.metrics),
        stopped.clone(),
    ));
    info!(address = %admin_local, "operator plane listening");
    say(&format!("operator plane on https://{admin_local}"));
    if let Some(why) = beyond_loopback(admin_local) {
        warn!(address = %admin_local, "{why}");
        say(&format!("warning: {why} ({admin_local})"));
    }
    info!(address = %local, sandbox, "listening");
    say(&format!("listening on https://{local}"));

    let acceptor = TlsAcceptor::from(config);
    // The operator plane has a pool of its own: no number of public
    // connections keeps the operator from reaching `/admin`.
    let mut public = Plane::new("public", ConnectionSlots::new(limits));
    let mut operator = Plane::new("operator", ConnectionSlots::new(limits.operator_plane()));
    let signal = loop {
        tokio::select! {
            signal = signals.next() => break signal,
            accepted = listener.accept() => {
                serve_accepted(accepted, &mut public, &acceptor, &app, limits, &stopped).await;
            }
            accepted = admin_listener.accept() => {
                serve_accepted(accepted, &mut operator, &acceptor, &admin, limits, &stopped).await;
            }
        }
    };
    info!(signal, "shutting down: no new connections; finishing the requests in flight");
    drop(listener);
    drop(admin_listener);
    let _ = stop_ticker.send(true);
    tokio::select! {
        finished = tokio::time::timeout(SHUTDOWN_GRACE, async { public.slots.all_closed().await; operator.slots.all_closed().await }) => {
            if finished.is_err() {
                warn!("requests still in flight after {} s: closing them", SHUTDOWN_GRACE.as_secs());
            }
        }
        again = signals.next() => warn!(signal = again, "second signal: closing the connections now"),
    }
    if let Some(ticker) = ticker {
        let _ = ticker.await;
    }
    // A delivery in flight is recorded by no one: it is due again after its
    // lease, with the same webhook-id.
    deliveries.abort();
    drop(app);
    drop(admin);
    Ok(())
}

/// One listener's connection pool and its throttled warnings.
struct Plane {
    name: &'static str,
    slots: Arc<ConnectionSlots>,
    refusals: logging::Throttle,
    accept_failures: logging::Throttle,
}

impl Plane {
    fn new(name: &'static str, slots: Arc<ConnectionSlots>) -> Plane {
        let throttle = || logging::Throttle::new(ACCEPT_WARNINGS);
        Plane { name, slots, refusals: throttle(), accept_failures: throttle() }
    }
}

/// Serve an accepted connection with `app` if a slot is free for it in its
/// plane's pool (the connection cap and the per-client cap); a refusal is
/// logged as a warning, at most one line per interval with the count left out.
async fn serve_accepted(
    accepted: std::io::Result<(TcpStream, SocketAddr)>,
    plane: &mut Plane,
    acceptor: &TlsAcceptor,
    app: &Arc<App>,
    limits: ConnectionLimits,
    stopped: &watch::Receiver<bool>,
) {
    match accepted {
        Ok((tcp, peer)) => {
            let ticket = match plane.slots.take(peer.ip()) {
                Ok(ticket) => ticket,
                Err(refusal) => {
                    if let Some(suppressed) = plane.refusals.allow(Instant::now()) {
                        warn!(%peer, plane = plane.name, suppressed, "{refusal}: connection closed");
                    }
                    return;
                }
            };
            let serving = connection(tcp, peer, acceptor.clone(), Arc::clone(app), limits, stopped.clone());
            crate::tasks::spawn(async move {
                serving.await;
                drop(ticket);
            });
        }
        Err(e) => {
            // Out of file descriptors and the like: do not spin, and do not
            // flood the log.
            if let Some(suppressed) = plane.accept_failures.allow(Instant::now()) {
                warn!(error = %e, plane = plane.name, suppressed, "accept failed");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// One connection: the TLS handshake, then HTTP/1.1 serving `app` until the client
/// leaves, a timeout, the end of its lifetime, or graceful shutdown (`stop`).
async fn connection(
    tcp: TcpStream,
    peer: SocketAddr,
    acceptor: TlsAcceptor,
    app: Arc<App>,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) {
    let end_of_life = tokio::time::Instant::now() + limits.lifetime;
    let _ = tcp.set_nodelay(true);
    // The kernel holds at most this much of an answer its client does not
    // take (autotuned, it would grow to megabytes per connection).
    let _ = socket2::SockRef::from(&tcp).set_send_buffer_size(SEND_BUFFER);
    let tcp = WriteTimeout::new(tcp, limits.write_timeout);
    let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            debug!(%peer, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let service = service_fn(move |request| {
        let app = Arc::clone(&app);
        async move { Ok::<_, Infallible>(http::handle(app, peer, request).await) }
    });
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    // Until the connection ends, its lifetime is over, or the server stops.
    let grace = tokio::select! {
        ended = conn.as_mut() => {
            if let Err(e) = ended {
                debug!(%peer, error = %e, cause = %root_cause(&e), "connection closed with an error");
            }
            return;
        }
        () = tokio::time::sleep_until(end_of_life) => limits.write_timeout,
        _ = stop.wait_for(|stop| *stop) => SHUTDOWN_GRACE,
    };
    // Idle: closed now; busy: the request in flight is answered (with
    // `Connection: close`) within the grace, else the connection is dropped.
    conn.as_mut().graceful_shutdown();
    match tokio::time::timeout(grace, conn).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => debug!(%peer, error = %e, cause = %root_cause(&e), "connection closed with an error"),
        Err(_) => debug!(%peer, "connection still busy after its grace: closed"),
    }
}

/// The innermost error under `e` (hyper's own says only which step failed).
fn root_cause<'e>(e: &'e (dyn std::error::Error + 'static)) -> &'e (dyn std::error::Error + 'static) {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause
}

/// Production: run the cut-offs and settlements due by the wall clock every few
/// seconds (requests also run them before their own operation).
async fn tick(engine: Arc<Engine>, metrics: crate::metrics::Shared, mut stop: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = interval.tick() => {}
            _ = stop.changed() => return,
        }
        let engine = Arc::clone(&engine);
        let started = std::time::Instant::now();
        let advanced = tokio::task::spawn_blocking(move || {
            let now = engine.now();
            engine.advance_to(now)
        })
        .await;
        match advanced {
            Ok(Ok(progress)) if progress.originated + progress.settled > 0 => {
                metrics.cutoff(progress.originated, progress.settled, started.elapsed());
                info!(originated = progress.originated, settled = progress.settled, "cut-off and settlement");
            }
            Ok(Ok(_)) => {}
            Ok(Err(failure)) => warn!(error = %failure, "cut-off and settlement failed; retrying"),
            Err(e) => error!(error = %e, "cut-off and settlement panicked; retrying"),
        }
    }
}

/// Why the operator plane's address deserves a warning, if it does: it is
/// not a loopback address, so others may reach it and try the operator key.
fn beyond_loopback(addr: SocketAddr) -> Option<&'static str> {
    let ip = match addr.ip() {
        std::net::IpAddr::V6(v6) => {
            v6.to_ipv4_mapped().map_or(std::net::IpAddr::V6(v6), std::net::IpAddr::V4)
        }
        v4 => v4,
    };
    (!ip.is_loopback())
        .then_some("the operator plane listens beyond loopback: anyone who reaches this address may try the operator key")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_operator_plane_beyond_loopback_is_warned_of() {
        let warned = |addr: &str| beyond_loopback(addr.parse().unwrap()).is_some();
        for quiet in ["127.0.0.1:8444", "127.0.0.2:8444", "[::1]:8444", "[::ffff:127.0.0.1]:8444"] {
            assert!(!warned(quiet), "{quiet}");
        }
        for loud in ["0.0.0.0:8444", "10.0.0.5:8444", "[::]:8444", "[2001:db8::1]:8444"] {
            assert!(warned(loud), "{loud}");
        }
    }
}
