//! The hyper client: a keep-alive HTTP/1.1 connection over verified TLS.

use std::sync::Arc;

use base64::Engine as _;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// A client configuration that trusts exactly the certificates in `pem` (full
/// verification, rustls with the ring provider).
pub fn connector(pem: &[u8]) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        roots.add(cert.unwrap()).unwrap();
    }
    let config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

/// The `Authorization` value for an API key: Basic, the key as the user name.
pub fn basic_auth(key: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{key}:")))
}

/// One HTTP/1.1 keep-alive connection (and one to the operator plane, if any,
/// for `/admin/*`, opened at its first use).
pub struct Conn {
    sender: SendRequest<Full<Bytes>>,
    host: String,
    admin: Admin,
}

/// The operator plane's connection of a [`Conn`].
enum Admin {
    /// None: every path goes to the one connection.
    None,
    /// Not opened yet: the TLS configuration and address to open it with.
    Later(TlsConnector, std::net::SocketAddr),
    /// Open.
    Open(Box<Conn>),
}

/// An answer read whole.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// Its `Content-Type` (empty if none).
    pub content_type: String,
    /// Every header.
    pub headers: hyper::HeaderMap,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON; panics with the body if it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl Conn {
    /// The HTTP/1.1 handshake on a TLS stream; `host` goes in every `Host`.
    pub(crate) async fn handshake(stream: TlsStream<TcpStream>, host: String) -> Result<Conn, String> {
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        Ok(Conn { sender, host, admin: Admin::None })
    }

    /// The operator plane's connection, opened now if it was left for later.
    async fn admin(&mut self) -> Result<Option<&mut Conn>, String> {
        if let Admin::Later(tls, addr) = &self.admin {
            let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
            tcp.set_nodelay(true).map_err(|e| e.to_string())?;
            let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
            let stream = tls.connect(name, tcp).await.map_err(|e| e.to_string())?;
            self.admin = Admin::Open(Box::new(Box::pin(Conn::handshake(stream, addr.to_string())).await?));
        }
        Ok(match &mut self.admin {
            Admin::Open(conn) => Some(conn),
            _ => None,
        })
    }

    /// This connection, with `/admin/*` sent over a connection to `addr`
    /// (the operator plane), opened at its first use.
    pub(crate) fn with_admin(mut self, tls: TlsConnector, addr: std::net::SocketAddr) -> Conn {
        self.admin = Admin::Later(tls, addr);
        self
    }

    /// One request (`key` as the Basic-auth user name; a body sent as
    /// [`crate::body_type`] unless `headers` name a `Content-Type`); the whole
    /// answer, or why the connection failed.
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Answer, String> {
        if path.starts_with("/admin") {
            if let Some(admin) = self.admin().await? {
                return Box::pin(admin.send(method, path, key, headers, body)).await;
            }
        }
        let mut request = hyper::Request::builder().method(method).uri(path).header("host", &self.host);
        if let Some(key) = key {
            request = request.header("authorization", basic_auth(key));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if !body.is_empty() && !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("content-type")) {
            request = request.header("content-type", crate::raw::body_type(path.as_bytes()));
        }
        let request = request.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
        self.sender.ready().await.map_err(|e| e.to_string())?;
        let response = self.sender.send_request(request).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let content_type =
            headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes().to_vec();
        Ok(Answer { status, content_type, headers, body })
    }

    /// A JSON request; asserts the answer is JSON with `Content-Type:
    /// application/json`. Its status and body.
    pub async fn call(
        &mut self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let answer = self.send(method, path, key, &[], body).await.unwrap();
        assert_eq!(answer.content_type, "application/json", "{method} {path}");
        (answer.status, answer.json())
    }

    /// A JSON request made with `key` that must answer `expect`; the answer's
    /// JSON. Panics, naming the request and the answer, on any other status.
    pub async fn expect(
        &mut self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<Value>,
        expect: u16,
    ) -> Value {
        let (status, answer) = self.call(method, path, Some(key), body).await;
        assert_eq!(status, expect, "{method} {path}: {answer}");
        answer
    }
}
