//! A cut-off alone, for profiling: `cutoff_only prepare DIR N [same-day]` makes
//! a database of N pending transactions in DIR (Same Day ACH ones with
//! `same-day`); `cutoff_only run DIR [same-day]` opens it and times
//! `Engine::advance_to` past the cut-off (the 18:00 one, or the next same-day
//! one: chunks, file and durable commits), with no other writer. Copy DIR
//! before each run: the run changes it.
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Instant;

use ach_core::clock::ManualClock;
use ach_core::engine::{Engine, EngineClock, EngineOptions, Operation};

fn engine(dir: &std::path::Path, clock: &ManualClock) -> Engine {
    let options =
        EngineOptions { clock: EngineClock::Manual(clock.clone()), ..ach_benches::sandbox_options() };
    Engine::open(&dir.join("engine.redb"), options).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[2]);
    let clock = ManualClock::new(ach_benches::start());
    let same_day = args.last().is_some_and(|a| a == "same-day");
    if args[1] == "prepare" {
        let n: usize = args[3].parse().unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        let sandbox = ach_benches::Sandbox::over(engine(&dir, &clock));
        sandbox.screening_off();
        if !same_day {
            sandbox.create_many(0, n, 1_000);
            return;
        }
        for first in (0..n).step_by(1_000) {
            let batch = (first..n.min(first + 1_000))
                .map(|i| {
                    let mut body = sandbox.transaction_body(i as u64);
                    body.pop();
                    body.extend_from_slice(br#","same_day":true}"#);
                    let op = Operation::CreateTransaction { partner_id: sandbox.partner_id.clone(), body };
                    (sandbox.partner.clone(), op)
                })
                .collect();
            assert!(sandbox.engine.execute_batch(batch).iter().all(Result::is_ok), "a create was refused");
        }
        return;
    }
    let engine = engine(&dir, &clock);
    let (_, cutoff) = if same_day {
        ach_core::calendar::next_same_day_cutoff_after(
            engine.now(),
            &ach_core::calendar::DEFAULT_SAME_DAY_CUTOFFS,
        )
        .unwrap()
    } else {
        ach_core::calendar::next_cutoff_after(engine.now())
    };
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
