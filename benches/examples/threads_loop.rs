//! Single durable creates from many threads of one process, against the same
//! engine's rate in batches of 1,000, in one run on one database file: what a
//! C or Rust host gets from the engine's own group commit when its threads
//! each call `Engine::execute` (the call `ach_engine_request` makes) for one
//! payment.
//!
//! `threads_loop [THREADS [CREATES_PER_THREAD]]` (default 16 × 2,000; release)
//! prints the three rates and the ratio of the threaded singles to the batches,
//! then each phase's CPU per create and how busy it kept the machine's cores
//! (the threads' bound is their commits' cycle, not the CPU, when the cores
//! are far from busy: `docs/bench-history.md`).
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Instant;

use ach_benches::cpu::own_cpu_seconds;
use ach_benches::Sandbox;

/// A phase's creates per second, CPU seconds per create, and CPU seconds
/// per second of its wall time.
struct Phase {
    rate: f64,
    cpu_per_create: f64,
    busy: f64,
}

fn phase(creates: usize, f: impl FnOnce()) -> Phase {
    let (start, cpu) = (Instant::now(), own_cpu_seconds());
    f();
    let (wall, cpu) = (start.elapsed().as_secs_f64(), own_cpu_seconds() - cpu);
    Phase { rate: creates as f64 / wall, cpu_per_create: cpu / creates as f64, busy: cpu / wall }
}

fn main() {
    let threads: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(16);
    let each: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Arc::new(Sandbox::file(&dir.path().join("engine.redb")));
    let total = threads * each;
    let batches = phase(total, || sandbox.create_many(0, total, 1_000));
    let alone = phase(each, || sandbox.create_many(total as u64, each, 1));
    let shared = phase(total, || {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let sandbox = Arc::clone(&sandbox);
                std::thread::spawn(move || {
                    let first = ((2 + t) * total) as u64;
                    for n in first..first + each as u64 {
                        let answer = sandbox.engine.execute(&sandbox.partner, sandbox.create_op(n));
                        assert!(answer.is_ok(), "{answer:?}");
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
    });
    println!(
        "batches of 1,000: {:.0} creates/s; one thread, one create per call: {:.0}/s; \
         {threads} threads, one create per call: {:.0}/s = {:.2} of the batch rate",
        batches.rate,
        alone.rate,
        shared.rate,
        shared.rate / batches.rate
    );
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let show = |p: &Phase| {
        format!(
            "{:.0} µs ({:.0} % of {cores} cores busy)",
            p.cpu_per_create * 1e6,
            p.busy * 100.0 / cores as f64
        )
    };
    println!(
        "CPU per create: batches {}; one thread {}; {threads} threads {}",
        show(&batches),
        show(&alone),
        show(&shared)
    );
}
