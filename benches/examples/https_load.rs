//! Durable creates per second over HTTPS with keep-alive clients, against the
//! in-process batch rate of the same creates, in one run.
//!
//!     cargo run --release -p ach-benches --example https_load -- [--clients 64] [--seconds 20]
//!
//! 1. Builds `achd` (`cargo build -p achd`, same profile and target directory as
//!    this example; `--achd PATH` or `ACHD_BIN` uses a given binary instead) and
//!    starts `achd serve --sandbox --data <tempdir>/data --listen 127.0.0.1:0
//!    --admin-listen 127.0.0.1:0` through the tests' harness (`ach-testkit`; its
//!    log, at `ACHD_LOG=debug` by default for the group-commit sizes, goes to
//!    `<tempdir>/server.log`).
//! 2. With the operator key from the data directory: a partner, its merchant
//!    (`examples/requests/merchant.json`, duplicates not declined), approved with
//!    limits no create reaches ([`ach_benches::generous_limits`]).
//! 3. `--clients` HTTPS connections (HTTP/1.1 keep-alive, one each, certificate
//!    verified against the server's `tls-cert.pem`), each POSTing typical PPD
//!    debits with an inline customer ([`ach_benches::transaction_body`]) one after
//!    the other: `--warmup` seconds, then `--seconds` measured. Only a 201 with
//!    `success: true` and an id counts; any other answer or a broken connection
//!    stops the run with the answer.
//! 4. Walks `GET /status-changes` from 0: every acknowledged transaction is there,
//!    exactly once, and nothing else is (a rate of lost writes is worthless).
//! 5. Stops the server (SIGTERM, exit 0 expected), then creates the same number
//!    of transactions in-process on a fresh database file through
//!    `Engine::execute_batch` in batches of `--batch` sizes (default 1000 and the
//!    number of clients) and prints the ratio HTTPS / in-process.
//!
//! CPU time of the server and of this client over the measured window (from
//! `/proc`) is printed too: on a small machine they share the cores.
//!
//! `--flood RATE` measures the creates twice on the same server, first alone
//! and then while a flood of RATE requests per second (16 keep-alive
//! connections) carries made-up keys to made-up paths (answered 404) and to
//! real ones (401, a key looked up in the store; `ach_testkit::Strangers`): the flood's answers must
//! all be 401 or 404, and the ratio of the two create rates is printed.
//!
//! `--servers N` starts N `achd` on one data directory and spreads the clients
//! over them (client i on server i mod N). That takes a shared store: run it
//! with `ACH_TEST_POSTGRES` set to a connection string (the harness then
//! starts each with `--store`, the same schema for the same directory), e.g.
//! the primary and synchronous standby of `scripts/postgres-up`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ach_benches::cpu::cpu_seconds;
use ach_benches::{transaction_body, Sandbox};
use ach_testkit::{Achd, Conn, Server};
use serde_json::{json, Value};

#[path = "common/flood.rs"]
mod flood;
#[path = "common/https.rs"]
mod https;
#[path = "common/webhook_receiver.rs"]
mod webhook_receiver;

use flood::{flood, FloodCount, FLOOD_CONNECTIONS};
use https::{set, CommandLine, Load, Tenant};
use webhook_receiver::webhook_receiver;

const USAGE: &str = "usage: https_load [--clients N (64)] [--seconds S (20)] [--warmup S (3)] \
[--batch N,N (1000,CLIENTS)] [--inproc-creates N (as many as HTTPS acknowledged)] \
[--achd PATH] [--log LEVEL (debug)] [--threads N (client runtime threads; all cores)] \
[--servers N (1; more need ACH_TEST_POSTGRES)] [--flood RATE (0: none)] \
[--webhook 1 (an endpoint on a local receiver: deliveries counted)]";

struct Options {
    load: Load,
    batches: Vec<usize>,
    inproc_creates: Option<usize>,
    log: String,
    threads: Option<usize>,
    servers: usize,
    flood: u32,
    webhook: bool,
}

