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
