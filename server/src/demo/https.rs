//! The tour's transport for `achd demo`: a sandbox `achd serve` child process on a
//! temporary directory, and one HTTPS connection to it that trusts only the
//! certificate the server generated.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

use super::tour::{Api, Call};

/// The server child process and its directory; both go away on drop.
pub struct Sandbox {
    child: Child,
    /// The server's data directory.
    pub dir: PathBuf,
    /// Where it listens (`127.0.0.1:PORT`).
    pub address: String,
    /// Where its operator plane listens (`127.0.0.1:PORT`).
    pub admin_address: String,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Sandbox {
    /// Start `achd serve --sandbox` with its clock at `start`.
    pub fn start(start: DateTime<Utc>) -> Result<Sandbox, String> {
        let dir = std::env::temp_dir().join(format!("achd-demo-{}", ach_core::ids::random_alphanumeric(10)));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut child = Command::new(exe)
            .args(["serve", "--sandbox", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
            .arg("--sandbox-start")
            .arg(start.to_rfc3339())
            .arg("--data")
            .arg(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the server: {e}"))?;
        let stdout = child.stdout.take().ok_or("no server output")?;
        let (mut address, mut admin) = (None, None);
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| e.to_string())?;
            if let Some(a) = line.strip_prefix("operator plane on https://") {
                admin = Some(a.trim().to_owned());
            } else if let Some(a) = line.strip_prefix("listening on https://") {
                address = Some(a.trim().to_owned());
                break;
            }
        }
        let mut sandbox = Sandbox { child, dir, address: String::new(), admin_address: String::new() };
        sandbox.address = address.ok_or("the server did not start")?;
        sandbox.admin_address = admin.ok_or("the server did not start its operator plane")?;
        Ok(sandbox)
    }
}

/// Two HTTPS connections to the sandbox (the public API, and the operator
/// plane for `/admin/*`), driven by their own single-threaded runtime.
pub struct Client {
    runtime: tokio::runtime::Runtime,
    send: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    admin: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    operator: String,
}

impl Client {
    /// Connect to `sandbox`.
    pub fn connect(sandbox: &Sandbox) -> Result<Client, String> {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        let send = runtime.block_on(handshake(sandbox, &sandbox.address))?;
        let admin = runtime.block_on(handshake(sandbox, &sandbox.admin_address))?;
        let operator =
            std::fs::read_to_string(sandbox.dir.join("operator.key")).map_err(|e| e.to_string())?;
        Ok(Client { runtime, send, admin, operator: operator.trim().to_owned() })
    }
}

async fn handshake(
    sandbox: &Sandbox,
    address: &str,
) -> Result<hyper::client::conn::http1::SendRequest<Full<Bytes>>, String> {
    let pem = std::fs::read(sandbox.dir.join(crate::tls::CERT_FILE)).map_err(|e| e.to_string())?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        roots.add(cert.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(address).await.map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS: {e}"))?;
    let (send, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.map_err(|e| e.to_string())?;
    crate::tasks::spawn(conn);
    Ok(send)
}

impl Api for Client {
    fn call(&mut self, call: Call<'_>) -> Result<(u16, Value), String> {
        let Call { method, path, key, body } = call;
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{key}:"));
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .header("authorization", format!("Basic {auth}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| e.to_string())?;
        let send = if path.starts_with("/admin") { &mut self.admin } else { &mut self.send };
        self.runtime.block_on(async move {
            let response = send.send_request(request).await.map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
            let value = serde_json::from_slice(&body).map_err(|e| format!("{path}: not JSON: {e}"))?;
            Ok((status, value))
        })
    }

    fn operator_key(&self) -> String {
        self.operator.clone()
    }
}