fn options() -> Options {
    let load = Load {
        clients: 64,
        seconds: 20.0,
        warmup: 3.0,
        achd: std::env::var_os("ACHD_BIN").map(PathBuf::from),
    };
    let mut o = Options {
        load,
        batches: Vec::new(),
        inproc_creates: None,
        log: "debug".into(),
        threads: None,
        servers: 1,
        flood: 0,
        webhook: false,
    };
    let command = CommandLine { program: "https_load", usage: Some(USAGE) };
    command.read(&mut o.load, |flag, value| match flag {
        "--batch" => {
            let batches: Option<Vec<usize>> =
                value.split(',').map(|n| n.trim().parse().ok().filter(|&n| n > 0)).collect();
            set(&mut o.batches, batches)
        }
        "--inproc-creates" => set(&mut o.inproc_creates, value.parse().ok().map(Some)),
        "--log" => set(&mut o.log, Some(value)),
        "--threads" => set(&mut o.threads, value.parse().ok().filter(|&n| n > 0).map(Some)),
        "--servers" => set(&mut o.servers, value.parse().ok().filter(|&n| n > 0)),
        "--flood" => set(&mut o.flood, value.parse().ok()),
        "--webhook" => set(&mut o.webhook, Some(value == "1")),
        _ => command.fail(&format!("unknown option {flag}")),
    });
    if o.batches.is_empty() {
        o.batches = vec![1000, o.load.clients];
        o.batches.dedup();
    }
    o
}

fn fail(why: &str) -> ! {
    eprintln!("https_load: {why}");
    std::process::exit(2)
}

