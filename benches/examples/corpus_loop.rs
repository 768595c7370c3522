//! Validate every transaction case of the shared corpus (`tests/corpus/`) in a
//! loop, natively: the Rust side of the WebAssembly-vs-native comparison in
//! BENCHMARKS.md (`benches/examples/corpus_loop.mjs` runs this next to the
//! module in node, round for round).
//!
//!     corpus_loop [ITERATIONS] [ROUNDS]
//!
//! Each round validates the whole transaction corpus ITERATIONS times (the
//! verdict JSON included, as `validateTransaction` makes it) and prints one line
//! `ns_per_validation <float>`; then `cases <n>`.
#![allow(clippy::unwrap_used, missing_docs)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use chrono::NaiveDate;
use serde_json::Value;

/// The request bodies of the corpus's transaction cases, exactly as the Rust
/// corpus test gives them (`raw` text, or the request serialized).
fn transaction_bodies() -> Vec<Vec<u8>> {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/transaction.json");
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    cases
        .iter()
        .map(|c| match (c.get("raw"), c.get("request")) {
            (Some(Value::String(raw)), _) => raw.clone().into_bytes(),
            (_, Some(request)) => serde_json::to_vec(request).unwrap(),
            _ => Vec::new(),
        })
        .collect()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let bodies = transaction_bodies();
    let directory = RoutingDirectory::embedded();
    let ctx = Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: &directory };
    for _ in 0..rounds {
        let started = Instant::now();
        let mut bytes = 0usize;
        for _ in 0..iterations {
            for body in &bodies {
                bytes += black_box(check_bytes(Kind::Transaction, black_box(body), &ctx).to_json()).len();
            }
        }
        let ns = started.elapsed().as_nanos() as f64 / (iterations * bodies.len()) as f64;
        black_box(bytes);
        println!("ns_per_validation {ns:.1}");
    }
    println!("cases {}", bodies.len());
}
