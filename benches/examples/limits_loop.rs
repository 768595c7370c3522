//! `limits_loop BATCHES on|off|screened [memory]`: the limits bench's creates
//! (every limit set, duplicate declining on, each create from its own account)
//! in batches of 1,000, with the checks on or off (screening off), or on with
//! every risk rule on, on a database file or in memory: the loop to
//! count the checks' instructions under callgrind
//! (`valgrind --tool=callgrind target/release/examples/limits_loop 5 on memory`,
//! then the same with `off`) and a quick creates-per-second figure.
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Instant;

// The example uses only the "checks" half of the bench's set-up.
#[allow(dead_code)]
#[path = "../benches/common/limits_fixture.rs"]
mod limits_fixture;

use limits_fixture::{Fixture, BATCH};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let batches: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let checks = args.get(2).map(String::as_str) != Some("off");
    let screened = args.get(2).map(String::as_str) == Some("screened");
    let memory = args.get(3).map(String::as_str) == Some("memory");
    let fixture = if screened { Fixture::screened(true, memory) } else { Fixture::new(checks, memory) };
    let start = Instant::now();
    for _ in 0..batches {
        fixture.batch();
    }
    let elapsed = start.elapsed();
    let creates = batches * BATCH;
    println!(
        "{creates} creates, checks {}: {elapsed:?}, {:.0} creates/s",
        if checks { "on" } else { "off" },
        creates as f64 / elapsed.as_secs_f64()
    );
}
