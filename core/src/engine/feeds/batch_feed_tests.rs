//! A request batch's feed entries: one packed row per feed and scope, read
//! back entry by entry at consecutive positions, with a refused operation
//! adding nothing and a later single create adding its own row.
#![allow(clippy::unwrap_used)]

use crate::engine::{Engine, EngineOptions, Operation, Outcome};
use crate::storage::{row_keys, Table};
use crate::validation::{FieldError, ProblemCode};
use crate::AchError;

fn engine() -> Engine {
    let now =
        chrono::DateTime::parse_from_rfc3339("2026-11-23T15:00:00Z").unwrap().with_timezone(&chrono::Utc);
    Engine::in_memory(EngineOptions::manual(now)).unwrap()
}

fn create(partner_id: &str, merchant_id: &str, amount: &str) -> Operation {
    let body = serde_json::json!({
        "merchant_id": merchant_id, "amount": amount, "description": "rent",
        "type": "debit", "standard_entry_class": "PPD",
        "customer": {"name": "Ada", "routing_number": "021000021",
                     "account_number": "7788990011", "account_type": "checking"}});
    Operation::CreateTransaction {
        partner_id: partner_id.to_owned(),
        body: serde_json::to_vec(&body).unwrap(),
    }
}

/// Every row of `table`: its key's position and how many entries it holds.
fn rows(engine: &Engine, table: Table) -> Vec<(u64, usize)> {
    let all = engine.store.read_durable(|r| r.range(table, &[], &[0xff; 16], usize::MAX)).unwrap();
    all.iter()
        .map(|(k, v)| {
            let last = row_keys::seq_of(k).unwrap();
            (last, crate::engine::feeds::feed_rows::entries(last, v).unwrap().len())
        })
        .collect()
}

fn id(answer: &Result<Outcome, crate::engine::Refusal>) -> String {
    match answer {
        Ok(Outcome::TransactionCreated { transaction_id }) => transaction_id.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_batch_stores_its_feed_entries_in_one_row_per_feed_and_scope() {
    let engine = engine();
    let (partner_id, partner, merchant_id) = crate::engine::tenancy::test_tenant::tenant(&engine, &["PPD"]);
    let answers = engine.execute_batch(vec![
        (partner.clone(), create(&partner_id, &merchant_id, "10.00")),
        (partner.clone(), create(&partner_id, &merchant_id, "-1")),
        (partner.clone(), create(&partner_id, &merchant_id, "12.00")),
    ]);
    assert_eq!(
        answers[1],
        Err(crate::engine::Refusal::Refused {
            error: AchError::InvalidAmount { value: "-1".into() },
            status: 422,
            errors: vec![FieldError {
                field: "amount".into(),
                code: ProblemCode::InvalidAmount,
                message:
                    "'-1' is an invalid Amount: amount must be a positive amount with at most two decimals"
                        .into(),
            }],
        }),
        "a negative amount is refused"
    );
    let batch = [id(&answers[0]), id(&answers[2])];
    assert_eq!(rows(&engine, Table::Changes), [(2, 2)], "one row, positions 1 and 2");
    assert_eq!(rows(&engine, Table::Events), [(2, 2)]);

    let single =
        id(&engine.execute_batch(vec![(partner.clone(), create(&partner_id, &merchant_id, "13.00"))])[0]);
    assert_eq!(rows(&engine, Table::Changes), [(2, 2), (3, 1)]);
    assert_eq!(rows(&engine, Table::Events), [(2, 2), (3, 1)]);

    let want = [batch[0].clone(), batch[1].clone(), single];
    let page = engine.status_changes(&partner, &partner_id, "0").unwrap();
    let ids: Vec<&str> = page.changes.iter().map(|c| c.transaction_id.as_str()).collect();
    assert_eq!(ids, want);
    // A pointer inside the packed row: the feed goes on after its position.
    let pointer = engine.pointers.encode(&partner_id, 1);
    let page = engine.status_changes(&partner, &partner_id, &pointer).unwrap();
    let ids: Vec<&str> = page.changes.iter().map(|c| c.transaction_id.as_str()).collect();
    assert_eq!(ids, want[1..]);
}
