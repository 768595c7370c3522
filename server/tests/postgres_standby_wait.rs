//! Nothing is answered before the synchronous standby has it. A write
//! transaction on PostgreSQL commits without waiting for the disks, so that
//! the write lock is free while they sync; its answer, and every read's, still
//! waits for them (`storage/postgres`: `DURABLE`). Here the standby is paused
//! (SIGSTOP of its processes): a create is not answered, and a feed read
//! through another connection does not show it, until the standby resumes.
//! Runs when `ACH_TEST_POSTGRES` and `ACH_TEST_PG_DIR` (the directory
//! `scripts/postgres-up` made) are set: tests/postgres/suites.sh, before the
//! failover.
// The tests' tasks are clients, not the server's async workers.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use ach_testkit::{Achd, Conn};
use serde_json::{json, Value};

mod common;
use common::{example, Tenant, START};

/// A PostgreSQL server's processes stopped (SIGSTOP) until this is dropped.
struct Paused(Vec<String>);

impl Paused {
    /// The postmaster whose data folder is `data`, and its children.
    fn server(data: &Path) -> Paused {
        let pid = std::fs::read_to_string(data.join("postmaster.pid")).unwrap();
        let pid = pid.lines().next().unwrap().trim().to_owned();
        let mut pids = vec![pid.clone()];
        for entry in std::fs::read_dir("/proc").unwrap() {
            let stat = std::fs::read_to_string(entry.unwrap().path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid ...: the fields after the last ')'.
            let Some((head, tail)) = stat.rsplit_once(')') else { continue };
            if tail.split_whitespace().nth(1) == Some(pid.as_str()) {
                pids.push(head.split_whitespace().next().unwrap().to_owned());
            }
        }
        signal("-STOP", &pids);
        Paused(pids)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal("-CONT", &self.0);
    }
}

fn signal(which: &str, pids: &[String]) {
    let status = std::process::Command::new("kill").arg(which).args(pids).status().unwrap();
    assert!(status.success(), "kill {which} {pids:?}");
}

/// The transaction ids with an `A` status change in the partner's feed.
async fn accepted(conn: &mut Conn, partner_id: &str, key: &str) -> Vec<String> {
    let (mut pointer, mut ids) = ("0".to_owned(), Vec::new());
    loop {
        let path = format!("/status-changes/{pointer}?partner_id={partner_id}");
        let (status, page) = conn.call("GET", &path, Some(key), None).await;
        assert_eq!(status, 200, "{page}");
        let changes = page["payload"]["changes"].as_array().unwrap().clone();
        if changes.is_empty() {
            return ids;
        }
        ids.extend(changes.iter().filter(|c| c["status"] == "A").map(|c| c["transaction_id"].to_string()));
        pointer = page["payload"]["new_pointer"].as_str().unwrap().to_owned();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_create_is_answered_and_seen_only_once_the_standby_has_it() {
    let Some(pg) = common::postgres_pair() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let server =
        Achd::new(env!("CARGO_BIN_EXE_achd")).data(scratch.path().join("data")).sandbox_start(START).start();
    let Tenant { partner_id, partner_key: key, merchant_id, .. } =
        Tenant::create(&server, &mut server.conn().await).await;
    let mut body: Value = example("transaction.json");
    body["partner_id"] = json!(partner_id);
    body["merchant_id"] = json!(merchant_id);
    let (status, first) =
        server.conn().await.call("POST", "/transactions", Some(&key), Some(body.clone())).await;
    assert_eq!(status, 201, "{first}");
    let mut reader = server.conn().await;
    assert_eq!(accepted(&mut reader, &partner_id, &key).await.len(), 1);

    let paused = Paused::server(&pg.join("standby"));
    body["amount"] = json!("2.02");
    let (mut writer, k) = (server.conn().await, key.clone());
    let create =
        tokio::spawn(async move { writer.call("POST", "/transactions", Some(&k), Some(body)).await });
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!create.is_finished(), "a create was answered before the standby had it");
    // Committed on the primary, so visible there: a read must wait too, or
    // not show it.
    let (p, k) = (partner_id.clone(), key.clone());
    let read = tokio::spawn(async move { accepted(&mut reader, &p, &k).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let read_while_paused = read.is_finished();
    drop(paused);
    let (status, second) = create.await.unwrap();
    assert_eq!(status, 201, "{second}");
    let seen = read.await.unwrap();
    if read_while_paused {
        assert_eq!(seen.len(), 1, "a read showed a create the standby did not have: {seen:?}");
    }
    let now = accepted(&mut server.conn().await, &partner_id, &key).await;
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(now.contains(&second["payload"]["id"].to_string()), "{now:?} {second}");
}
