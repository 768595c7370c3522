//! Prepared operations answer exactly as unprepared ones.
//!
//! `Engine::prepare` does an operation's storage-free work (validation, the
//! account's and an idempotent request's keyed fingerprints) on the calling
//! thread, and `Engine::execute_prepared` runs prepared operations in one write
//! transaction: the HTTPS server prepares on its request threads and commits on
//! its writer. These tests run the same operations on two engines, one
//! `execute` each on A and prepared (all before the first runs) then executed in
//! one batch on B, and compare every answer as the router renders it, ids
//! masked; and they check that a preparation made on another Eastern date,
//! against another routing directory or by another engine is not trusted.
#![allow(clippy::unwrap_used)]

use ach_core::api;
use ach_core::engine::{Caller, Engine, Operation, Outcome, Refusal};
use ach_core::validation::{FieldError, ProblemCode};
use ach_core::AchError;
use ach_tests::world::{
    application, body, et, one_record_directory, options, roomy_limits, transaction, World,
};
use serde_json::{json, Value};

/// A rendered answer with every id and key (`txn_`, `cus_`, `pk_`… followed by
/// at least 16 alphanumerics) replaced by `ID`: (status, body).
fn rendered(answer: &Result<Outcome, Refusal>) -> (u16, String) {
    let response = api::finish(answer.clone());
    let mut out = String::new();
    for (i, piece) in response.body.split('"').enumerate() {
        if i > 0 {
            out.push('"');
        }
        let id = piece.split_once('_').is_some_and(|(prefix, rest)| {
            (2..=3).contains(&prefix.len())
                && prefix.bytes().all(|b| b.is_ascii_lowercase())
                && rest.len() >= 16
                && rest.bytes().all(|b| b.is_ascii_alphanumeric())
        });
        out.push_str(if id { "ID" } else { piece });
    }
    (response.status, out)
}

/// One engine with a partner, a merchant that declines duplicates and one that
/// does not, and a stored customer.
struct Side {
    w: World,
    partner_id: String,
    partner: Caller,
    strict: String,
    open: String,
    customer: String,
}

const START: &str = "2026-11-23 10:00";

fn side() -> Side {
    let w = World::new(START);
    let (partner_id, partner) = w.partner();
    let mut app = application(&["PPD"]);
    app["velocities"]["decline_duplicates"] = json!(true);
    let (strict, _) = w.merchant_with(&partner_id, &partner, &app, roomy_limits());
    let (open, _) = w.merchant(&partner_id, &partner, &["PPD"]);
    let customer = w.customer(&partner_id, &partner, "global", "4444555566");
    Side { w, partner_id, partner, strict, open, customer }
}

impl Side {
    fn create(&self, v: &Value) -> (Caller, Operation) {
        let op = Operation::CreateTransaction { partner_id: self.partner_id.clone(), body: body(v) };
        (self.partner.clone(), op)
    }

    fn raw(&self, bytes: &[u8]) -> (Caller, Operation) {
        let op = Operation::CreateTransaction { partner_id: self.partner_id.clone(), body: bytes.to_vec() };
        (self.partner.clone(), op)
    }

