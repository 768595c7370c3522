//! Crash safety over a simulated disk (`ach_core::engine::crash::SimDisk`): a run
//! loses power just before its n-th I/O operation (a write, a length change or a
//! sync), for every n (every `SIM_CRASH_STRIDE`-th); the disk keeps what was
//! synced plus a random, possibly torn, subset of the rest; the engine reopens on
//! it. Every acknowledged operation must be there, the one in flight wholly or
//! not at all, and the run goes on against the model.
#![allow(clippy::unwrap_used)]

use ach_sim::crash::sweep;
use ach_sim::Config;

#[test]
fn no_crash_point_loses_an_acknowledged_operation() {
    let stride = std::env::var("SIM_CRASH_STRIDE").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let config = Config { steps: 30, full_every: 1 };
    let started = std::time::Instant::now();
    let s = sweep(0, config, stride).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "seed 0: {} I/O operations, {} crash points, {} crashed; in flight committed {} / not {}; \
         {} unsynced operations at the crashes ({} landed, {} torn); {} acknowledged transactions, 0 lost; {:.1}s",
        s.operations,
        s.points,
        s.crashed,
        s.in_flight[0],
        s.in_flight[1],
        s.unsynced,
        s.kept,
        s.torn,
        s.acknowledged,
        started.elapsed().as_secs_f64()
    );
    assert!(s.crashed * 10 >= s.points * 9, "the crash points fall inside the run");
    assert!(s.in_flight[1] > 0, "commits cut off before they landed");
    assert!(s.kept > 0 && s.torn > 0, "unsynced writes landed, some torn");
}

/// What a SIGKILL (or power loss) between redb's `set_len` of a new file and
/// its first header write leaves: the file at its initial length, all zeros.
#[test]
fn a_crash_while_creating_the_database_leaves_a_file_that_opens() {
    // redb creates a database by extending the empty file (set_len), writing a
    // header without the magic number, syncing, writing the magic number and
    // syncing again. A crash anywhere before the last sync leaves a non-empty file
    // without the magic number, and `Database::create` then refuses it for good
    // ("Not a redb database: magic number mismatch"), although nothing was ever
    // committed. `achd serve` killed during its very first start cannot start
    // again until someone deletes `ach.redb`. Fix (storage): create the file under
    // a temporary name and rename it into place once the first commit is durable
    // (or treat a file with no valid header and no commit as new).
    //
    // Fixed in `Store::open`: a new database is created as `<path>.creating` and
    // renamed into place after its first durable commit, so a crash during creation
    // leaves only that temporary file, which the next open discards.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    std::fs::write(dir.path().join("ach.redb.creating"), vec![0u8; 1 << 20]).unwrap();
    let opened =
        ach_core::engine::Engine::open(&path, ach_sim::writer::options()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(opened.origination_files(), Ok(vec![]), "a new, empty database");
    assert!(!dir.path().join("ach.redb.creating").exists());
    drop(opened);
    // It opens again, on the same empty, consistent database.
    let reopened = ach_core::engine::Engine::open(&path, ach_sim::writer::options()).unwrap();
    assert_eq!(reopened.origination_files(), Ok(vec![]));
    assert_eq!(reopened.audit_usage(), Ok(Ok(())));
    assert!(!dir.path().join("ach.redb.creating").exists());
}
