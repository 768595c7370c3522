//! The server's memory while clients ask for large answers and never read
//! them: resident memory (`VmRSS`) idle, then at its highest while 1,000
//! connections (from ten loopback addresses) each ask for a whole events page
//! with one merchant's events-only key, or for the OpenAPI document without a
//! key, and never read a byte.
//!
//!     cargo run --release -p ach-benches --example non_readers -- [--clients 1000] [--events 3000] [--only healthz]
//!
//! Builds `achd` (the example's profile), starts a sandbox through the tests'
//! harness, makes `--events` transactions (each one event in the merchant's
//! feed: a page of 3,000 is about 1 MB), then runs each attack for 10 s.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ach_benches::{generous_limits, merchant_application, transaction_body};
use ach_testkit::{basic_auth, Achd, Server};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map_or(default, |v| v.parse().unwrap())
}

/// `achd` built in this example's profile and target directory.
fn build_achd() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .current_dir(workspace)
        .args(["build", "-p", "achd", "--target-dir"])
        .arg(profile_dir.parent().unwrap());
    if release {
        cargo.arg("--release");
    }
    assert!(cargo.status().unwrap().success(), "achd did not build");
    profile_dir.join("achd")
}

/// The server's resident memory, MB.
fn rss_mb(server: &Server) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb / 1024.0
}

/// A connection from `from` that sends `request` and never reads.
async fn never_reading(server: &Server, from: IpAddr, request: String) -> Option<impl Sized> {
    let mut stream = server.tls_stream_not_reading(from).await.ok()?;
    stream.write_all(request.as_bytes()).await.ok()?;
    Some(stream)
}

/// `clients` connections sending `request`, held 10 s: the highest memory seen.
async fn attack(server: &Server, clients: usize, request: &str) -> (f64, usize) {
    let mut held = Vec::new();
    for i in 0..clients {
        let from = IpAddr::V4(Ipv4Addr::new(127, 0, 1, 1 + (i % 10) as u8));
        held.extend(never_reading(server, from, request.to_owned()).await);
    }
    let (mut highest, end) = (rss_mb(server), Instant::now() + Duration::from_secs(10));
    while Instant::now() < end {
        highest = highest.max(rss_mb(server));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let connected = held.len();
    drop(held);
    (highest, connected)
}

#[tokio::main]
async fn main() {
    let (clients, events) = (arg("--clients", 1000), arg("--events", 3000));
    let achd = build_achd();
    let server = Achd::new(&achd)
        .sandbox()
        .flags(["--requests-per-second", "1000000", "--max-connections-per-client", "1000"])
        .start();
    let operator = server.operator_key();
    let mut conn = server.conn().await;
    let (_, p) = conn.call("POST", "/admin/partners", Some(&operator), Some(json!({"name": "P"}))).await;
    let (partner_id, partner_key) = (
        p["payload"]["partner_id"].as_str().unwrap().to_owned(),
        p["payload"]["api_key"].as_str().unwrap().to_owned(),
    );
    let mut application: Value = serde_json::from_slice(&merchant_application()).unwrap();
    application["partner_id"] = json!(partner_id);
    let (_, m) = conn.call("POST", "/merchants", Some(&partner_key), Some(application)).await;
    let merchant_id = m["id"].as_str().unwrap().to_owned();
    let path = format!("/admin/merchants/{merchant_id}/approve");
    let (_, a) = conn.call("POST", &path, Some(&operator), Some(json!({"limits": generous_limits()}))).await;
    let merchant_key = a["payload"]["api_key"].as_str().unwrap().to_owned();
    let (_, _) = conn
        .call("PUT", "/admin/risk-rules", Some(&operator), Some(json!({"velocity": {"enabled": false}})))
        .await;
    for n in 0..events as u64 {
        let body = transaction_body(&partner_id, &merchant_id, n);
        let answer = conn.send("POST", "/transactions", Some(&partner_key), &[], body).await.unwrap();
        assert_eq!(answer.status, 201, "{}", answer.text());
    }
    let page = conn.send("GET", "/events", Some(&merchant_key), &[], Vec::new()).await.unwrap();
    println!("an events page: {} bytes", page.body.len());
    let attacks = [
        (
            "events pages",
            format!(
                "GET /events HTTP/1.1\r\nhost: achd\r\nauthorization: {}\r\n\r\n",
                basic_auth(&merchant_key)
            ),
        ),
        ("the OpenAPI document", "GET /openapi.json HTTP/1.1\r\nhost: achd\r\n\r\n".to_owned()),
        ("/healthz", "GET /healthz HTTP/1.1\r\nhost: achd\r\n\r\n".to_owned()),
    ];
    let only = std::env::args().skip_while(|a| a != "--only").nth(1);
    for (what, request) in attacks.iter().filter(|(what, _)| only.as_deref().is_none_or(|o| what.contains(o)))
    {
        let idle = rss_mb(&server);
        let (highest, connected) = attack(&server, clients, request).await;
        println!("{connected} connections asking for {what}, never reading: idle {idle:.0} MB, at most {highest:.0} MB (+{:.0} MB)", highest - idle);
    }
}
