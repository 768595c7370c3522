//! Raw HTTP/1.1 over TLS: a request is the bytes given (NUL, invalid UTF-8,
//! malformed headers, bodies streamed in chunks), the answer the bytes read.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// An HTTP answer as read (status 0: the connection closed without one).
#[derive(Debug)]
pub struct Raw {
    /// The status of the status line.
    pub status: u16,
    /// The status line and headers, as text.
    pub head: String,
    /// What came after the head.
    pub body: Vec<u8>,
}

impl Raw {
    /// Split bytes read into head and body.
    pub fn parse(bytes: &[u8]) -> Raw {
        let end = find(bytes, b"\r\n\r\n").unwrap_or(bytes.len());
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        Raw { status, head, body: bytes.get(end + 4..).unwrap_or_default().to_vec() }
    }

    /// The body as JSON; panics with the answer if it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {} {}", self.head, String::from_utf8_lossy(&self.body)))
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether the bytes hold a whole response (its head and `Content-Length` body).
pub fn complete(bytes: &[u8]) -> bool {
    let Some(end) = find(bytes, b"\r\n\r\n") else { return false };
    let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
    let length =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok());
    length.is_some_and(|n: usize| bytes.len() >= end + 4 + n)
}

/// The `Content-Type` a client sends a body to `target` with: the files the
/// operator uploads (the routing directory, return files) as `text/plain`,
/// everything else as `application/json`.
pub fn body_type(target: &[u8]) -> &'static str {
    if target.starts_with(b"/admin/routing") || target.starts_with(b"/admin/return-files") {
        "text/plain"
    } else {
        "application/json"
    }
}

/// A request's bytes as two chunks: the request line and headers (`host` and
/// `connection: close` first, `content-length` last), then the body.
pub fn request_bytes<V: AsRef<[u8]>>(
    method: &str,
    target: &[u8],
    host: &str,
    headers: &[(&str, V)],
    body: &[u8],
) -> Vec<Vec<u8>> {
    let mut head = format!("{method} ").into_bytes();
    head.extend_from_slice(target);
    head.extend_from_slice(format!(" HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n").as_bytes());
    for (name, value) in headers {
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_ref());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    vec![head, body.to_vec()]
}

/// Write the chunks while reading the answer, until it is complete, the
/// connection ends, or 40 s pass.
pub(crate) async fn exchange(stream: TlsStream<TcpStream>, request: Vec<Vec<u8>>) -> Raw {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let sending = tokio::spawn(async move {
        for chunk in request {
            if writer.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = writer.flush().await;
        // Keep the write half open: closing it would end the TLS session.
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    let mut bytes = Vec::new();
    let mut buf = vec![0; 64 * 1024];
    let read = async {
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => bytes.extend_from_slice(&buf[..n]),
            }
            if complete(&bytes) {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(40), read).await;
    sending.abort();
    Raw::parse(&bytes)
}
