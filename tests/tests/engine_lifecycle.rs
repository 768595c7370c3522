//! The transaction lifecycle through the engine: cut-offs, settlement, returns,
//! voids and reversals, across DST changes, weekends and Federal Reserve holidays.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, Operation, Outcome, Refusal};
use ach_core::model::Status;
use ach_core::validation::ProblemCode;
use ach_core::AchError;
use ach_tests::world::{transaction, World};

/// (status, timestamp, origination, effective, settlement)
type Row = (Status, String, Option<String>, Option<String>, Option<String>);

fn statuses(w: &World, p: &str, c: &Caller, id: &str) -> Vec<Row> {
    w.history(p, c, id)
        .into_iter()
        .map(|ch| {
            (ch.status, ch.change_timestamp, ch.origination_date, ch.effective_date, ch.settlement_date)
        })
        .collect()
}

fn s(x: &str) -> Option<String> {
    Some(x.to_owned())
}

#[test]
fn thanksgiving_week_debit_and_credit() {
    let w = World::new("2026-11-25 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let debit = w.debit(&p, &pc, &m, "100.00");
    let credit = w.create(&p, &pc, &transaction(&m, "credit", "50.00")).unwrap();
    w.at("2026-11-25 17:59");
    assert_eq!(statuses(&w, &p, &pc, &debit).len(), 1, "still Pending before the cut-off");
    w.at("2026-12-02 09:00");
    // Cut-off Wed 18:00 ET; Thursday is Thanksgiving: effective Friday. Debits hold two
    // banking days (Mon, Tue) and settle Tue 08:30; credits settle on the effective date.
    assert_eq!(
        statuses(&w, &p, &pc, &debit),
        vec![
            (Status::A, "2026-11-25 10:00:00".into(), None, None, None),
            (Status::B, "2026-11-25 18:00:00".into(), s("2026-11-25"), s("2026-11-27"), s("2026-12-01")),
            (Status::S, "2026-12-01 08:30:00".into(), s("2026-11-25"), s("2026-11-27"), s("2026-12-01")),
        ]
    );
    assert_eq!(
        statuses(&w, &p, &pc, &credit)[2],
        (Status::S, "2026-11-27 08:30:00".into(), s("2026-11-25"), s("2026-11-27"), s("2026-11-27"))
    );
}

#[test]
fn created_at_or_after_the_cutoff_waits_for_the_next_banking_day() {
    let (w, p, pc, id) = one_debit("2026-11-25 18:00");
    w.at("2026-11-27 17:00");
    assert_eq!(statuses(&w, &p, &pc, &id).len(), 1, "Thanksgiving is not a banking day");
    w.at("2026-11-27 18:00");
    assert_eq!(statuses(&w, &p, &pc, &id)[1].1, "2026-11-27 18:00:00");
    assert_eq!(statuses(&w, &p, &pc, &id)[1].3, s("2026-11-30"));
}

#[test]
fn the_friday_before_a_saturday_holiday_is_a_banking_day() {
    // July 4, 2026 is a Saturday: the Fed is open on Friday July 3.
    let (w, p, pc, id) = one_debit("2026-07-02 19:00");
    w.at("2026-07-03 18:00");
    let h = statuses(&w, &p, &pc, &id);
    assert_eq!(h[1].0, Status::B);
    assert_eq!((h[1].2.clone(), h[1].3.clone()), (s("2026-07-03"), s("2026-07-06")));
}

#[test]
fn the_monday_after_a_sunday_holiday_is_closed() {
    // July 4, 2027 is a Sunday: Monday July 5 is closed.
    let (w, p, pc, id) = one_debit("2027-07-02 18:30");
    w.at("2027-07-05 23:00");
    assert_eq!(statuses(&w, &p, &pc, &id).len(), 1);
    w.at("2027-07-06 18:00");
    let h = statuses(&w, &p, &pc, &id);
    assert_eq!((h[1].2.clone(), h[1].3.clone()), (s("2027-07-06"), s("2027-07-07")));
}

#[test]
fn cutoffs_follow_daylight_saving_time() {
    // Spring forward on Sunday 2026-03-08; fall back on Sunday 2026-11-01.
    for (start, cutoff_utc) in
        [("2026-03-06 19:00", "2026-03-09T22:00:00+00:00"), ("2026-10-30 19:00", "2026-11-02T23:00:00+00:00")]
    {
        let (w, p, pc, id) = one_debit(start);
        let cutoff = chrono::DateTime::parse_from_rfc3339(cutoff_utc).unwrap().with_timezone(&chrono::Utc);
        w.engine.advance_to(cutoff - chrono::Duration::seconds(1)).unwrap();
        assert_eq!(statuses(&w, &p, &pc, &id).len(), 1, "{start}: not yet");
        w.engine.advance_to(cutoff).unwrap();
        let h = statuses(&w, &p, &pc, &id);
        assert_eq!(h.len(), 2, "{start}");
        assert_eq!(&h[1].1[11..], "18:00:00", "the feed shows Eastern wall time");
    }
}

#[test]
fn a_long_clock_jump_gives_the_same_feed_as_ticking_through() {
    let jump = World::new("2026-11-20 09:00");
    let tick = World::new("2026-11-20 09:00");
    let mut ids = Vec::new();
    for w in [&jump, &tick] {
        let (p, pc, m) = w.tenant(&["PPD"]);
        let a = w.debit(&p, &pc, &m, "1.00");
        let b = w.create(&p, &pc, &transaction(&m, "credit", "2.00")).unwrap();
        ids.push((p, pc, a, b));
    }
    jump.at("2026-12-10 12:00");
    for day in 20..=30 {
        tick.at(&format!("2026-11-{day} 23:00"));
    }
    for day in 1..=10 {
        tick.at(&format!("2026-12-{day:02} 12:00"));
    }
    let view = |w: &World, i: usize| {
        let (p, pc, a, b) = &ids[i];
        [statuses(w, p, pc, a), statuses(w, p, pc, b)]
    };
    assert_eq!(view(&jump, 0), view(&tick, 1));
    let all = jump.changes(&ids[0].0, &ids[0].1);
    let stamps: Vec<&str> = all.iter().map(|c| c.change_timestamp.as_str()).collect();
    let mut sorted = stamps.clone();
    sorted.sort();
    assert_eq!(stamps, sorted, "changes are reported in time order");
}

/// A world from `start` with a partner's PPD debit of $1.00: the world, the
/// partner's id and caller, and the debit's id.
fn one_debit(start: &str) -> (World, String, Caller, String) {
    let w = World::new(start);
    let (p, pc, m) = w.tenant(&["PPD"]);
    let id = w.debit(&p, &pc, &m, "1.00");
    (w, p, pc, id)
}

fn setup() -> (World, String, Caller, String) {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD", "WEB"]);
    (w, p, pc, m)
}

/// Message 10 with HTTP 409: the transaction's state forbids the operation.
fn conflict(message: &str) -> Result<Outcome, Refusal> {
    Err(Refusal::problem_with_status(AchError::FailedToAccept, 409, "", ProblemCode::Conflict, message))
}

#[test]
fn void_only_while_pending_and_a_void_never_originates() {
    let (w, p, pc, m) = setup();
    let id = w.debit(&p, &pc, &m, "10.00");
    assert!(matches!(w.void(&p, &pc, &id), Ok(Outcome::TransactionVoided { .. })));
    let again = w.void(&p, &pc, &id).unwrap_err();
    assert_eq!((again.status(), again.message().as_str()), (409, "Failed to accept this transaction"));
    w.at("2026-12-10 12:00");
    let h = w.history(&p, &pc, &id);
    assert_eq!(h.iter().map(|c| c.status).collect::<Vec<_>>(), [Status::A, Status::R]);
    assert_eq!((h[1].return_code.clone(), h[1].reason.clone()), (None, Some("Voided".into())));

    let originated = w.debit(&p, &pc, &m, "10.00");
    w.at("2026-12-10 18:00");
    let refused = w.void(&p, &pc, &originated).unwrap_err();
    assert_eq!(refused.message(), "Failed to accept this transaction");
    assert!(refused.errors()[0].message.contains("Originated"), "{:?}", refused.errors());
    w.at("2026-12-20 12:00");
    assert_eq!(
        w.void(&p, &pc, &originated),
        conflict("only a Pending transaction can be voided; this one is Settled"),
        "not when Settled"
    );
}

#[test]
fn reverse_only_when_settled_then_messages_6_and_5() {
    let (w, p, pc, id) = one_debit("2026-11-23 10:00");
    assert_eq!(
        w.reverse(&p, &pc, &id),
        conflict("only a Settled transaction can be reversed; this one is Pending (void it instead)"),
        "not when Pending"
    );
    w.at("2026-11-23 18:00");
    let originated = w.reverse(&p, &pc, &id).unwrap_err();
    assert!(originated.errors()[0].message.contains("Originated"));
    w.at("2026-11-30 12:00");
    let Ok(Outcome::TransactionReversed { reversal_id, .. }) = w.reverse(&p, &pc, &id) else { panic!() };
    assert_ne!(reversal_id, id);
    assert!(reversal_id.starts_with("txn_"));
    let again = w.reverse(&p, &pc, &id).unwrap_err();
    assert_eq!(again.message(), "The reversal for transaction has been submitted");
    w.at("2026-12-10 12:00");
    let settled = w.reverse(&p, &pc, &id).unwrap_err();
    assert_eq!(
        settled.message(),
        format!("The original transaction has already been reversed with transaction ID {reversal_id}")
    );
    // The reversal moves the other way: a credit, settled on its effective date.
    let h = w.history(&p, &pc, &reversal_id);
    assert_eq!(h.iter().map(|c| c.status).collect::<Vec<_>>(), [Status::A, Status::B, Status::S]);
    assert_eq!(h[2].settlement_date, h[2].effective_date, "a credit settles on its effective date");
    assert_eq!(
        w.reverse(&p, &pc, &reversal_id),
        conflict("a reversal cannot itself be reversed"),
        "a reversal is not reversed"
    );
}

#[test]
fn returns_on_originated_or_settled_only() {
    let (w, p, pc, m) = setup();
    let pending = w.debit(&p, &pc, &m, "5.00");
    assert_eq!(
        w.return_(&pending, "R01"),
        conflict(
            "only an Originated or Settled transaction can be returned; this one is Pending (it has not \
             reached the bank)"
        ),
        "a Pending transaction has not reached the bank"
    );
    w.at("2026-11-23 18:00");
    let err = w.return_(&pending, "R99").unwrap_err();
    assert_eq!(err.errors()[0].field, "return_code");
    assert!(matches!(w.return_(&pending, "R01"), Ok(Outcome::ReturnRecorded { .. })));
    w.at("2026-12-10 12:00");
    let h = w.history(&p, &pc, &pending);
    assert_eq!(
        h.iter().map(|c| c.status).collect::<Vec<_>>(),
        [Status::A, Status::B, Status::R],
        "a returned debit never settles"
    );
    let r = &h[2];
    assert_eq!(
        (r.return_code.as_deref(), r.reason.as_deref(), r.return_date.as_deref()),
        (Some("R01"), Some("Insufficient Funds"), Some("2026-11-23"))
    );
    assert_eq!(w.return_(&pending, "R02"), conflict("this transaction is already returned"), "returned once");

    let settled = w.debit(&p, &pc, &m, "5.00");
    w.at("2026-12-20 12:00");
    assert!(matches!(w.return_(&settled, "R10"), Ok(Outcome::ReturnRecorded { .. })));
    assert_eq!(
        w.return_("txn_0123456789abcdefghijKL", "R01"),
        Err(Refusal::not_found("transaction_id", "no transaction 'txn_0123456789abcdefghijKL'"))
    );
}

#[test]
fn only_approved_merchants_for_their_classes_transact() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc) = w.partner();
    let op = Operation::SubmitMerchant {
        partner_id: p.clone(),
        body: ach_tests::world::body(&ach_tests::world::application(&["PPD"])),
    };
    let Ok(Outcome::MerchantSubmitted { merchant_id }) = w.run(&pc, op) else { panic!() };
    let refused = w.create(&p, &pc, &transaction(&merchant_id, "debit", "1.00")).unwrap_err();
    assert_eq!(refused.message(), "Unable to accept PPD transactions for this merchant");
    let (m, _) = w.merchant(&p, &pc, &["CCD"]);
    let refused = w.create(&p, &pc, &transaction(&m, "debit", "1.00")).unwrap_err();
    assert_eq!(refused.message(), "Unable to accept PPD transactions for this merchant");
    let unknown = w.create(&p, &pc, &transaction("mer_0123456789abcdefghijKL", "debit", "1.00")).unwrap_err();
    assert_eq!(unknown.message(), "'mer_0123456789abcdefghijKL' is an invalid Merchant ID");
}

