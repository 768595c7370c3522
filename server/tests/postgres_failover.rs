//! Two `achd` over one PostgreSQL database under load lose its primary: SIGKILL
//! of the primary's postmaster, the synchronous standby promoted
//! (`scripts/postgres-promote`), the load going on throughout. Every
//! transaction acknowledged (201) is in the feed exactly once, read through
//! either process; requests while there was no primary answered message 7
//! (503); and both processes acknowledge creates again on the new primary
//! without a restart. Runs when `ACH_TEST_POSTGRES` (the multi-host string)
//! and `ACH_TEST_PG_DIR` (the directory `scripts/postgres-up` made) are set:
//! the last step of tests/postgres/suites.sh, since it loses the primary.
// The tests' tasks are clients, not the server's async workers.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ach_testkit::Achd;
use serde_json::json;

mod common;
use common::{example, Tenant, START};

/// What one client saw: ids acknowledged (and when), statuses of the others.
#[derive(Default)]
struct Seen {
    acknowledged: Vec<(String, Instant)>,
    refused: HashMap<u16, usize>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_achd_carry_on_after_the_primary_is_lost_and_lose_nothing_acknowledged() {
    let Some(pg) = common::postgres_pair() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("data");
    let start = || Achd::new(env!("CARGO_BIN_EXE_achd")).data(&data).sandbox_start(START).start();
    let servers = [Arc::new(start()), Arc::new(start())];
    let Tenant { partner_id, partner_key, merchant_id, .. } =
        Tenant::create(&servers[0], &mut servers[0].conn().await).await;
    let body = Arc::new({
        let mut t = example("transaction.json");
        t["partner_id"] = json!(partner_id);
        t["merchant_id"] = json!(merchant_id);
        t
    });
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = tokio::task::JoinSet::new();
    for i in 0..16usize {
        let server = Arc::clone(&servers[i % 2]);
        let (body, key, stop) = (Arc::clone(&body), partner_key.clone(), Arc::clone(&stop));
        clients.spawn(async move {
            let mut seen = Seen::default();
            let mut conn = None;
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                if conn.is_none() {
                    conn = server.try_conn().await.ok();
                }
                let Some(c) = conn.as_mut() else {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                n += 1;
                let mut t = (*body).clone();
                t["amount"] = json!(format!("{}.{:02}", 1 + i, n % 100));
                match c.send("POST", "/transactions", Some(&key), &[], t.to_string().into_bytes()).await {
                    Ok(a) if a.status == 201 => {
                        let id = a.json()["payload"]["id"].as_str().unwrap().to_owned();
                        seen.acknowledged.push((id, Instant::now()));
                    }
                    Ok(a) => {
                        *seen.refused.entry(a.status).or_default() += 1;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    Err(_) => {
                        conn = None;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
            (i % 2, seen)
        });
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Lose the primary, then fail over as a manager would.
    let pid = std::fs::read_to_string(pg.join("primary/postmaster.pid")).unwrap();
    let pid = pid.lines().next().unwrap().trim().to_owned();
    assert!(std::process::Command::new("kill").args(["-9", &pid]).status().unwrap().success());
    let promote = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres-promote");
    let promoted = tokio::task::spawn_blocking(move || std::process::Command::new(promote).arg(&pg).status())
        .await
        .unwrap()
        .unwrap();
    assert!(promoted.success());
    let promoted_at = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.store(true, Ordering::SeqCst);

    let mut acknowledged = Vec::new();
    let mut after = [0usize; 2];
    let mut refused: HashMap<u16, usize> = HashMap::new();
    while let Some(done) = clients.join_next().await {
        let (server, seen) = done.unwrap();
        after[server] += seen.acknowledged.iter().filter(|(_, at)| *at > promoted_at).count();
        acknowledged.extend(seen.acknowledged.into_iter().map(|(id, _)| id));
        for (status, n) in seen.refused {
            *refused.entry(status).or_default() += n;
        }
    }
    eprintln!("acknowledged {}, after the promotion {after:?}, refused {refused:?}", acknowledged.len());
    assert!(refused.keys().all(|s| *s == 503), "only message 7 while there was no primary: {refused:?}");
    assert!(after.iter().all(|n| *n > 0), "each achd acknowledges creates on the new primary: {after:?}");
    for server in &servers {
        let mut conn = server.conn().await;
        let (mut pointer, mut counts) = ("0".to_owned(), HashMap::<String, usize>::new());
        loop {
            let path = format!("/status-changes/{pointer}?partner_id={partner_id}");
            let (status, page) = conn.call("GET", &path, Some(&partner_key), None).await;
            assert_eq!(status, 200, "{page}");
            let changes = page["payload"]["changes"].as_array().unwrap().clone();
            if changes.is_empty() {
                break;
            }
            for c in changes.iter().filter(|c| c["status"] == "A") {
                *counts.entry(c["transaction_id"].as_str().unwrap().to_owned()).or_default() += 1;
            }
            pointer = page["payload"]["new_pointer"].as_str().unwrap().to_owned();
        }
        for id in &acknowledged {
            assert_eq!(counts.get(id), Some(&1), "{id} was acknowledged but is not in the feed exactly once");
        }
    }
    assert!(acknowledged.len() > 100, "the load ran: {}", acknowledged.len());
}
