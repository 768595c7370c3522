//! Idempotent retries: same key and request → the first answer, never a second
//! transaction; same key, other request → message 2; outcomes never flip.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use ach_core::engine::{Caller, Operation, Outcome, Refusal};
use ach_core::model::Status;
use ach_tests::world::{body, open_application, roomy_limits, transaction, World};
use serde_json::json;

fn idem(key: &str, partner_id: &str, v: &serde_json::Value) -> Operation {
    Operation::Idempotent {
        key: key.into(),
        operation: Box::new(Operation::CreateTransaction { partner_id: partner_id.into(), body: body(v) }),
    }
}

fn created(r: Result<Outcome, Refusal>) -> String {
    match r.as_ref().map(Outcome::first) {
        Ok(Outcome::TransactionCreated { transaction_id }) => transaction_id.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_retry_returns_the_original_answer_and_creates_nothing() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let t = transaction(&m, "debit", "12.00");
    let answer = w.run(&pc, idem("order-42", &p, &t));
    assert!(!matches!(answer, Ok(Outcome::Replayed(_))), "the first answer is no replay");
    let first = created(answer);
    let again = w.run(&pc, idem("order-42", &p, &t));
    assert!(
        matches!(&again, Ok(Outcome::Replayed(o)) if **o == Outcome::TransactionCreated { transaction_id: first.clone() }),
        "{again:?}"
    );
    let second = created(again);
    assert_eq!(first, second);
    // The same request re-serialized (members in another order) is the same request.
    let reordered: serde_json::Value = serde_json::from_str(&format!(
        r#"{{"customer": {}, "type": "debit", "amount": "12.00", "standard_entry_class": "PPD", "description": "test", "merchant_id": "{m}"}}"#,
        t["customer"]
    ))
    .unwrap();
    assert_eq!(created(w.run(&pc, idem("order-42", &p, &reordered))), first);
    assert_eq!(w.changes(&p, &pc).iter().filter(|c| c.status == ach_core::model::Status::A).count(), 1);
}

#[test]
fn the_same_key_with_another_request_is_message_2() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    created(w.run(&pc, idem("k1", &p, &transaction(&m, "debit", "12.00"))));
    let other = w.run(&pc, idem("k1", &p, &transaction(&m, "debit", "12.01"))).unwrap_err();
    assert_eq!(
        (other.status(), other.message().as_str()),
        (409, "This transaction has already been submitted for processing")
    );
    assert_eq!(other.errors()[0].field, "idempotency_key");
}

#[test]
fn a_refusal_is_replayed_even_when_the_state_would_now_allow_it() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc) = w.partner();
    let mut limits = roomy_limits();
    limits.daily_count = Some(1);
    let (m, _) = w.merchant_with(&p, &pc, &open_application(&["PPD"]), limits);
    created(w.run(
        &pc,
        Operation::CreateTransaction { partner_id: p.clone(), body: body(&transaction(&m, "debit", "1.00")) },
    ));
    let t = transaction(&m, "debit", "2.00");
    let refused = w.run(&pc, idem("retry-me", &p, &t)).unwrap_err();
    assert_eq!(refused.message(), "You have exceeded the allowed max daily num checks for this merchant");
    w.at("2026-11-24 10:00");
    let again = w.run(&pc, idem("retry-me", &p, &t)).unwrap_err();
    assert_eq!(again, Refusal::Replayed(Box::new(refused.clone())), "the outcome never flips");
    assert_eq!(
        (again.status(), again.message(), again.errors()),
        (refused.status(), refused.message(), refused.errors())
    );
    let fresh = created(w.run(&pc, idem("fresh-key", &p, &t)));
    assert_eq!(
        w.history(&p, &pc, &fresh).iter().map(|c| c.status).collect::<Vec<_>>(),
        [Status::A],
        "a new key is a new request"
    );
}

#[test]
fn a_body_member_works_like_the_header_and_keys_are_per_partner() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let mut t = transaction(&m, "debit", "5.00");
    t["idempotency_key"] = json!("body-key-1");
    let op = || Operation::CreateTransaction { partner_id: p.clone(), body: body(&t) };
    assert_eq!(created(w.run(&pc, op())), created(w.run(&pc, op())));
    let (p2, pc2, m2) = w.tenant(&["PPD"]);
    let mut t2 = transaction(&m2, "debit", "5.00");
    t2["idempotency_key"] = json!("body-key-1");
    let theirs =
        created(w.run(&pc2, Operation::CreateTransaction { partner_id: p2.clone(), body: body(&t2) }));
    assert_ne!(theirs, created(w.run(&pc, op())), "not the first partner's transaction");
    let feed: Vec<(String, Status)> =
        w.changes(&p2, &pc2).into_iter().map(|c| (c.transaction_id, c.status)).collect();
    assert_eq!(feed, [(theirs, Status::A)], "a transaction of its own");
    let bad = w.run(&pc, idem("", &p, &t)).unwrap_err();
    assert_eq!(bad.errors()[0].field, "idempotency_key");
}

#[test]
fn a_body_member_spelled_with_escapes_is_the_same_key() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let t = transaction(&m, "debit", "7.00");
    // `"idempotency_\u006bey"` is the member `idempotency_key` (JSON escapes).
    let text = String::from_utf8(body(&t)).unwrap();
    let escaped = text.replacen('{', r#"{"idempotency_\u006bey":"esc-1","#, 1);
    let plain = text.replacen('{', r#"{"idempotency_key":"esc-1","#, 1);
    let op = |b: &str| Operation::CreateTransaction { partner_id: p.clone(), body: b.as_bytes().to_vec() };
    let first = created(w.run(&pc, op(&escaped)));
    assert_eq!(created(w.run(&pc, op(&plain))), first);
    assert_eq!(created(w.run(&pc, op(&escaped))), first);
    // Without a key the same body is a new transaction.
    assert_ne!(created(w.run(&pc, op(&text))), first);
}

#[test]
fn two_identical_requests_at_once_create_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let engine = ach_core::engine::Engine::open(
        &dir.path().join("ach.redb"),
        ach_tests::world::options("2026-11-23 10:00"),
    )
    .unwrap();
    let w = World::with(engine);
    let (p, pc, m) = w.tenant(&["PPD"]);
    let w = Arc::new(w);
    let t = transaction(&m, "debit", "33.00");
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (w, p, pc, t) = (Arc::clone(&w), p.clone(), pc.clone(), t.clone());
            std::thread::spawn(move || created(w.run(&pc, idem("same-time", &p, &t))))
        })
        .collect();
    let ids: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    let changes = w.changes(&p, &pc);
    assert_eq!(changes.iter().filter(|c| c.transaction_id == ids[0]).count(), 1);
    assert_eq!(changes.len(), 1);
    let _ = Caller::Operator;
}