fn main() {
    let o = options();
    let achd = o.load.achd.clone().unwrap_or_else(build_achd);
    if o.servers > 1 && !ach_testkit::on_postgres() {
        fail("--servers above 1 needs a shared store: set ACH_TEST_POSTGRES");
    }
    let start = |data: Option<&Path>| {
        // The load is one partner's: its request rate is not what is measured.
        let mut a =
            Achd::new(&achd).sandbox().log_level(Some(&o.log)).flags(["--requests-per-second", "1000000"]);
        if let Some(data) = data {
            a = a.data(data);
        }
        a.try_start().unwrap_or_else(|exit| fail(&format!("achd did not start: {exit}")))
    };
    let first = start(None);
    let data = first.data().to_path_buf();
    let mut servers = vec![first];
    while servers.len() < o.servers {
        servers.push(start(Some(&data)));
    }
    let store = if ach_testkit::on_postgres() { "PostgreSQL (ACH_TEST_POSTGRES)" } else { "redb" };
    for server in &servers {
        println!(
            "achd {} (pid {}) on https://{} (data {}, store {store})",
            achd.display(),
            server.pid(),
            server.addr(),
            server.data().display()
        );
    }
    println!("uptime: {}", load_average());

    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(threads) = o.threads {
        runtime.worker_threads(threads);
    }
    let runtime = runtime.build().unwrap();
    let alone = (o.flood > 0).then(|| runtime.block_on(run_load(&servers, &o, 0)));
    let https = runtime.block_on(run_load(&servers, &o, o.flood));
    drop(runtime);
    for server in &mut servers {
        server.stop();
    }
    let commits = group_commits(servers[0].log_path());
    if o.webhook {
        let log = std::fs::read_to_string(servers[0].log_path()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().filter(|l| l.contains("webhook deliveries")).collect();
        println!("webhook batches: {} (first and last below)", lines.len());
        for l in lines.iter().take(3).chain(lines.iter().rev().take(3)) {
            println!("  {l}");
        }
    }

    let secs = o.load.seconds;
    let rate = https.measured as f64 / secs;
    println!();
    println!(
        "HTTPS: {} clients on {} achd ({store}), {:.0} s measured after {:.0} s warm-up: {} creates, {:.0} creates/s",
        o.load.clients, o.servers, secs, o.load.warmup, https.measured, rate
    );
    let p = |q: f64| percentile(&https.latencies_us, q) as f64 / 1000.0;
    println!("latency (ms): p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}", p(0.50), p(0.90), p(0.99), p(1.0));
    println!(
        "CPU over the measured window: server {:.2} s ({:.0} µs per create), this client {:.2} s ({:.0} µs per create), {} cores",
        https.server_cpu,
        https.server_cpu * 1e6 / https.measured.max(1) as f64,
        https.client_cpu,
        https.client_cpu * 1e6 / https.measured.max(1) as f64,
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    println!(
        "disk writes over the measured window: server {:.1} MB ({:.1} KB per create)",
        https.server_disk as f64 / 1e6,
        https.server_disk as f64 / 1e3 / https.measured.max(1) as f64
    );
    if let Some(c) = &commits {
        println!(
            "group commits (whole run, the first achd): {} commits of {} operations, mean {:.1}, p50 {}, p90 {}, max {}",
            c.count, c.operations, c.mean, c.p50, c.p90, c.max
        );
    }
    println!(
        "feed check: {} acknowledged, {} status changes A, each acknowledged id exactly once: ok",
        https.acknowledged, https.feed_changes
    );
    if let Some(d) = https.deliveries {
        println!(
            "webhook deliveries taken by the local receiver over the measured window: {d} ({:.0}/s)",
            d as f64 / secs
        );
    }

    if let Some(alone) = &alone {
        let alone_rate = alone.measured as f64 / secs;
        let f = &https.flood;
        println!(
            "flood: {} requests answered in {secs:.0} s ({:.0}/s asked {}): {} x 401, {} x 404, {} other",
            f.answered,
            f.answered as f64 / secs,
            o.flood,
            f.unauthorized,
            f.not_found,
            f.other
        );
        println!(
            "creates alone {alone_rate:.0}/s, under the flood {rate:.0}/s: ratio {:.3} (target >= 0.8)",
            rate / alone_rate
        );
        assert_eq!(f.other, 0, "every flood request is refused with 401 or 404");
    }

    let creates = o.inproc_creates.unwrap_or(https.acknowledged).max(1000);
    println!();
    let mut ratios = Vec::new();
    for &batch in &o.batches {
        let (inproc, cpu, disk) = in_process(creates, batch);
        println!(
            "in-process: {creates} creates through execute_batch in batches of {batch} on a database file: {inproc:.0} creates/s ({:.0} µs CPU, {:.1} KB disk writes per create)",
            cpu * 1e6 / creates as f64,
            disk as f64 / 1e3 / creates as f64
        );
        ratios.push((batch, inproc));
    }
    println!();
    for (batch, inproc) in ratios {
        println!("ratio HTTPS / in-process (batches of {batch}): {:.3}", rate / inproc);
    }
    let met = if rate >= 10_000.0 { "met" } else { "NOT met" };
    println!("target >= 10,000 durable creates/s over HTTPS: {met} ({rate:.0}/s)");
    println!("uptime: {}", load_average());
}

/// `cargo build -p achd` in this example's profile and target directory; the
/// binary's path.
fn build_achd() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/<profile>/examples/https_load
    let profile_dir =
        exe.parent().and_then(Path::parent).expect("the example runs from <target>/<profile>/examples");
    let target_dir = profile_dir.parent().unwrap();
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo.current_dir(workspace).args(["build", "-p", "achd", "--target-dir"]).arg(target_dir);
    if release {
        cargo.arg("--release");
    }
    println!("building achd ({}): {cargo:?}", if release { "release" } else { "debug" });
    let status = cargo.status().unwrap_or_else(|e| fail(&format!("cannot run cargo: {e}")));
    if !status.success() {
        fail("cargo build -p achd failed");
    }
    let achd = profile_dir.join(format!("achd{}", std::env::consts::EXE_SUFFIX));
    if !release {
        println!("NOTE: a debug build; measure with --release");
    }
    achd
}

/// `write_bytes` of a `/proc/<pid>/io` file: bytes sent to the disk (0 without
/// `/proc`).
fn disk_bytes(io: &str) -> u64 {
    let text = std::fs::read_to_string(io).unwrap_or_default();
    text.lines().find_map(|l| l.strip_prefix("write_bytes:")?.trim().parse().ok()).unwrap_or(0)
}

/// The machine's load average, as `/proc/loadavg` gives it (`?` without it).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map_or_else(|_| "?".into(), |l| format!("load average {}", l.trim()))
}

/// Seconds of CPU (user + system, all threads) the server has used.
fn server_cpu_seconds(server: &Server) -> f64 {
    cpu_seconds(&format!("/proc/{}/stat", server.pid()))
}

/// The header every create carries.
const JSON: &[(&str, &str)] = &[("content-type", "application/json")];

struct LoadResult {
    /// Creates acknowledged within the measured window.
    measured: usize,
    /// Their latencies, µs, sorted.
    latencies_us: Vec<u32>,
    /// Every create acknowledged (warm-up, window and the last in flight).
    acknowledged: usize,
    /// Status changes A in the feed.
    feed_changes: usize,
    server_cpu: f64,
    client_cpu: f64,
    /// Bytes the server wrote to the disk (`write_bytes` of `/proc/<pid>/io`).
    server_disk: u64,
    /// What the flood's requests were answered, over the measured window.
    flood: FloodCount,
    /// Webhook deliveries the local receiver took over the measured window.
    deliveries: Option<usize>,
}