    /// The scenario, as this side names its objects.
    fn operations(&self) -> Vec<(Caller, Operation)> {
        let debit = |merchant: &str, amount: &str| transaction(merchant, "debit", amount);
        let keyed = |key: &str, amount: &str| {
            let mut t = debit(&self.open, amount);
            t["idempotency_key"] = json!(key);
            t
        };
        let header = |key: &str, amount: &str| {
            let (caller, op) = self.create(&debit(&self.open, amount));
            (caller, Operation::Idempotent { key: key.into(), operation: Box::new(op) })
        };
        let mut invalid_keyed = keyed("k-2", "abc");
        invalid_keyed["merchant_id"] = json!(7);
        let mut by_token = debit(&self.open, "7.00");
        by_token["customer"] = json!({"id": self.customer});
        let mut unknown_token = by_token.clone();
        unknown_token["customer"] = json!({"id": "cus_0000000000000000000000"});
        let mut many_problems = debit("mer_nope", "abc");
        many_problems["customer"]["routing_number"] = json!("123456789");
        many_problems["type"] = json!("sideways");
        let other_partner = Operation::CreateTransaction {
            partner_id: "par_0000000000000000000000".into(),
            body: body(&debit(&self.open, "1.00")),
        };
        let new_customer = Operation::CreateCustomer {
            partner_id: self.partner_id.clone(),
            body: body(&ach_tests::world::customer_body("global", "12345678")),
        };
        let bad_customer = Operation::CreateCustomer {
            partner_id: self.partner_id.clone(),
            body: body(&json!({"merchant_id": "global", "routing_number": "1"})),
        };
        vec![
            self.create(&debit(&self.strict, "10.00")),
            // A duplicate of the one before, in the same batch: message 17.
            self.create(&debit(&self.strict, "10.00")),
            // Not a duplicate: the other merchant accepts similar transactions.
            self.create(&debit(&self.open, "10.00")),
            self.create(&debit(&self.open, "10.00")),
            self.raw(b"{\"amount\":"),
            self.raw(b""),
            self.raw(b"[1,2]"),
            self.create(&many_problems),
            // Idempotency keys in the body: first, retry, another request.
            self.create(&keyed("k-1", "3.00")),
            self.create(&keyed("k-1", "3.00")),
            self.create(&keyed("k-1", "3.01")),
            self.create(&keyed("", "3.00")),
            // An invalid request with a key: its refusal is what a retry answers.
            self.create(&invalid_keyed),
            self.create(&invalid_keyed),
            // Idempotency keys as a header.
            header("h-1", "4.00"),
            header("h-1", "4.00"),
            header("h-1", "4.50"),
            header("bad key with spaces", "4.00"),
            (
                Caller::Operator,
                Operation::Idempotent { key: "h-2".into(), operation: Box::new(new_customer.clone()) },
            ),
            // Stored customers.
            self.create(&by_token),
            self.create(&unknown_token),
            (self.partner.clone(), new_customer),
            (self.partner.clone(), bad_customer),
            // Who may run it.
            (self.partner.clone(), other_partner),
            (Caller::Operator, self.create(&debit(&self.open, "1.00")).1),
            (Caller::Operator, Operation::CreatePartner { name: "Another".into() }),
        ]
    }

    /// Every status change, as (status, amount, merchant index).
    fn feed(&self) -> Vec<String> {
        self.w
            .changes(&self.partner_id, &self.partner)
            .into_iter()
            .map(|c| {
                let mut v = serde_json::to_value(&c).unwrap();
                v["transaction_id"] = json!(null);
                let merchant = if v["merchant_id"] == json!(self.strict) { "strict" } else { "open" };
                v["merchant_id"] = json!(merchant);
                v.to_string()
            })
            .collect()
    }
}

