//! A write transaction held open after its records are synced (`pending_commit.rs`):
//! read by the next read, kept through a failed write, and found again after
//! the store closes or loses its process.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::Ordering;

use redb::ReadableDatabase;

use super::{Store, Table};

fn put(store: &Store, key: &str, value: u64) {
    store.write(|w| w.put(Table::Usage, key.as_bytes(), &value)).unwrap();
}

fn get(store: &Store, key: &str) -> Option<u64> {
    store.read_durable(|r| r.get(Table::Usage, key.as_bytes())).unwrap()
}

/// What redb's own read transaction sees, without the store's settling.
fn redb_sees(store: &Store, key: &str) -> bool {
    let db = store.db.read().unwrap();
    let tx = db.as_ref().unwrap().begin_read().unwrap();
    let table = tx.open_table(Table::Usage.def()).unwrap();
    table.get(key.as_bytes()).unwrap().is_some()
}

#[test]
fn held_commits_wait_in_redb_until_a_read_and_a_failed_write_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.redb");
    let store = Store::open(&path).unwrap();
    put(&store, "a", 1);
    put(&store, "b", 2);
    assert!(store.may_be_pending.load(Ordering::SeqCst), "the second durable write is held");
    assert!(!redb_sees(&store, "b"), "held: not committed in redb yet");

    // A write that fails after writing: none of it stays, the held ones do.
    let failed = store.write(|w| {
        w.put(Table::Usage, b"c", &3u64)?;
        w.remove(Table::Usage, b"a")?;
        Err::<(), _>(super::StorageError("refused halfway".into()))
    });
    assert_eq!(failed, Err(super::StorageError("refused halfway".into())));
    // The failed write's recovery probe commits the held records, built
    // again without it.
    assert!(redb_sees(&store, "a") && redb_sees(&store, "b") && !redb_sees(&store, "c"));
    assert_eq!((get(&store, "a"), get(&store, "b"), get(&store, "c")), (Some(1), Some(2), None));

    // PendingCommit again; the next read commits what is held first.
    put(&store, "f", 6);
    put(&store, "g", 7);
    assert!(store.may_be_pending.load(Ordering::SeqCst) && !redb_sees(&store, "g"));
    assert_eq!(get(&store, "g"), Some(7));
    assert!(!store.may_be_pending.load(Ordering::SeqCst));
    assert!(redb_sees(&store, "g"));

    // PendingCommit again, then the store closes: its checkpoint keeps them.
    put(&store, "d", 4);
    put(&store, "e", 5);
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!((get(&store, "d"), get(&store, "e")), (Some(4), Some(5)));
}

#[test]
fn held_commits_lost_with_the_process_are_replayed_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.redb");
    let store = Store::open(&path).unwrap();
    for (n, key) in ["a", "b", "c"].iter().enumerate() {
        put(&store, key, n as u64);
    }
    assert!(!redb_sees(&store, "c"));
    // The process dies: no close, no checkpoint, redb's held transaction gone.
    std::mem::forget(store);
    // redb's file lock belongs to the forgotten handle: read a copy.
    let copy = dir.path().join("copy.redb");
    std::fs::copy(&path, &copy).unwrap();
    std::fs::copy(super::log_file_for(&path), super::log_file_for(&copy)).unwrap();
    let store = Store::open(&copy).unwrap();
    assert_eq!((get(&store, "a"), get(&store, "b"), get(&store, "c")), (Some(0), Some(1), Some(2)));
}

/// How many tables the pending commit has open (`None`: none is held).
fn held_tables(store: &Store) -> Option<usize> {
    store.pending_slot().as_ref().map(|held| held.tx.with_dependent(|_, kv| kv.opened()))
}

#[test]
fn a_held_transaction_keeps_its_tables_open_until_it_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("held.redb")).unwrap();
    put(&store, "a", 1);
    put(&store, "b", 2);
    // The usage table and meta (the record's sequence number) stay open for
    // the next write, which continues the transaction without opening them.
    assert_eq!(held_tables(&store), Some(2));
    store.write(|w| w.put_raw(Table::Checks, b"c", b"3")).unwrap();
    assert_eq!(held_tables(&store), Some(3), "one more table opened, none again");
    put(&store, "d", 4);
    assert_eq!(held_tables(&store), Some(3));
    // A read commits it (its tables closed first), and sees every write.
    assert_eq!((get(&store, "a"), get(&store, "d")), (Some(1), Some(4)));
    assert_eq!(held_tables(&store), None);
    assert_eq!(store.read_durable(|r| r.get_raw(Table::Checks, b"c")).unwrap(), Some(b"3".to_vec()));
    // The next write opens what it uses afresh.
    put(&store, "e", 5);
    put(&store, "f", 6);
    assert_eq!(held_tables(&store), Some(2));
}
