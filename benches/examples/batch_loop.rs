//! `execute_batch` of 1,000 creates, `BATCHES` times, on a database file in a
//! temporary directory: the loop to profile the engine's create under callgrind
//! (`valgrind --tool=callgrind target/release/examples/batch_loop 5`), and a quick
//! wall-clock figure (creates per second) without criterion. `batch_loop N memory`
//! runs the same on redb's in-memory backend: the engine's CPU cost without the
//! file's page writes and flushes. A third argument sets the batch size
//! (`batch_loop 1000 file 1`: a thousand single durable creates).
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Instant;

use ach_benches::Sandbox;

fn main() {
    let batches: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let dir = std::env::temp_dir().join(format!("ach-batch-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let memory = std::env::args().nth(2).as_deref() == Some("memory");
    let sandbox = if memory { Sandbox::in_memory() } else { Sandbox::file(&dir.join("engine.redb")) };
    let size: u64 = std::env::args().nth(3).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let start = Instant::now();
    sandbox.create_many(0, (batches * size) as usize, size as usize);
    let elapsed = start.elapsed();
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&dir);
    let creates = batches * size;
    println!("{creates} creates in {elapsed:?}: {:.0} creates/s", creates as f64 / elapsed.as_secs_f64());
}
