//! A cut-off alone, for profiling: `cutoff_only prepare DIR N` makes a database
//! of N pending transactions in DIR; `cutoff_only run DIR` opens it and times
//! `Engine::advance_to` past the cut-off (chunks, file and durable commits),
//! with no other writer. Copy DIR before each run: the run changes it.
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Instant;

use ach_core::clock::ManualClock;
use ach_core::engine::{Engine, EngineClock, EngineOptions};

fn engine(dir: &std::path::Path, clock: &ManualClock) -> Engine {
    let options =
        EngineOptions { clock: EngineClock::Manual(clock.clone()), ..ach_benches::sandbox_options() };
    Engine::open(&dir.join("engine.redb"), options).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[2]);
    let clock = ManualClock::new(ach_benches::start());
    if args[1] == "prepare" {
        let n: usize = args[3].parse().unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        let sandbox = ach_benches::Sandbox::over(engine(&dir, &clock));
        sandbox.create_many(0, n, 1_000);
        return;
    }
    let engine = engine(&dir, &clock);
    let (_, cutoff) = ach_core::calendar::next_cutoff_after(engine.now());
    clock.set(cutoff + chrono::Duration::seconds(1));
    let started = Instant::now();
    let progress = engine.advance_to(cutoff + chrono::Duration::seconds(1)).unwrap();
    let elapsed = started.elapsed();
    let files = engine.origination_files().unwrap();
    let entries: u64 = files.iter().map(|f| f.entries).sum();
    println!(
        "cut-off: {} originated, {entries} entries in {} file(s), {elapsed:?}",
        progress.originated,
        files.len()
    );
}
