//! A cut-off of N pending transactions on a database file, the way production
//! runs it (`Engine::advance_to`: chunks of `schedule::CHUNK` originations, each
//! its own durable commit, then the file assembled in one more), while another
//! thread makes single durable creates and times each. Prints the cut-off's wall
//! time (every commit included), the file's entries, and the creates' slowest
//! and 99th-percentile waits during it.
//!
//! `cutoff_loop 100000` (release) is the figure in BENCHMARKS.md.
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ach_benches::Sandbox;
use ach_core::clock::ManualClock;
use ach_core::engine::{Engine, EngineClock, EngineOptions, Outcome};

fn main() {
    let pending: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let dir = std::env::temp_dir().join(format!("ach-cutoff-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let clock = ManualClock::new(ach_benches::start());
    let options =
        EngineOptions { clock: EngineClock::Manual(clock.clone()), ..ach_benches::sandbox_options() };
    let sandbox = Arc::new(Sandbox::over(Engine::open(&dir.join("engine.redb"), options).unwrap()));
    sandbox.screening_off();
    sandbox.create_many(0, pending, 1_000);
    // The sandbox's first cut-off has just passed: creates now wait for the next
    // one, and each request's own transaction may run a chunk of this one.
    let (_, cutoff) = ach_core::calendar::next_cutoff_after(sandbox.engine.now());
    clock.set(cutoff + chrono::Duration::seconds(1));

    let running = Arc::new(AtomicBool::new(true));
    let creator = {
        let (sandbox, running) = (Arc::clone(&sandbox), Arc::clone(&running));
        std::thread::spawn(move || {
            let mut waits = Vec::new();
            let mut n = pending as u64;
            while running.load(Ordering::Relaxed) {
                let op = sandbox.create_op(n);
                let started = Instant::now();
                let answer = sandbox.engine.execute(&sandbox.partner, op);
                waits.push(started.elapsed());
                assert!(matches!(answer, Ok(Outcome::TransactionCreated { .. })), "{answer:?}");
                n += 1;
            }
            waits
        })
    };
    std::thread::sleep(Duration::from_millis(20));
    let started = Instant::now();
    let progress = sandbox.engine.advance_to(cutoff + chrono::Duration::seconds(1)).unwrap();
    let elapsed = started.elapsed();
    running.store(false, Ordering::Relaxed);
    let mut waits = creator.join().unwrap();
    waits.sort();
    let files = sandbox.engine.origination_files().unwrap();
    let entries: u64 = files.iter().map(|f| f.entries).sum();
    let p99 = waits.get(waits.len() * 99 / 100).copied().unwrap_or_default();
    let max = waits.last().copied().unwrap_or_default();
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "cut-off of {pending}: {} originated by the ticker, {} file(s) of {entries} entries in {elapsed:?}; \
         {} single creates meanwhile: p99 wait {p99:?}, max {max:?}",
        progress.originated,
        files.len(),
        waits.len(),
    );
}
