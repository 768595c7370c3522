//! The one harness for tests and load runs against a real `achd serve`: start
//! it on free loopback ports (`--listen 127.0.0.1:0 --admin-listen 127.0.0.1:0`,
//! a sandbox or a data directory, any more flags), read the addresses it
//! prints, trust the certificate it made (full verification) and talk to it
//! over TLS — through hyper ([`Conn`]) or as raw HTTP/1.1 bytes ([`Raw`]), for
//! requests no HTTP library would send. The server is killed on drop.
//!
//! ```ignore
//! let server = Achd::new(env!("CARGO_BIN_EXE_achd")).sandbox_start(START).start();
//! let mut conn = server.conn().await;
//! let (status, v) = conn.call("GET", "/admin/return-rates", Some(&server.operator_key()), None).await;
//! ```
//!
//! A set-up that fails panics with the server's log: a test kit has no one to
//! hand an error to ([`Achd::try_start`] returns it, for tests of refused starts).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod client;
mod raw;
mod server;
mod strangers;

pub use client::{basic_auth, connector, Answer, Conn};
pub use raw::{body_type, complete, request_bytes, Raw};
pub use server::{on_postgres, Achd, Exit, Server};
pub use strangers::{Stranger, Strangers};
/// The TLS stream [`Server::tls_stream`] opens.
pub use tokio_rustls::client::TlsStream;
