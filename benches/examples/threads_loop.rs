//! Single durable creates from many threads of one process, against the same
//! engine's rate in batches of 1,000, in one run on one database file: what a
//! C or Rust host gets from the engine's own group commit when its threads
//! each call `Engine::execute` (the call `ach_engine_request` makes) for one
//! payment.
//!
//! `threads_loop [THREADS [CREATES_PER_THREAD]]` (default 16 × 2,000; release)
//! prints the three rates and the ratio of the threaded singles to the batches.
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Instant;

use ach_benches::Sandbox;

fn rate(creates: usize, f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    creates as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let threads: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(16);
    let each: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Arc::new(Sandbox::file(&dir.path().join("engine.redb")));
    let total = threads * each;
    let batches = rate(total, || sandbox.create_many(0, total, 1_000));
    let alone = rate(each, || sandbox.create_many(total as u64, each, 1));
    let shared = rate(total, || {
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
        "batches of 1,000: {batches:.0} creates/s; one thread, one create per call: {alone:.0}/s; \
         {threads} threads, one create per call: {shared:.0}/s = {:.2} of the batch rate",
        shared / batches
    );
}