#[test]
fn prepared_batches_answer_as_single_operations() {
    let (a, b) = (side(), side());
    let expected: Vec<_> =
        a.operations().into_iter().map(|(caller, op)| a.w.engine.execute(&caller, op)).collect();
    // B: every operation prepared before the first one runs, then one batch.
    let prepared: Vec<_> =
        b.operations().into_iter().map(|(caller, op)| (caller, b.w.engine.prepare(op))).collect();
    let answers = b.w.engine.execute_prepared(prepared);
    assert_eq!(answers.len(), expected.len());
    for (i, (got, want)) in answers.iter().zip(&expected).enumerate() {
        assert_eq!(rendered(got), rendered(want), "operation {i}: {got:?} against {want:?}");
    }
    // The retries replayed the first answer, id included.
    let id = |r: &Result<Outcome, Refusal>| match r.as_ref().map(Outcome::first) {
        Ok(Outcome::TransactionCreated { transaction_id }) => transaction_id.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(id(&answers[8]), id(&answers[9]));
    assert_eq!(id(&answers[14]), id(&answers[15]));
    assert_eq!(rendered(&answers[12]), rendered(&answers[13]), "a refusal replays too");
    assert!(matches!(&answers[13], Err(Refusal::Replayed(_))), "{:?}", answers[13]);
    // Nothing more was stored on one side than on the other.
    assert_eq!(a.feed(), b.feed());
    assert_eq!(b.w.engine.audit_usage(), Ok(Ok(())));

    // Again in the other direction: B prepared, one at a time; A in one batch.
    let expected: Vec<_> =
        b.operations().into_iter().map(|(caller, op)| b.w.engine.execute(&caller, op)).collect();
    let answers = a.w.engine.execute_batch(a.operations());
    for (i, (got, want)) in answers.iter().zip(&expected).enumerate() {
        assert_eq!(rendered(got), rendered(want), "second round, operation {i}");
    }
    assert_eq!(a.feed(), b.feed());
}

#[test]
fn a_preparation_from_another_day_is_made_again() {
    let w = World::new("2026-11-23 23:30");
    let (partner_id, partner) = w.partner();
    // Valid from tomorrow on (Eastern): a business that starts on the 24th.
    let mut app = application(&["PPD"]);
    app["business_data"]["business_start_date"] = json!("2026-11-24");
    let submit = || Operation::SubmitMerchant { partner_id: partner_id.clone(), body: body(&app) };
    let today = w.engine.execute(&partner, submit());
    assert_eq!(today.as_ref().map_err(Refusal::status), Err(422), "{today:?}");
    let prepared = w.engine.prepare(submit());
    w.at("2026-11-24 00:10");
    let answer = w.engine.execute_prepared(vec![(partner.clone(), prepared)]).pop().unwrap();
    assert!(matches!(answer, Ok(Outcome::MerchantSubmitted { .. })), "{answer:?}");
    // And the other way round: the same preparation made today still holds.
    let prepared = w.engine.prepare(submit());
    let answer = w.engine.execute_prepared(vec![(partner, prepared)]).pop().unwrap();
    assert!(matches!(answer, Ok(Outcome::MerchantSubmitted { .. })), "{answer:?}");
}

#[test]
fn a_preparation_against_a_replaced_directory_is_made_again() {
    let w = World::new(START);
    let (partner_id, partner, merchant) = w.tenant(&["PPD"]);
    let create = || Operation::CreateTransaction {
        partner_id: partner_id.clone(),
        body: body(&transaction(&merchant, "debit", "5.00")),
    };
    let prepared = w.engine.prepare(create());
    // A directory without the customer's bank (021000021).
    let loaded = w.run(&Caller::Operator, Operation::LoadDirectory { text: one_record_directory() });
    assert!(matches!(loaded, Ok(Outcome::DirectoryLoaded { records: 1 })), "{loaded:?}");
    let answer = w.engine.execute_prepared(vec![(partner.clone(), prepared)]).pop().unwrap();
    let now = w.engine.execute(&partner, create());
    assert_eq!(
        now,
        Err(Refusal::Refused {
            error: AchError::RoutingNotFound { value: "021000021".into() },
            status: 422,
            errors: vec![FieldError {
                field: "customer.routing_number".into(),
                code: ProblemCode::NotFound,
                message: "Routing Number '021000021' was not found".into(),
            }],
        })
    );
    assert_eq!(rendered(&answer), rendered(&now));
    assert!(w.changes(&partner_id, &partner).is_empty(), "nothing stored");
}

#[test]
fn a_preparation_by_another_engine_is_made_again() {
    // Fingerprints are keyed by the engine's key: B must recompute them, or it
    // would miss that this is a duplicate of B's own transaction.
    let b = side();
    let other = Engine::in_memory(options(START)).unwrap();
    let t = transaction(&b.strict, "debit", "12.00");
    let op = || Operation::CreateTransaction { partner_id: b.partner_id.clone(), body: body(&t) };
    let Ok(Outcome::TransactionCreated { transaction_id }) = b.w.engine.execute(&b.partner, op()) else {
        panic!("B's own create is refused")
    };
    let history = b.w.history(&b.partner_id, &b.partner, &transaction_id);
    assert_eq!(history.iter().map(|c| c.status).collect::<Vec<_>>(), [ach_core::model::Status::A]);
    let foreign = other.prepare(op());
    let answer = b.w.engine.execute_prepared(vec![(b.partner.clone(), foreign)]).pop().unwrap();
    assert_eq!(answer.map_err(|f| f.message()), Err("This is a duplicate transaction".to_owned()));
    assert_eq!(et(START), b.w.engine.now());
}

#[test]
fn a_batch_validates_each_operation_at_its_own_date_and_directory() {
    // As one operation at a time: an operation after a directory load or a clock
    // move in the same batch is validated against the new directory or date.
    let w = World::new("2026-11-23 23:30");
    let (partner_id, partner, merchant) = w.tenant(&["PPD"]);
    let mut app = application(&["PPD"]);
    app["business_data"]["business_start_date"] = json!("2026-11-24");
    let submit = Operation::SubmitMerchant { partner_id: partner_id.clone(), body: body(&app) };
    let create = Operation::CreateTransaction {
        partner_id: partner_id.clone(),
        body: body(&transaction(&merchant, "debit", "5.00")),
    };
    let answers = w.engine.execute_batch(vec![
        (partner.clone(), submit.clone()),
        (Caller::Operator, Operation::SetClock { now: et("2026-11-24 00:10") }),
        (partner.clone(), submit),
        (partner.clone(), create.clone()),
        (Caller::Operator, Operation::LoadDirectory { text: one_record_directory() }),
        (partner.clone(), create),
    ]);
    let statuses: Vec<u16> = answers.iter().map(|a| rendered(a).0).collect();
    assert_eq!(statuses, [422, 200, 201, 201, 200, 422], "{answers:?}");
}
