//! Check images: bound to their transaction and side.
#![allow(clippy::unwrap_used)]

use base64::Engine as _;

use crate::engine::lifecycle::images::{CheckSide, SEALED};
use crate::engine::{Engine, EngineOptions, Refusal};
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
    let (partner_id, partner, merchant_id) = crate::engine::tenancy::test_tenant::tenant(engine, &["BOC"]);
    (0..n)
        .map(|i| {
            let body = serde_json::json!({
                "merchant_id": merchant_id, "amount": "10.00", "description": "check", "type": "debit",
                "standard_entry_class": "BOC", "check_number": format!("{}", 1000 + i),
                "check_image_front": image(&format!("ACCT-77889900{i:04}")),
                "check_image_back": image(&format!("back ACCT-77889900{i:04}")),
                "customer": {"name": "Ada", "routing_number": "021000021", "account_number": "778899001122",
                             "account_type": "checking"}});
            crate::engine::tenancy::test_tenant::create(engine, &partner, &partner_id, &body)
        })
        .collect()
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
        engine
            .store
            .read_durable(|r| r.get_raw(Table::Images, &row_keys::image(id, side.as_str())))
            .unwrap()
            .unwrap()
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
