//! Limits and duplicate detection, on a database file with redb's
//! default `Durability::Immediate`, each case an `execute_batch` of 1,000 creates
//! (one durable commit, so that the checks' cost is not hidden behind an fsync
//! per create):
//!
//! 1. `checks`: every merchant limit and every overall limit set (none binding:
//!    the bench creates are all accepted), duplicate declining on, a 30-day period,
//!    against the fewest checks a merchant has (no overall limits, only the
//!    approval's limits, out of reach, and duplicates allowed).
//! 2. `history`: the same batch (checks and screening on) on an engine whose merchant already has
//!    1,000 transactions vs 1,000,000 (in test mode, `cargo bench -- --test`:
//!    20,000; `ACH_LIMITS_PRIOR=N` sets it), made 50,000 a day on consecutive
//!    days (their cut-offs and settlements run as the clock passes), the measured
//!    batches on the next day; then, on the long history, its risk rules off
//!    against on. Set-up: `common/limits_fixture.rs`.
//!
//! 3. `screening`: the same batch (checks on) with every risk rule on (the
//!    default; none holds these creates: each goes to its own account, with
//!    amounts of $1.00 to $9.99) against the rules off.
//!
//! After criterion's measurements each group also times its two cases alternately
//! and prints both medians and the ratio (`paired`), the figure `BENCHMARKS.md`
//! reports: this shared machine's load then hits both cases alike.
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "common/limits_fixture.rs"]
mod limits_fixture;

use ach_benches::paired::paired;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use limits_fixture::{Fixture, BATCH};

fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// `ACH_LIMITS_MEMORY=1`: the same engines on redb's in-memory backend (the
/// checks' CPU cost without the page writes), for diagnosis.
fn memory() -> bool {
    std::env::var_os("ACH_LIMITS_MEMORY").is_some()
}

fn measure(c: &mut Criterion, group: &str, cases: &[(&str, &Fixture)]) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(BATCH as u64));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(20);
    for (name, fixture) in cases {
        g.bench_function(*name, |b| {
            b.iter_batched(|| fixture.creates(BATCH), |ops| fixture.run(ops), BatchSize::PerIteration);
        });
    }
    g.finish();
}

fn checks(c: &mut Criterion) {
    let (on, off) = (Fixture::new(true, memory()), Fixture::new(false, memory()));
    measure(c, "checks", &[("all_limits_and_duplicates_on", &on), ("checks_off", &off)]);
    let pairs = if test_mode() { 2 } else { 30 };
    paired("checks", "checks_off", "all_limits_and_duplicates_on", pairs, || off.batch(), || on.batch());
}

fn history(c: &mut Criterion) {
    let long = match std::env::var("ACH_LIMITS_PRIOR") {
        Ok(n) => n.parse().unwrap(),
        Err(_) if test_mode() => 20_000,
        Err(_) => 1_000_000,
    };
    let began = std::time::Instant::now();
    let big = Fixture::with_history(long, memory());
    eprintln!("history: built {long} prior transactions in {:.1} s", began.elapsed().as_secs_f64());
    let small = Fixture::with_history(1_000, memory());
    let long_name = format!("prior_{long}");
    let long_name = long_name.as_str();
    measure(c, "history", &[("prior_1k", &small), (long_name, &big)]);
    let pairs = if test_mode() { 2 } else { 30 };
    paired("history", "prior_1k", long_name, pairs, || small.batch(), || big.batch());
    // Screening's cost with the long history: its rules off and on in turn
    // (each side sets its rules, one small write, then runs its batch).
    let (off, on) = (format!("{long_name}_risk_rules_off"), format!("{long_name}_risk_rules_on"));
    let batch = |rules_on: bool| {
        big.screening(rules_on);
        big.batch()
    };
    paired("history", &off, &on, pairs, || batch(false), || batch(true));
}

fn screening(c: &mut Criterion) {
    let (on, off) = (Fixture::screened(true, memory()), Fixture::new(true, memory()));
    measure(c, "screening", &[("risk_rules_on", &on), ("risk_rules_off", &off)]);
    let pairs = if test_mode() { 2 } else { 30 };
    paired("screening", "risk_rules_off", "risk_rules_on", pairs, || off.batch(), || on.batch());
}

criterion_group!(benches, checks, history, screening);
criterion_main!(benches);
