//! # ach-sim
//!
//! A deterministic simulator of the ACH engine: a seeded random
//! workload of every operation against the engine on a manual clock, checked step
//! by step against a reference model (the [`oracle`], driven by the [`driver`]);
//! crash tests over a simulated disk that loses unsynced writes; and a writer
//! process for SIGKILL tests.
//! `RELIABILITY.md` says what each covers and how to run it.

pub mod calendar;
pub mod crash;
pub mod driver;
pub mod oracle;
pub mod rng;
pub mod step;
pub mod workload;
pub mod writer;

pub use driver::{Config, Sim, SimError, Summary};

/// `f` over `seeds` on every available core; results in seed order.
pub fn each_seed<T: Send>(seeds: std::ops::Range<u64>, f: impl Fn(u64) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(8) as u64;
    let next = std::sync::atomic::AtomicU64::new(seeds.start);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if seed >= seeds.end {
                    break;
                }
                let out = f(seed);
                results.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((seed, out));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|(seed, _)| *seed);
    results.into_iter().map(|(_, out)| out).collect()
}
