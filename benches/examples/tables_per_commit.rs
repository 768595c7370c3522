//! What redb alone charges for a durable commit that writes to more tables: the
//! floor under the engine's durable single create (docs/bench-history.md, "Engine").
//!
//!     cargo run --release -p ach-benches --example tables_per_commit -- [PAIRS]
//!
//! Five databases in one temporary directory, each with five tables filled with
//! 20,000 appended entries (so every table is a root branch over leaves, as the
//! engine's are after a few thousand creates). Commit `k` of database `n` inserts
//! one entry into each of its first `n` tables, at the end of each table, the way
//! a create appends: a 311-byte value in the first (the engine's stored
//! transaction record is 311 bytes), 60 bytes in the others (a status change is
//! ~55). A sixth database holds the same five entries per commit in two tables:
//! the record, and four entries in four key ranges of a second table (the
//! engine's four small tables merged into one). Then, alternately (`PAIRS` rounds, default 1,000), one durable commit on
//! each database; medians and the ratio of each to the one-table commit, plus
//! the `pwrite` calls per commit if run under `strace -f -c`.
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use redb::{Database, TableDefinition};

const TABLES: [TableDefinition<'static, u64, &[u8]>; 5] = [
    TableDefinition::new("t0"),
    TableDefinition::new("t1"),
    TableDefinition::new("t2"),
    TableDefinition::new("t3"),
    TableDefinition::new("t4"),
];
const PREFILL: u64 = 20_000;

/// Where the entries of the last four of five tables go in the "two tables"
/// layout: four key ranges of the second table, one per former table.
const RANGE: u64 = 1 << 40;

/// One commit inserting `key` into the first `n` tables; `n == 0` is the
/// two-table layout (the record, then four entries in ranges of one table).
fn commit(db: &Database, n: usize, key: u64, record: &[u8], small: &[u8]) {
    let txn = db.begin_write().unwrap();
    if n == 0 {
        txn.open_table(TABLES[0]).unwrap().insert(key, record).unwrap();
        let mut index = txn.open_table(TABLES[1]).unwrap();
        for range in 1..5 {
            index.insert(range * RANGE + key, small).unwrap();
        }
    } else {
        for (i, def) in TABLES.iter().take(n).enumerate() {
            let mut table = txn.open_table(*def).unwrap();
            table.insert(key, if i == 0 { record } else { small }).unwrap();
        }
    }
    txn.commit().unwrap();
}

/// A database laid out for `commit(_, n, ..)`, each table (or range) holding
/// `PREFILL` entries.
fn prefilled(path: &std::path::Path, n: usize, record: &[u8], small: &[u8]) -> Database {
    let db = Database::create(path).unwrap();
    let txn = db.begin_write().unwrap();
    for key in 0..PREFILL {
        if n == 0 {
            txn.open_table(TABLES[0]).unwrap().insert(key, record).unwrap();
        }
    }
    if n == 0 {
        let mut index = txn.open_table(TABLES[1]).unwrap();
        for range in 1..5 {
            for key in 0..PREFILL {
                index.insert(range * RANGE + key, small).unwrap();
            }
        }
    }
    for (i, def) in TABLES.iter().take(n).enumerate() {
        let mut table = txn.open_table(*def).unwrap();
        for key in 0..PREFILL {
            table.insert(key, if i == 0 { record } else { small }).unwrap();
        }
    }
    txn.commit().unwrap();
    db
}

fn main() {
    let pairs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let dir = tempfile::tempdir().unwrap();
    let record = vec![0x5a_u8; 311];
    let small = vec![0xa5_u8; 60];
    // Layouts 1..=5 tables, then 0: the five entries in two tables.
    let layouts: Vec<usize> = (1..=TABLES.len()).chain([0]).collect();
    let dbs: Vec<Database> = layouts
        .iter()
        .map(|&n| prefilled(&dir.path().join(format!("tables-{n}.redb")), n, &record, &small))
        .collect();
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(pairs); dbs.len()];
    for round in 0..pairs as u64 {
        for (i, db) in dbs.iter().enumerate() {
            let start = Instant::now();
            commit(db, layouts[i], PREFILL + round, &record, &small);
            times[i].push(start.elapsed());
        }
    }
    let medians: Vec<Duration> = times
        .iter_mut()
        .map(|t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect();
    for (median, n) in medians.iter().zip(&layouts) {
        let layout = match n {
            0 => "5 entries in 2 tables".to_owned(),
            n => format!("{n} entries in {n} tables"),
        };
        println!(
            "{layout}: median {median:.2?}, ratio to one entry in one table {:.3}",
            median.as_secs_f64() / medians[0].as_secs_f64()
        );
    }
}