#[test]
fn customers_by_token_global_or_merchant_and_deleted_tokens_refused() {
    let (w, p, pc, m) = setup();
    let (other_m, _) = w.merchant(&p, &pc, &["PPD"]);
    let customer = |scope: &str| {
        let body = serde_json::json!({"merchant_id": scope, "name": "Grace", "routing_number": "026009593", "account_number": "000123456789", "account_type": "savings"});
        match w.run(
            &pc,
            Operation::CreateCustomer { partner_id: p.clone(), body: ach_tests::world::body(&body) },
        ) {
            Ok(Outcome::CustomerCreated { customer_id }) => customer_id,
            other => panic!("{other:?}"),
        }
    };
    let global = customer("global");
    let mine = customer(&m);
    let with = |merchant: &str, token: &str| {
        let mut t = transaction(merchant, "debit", "3.00");
        t["customer"] = serde_json::json!({"id": token});
        w.create(&p, &pc, &t)
    };
    let statuses = |id: &str| w.history(&p, &pc, id).iter().map(|c| c.status).collect::<Vec<_>>();
    for merchant in [&m, &other_m] {
        let id = with(merchant, &global).unwrap();
        assert_eq!(statuses(&id), [Status::A], "{merchant}");
    }
    let first = with(&m, &mine).unwrap();
    assert_eq!(statuses(&first), [Status::A], "a merchant's own customer");
    let foreign = with(&other_m, &mine).unwrap_err();
    assert_eq!((foreign.status(), foreign.errors()[0].field.as_str()), (404, "customer.id"));
    let used = with(&m, &mine).unwrap();
    assert!(matches!(
        w.run(&pc, Operation::DeleteCustomer { partner_id: p.clone(), customer_id: mine.clone() }),
        Ok(Outcome::CustomerDeleted { .. })
    ));
    let deleted = with(&m, &mine).unwrap_err();
    assert!(deleted.errors()[0].message.contains("deleted"), "{:?}", deleted.errors());
    // The transaction made before the delete still goes through.
    w.at("2026-12-10 12:00");
    assert_eq!(w.history(&p, &pc, &used).last().map(|c| c.status), Some(Status::S));
}
