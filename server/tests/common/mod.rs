//! What the server tests share: a sandbox's start, the example requests, a
//! partner with its approved merchant, and `achd` run as a command.
#![allow(clippy::unwrap_used, dead_code)]

use std::path::PathBuf;

use ach_testkit::{on_postgres, Conn, Server};
use serde_json::{json, Value};

/// The sandbox clock's start.
pub const START: &str = "2026-11-23T10:00:00-05:00";

/// An example request body from `examples/requests`.
pub fn example(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/requests").join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The directory of the PostgreSQL primary and standby the suite runs on
/// (`ACH_TEST_PG_DIR`, with `ACH_TEST_POSTGRES`); `None`: a test of the pair
/// does not apply here.
pub fn postgres_pair() -> Option<PathBuf> {
    let dir = std::env::var_os("ACH_TEST_PG_DIR").map(PathBuf::from)?;
    ach_testkit::on_postgres().then_some(dir)
}

/// What the set-up made: a partner with an approved merchant.
#[derive(Clone)]
pub struct Tenant {
    pub operator: String,
    pub partner_id: String,
    pub partner_key: String,
    pub merchant_id: String,
    pub merchant_key: String,
}

impl Tenant {
    /// A partner and its approved merchant (duplicates allowed), made
    /// through `conn`.
    pub async fn create(server: &Server, conn: &mut Conn) -> Tenant {
        let operator = server.operator_key();
        let (status, p) =
            conn.call("POST", "/admin/partners", Some(&operator), Some(json!({"name": "Acme"}))).await;
        assert_eq!(status, 201, "{p}");
        let partner_id = p["payload"]["partner_id"].as_str().unwrap().to_owned();
        let partner_key = p["payload"]["api_key"].as_str().unwrap().to_owned();
        let mut app = example("merchant.json");
        app["partner_id"] = json!(partner_id);
        app["velocities"]["decline_duplicates"] = json!(false);
        let (status, m) = conn.call("POST", "/merchants", Some(&partner_key), Some(app)).await;
        assert_eq!(status, 201, "{m}");
        let merchant_id = m["id"].as_str().unwrap().to_owned();
        let limits = json!({"limits": {"monthly_count": 1_000_000, "monthly_amount": "90000000.00"}});
        let path = format!("/admin/merchants/{merchant_id}/approve");
        let (status, a) = conn.call("POST", &path, Some(&operator), Some(limits)).await;
        assert_eq!(status, 200, "{a}");
        let merchant_key = a["payload"]["api_key"].as_str().unwrap().to_owned();
        Tenant { operator, partner_id, partner_key, merchant_id, merchant_key }
    }
}

impl Tenant {
    /// Every one of `ids` reads back (200) through `c`.
    pub async fn reads_back(&self, c: &mut Conn, ids: &[String]) {
        for id in ids {
            let path = format!("/transactions/{id}?partner_id={}", self.partner_id);
            let (status, body) = c.call("GET", &path, Some(&self.partner_key), None).await;
            assert_eq!(status, 200, "{id}: {body}");
        }
    }

    /// The example transaction for its merchant, of `amount` (dollars text).
    pub fn transaction(&self, amount: &str) -> Value {
        let mut txn = example("transaction.json");
        txn["partner_id"] = json!(self.partner_id);
        txn["merchant_id"] = json!(self.merchant_id);
        txn["amount"] = json!(amount);
        txn
    }
}

/// A new directory for a test of the embedded store's own files (backups,
/// keys), or `None` on a run over PostgreSQL, where there are none.
pub fn redb_root() -> Option<tempfile::TempDir> {
    (!on_postgres()).then(|| tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")))
}

/// What a command printed, standard output then standard error.
pub fn printed(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `achd ARGS`, `stdin` written to its standard input: what it printed and
/// how it exited.
pub fn run_achd(args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_achd"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        // The process may exit before reading (usage errors): a broken pipe is fine.
        let _ = input.write_all(bytes);
    }
    drop(input);
    child.wait_with_output().unwrap()
}
