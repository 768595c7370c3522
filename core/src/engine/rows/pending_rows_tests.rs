//! A batch's pending index entries, packed (`packed_index.rs`): one row per
//! cut-off per batch; a transaction voided in it is skipped by its cut-off;
//! a clock set later in the same batch finds the batch's creates indexed.
#![allow(clippy::unwrap_used)]

use crate::engine::rows::records::TransactionRecord;
use crate::engine::{Caller, Engine, EngineOptions, Operation, Outcome};
use crate::lifecycle::State;
use crate::storage::Table;

fn at(text: &str) -> chrono::DateTime<chrono::Utc> {
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap();
    naive.and_local_timezone(chrono_tz::America::New_York).earliest().unwrap().with_timezone(&chrono::Utc)
}

fn debit(partner_id: &str, merchant_id: &str, i: u64) -> Operation {
    let body = serde_json::json!({
        "merchant_id": merchant_id, "amount": format!("{}.00", 10 + i), "description": "rent",
        "type": "debit", "standard_entry_class": "PPD",
        "customer": {"name": "Ada", "routing_number": "021000021",
                     "account_number": format!("77889900{i}"), "account_type": "checking"}});
    Operation::CreateTransaction {
        partner_id: partner_id.to_owned(),
        body: serde_json::to_vec(&body).unwrap(),
    }
}

/// The ids of a batch's creates, in order.
fn created(answers: Vec<Result<Outcome, crate::engine::Refusal>>) -> Vec<String> {
    answers
        .into_iter()
        .filter_map(|a| match a.unwrap() {
            Outcome::TransactionCreated { transaction_id } => Some(transaction_id),
            _ => None,
        })
        .collect()
}

fn pending_rows(engine: &Engine) -> usize {
    engine.store.read_durable(|r| r.range(Table::Pending, &[], &[0xff; 16], usize::MAX)).unwrap().len()
}

fn state(engine: &Engine, id: &str) -> State {
    let t: Option<TransactionRecord> =
        engine.store.read_durable(|r| r.get(Table::Transactions, id.as_bytes())).unwrap();
    t.unwrap().state
}

#[test]
fn a_batchs_creates_share_one_row_and_a_voided_one_is_skipped_at_the_cut_off() {
    let engine = Engine::in_memory(EngineOptions::manual(at("2026-11-23 10:00"))).unwrap();
    let (partner_id, partner, merchant_id) = crate::engine::tenancy::test_tenant::tenant(&engine, &["PPD"]);
    let batch = (0..5).map(|i| (partner.clone(), debit(&partner_id, &merchant_id, i))).collect();
    let ids = created(engine.execute_batch(batch));
    assert_eq!(ids.len(), 5);
    assert_eq!(pending_rows(&engine), 1, "one row for the batch's five");
    let void = Operation::VoidTransaction { partner_id: partner_id.clone(), transaction_id: ids[2].clone() };
    engine.execute(&partner, void).unwrap();
    assert_eq!(pending_rows(&engine), 1, "the voided one stays in its row");
    let single = created(vec![engine.execute(&partner, debit(&partner_id, &merchant_id, 9))]);
    assert_eq!(pending_rows(&engine), 2, "a single create's own row");
    let progress = engine.advance_to(at("2026-11-23 18:00")).unwrap();
    assert_eq!(progress.originated, 5, "four of the batch and the single one");
    assert_eq!(pending_rows(&engine), 0);
    for id in ids.iter().chain(&single) {
        let want = if *id == ids[2] { State::Voided } else { State::Originated };
        assert_eq!(state(&engine, id), want, "{id}");
    }
    #[cfg(feature = "simulation")]
    engine.audit_records().unwrap().unwrap();
}

#[test]
fn a_clock_set_later_in_the_batch_originates_the_batchs_creates() {
    let options = EngineOptions::manual(at("2026-11-23 10:00")).sandbox().with_operator_key("ok_test");
    let engine = Engine::in_memory(options).unwrap();
    let (partner_id, partner, merchant_id) = crate::engine::tenancy::test_tenant::tenant(&engine, &["PPD"]);
    let mut batch: Vec<_> = (0..3).map(|i| (partner.clone(), debit(&partner_id, &merchant_id, i))).collect();
    batch.push((Caller::Operator, Operation::SetClock { now: at("2026-11-23 18:00") }));
    let ids = created(engine.execute_batch(batch));
    assert_eq!(ids.len(), 3);
    for id in &ids {
        assert_eq!(state(&engine, id), State::Originated, "{id}");
    }
    assert_eq!(pending_rows(&engine), 0);
}

#[test]
fn a_row_holds_at_most_a_chunk_of_ids() {
    let mut rows = crate::engine::rows::packed_index::PackedIndex::new(Table::Pending);
    let when = at("2026-11-23 16:00");
    let ids: Vec<String> = (0..1_201).map(|i| format!("txn_{i:05}")).collect();
    for id in &ids {
        rows.add(when, id).unwrap();
    }
    let engine = Engine::in_memory(EngineOptions::manual(at("2026-11-23 10:00"))).unwrap();
    engine.store.write(|w| rows.write(w)).unwrap();
    let stored =
        engine.store.read_durable(|r| r.range(Table::Pending, &[], &[0xff; 16], usize::MAX)).unwrap();
    let sizes: Vec<usize> =
        stored.iter().map(|(k, v)| crate::engine::rows::packed_index::row_ids(k, v).unwrap().len()).collect();
    assert_eq!(sizes, [500, 500, 201]);
    let back: Vec<String> = stored
        .iter()
        .flat_map(|(k, v)| {
            crate::engine::rows::packed_index::row_ids(k, v).unwrap().into_iter().map(str::to_owned)
        })
        .collect();
    assert_eq!(back, ids, "every id once, in order");
}
