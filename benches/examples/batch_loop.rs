//! `execute_batch` of 1,000 creates, `BATCHES` times, on a database file in a
//! temporary directory: the loop to profile the engine's create under callgrind
//! (`valgrind --tool=callgrind target/release/examples/batch_loop 5`), and a quick
//! wall-clock figure (creates per second) without criterion. `batch_loop N memory`
//! runs the same on redb's in-memory backend: the engine's CPU cost without the
//! file's page writes and flushes.
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Instant;

use ach_benches::Sandbox;

fn main() {
    let batches: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let dir = std::env::temp_dir().join(format!("ach-batch-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let memory = std::env::args().nth(2).as_deref() == Some("memory");
    let sandbox = if memory { Sandbox::in_memory() } else { Sandbox::file(&dir.join("engine.redb")) };
    let start = Instant::now();
    sandbox.create_many(0, (batches * 1_000) as usize, 1_000);
    let elapsed = start.elapsed();
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&dir);
    let creates = batches * 1_000;
    println!("{creates} creates in {elapsed:?}: {:.0} creates/s", creates as f64 / elapsed.as_secs_f64());
}
