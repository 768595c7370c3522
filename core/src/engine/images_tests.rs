//! Check images: bound to their transaction and side, and images an earlier
//! build stored in clear sealed when the engine opens.
#![allow(clippy::unwrap_used)]

use base64::Engine as _;

use super::images::{self, CheckSide, SEALED};
use super::{Caller, Engine, EngineOptions, Operation, Refusal};
use crate::error::AchError;
use crate::storage::{row_keys, Table};

/// A PNG carrying an account number, as base64.
fn image(text: &str) -> String {
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    bytes.extend_from_slice(format!("MICR 021000021 {text} 1001").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn options() -> EngineOptions {
    let start = chrono::DateTime::from_timestamp(1_795_446_000, 0).unwrap();
    EngineOptions::manual(start).sandbox()
}

/// A partner, an approved BOC merchant and `n` BOC transactions; their ids.
fn checks(engine: &Engine, n: usize) -> Vec<String> {
    let (partner_id, partner, merchant_id) = super::test_tenant::tenant(engine, &["BOC"]);
    (0..n)
        .map(|i| {
            let body = serde_json::json!({
                "merchant_id": merchant_id, "amount": "10.00", "description": "check", "type": "debit",
                "standard_entry_class": "BOC", "check_number": format!("{}", 1000 + i),
                "check_image_front": image(&format!("ACCT-77889900{i:04}")),
                "check_image_back": image(&format!("back ACCT-77889900{i:04}")),
                "customer": {"name": "Ada", "routing_number": "021000021", "account_number": "778899001122",
                             "account_type": "checking"}});
            super::test_tenant::create(engine, &partner, &partner_id, &body)
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn an_image_moved_to_another_side_or_transaction_does_not_open() {
    let engine = Engine::in_memory(options()).unwrap();
    let ids = checks(&engine, 2);
    let read = |id: &str, side| engine.check_image(id, side);
    assert_eq!(read(&ids[0], CheckSide::Front).unwrap(), Some(image("ACCT-778899000000")));
    assert_eq!(read(&ids[0], CheckSide::Back).unwrap(), Some(image("back ACCT-778899000000")));
    // Swap the sides of the first check; put the second's front on the first.
    let raw = |id: &str, side: CheckSide| {
        engine.store.read(|r| r.get_raw(Table::Images, &row_keys::image(id, side.as_str()))).unwrap().unwrap()
    };
    let (front, back, other) =
        (raw(&ids[0], CheckSide::Front), raw(&ids[0], CheckSide::Back), raw(&ids[1], CheckSide::Front));
    assert_eq!(front[0], SEALED);
    let put = |id: &str, side: CheckSide, value: &[u8]| {
        engine.store.write(|w| w.put_raw(Table::Images, &row_keys::image(id, side.as_str()), value)).unwrap();
    };
    put(&ids[0], CheckSide::Front, &back);
    put(&ids[0], CheckSide::Back, &front);
    for side in CheckSide::BOTH {
        let e = read(&ids[0], side).unwrap_err();
        assert_eq!(e.message(), "The database is currently unavailable", "{e:?}");
    }
    let unavailable = Err(Refusal::refused(AchError::DatabaseUnavailable));
    put(&ids[0], CheckSide::Front, &other);
    assert_eq!(read(&ids[0], CheckSide::Front), unavailable);
    // Damaged or empty values are errors too, never a panic.
    for bad in [&[][..], &[SEALED][..], &other[1..]] {
        put(&ids[0], CheckSide::Front, bad);
        assert_eq!(read(&ids[0], CheckSide::Front), unavailable, "{bad:?}");
    }
    assert_eq!(read(&ids[1], CheckSide::Front).unwrap(), Some(image("ACCT-778899000001")));
    assert_eq!(read("txn_nosuchtransaction0000", CheckSide::Front).unwrap(), None);
}

/// A database an earlier build wrote (images in clear, no `images_sealed` mark)
/// has them sealed in the open's write transaction: the file no longer holds
/// them, they read back the same, and an originated check gains its retention.
#[test]
fn images_an_earlier_build_stored_in_clear_are_sealed_when_the_engine_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    let ids = {
        let engine = Engine::open(&path, options()).unwrap();
        let ids = checks(&engine, 40);
        // The last is voided; the others originate at the cut-off.
        let partner = engine
            .store
            .read(|r| r.get::<super::records::TransactionRecord>(Table::Transactions, ids[39].as_bytes()))
            .unwrap()
            .unwrap()
            .partner_id;
        let caller = Caller::Partner { partner_id: partner.clone() };
        let void = Operation::VoidTransaction { partner_id: partner, transaction_id: ids[39].clone() };
        engine.execute(&caller, void).unwrap();
        let cutoff = engine.now() + chrono::Duration::days(1);
        engine.execute(&Caller::Operator, Operation::SetClock { now: cutoff }).unwrap();
        // What an earlier build left: every image in clear, no retention index.
        engine
            .store
            .write(|w| {
                for (n, id) in ids.iter().enumerate() {
                    for (side, prefix) in [(CheckSide::Front, ""), (CheckSide::Back, "back ")] {
                        let text = image(&format!("{prefix}ACCT-77889900{n:04}"));
                        w.put_raw(Table::Images, &row_keys::image(id, side.as_str()), text.as_bytes())?;
                    }
                }
                for (key, _) in w.range(Table::ImageExpiry, &[], &[0xff], usize::MAX)? {
                    w.remove(Table::ImageExpiry, &key)?;
                }
                w.remove(Table::Meta, row_keys::META_IMAGES_SEALED).map(drop)
            })
            .unwrap();
        ids
    };
    let before = std::fs::read(&path).unwrap();
    assert!(contains(&before, &image("ACCT-778899000000")), "the earlier build's file holds images in clear");
    let engine = Engine::open(&path, options()).unwrap();
    drop(engine);
    let mut after = std::fs::read(&path).unwrap();
    after.extend(std::fs::read(crate::storage::log_file_for(&path)).unwrap());
    for n in 0..ids.len() {
        for prefix in ["", "back "] {
            let text = image(&format!("{prefix}ACCT-77889900{n:04}"));
            assert!(
                !contains(&after, &text[12..]),
                "image {n} {prefix}is still in the file or its log in clear"
            );
        }
    }
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    files.sort();
    assert_eq!(files, ["ach.redb", "ach.redb.key", "ach.redb.log"], "the rewrite left nothing behind");
    let engine = Engine::open(&path, options()).unwrap();
    let mark = engine.store.read(|r| r.get_raw(Table::Meta, row_keys::META_IMAGES_SEALED)).unwrap();
    assert_eq!(mark.as_deref(), Some(&[1u8][..]), "rewritten once, not at every open");
    let (voided, originated) = ids.split_last().unwrap();
    for (n, id) in originated.iter().enumerate() {
        let front = engine.check_image(id, CheckSide::Front).unwrap();
        assert_eq!(front, Some(image(&format!("ACCT-77889900{n:04}"))));
    }
    assert_eq!(engine.check_image(voided, CheckSide::Front).unwrap(), None, "a voided check's are dropped");
    let sealed = engine.store.read(|r| r.range(Table::Images, &[], &[0xff], usize::MAX)).unwrap();
    assert_eq!(sealed.len(), 2 * originated.len());
    assert!(sealed.iter().all(|(_, v)| v.first() == Some(&SEALED)));
    // Each originated check has its retention: two years after it settles.
    let expiry = engine.store.read(|r| r.range(Table::ImageExpiry, &[], &[0xff], usize::MAX)).unwrap();
    assert_eq!(expiry.len(), originated.len());
    for (key, _) in &expiry {
        let id = row_keys::at_id(key).unwrap();
        let t: super::records::TransactionRecord =
            engine.store.read(|r| r.get(Table::Transactions, id.as_bytes())).unwrap().unwrap();
        let at = row_keys::decode_instant(key).unwrap();
        assert_eq!(at, images::expires_at(t.settles_at.unwrap()));
    }
}