/// What one client saw.
struct ClientLog {
    ids: Vec<String>,
    latencies_us: Vec<u32>,
}

async fn run_load(servers: &[Server], o: &Options, flood_rate: u32) -> LoadResult {
    let server = &servers[0];
    let tenant = Arc::new(https::set_up(server, &mut server.conn().await, "Load Partner").await);
    let receiver = if o.webhook {
        let (port, count) = webhook_receiver().await;
        let body = json!({"partner_id": tenant.partner_id, "url": format!("http://127.0.0.1:{port}/hook")});
        server.conn().await.expect("POST", "/webhook-endpoints", &tenant.partner_key, Some(body), 201).await;
        Some(count)
    } else {
        None
    };
    let delivered = || receiver.as_ref().map(|c| c.load(std::sync::atomic::Ordering::Relaxed));
    // Every connection open and its TLS handshake done before the clock starts.
    let mut conns = Vec::with_capacity(o.load.clients);
    for i in 0..o.load.clients {
        let server = &servers[i % servers.len()];
        conns.push(server.connect(server.addr()).await.unwrap());
    }
    let (start, window_start, window_end) = o.load.window();
    let mut floods = tokio::task::JoinSet::new();
    for f in 0..if flood_rate > 0 { FLOOD_CONNECTIONS } else { 0 } {
        let conn = servers[0].connect(servers[0].addr()).await.unwrap();
        let rate = f64::from(flood_rate) / f64::from(FLOOD_CONNECTIONS);
        floods.spawn(flood(conn, u64::from(f) + 1, rate, window_start, window_end));
    }
    let mut clients = tokio::task::JoinSet::new();
    for (i, mut conn) in conns.into_iter().enumerate() {
        let tenant = Arc::clone(&tenant);
        clients.spawn(async move {
            tokio::time::sleep_until(start.into()).await;
            let mut log = ClientLog { ids: Vec::new(), latencies_us: Vec::new() };
            for n in (i as u64) * 1_000_000_000.. {
                let sent = Instant::now();
                if sent >= window_end {
                    break;
                }
                let body = transaction_body(&tenant.partner_id, &tenant.merchant_id, n);
                let answer = conn
                    .send("POST", "/transactions", Some(&tenant.partner_key), JSON, body)
                    .await
                    .unwrap_or_else(|e| panic!("client {i}: POST /transactions: connection lost: {e}"));
                let done = Instant::now();
                let (status, answer) = (answer.status, answer.body);
                let created = serde_json::from_slice::<Value>(&answer).ok().filter(|v| v["success"] == true);
                let id = created
                    .filter(|_| status == 201)
                    .and_then(|v| v["payload"]["id"].as_str().map(str::to_owned));
                let Some(id) = id else {
                    panic!(
                        "client {i}: POST /transactions answered {status}: {}",
                        String::from_utf8_lossy(&answer)
                    );
                };
                log.ids.push(id);
                if sent >= window_start && done < window_end {
                    log.latencies_us
                        .push(u32::try_from(done.duration_since(sent).as_micros()).unwrap_or(u32::MAX));
                }
            }
            log
        });
    }
    // CPU of both processes over the measured window.
    tokio::time::sleep_until(window_start.into()).await;
    let cpu = || servers.iter().map(server_cpu_seconds).sum::<f64>();
    let disk = || servers.iter().map(|s| disk_bytes(&format!("/proc/{}/io", s.pid()))).sum::<u64>();
    let (server_before, client_before) = (cpu(), cpu_seconds("/proc/self/stat"));
    let disk_before = disk();
    let delivered_before = delivered();
    tokio::time::sleep_until(window_end.into()).await;
    let (server_after, client_after) = (cpu(), cpu_seconds("/proc/self/stat"));
    let disk_after = disk();
    let deliveries = delivered().zip(delivered_before).map(|(after, before)| after - before);

    let mut ids = Vec::new();
    let mut latencies_us = Vec::new();
    while let Some(log) = clients.join_next().await {
        let log = log.unwrap_or_else(|e| fail(&format!("a client failed: {e}")));
        ids.extend(log.ids);
        latencies_us.extend(log.latencies_us);
    }
    latencies_us.sort_unstable();
    let mut flooded = FloodCount::default();
    while let Some(count) = floods.join_next().await {
        let count = count.unwrap_or_else(|e| fail(&format!("a flood connection failed: {e}")));
        flooded.answered += count.answered;
        flooded.unauthorized += count.unauthorized;
        flooded.not_found += count.not_found;
        flooded.other += count.other;
    }
    // With a webhook: the backlog the creates left, sent with nothing else
    // running (the rate deliveries go at on their own).
    if let Some(count) = &receiver {
        let load = std::sync::atomic::Ordering::Relaxed;
        let (from, began) = (count.load(load), Instant::now());
        let (mut last, mut last_at) = (from, began);
        while last_at.elapsed() < Duration::from_secs(2) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = count.load(load);
            if now > last {
                (last, last_at) = (now, Instant::now());
            }
        }
        let secs = last_at.duration_since(began).as_secs_f64().max(1e-3);
        println!(
            "webhook backlog after the load: {} deliveries in {secs:.2} s: {:.0} deliveries/s (target >= 5,000)",
            last - from,
            (last - from) as f64 / secs
        );
    }
    let feed_changes = check_feed(&mut server.conn().await, &tenant, &ids).await;
    LoadResult {
        measured: latencies_us.len(),
        latencies_us,
        acknowledged: ids.len(),
        feed_changes,
        server_cpu: server_after - server_before,
        client_cpu: client_after - client_before,
        server_disk: disk_after.saturating_sub(disk_before),
        flood: flooded,
        deliveries,
    }
}

