//! The deterministic simulator in CI: 200 seeds of a moderate length in a debug
//! build (`cargo run -p ach-sim --release -- --seeds 200` runs longer ones), and
//! the same seed replaying the same run.
#![allow(clippy::unwrap_used)]

use ach_sim::{each_seed, Config, Sim};

/// Steps per seed here; `SIM_STEPS` overrides.
fn steps() -> usize {
    std::env::var("SIM_STEPS").ok().and_then(|v| v.parse().ok()).unwrap_or(60)
}

#[test]
fn two_hundred_seeds_agree_with_the_model() {
    let seeds: u64 = std::env::var("SIM_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let config = Config { steps: steps(), full_every: 10 };
    let started = std::time::Instant::now();
    let runs = each_seed(0..seeds, |seed| Sim::in_memory(seed, config).and_then(Sim::run));
    let mut transactions = 0;
    for run in runs {
        match run {
            Ok(s) => transactions += s.transactions,
            Err(e) => panic!("{e}"),
        }
    }
    println!(
        "{seeds} seeds × {} steps: {transactions} transactions, {:.1}s",
        config.steps,
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn a_seed_replays_the_same_run() {
    let config = Config { steps: 80, full_every: 20 };
    let a = Sim::in_memory(11, config).and_then(Sim::run).unwrap_or_else(|e| panic!("{e}"));
    let b = Sim::in_memory(11, config).and_then(Sim::run).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (a.digest, &a.counts, a.transactions, a.changes),
        (b.digest, &b.counts, b.transactions, b.changes)
    );
    let c = Sim::in_memory(12, config).and_then(Sim::run).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(a.digest, c.digest, "another seed, another run");
}

#[test]
fn a_failure_names_its_seed_and_the_command_that_replays_it() {
    let e = ach_sim::SimError {
        seed: 42,
        step: 7,
        steps: 60,
        full_every: 10,
        crash_at: None,
        message: "x".into(),
    };
    assert!(e.to_string().contains("seed 42 failed at step 7"));
    assert_eq!(e.replay(), "cargo run -p ach-sim -- --seed 42 --steps 60 --full-every 10");
}
