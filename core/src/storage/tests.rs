//! The stored encodings and the format version check.
#![allow(clippy::unwrap_used)]

use serde::{Deserialize, Serialize};

use super::{decode, encode, row_keys, Store, Table, FORMAT_VERSION};

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
    assert!(serde_json::from_slice::<serde_json::Value>(&binary).is_err(), "not JSON");
    assert!(binary.len() < json.len() / 2 + 20, "{} bytes against {}", binary.len(), json.len());
    assert_eq!(decode::<Sample>(Table::Transactions, &binary).unwrap(), sample());
    assert_eq!(decode::<Sample>(Table::Merchants, &json).unwrap(), sample());
    // The feeds are binary too, and a change is the same bytes in both.
    for table in [Table::Changes, Table::Events] {
        assert_eq!(encode(table, &sample()).unwrap(), binary);
    }
    let json_tables = Table::ALL.iter().filter(|t| !t.binary()).count();
    assert_eq!(json_tables, Table::ALL.len() - 3);
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
    let path = dir.join("old.redb");
    {
        let store = Store::open(&path).unwrap();
        store.write(|w| w.put(Table::Meta, row_keys::META_FORMAT, &(FORMAT_VERSION - 1))).unwrap();
    }
    let message = |problem| match problem {
        super::FileProblem::Storage(e) => e.0,
        other => panic!("{other:?}"),
    };
    let e = message(Store::open(&path).unwrap_err());
    let expected = format!(
        "the database has format version {}; this build reads version {FORMAT_VERSION}",
        FORMAT_VERSION - 1
    );
    assert_eq!(e, expected);
    // Refused again: the failed open changed nothing.
    assert_eq!(message(Store::open(&path).unwrap_err()), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A commit made without a sync is never shown by a read that answers
/// someone: [`Store::read`] makes it durable first; [`Store::read_any`] (the
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
        reopened.read(|r| r.get(Table::Meta, b"step")).unwrap()
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
    let seen: Option<u64> = store.read_any(|r| r.get(Table::Meta, b"step")).unwrap();
    assert_eq!((seen, after_a_crash(1)), (Some(5), Some(4)), "read_any does not wait for the disk");
    let seen: Option<u64> = store.read(|r| r.get(Table::Meta, b"step")).unwrap();
    assert_eq!((seen, after_a_crash(2)), (Some(5), Some(5)), "read shows step 5 once it is durable");
}
