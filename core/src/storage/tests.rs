//! The stored encodings and the format version check.
#![allow(clippy::unwrap_used)]

use serde::{Deserialize, Serialize};

use super::codec::FORMAT_VERSION;
use super::{decode, encode, row_keys, Store, Table};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Sample {
    id: String,
    cents: i64,
    date: Option<chrono::NaiveDate>,
    at: chrono::DateTime<chrono::Utc>,
}

fn sample() -> Sample {
    Sample {
        id: "txn_0Ab3xYz9QQQrandomtail1".into(),
        cents: 123_456,
        date: chrono::NaiveDate::from_ymd_opt(2026, 11, 27),
        at: chrono::DateTime::from_timestamp(1_795_446_000, 0).unwrap(),
    }
}

#[test]
fn transactions_are_stored_in_binary_and_other_tables_in_json() {
    let binary = encode(Table::Transactions, &sample()).unwrap();
    let json = encode(Table::Merchants, &sample()).unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&binary).unwrap_err().to_string(),
        "expected value at line 1 column 1",
        "not JSON"
    );
    assert!(binary.len() < json.len() / 2 + 20, "{} bytes against {}", binary.len(), json.len());
    assert_eq!(decode::<Sample>(Table::Transactions, &binary).unwrap(), sample());
    assert_eq!(decode::<Sample>(Table::Merchants, &json).unwrap(), sample());
    // The feeds are binary too, and a change is the same bytes in both.
    for table in [Table::Changes, Table::Events, Table::Endings] {
        assert_eq!(encode(table, &sample()).unwrap(), binary);
    }
    let json_tables = Table::ALL.iter().filter(|t| !t.binary()).count();
    assert_eq!(json_tables, Table::ALL.len() - 6);
}

#[test]
fn a_damaged_or_foreign_record_is_an_error_naming_its_table_not_a_panic() {
    let binary = encode(Table::Transactions, &sample()).unwrap();
    let json = encode(Table::Merchants, &sample()).unwrap();
    let cases: [(Table, &[u8]); 4] = [
        (Table::Transactions, &json),
        (Table::Transactions, &binary[..binary.len() / 2]),
        (Table::Transactions, &[]),
        (Table::Merchants, &binary),
    ];
    for (table, bytes) in cases {
        let e = decode::<Sample>(table, bytes).unwrap_err();
        assert!(e.0.starts_with(&format!("a {} record is unreadable", table.name())), "{e}");
    }
}

