//! `GET /transactions/{id}` over HTTPS under load:
//!
//!     cargo build --release -p achd
//!     cargo run --release -p ach-benches --example https_reads -- [--clients 64] [--seconds 10] [--warmup 2] [--transactions 2000]
//!
//! Starts `achd serve --sandbox` (the `achd` beside this example's directory,
//! or `--achd PATH`) through the tests' harness, makes a partner, a merchant
//! and `--transactions` transactions, then `--clients` keep-alive HTTPS
//! connections each read random transactions of them one after another:
//! `--warmup` seconds, then `--seconds` measured. Every answer must be a 200
//! naming the transaction asked for. Prints reads/s, latencies and the
//! server's CPU per read.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Instant;

use ach_benches::cpu::cpu_seconds;
use ach_benches::transaction_body;
use ach_testkit::Achd;
use serde_json::Value;

#[path = "common/https.rs"]
mod https;

use https::{set, CommandLine, Load};

const COMMAND: CommandLine = CommandLine { program: "https_reads", usage: None };

struct Options {
    load: Load,
    transactions: usize,
}

fn options() -> Options {
    let load = Load { clients: 64, seconds: 10.0, warmup: 2.0, achd: None };
    let mut o = Options { load, transactions: 2000 };
    COMMAND.read(&mut o.load, |flag, value| match flag {
        "--transactions" => set(&mut o.transactions, value.parse().ok().filter(|&n| n > 0)),
        _ => COMMAND.fail(&format!("unknown flag {flag}")),
    });
    o
}

fn main() {
    let o = options();
    let achd = o.load.achd.clone().unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap();
        exe.parent().and_then(|p| p.parent()).map(|p| p.join("achd")).unwrap()
    });
    if !achd.exists() {
        COMMAND.fail(&format!("{} is missing: cargo build --release -p achd", achd.display()));
    }
    let server = Achd::new(&achd)
        .sandbox()
        .log_level(Some("info"))
        .flags(["--requests-per-second", "1000000"])
        .try_start()
        .unwrap_or_else(|exit| COMMAND.fail(&format!("achd did not start: {exit}")));
    println!("achd {} (pid {}) on https://{}", achd.display(), server.pid(), server.addr());
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut conn = server.conn().await;
        let tenant = https::set_up(&server, &mut conn, "Readers").await;
        let (partner_id, key, merchant_id) = (tenant.partner_id, tenant.partner_key, tenant.merchant_id);
        let mut ids = Vec::with_capacity(o.transactions);
        for n in 0..o.transactions as u64 {
            let body: Value = serde_json::from_slice(&transaction_body(&partner_id, &merchant_id, n)).unwrap();
            let t = conn.expect("POST", "/transactions", &key, Some(body), 201).await;
            ids.push(t["payload"]["id"].as_str().unwrap().to_owned());
        }
        let ids = Arc::new(ids);
        let mut conns = Vec::new();
        for _ in 0..o.load.clients {
            conns.push(server.connect(server.addr()).await.unwrap());
        }
        let (start, window_start, window_end) = o.load.window();
        let mut clients = tokio::task::JoinSet::new();
        for (i, mut conn) in conns.into_iter().enumerate() {
            let (ids, key, partner_id) = (Arc::clone(&ids), key.clone(), partner_id.clone());
            clients.spawn(async move {
                tokio::time::sleep_until(start.into()).await;
                let mut latencies = Vec::new();
                let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                loop {
                    let sent = Instant::now();
                    if sent >= window_end {
                        return latencies;
                    }
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let id = &ids[(x % ids.len() as u64) as usize];
                    let path = format!("/transactions/{id}?partner_id={partner_id}");
                    let answer = conn.send("GET", &path, Some(&key), &[], Vec::new()).await.unwrap();
                    let done = Instant::now();
                    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
                    assert!(answer.body.windows(id.len()).any(|w| w == id.as_bytes()));
                    if sent >= window_start && done < window_end {
                        latencies.push(u32::try_from(done.duration_since(sent).as_micros()).unwrap_or(u32::MAX));
                    }
                }
            });
        }
        tokio::time::sleep_until(window_start.into()).await;
        let stat = format!("/proc/{}/stat", server.pid());
        let cpu_before = cpu_seconds(&stat);
        tokio::time::sleep_until(window_end.into()).await;
        let cpu = cpu_seconds(&stat) - cpu_before;
        let mut latencies = Vec::new();
        while let Some(l) = clients.join_next().await {
            latencies.extend(l.unwrap());
        }
        latencies.sort_unstable();
        let reads = latencies.len();
        let rate = reads as f64 / o.load.seconds;
        let p = |q: f64| f64::from(latencies[((reads - 1) as f64 * q) as usize]) / 1000.0;
        println!(
            "HTTPS reads: {} clients, {:.0} s measured after {:.0} s warm-up: {reads} reads, {rate:.0} reads/s",
            o.load.clients, o.load.seconds, o.load.warmup
        );
        println!("latency (ms): p50 {:.2}  p90 {:.2}  p99 {:.2}", p(0.5), p(0.9), p(0.99));
        println!("server CPU {cpu:.2} s ({:.0} µs per read)", cpu * 1e6 / reads.max(1) as f64);
        let met = if rate >= 40_000.0 { "met" } else { "NOT met" };
        println!("target >= 40,000 reads/s over HTTPS, 64 clients: {met} ({rate:.0}/s)");
    });
}