/// Walk the partner's status-changes feed from the start: every acknowledged id
/// appears exactly once as status A and no other transaction does. The number of
/// A changes.
async fn check_feed(conn: &mut Conn, tenant: &Tenant, acknowledged: &[String]) -> usize {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut pointer = "0".to_owned();
    let mut changes = 0;
    loop {
        let path = format!("/status-changes/{pointer}?partner_id={}", tenant.partner_id);
        let page = conn.expect("GET", &path, &tenant.partner_key, None, 200).await;
        let list = page["payload"]["changes"].as_array().unwrap();
        if list.is_empty() {
            break;
        }
        for change in list {
            assert_eq!(change["status"], "A", "only creates ran: {change}");
            *seen.entry(change["transaction_id"].as_str().unwrap().to_owned()).or_default() += 1;
            changes += 1;
        }
        pointer = page["payload"]["new_pointer"].as_str().unwrap().to_owned();
    }
    for id in acknowledged {
        assert_eq!(
            seen.get(id).copied(),
            Some(1),
            "{id} was acknowledged but is not in the feed exactly once"
        );
    }
    assert_eq!(
        changes,
        acknowledged.len(),
        "the feed holds {changes} creates, {} were acknowledged",
        acknowledged.len()
    );
    changes
}

/// `creates` creates through `execute_batch` in batches of `batch` on a fresh
/// database file (after a warm-up of 1,000 on it): creates per second, the CPU
/// seconds used and the bytes written to the disk.
fn in_process(creates: usize, batch: usize) -> (f64, f64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::file(&dir.path().join("engine.redb"));
    sandbox.create_many(0, 1000, batch);
    let (cpu, disk) = (cpu_seconds("/proc/self/stat"), disk_bytes("/proc/self/io"));
    let started = Instant::now();
    sandbox.create_many(1000, creates, batch);
    let elapsed = started.elapsed().as_secs_f64();
    let disk = disk_bytes("/proc/self/io").saturating_sub(disk);
    (creates as f64 / elapsed, cpu_seconds("/proc/self/stat") - cpu, disk)
}

struct Commits {
    count: usize,
    operations: usize,
    mean: f64,
    p50: usize,
    p90: usize,
    max: usize,
}

/// The group commits the server logged at debug level (`group commit size=N`).
fn group_commits(log: &Path) -> Option<Commits> {
    let text = std::fs::read_to_string(log).ok()?;
    let mut sizes: Vec<usize> = text
        .lines()
        .filter(|l| l.contains("group commit"))
        .filter_map(|l| l.split("size=").nth(1)?.split_whitespace().next()?.parse().ok())
        .collect();
    if sizes.is_empty() {
        return None;
    }
    sizes.sort_unstable();
    let operations = sizes.iter().sum();
    Some(Commits {
        count: sizes.len(),
        operations,
        mean: operations as f64 / sizes.len() as f64,
        p50: percentile(&sizes, 0.5),
        p90: percentile(&sizes, 0.9),
        max: percentile(&sizes, 1.0),
    })
}

fn percentile<T: Copy + Default>(sorted: &[T], q: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}
