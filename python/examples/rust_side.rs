//! The Rust side of the Python package's tests and figure: the same `ach_core`
//! calls the package makes, answered by a plain Rust program, so that the
//! tests (`python/tests/test_rust_agrees.py`) can prove Python and Rust agree
//! byte for byte, and the figure (`python/bench/validate_bench.py`) can time
//! the Rust call in the same run.
//!
//! ```text
//! rust_side corpus                 per case of tests/corpus (file order): NAME \t VERDICT-JSON,
//!                                  its body built as the Rust corpus test builds it
//! rust_side verdicts               stdin: KIND \t HEX-OF-BODY per line; stdout: VERDICT-JSON per line
//! rust_side route OPTIONS-JSON     open an engine as ach_engine_open does (its options JSON);
//!                                  stdin: one C request envelope per line;
//!                                  stdout: STATUS \t REPLAYED \t BODY-JSON per line
//! rust_side bench FILE SECONDS     time validating FILE as a transaction (today and the
//!                                  check, as the package does); stdout: nanoseconds per call
//! ```
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use ach_core::api::{self, Request};
use ach_core::calendar;
use ach_core::clock::{Clock, SystemClock};
use ach_core::engine::{Engine, HostOptions, OptionNames};
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind, Verdict};

fn today() -> chrono::NaiveDate {
    calendar::eastern_date_cached(SystemClock.now())
}

fn verdict(kind: Kind, body: &[u8], directory: &RoutingDirectory) -> Verdict {
    check_bytes(kind, body, &Context { today: today(), directory })
}

fn from_hex(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect()
}

fn corpus(directory: &RoutingDirectory) {
    let mut out = std::io::stdout().lock();
    for case in ach_tests::corpus() {
        let kind = Kind::parse(&case.kind).unwrap();
        let line = verdict(kind, &case.body(), directory).to_json();
        writeln!(out, "{}\t{line}", case.name).unwrap();
    }
}

fn verdicts(directory: &RoutingDirectory) {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let (kind, hex) = line.split_once('\t').unwrap();
        let kind = Kind::parse(kind).unwrap();
        writeln!(out, "{}", verdict(kind, &from_hex(hex), directory).to_json()).unwrap();
    }
}

/// The engine `ach_engine_open` opens for these options (ffi/src/engine.rs).
fn open(options: &str) -> Engine {
    let o = HostOptions::parse(options, OptionNames::C).unwrap();
    let opts = o.engine_options(SystemClock.now());
    match o.path {
        Some(path) => Engine::open(Path::new(&path), opts),
        None => Engine::in_memory(opts),
    }
    .unwrap()
}

fn route(options: &str) {
    let engine = open(options);
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        // What ach_engine_request does with an envelope.
        let response = api::route(&engine, &Request::from_json(&line).unwrap());
        writeln!(out, "{}\t{}\t{}", response.status, response.replayed, response.body).unwrap();
        out.flush().unwrap();
    }
}

fn bench(file: &str, seconds: f64) {
    let body = std::fs::read(file).unwrap();
    let directory = RoutingDirectory::embedded();
    assert!(verdict(Kind::Transaction, &body, &directory).valid, "{file} is not a valid transaction");
    let budget = Duration::from_secs_f64(seconds);
    let mut best = f64::INFINITY;
    let started = Instant::now();
    // Rounds of 10,000 calls; the fastest round's mean, as the Python harness
    // takes it (the least disturbed by the machine).
    while started.elapsed() < budget {
        let round = Instant::now();
        for _ in 0..10_000 {
            std::hint::black_box(verdict(Kind::Transaction, std::hint::black_box(&body), &directory));
        }
        best = best.min(round.elapsed().as_secs_f64() * 1e9 / 10_000.0);
    }
    println!("{best:.1}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let directory = RoutingDirectory::embedded();
    match args.get(1).map(String::as_str) {
        Some("corpus") => corpus(&directory),
        Some("verdicts") => verdicts(&directory),
        Some("route") => route(&args[2]),
        Some("bench") => bench(&args[2], args.get(3).map_or(2.0, |s| s.parse().unwrap())),
        _ => {
            eprintln!("usage: rust_side corpus | verdicts | route OPTIONS-JSON | bench FILE [SECONDS]");
            std::process::exit(2);
        }
    }
}