#[test]
fn a_database_of_another_format_version_is_refused_and_left_as_it_was() {
    let dir = std::env::temp_dir().join(format!("ach-storage-test-{}", crate::ids::random_alphanumeric(12)));
    std::fs::create_dir_all(&dir).unwrap();
    let message = |problem| match problem {
        super::FileProblem::Storage(e) => e.0,
        other => panic!("{other:?}"),
    };
    for v in [0, FORMAT_VERSION + 1] {
        let path = dir.join(format!("v{v}.redb"));
        {
            let store = Store::open(&path).unwrap();
            store.write(|w| w.put(Table::Meta, row_keys::META_FORMAT, &v)).unwrap();
        }
        let e = message(Store::open(&path).unwrap_err());
        let expected =
            format!("the database has format version {v}; this build reads version {FORMAT_VERSION}");
        assert_eq!(e, expected);
        // Refused again: the failed open changed nothing.
        assert_eq!(message(Store::open(&path).unwrap_err()), expected);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A commit made without a sync is never shown by a read that answers
/// someone: [`Store::read_durable`] makes it durable first; [`Store::read_latest`] (the
/// engine's own decisions) does not wait for the disk.
#[cfg(feature = "simulation")]
#[test]
fn a_deferred_commit_is_made_durable_before_a_read_shows_it() {
    use super::crash::SimDisk;
    let disk = SimDisk::new();
    let store = Store::with_backend(disk.backend()).unwrap();
    // What a power loss now would leave at the key.
    let after_a_crash = |seed: u64| -> Option<u64> {
        let reopened = Store::with_backend(SimDisk::from_image(disk.crash_image(seed).0).backend()).unwrap();
        reopened.read_durable(|r| r.get(Table::Meta, b"step")).unwrap()
    };
    let step = |n: u64, defer: bool, require: bool| {
        store
            .write(|w| {
                w.put(Table::Meta, b"step", &n)?;
                if defer {
                    w.defer_sync();
                }
                if require {
                    w.require_sync();
                }
                Ok(())
            })
            .unwrap();
    };
    step(1, false, false);
    step(2, true, false);
    step(3, true, false);
    for seed in 0..8 {
        assert_eq!(after_a_crash(seed), Some(1), "deferred commits are lost with the power");
    }
    step(4, true, true);
    assert_eq!(after_a_crash(0), Some(4), "a required sync wins over a deferral");
    step(5, true, false);
    let seen: Option<u64> = store.read_latest(|r| r.get(Table::Meta, b"step")).unwrap();
    assert_eq!((seen, after_a_crash(1)), (Some(5), Some(4)), "read_latest does not wait for the disk");
    let seen: Option<u64> = store.read_durable(|r| r.get(Table::Meta, b"step")).unwrap();
    assert_eq!((seen, after_a_crash(2)), (Some(5), Some(5)), "read shows step 5 once it is durable");
}

/// With a redo log a deferred commit is redb's commit without a sync and
/// without a record: a crash may lose it (nobody was answered), and
/// [`Store::read_durable`] makes it durable (a checkpoint) before it shows it.
#[cfg(feature = "simulation")]
#[test]
fn with_a_log_a_deferred_commit_is_synced_before_a_read_shows_it() {
    use super::crash::SimDisk;
    use super::LogSettings;
    let disk = SimDisk::new();
    let store = Store::on_disk(&disk, LogSettings::default()).unwrap();
    let after_a_crash = |seed: u64| -> Option<u64> {
        let image = SimDisk::from_image(disk.crash_image(seed).0);
        let reopened = Store::on_disk(&image, LogSettings::default()).unwrap();
        reopened.read_durable(|r| r.get(Table::Meta, b"step")).unwrap()
    };
    let step = |n: u64, defer: bool| {
        store
            .write(|w| {
                w.put(Table::Meta, b"step", &n)?;
                if defer {
                    w.defer_sync();
                }
                Ok(())
            })
            .unwrap();
    };
    step(1, false);
    assert_eq!(disk.log_unsynced(), 0, "a durable commit's record is synced");
    step(2, true);
    step(3, true);
    assert_eq!(disk.log_unsynced(), 0, "deferred commits are not logged");
    let kept: std::collections::BTreeSet<Option<u64>> = (0..16).map(after_a_crash).collect();
    assert!(kept.contains(&Some(1)), "{kept:?}");
    assert!(kept.iter().all(|k| matches!(k, Some(1..=3))), "{kept:?}");
    let seen: Option<u64> = store.read_latest(|r| r.get(Table::Meta, b"step")).unwrap();
    assert_eq!(seen, Some(3), "read_latest does not wait for the disk");
    let syncs = disk.stats().syncs;
    let seen: Option<u64> = store.read_durable(|r| r.get(Table::Meta, b"step")).unwrap();
    assert_eq!(seen, Some(3));
    assert!(disk.stats().syncs > syncs, "read made the deferred commits durable first");
    for seed in 0..8 {
        assert_eq!(after_a_crash(seed), Some(3));
    }
}

/// A power loss before every I/O operation of a run of logged commits
/// (durable and deferred, puts and removes, checkpoints every third record,
/// large commits made durable by redb without a record, and the close): the reopened store holds exactly the state after some
/// commit, never one before the last acknowledged (a durable commit that
/// returned), never a part of one.
#[cfg(feature = "simulation")]
#[test]
fn a_power_loss_anywhere_leaves_a_whole_prefix_of_the_commits() {
    use std::collections::BTreeMap;

    use super::crash::SimDisk;
    use super::LogSettings;
    const COMMITS: u64 = 12;
    let settings = LogSettings { records: 3, bytes: 1 << 20, grow_by: 256, checkpoint_above: 256, hold: 3 };
    // Commit `i`: step = i, k{i} = i, k{i-2} removed; every third deferred.
    let commit = |w: &mut super::Write<'_>, i: u64| -> Result<(), super::StorageError> {
        w.put(Table::Meta, b"step", &i)?;
        w.put(Table::Usage, format!("k{i}").as_bytes(), &i)?;
        if i >= 2 {
            w.remove(Table::Usage, format!("k{}", i - 2).as_bytes())?;
        }
        if i.is_multiple_of(4) {
            // Past `checkpoint_above`: durable ones commit in redb without a record.
            w.put_raw(Table::Blobs, b"large", &[0x5a; 300])?;
        }
        if i % 3 == 1 {
            w.defer_sync();
        }
        Ok(())
    };
    let state_after = |i: u64| -> BTreeMap<Vec<u8>, u64> {
        (i.saturating_sub(1).max(1)..=i)
            .filter(|k| *k >= 1)
            .map(|k| (format!("k{k}").into_bytes(), k))
            .collect()
    };
    let run = |disk: &SimDisk| -> u64 {
        let mut acknowledged = 0;
        let Ok(store) = Store::on_disk(disk, settings) else { return 0 };
        for i in 1..=COMMITS {
            if store.write(|w| commit(w, i)).is_err() {
                return acknowledged;
            }
            if i % 3 != 1 {
                acknowledged = i;
            }
        }
        drop(store);
        if disk.crashed() {
            acknowledged
        } else {
            COMMITS
        }
    };
    let whole = SimDisk::new();
    assert_eq!(run(&whole), COMMITS);
    let mut crashed = 0;
    for point in 1..=whole.operations() {
        let disk = SimDisk::new();
        disk.lose_power_before(point);
        let acknowledged = run(&disk);
        crashed += u64::from(disk.crashed());
        for seed in 0..4 {
            let image = SimDisk::from_image(disk.crash_image(point * 7 + seed).0);
            let store = match Store::on_disk(&image, settings) {
                Ok(store) => store,
                // A crash inside redb's creation of its file (the simulator's
                // disk has no `.creating` rename): nothing was acknowledged.
                Err(e) if acknowledged == 0 && e.0.contains("Not a redb database") => continue,
                Err(e) => panic!("reopening after a crash before operation {point}: {e}"),
            };
            let step: u64 = store.read_durable(|r| r.get(Table::Meta, b"step")).unwrap().unwrap_or(0);
            let rows: BTreeMap<Vec<u8>, u64> = store
                .read_durable(|r| r.range(Table::Usage, b"", &[0xff], usize::MAX))
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k, serde_json::from_slice(&v).unwrap()))
                .collect();
            assert!(step >= acknowledged, "crash before {point}: step {step}, {acknowledged} acknowledged");
            let expected = if step == 0 { BTreeMap::new() } else { state_after(step) };
            assert_eq!(
                rows, expected,
                "crash before {point}, seed {seed}: not the state after commit {step}"
            );
        }
    }
    assert!(crashed >= whole.operations() - 1, "{crashed} of {} crashed", whole.operations());
}
