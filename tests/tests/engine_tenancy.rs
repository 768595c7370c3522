//! Tenancy: another partner's resources answer exactly like ids that never existed,
//! every operation checks who is calling, and refused operations write nothing.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, EventsPage, Operation, Outcome, Refusal, ReturnGroup, ThresholdCrossing};
use ach_core::ids::random_alphanumeric;
use ach_core::limits::Limits;
use ach_core::model::{Event, Status, StatusChange};
use ach_core::validation::ProblemCode;
use ach_core::{AchError, Money};
use ach_tests::world::{body, customer_body, one_record_directory, open_application, transaction, World};
use serde_json::json;

/// A failure with one id written as `<id>`, so answers about two ids compare.
type Shape = (u16, String, Vec<(String, ProblemCode, String)>);

fn shape(f: &Refusal, id: &str) -> Shape {
    let errors =
        f.errors().iter().map(|e| (e.field.clone(), e.code, e.message.replace(id, "<id>"))).collect();
    (f.status(), f.message().replace(id, "<id>"), errors)
}

/// The statuses of a transaction's changes, oldest first.
fn statuses(history: &[StatusChange]) -> Vec<Status> {
    history.iter().map(|c| c.status).collect()
}

fn unknown(prefix: &str) -> String {
    format!("{prefix}{}", random_alphanumeric(22))
}

/// Two partners, each with merchants, customers and transactions in several states.
struct Two {
    w: World,
    a: Tenant,
    b: Tenant,
}

struct Tenant {
    id: String,
    caller: Caller,
    merchant: String,
    merchant_caller: Caller,
    second: String,
    second_caller: Caller,
    underwriting: String,
    global_customer: String,
    merchant_customer: String,
    settled: String,
    pending: String,
}

fn tenant(w: &World, account: &str) -> Tenant {
    let (id, caller) = w.partner();
    let (merchant, _, merchant_caller) = w.roomy_merchant(&id, &caller, &["PPD", "WEB"]);
    let (second, _, second_caller) = w.roomy_merchant(&id, &caller, &["PPD"]);
    let underwriting = w.submit(&id, &caller, &open_application(&["PPD"]));
    let global_customer = w.customer(&id, &caller, "global", account);
    let merchant_customer = w.customer(&id, &caller, &merchant, account);
    let settled = w.debit(&id, &caller, &merchant, "10.00");
    Tenant {
        id,
        caller,
        merchant,
        merchant_caller,
        second,
        second_caller,
        underwriting,
        global_customer,
        merchant_customer,
        settled,
        pending: String::new(),
    }
}

fn two() -> Two {
    let w = World::new("2026-11-23 10:00");
    let mut a = tenant(&w, "111122223333");
    let mut b = tenant(&w, "444455556666");
    w.at("2026-12-07 10:00");
    for t in [&mut a, &mut b] {
        assert_eq!(w.history(&t.id, &t.caller, &t.settled).last().map(|c| c.status), Some(Status::S));
        t.pending = w.debit(&t.id, &t.caller, &t.second, "20.00");
        // A transaction with each customer token, so both appear in the feeds.
        for token in [&t.global_customer, &t.merchant_customer] {
            let mut v = transaction(&t.merchant, "debit", "30.00");
            v["customer"] = json!({"id": token});
            w.create(&t.id, &t.caller, &v).unwrap();
        }
    }
    Two { w, a, b }
}

/// What [`observe`] sees: both partners' feeds and every merchant's events.
type Observed = (Vec<StatusChange>, Vec<StatusChange>, Vec<Vec<Event>>);

/// [`two`], and what [`observe`] sees of it before the test acts.
fn two_observed() -> (Two, Observed) {
    let t = two();
    let before = observe(&t);
    (t, before)
}

/// Everything A and B can observe: both partners' feeds and every merchant's events.
fn observe(t: &Two) -> Observed {
    let events = [&t.a.merchant_caller, &t.a.second_caller, &t.b.merchant_caller, &t.b.second_caller]
        .map(|m| t.w.events(m))
        .to_vec();
    (t.w.changes(&t.a.id, &t.a.caller), t.w.changes(&t.b.id, &t.b.caller), events)
}

/// Run `op(id)` as B for A's `real` id and for a never-existing id of the same
/// shape; both must be refused identically.
fn same_as_unknown(t: &Two, real: &str, prefix: &str, op: impl Fn(&str) -> Operation) {
    let never = unknown(prefix);
    assert_eq!(never.len(), real.len());
    let for_real = t.w.run(&t.b.caller, op(real)).unwrap_err();
    let for_never = t.w.run(&t.b.caller, op(&never)).unwrap_err();
    assert_eq!(shape(&for_real, real), shape(&for_never, &never), "{real} vs {never}");
    assert_ne!(for_real, Refusal::Authentication);
}

#[test]
fn another_partners_resources_answer_like_unknown_ids_and_nothing_is_written() {
    let (t, before) = two_observed();
    let (a, b) = (&t.a, &t.b);
    let pb = b.id.clone();

    for id in [&a.pending, &a.settled] {
        let void =
            |id: &str| Operation::VoidTransaction { partner_id: pb.clone(), transaction_id: id.into() };
        same_as_unknown(&t, id, "txn_", void);
        let reverse =
            |id: &str| Operation::ReverseTransaction { partner_id: pb.clone(), transaction_id: id.into() };
        same_as_unknown(&t, id, "txn_", reverse);
    }
    for id in [&a.global_customer, &a.merchant_customer] {
        let delete = |id: &str| Operation::DeleteCustomer { partner_id: pb.clone(), customer_id: id.into() };
        same_as_unknown(&t, id, "cus_", delete);
        // A's token on B's own merchant.
        let create = |id: &str| {
            let mut v = transaction(&b.merchant, "debit", "40.00");
            v["customer"] = json!({"id": id});
            Operation::CreateTransaction { partner_id: pb.clone(), body: body(&v) }
        };
        same_as_unknown(&t, id, "cus_", create);
    }
    for id in [&a.merchant, &a.second, &a.underwriting] {
        let create = |id: &str| Operation::CreateTransaction {
            partner_id: pb.clone(),
            body: body(&transaction(id, "debit", "40.00")),
        };
        same_as_unknown(&t, id, "mer_", create);
        let refused = t.w.run(&b.caller, create(id)).unwrap_err();
        assert_eq!(refused.message(), format!("'{id}' is an invalid Merchant ID"), "message 11");
        // A's merchant with A's own customer token: still message 11.
        let mut v = transaction(id, "debit", "40.00");
        v["customer"] = json!({"id": a.global_customer});
        let op = Operation::CreateTransaction { partner_id: pb.clone(), body: body(&v) };
        assert_eq!(shape(&t.w.run(&b.caller, op).unwrap_err(), id), shape(&refused, id));
        let customer = |id: &str| Operation::CreateCustomer {
            partner_id: pb.clone(),
            body: body(&customer_body(id, "777788889999")),
        };
        same_as_unknown(&t, id, "mer_", customer);
    }

    assert_eq!(observe(&t), before, "refused operations wrote nothing");
    assert_eq!(t.w.engine.audit_usage(), Ok(Ok(())), "usage counters untouched");
    // A's resources are untouched: its pending transaction still voids, its
    // customers still pay, its settled transaction still reverses.
    assert!(matches!(t.w.void(&a.id, &a.caller, &a.pending), Ok(Outcome::TransactionVoided { .. })));
    assert!(matches!(t.w.reverse(&a.id, &a.caller, &a.settled), Ok(Outcome::TransactionReversed { .. })));
    for token in [&a.global_customer, &a.merchant_customer] {
        let mut v = transaction(&a.merchant, "debit", "50.00");
        v["customer"] = json!({"id": token});
        let id = t.w.create(&a.id, &a.caller, &v).unwrap();
        assert_eq!(statuses(&t.w.history(&a.id, &a.caller, &id)), [Status::A], "{token}");
    }
}

#[test]
fn a_partner_id_that_is_not_the_callers_is_an_authentication_failure() {
    let (t, before) = two_observed();
    let (a, b) = (&t.a, &t.b);
    let pa = a.id.clone();
    let mut customer_tx = transaction(&a.merchant, "debit", "40.00");
    customer_tx["customer"] = json!({"id": a.global_customer});
    let ops = || {
        vec![
            Operation::VoidTransaction { partner_id: pa.clone(), transaction_id: a.pending.clone() },
            Operation::ReverseTransaction { partner_id: pa.clone(), transaction_id: a.settled.clone() },
            Operation::DeleteCustomer { partner_id: pa.clone(), customer_id: a.global_customer.clone() },
            Operation::CreateTransaction {
                partner_id: pa.clone(),
                body: body(&transaction(&a.merchant, "debit", "40.00")),
            },
            Operation::CreateTransaction { partner_id: pa.clone(), body: body(&customer_tx) },
            Operation::CreateCustomer {
                partner_id: pa.clone(),
                body: body(&customer_body(&a.merchant, "777788889999")),
            },
            Operation::SubmitMerchant { partner_id: pa.clone(), body: body(&open_application(&["PPD"])) },
            // B's own resources named under A's partner id.
            Operation::VoidTransaction { partner_id: pa.clone(), transaction_id: b.pending.clone() },
            Operation::CreateTransaction {
                partner_id: pa.clone(),
                body: body(&transaction(&b.merchant, "debit", "40.00")),
            },
        ]
    };
    // B's partner key, and A's own merchant key (a merchant runs no partner operation).
    for caller in [&b.caller, &a.merchant_caller, &b.merchant_caller] {
        for op in ops() {
            assert_eq!(t.w.run(caller, op.clone()), Err(Refusal::Authentication), "{caller:?} {op:?}");
        }
    }
    // A merchant key naming its own partner for B's or its own resources.
    let mine = Operation::VoidTransaction { partner_id: pa.clone(), transaction_id: a.pending.clone() };
    assert_eq!(t.w.run(&a.merchant_caller, mine), Err(Refusal::Authentication));

    let pointer = t.w.engine.status_changes(&a.caller, &a.id, "0").unwrap().new_pointer;
    for (caller, partner) in [
        (&b.caller, &a.id),
        (&a.merchant_caller, &a.id),
        (&b.merchant_caller, &b.id),
        (&Caller::Operator, &a.id),
    ] {
        for p in ["0", pointer.as_str()] {
            assert_eq!(t.w.engine.status_changes(caller, partner, p), Err(Refusal::Authentication));
        }
    }
    // The events feed is for merchant keys only.
    for caller in [&a.caller, &b.caller, &Caller::Operator] {
        assert_eq!(t.w.engine.events(caller, None), Err(Refusal::Authentication));
    }
    assert_eq!(observe(&t), before);
    assert_eq!(t.w.engine.audit_usage(), Ok(Ok(())));
}

#[test]
fn pointers_are_bound_to_their_feed() {
    let t = two();
    let (a, b) = (&t.a, &t.b);
    let a_pointer = t.w.engine.status_changes(&a.caller, &a.id, "0").unwrap().new_pointer;
    let b_pointer = t.w.engine.status_changes(&b.caller, &b.id, "0").unwrap().new_pointer;
    let a_events = t.w.engine.events(&a.merchant_caller, None).unwrap().new_pointer;
    // Same position in both feeds, yet different pointers.
    assert_eq!(
        ach_tests::world::pointer_position(&a_pointer),
        ach_tests::world::pointer_position(&b_pointer)
    );
    assert_ne!(a_pointer, b_pointer);
    let forged = t.w.engine.status_changes(&b.caller, &b.id, &random_alphanumeric(32)).unwrap_err();
    for p in [&a_pointer, &a_events] {
        let refused = t.w.engine.status_changes(&b.caller, &b.id, p).unwrap_err();
        assert_eq!(refused.message(), "Failed to accept this transaction");
        assert_eq!(refused.errors()[0].field, "pointer");
        assert_eq!(refused, forged, "another feed's pointer answers like a forged one");
    }
    // A merchant's pointer on its partner's other merchant, and on B's merchants.
    for m in [&a.second_caller, &b.merchant_caller, &b.second_caller] {
        let refused = t.w.engine.events(m, Some(&a_events)).unwrap_err();
        assert_eq!(refused.errors()[0].field, "pointer");
    }
    // A partner pointer is not an events pointer of the same partner's merchant either.
    let not_this_feeds = Refusal::problem_with_status(
        AchError::FailedToAccept,
        422,
        "pointer",
        ProblemCode::InvalidValue,
        "this pointer was not issued by this feed (use 0 for the first call)",
    );
    assert_eq!(t.w.engine.events(&a.merchant_caller, Some(&a_pointer)), Err(not_this_feeds));
    // Its own pointer reads on: at the end of its feed, an empty page that stays put.
    assert_eq!(
        t.w.engine.events(&a.merchant_caller, Some(&a_events)),
        Ok(EventsPage { events: vec![], new_pointer: a_events.clone(), exists_more_events: false })
    );
}

#[test]
fn a_merchant_key_reads_only_its_own_events() {
    let t = two();
    for (tenant, other) in [(&t.a, &t.b), (&t.b, &t.a)] {
        let feed = t.w.changes(&tenant.id, &tenant.caller);
        let other_feed = t.w.changes(&other.id, &other.caller);
        for (merchant, caller) in
            [(&tenant.merchant, &tenant.merchant_caller), (&tenant.second, &tenant.second_caller)]
        {
            let events = t.w.events(caller);
            assert!(!events.is_empty());
            // Exactly the partner feed's changes of this merchant's transactions.
            let mine: Vec<&StatusChange> = events.iter().map(|e| &e.change).collect();
            let own_ids = merchant_transactions(&t, tenant, merchant);
            let expected: Vec<&StatusChange> =
                feed.iter().filter(|c| own_ids.contains(&c.transaction_id)).collect();
            assert_eq!(mine, expected, "{merchant}");
            assert!(events
                .iter()
                .all(|e| !other_feed.iter().any(|c| c.transaction_id == e.change.transaction_id)));
        }
    }
}

/// The transactions of one merchant, known from how `two()` built them.
fn merchant_transactions(t: &Two, tenant: &Tenant, merchant: &str) -> Vec<String> {
    let feed = t.w.changes(&tenant.id, &tenant.caller);
    let mut ids: Vec<String> = feed.iter().map(|c| c.transaction_id.clone()).collect();
    ids.dedup();
    if merchant == tenant.second {
        vec![tenant.pending.clone()]
    } else {
        ids.retain(|id| *id != tenant.pending);
        ids
    }
}

#[test]
fn partners_and_merchants_cannot_run_operator_operations() {
    let (t, before) = two_observed();
    let (a, b) = (&t.a, &t.b);
    let now = t.w.engine.now();
    let directory = one_record_directory();
    let ops = vec![
        Operation::CreatePartner { name: "Mallory".into() },
        Operation::SetPartnerLimits { partner_id: b.id.clone(), limits: Limits::default() },
        Operation::ApproveMerchant { merchant_id: b.underwriting.clone(), limits: Limits::default() },
        Operation::SetMerchantLimits { merchant_id: b.merchant.clone(), limits: Limits::default() },
        Operation::RecordReturn {
            transaction_id: b.settled.clone(),
            return_code: "R01".into(),
            return_date: None,
        },
        Operation::RecordReturn {
            transaction_id: a.settled.clone(),
            return_code: "R01".into(),
            return_date: None,
        },
        Operation::LoadDirectory { text: directory.clone() },
        Operation::SetClock { now: now + chrono::Duration::days(30) },
    ];
    for caller in [&b.caller, &b.merchant_caller, &a.caller, &a.merchant_caller] {
        for op in &ops {
            assert_eq!(t.w.run(caller, op.clone()), Err(Refusal::Authentication), "{caller:?} {op:?}");
        }
    }
    // The same ops in one batch: every one refused, nothing applied.
    let batch = ops.iter().map(|op| (b.caller.clone(), op.clone())).collect();
    assert!(t.w.engine.execute_batch(batch).iter().all(|r| *r == Err(Refusal::Authentication)));

    assert_eq!(observe(&t), before);
    assert_eq!(t.w.engine.audit_usage(), Ok(Ok(())));
    assert_eq!(t.w.engine.now(), now, "the clock did not move");
    // B's underwriting merchant is still in underwriting.
    let refused = t.w.create(&b.id, &b.caller, &transaction(&b.underwriting, "debit", "1.00")).unwrap_err();
    assert_eq!(refused.message(), "Unable to accept PPD transactions for this merchant");
    // The directory was not replaced: 021000021 is still known.
    let id = t.w.create(&b.id, &b.caller, &transaction(&b.merchant, "debit", "1.23")).unwrap();
    assert_eq!(statuses(&t.w.history(&b.id, &b.caller, &id)), [Status::A]);
    // The operator can do what they could not (the operations themselves are valid).
    let approve =
        Operation::ApproveMerchant { merchant_id: b.underwriting.clone(), limits: Limits::default() };
    match t.w.run(&Caller::Operator, approve) {
        Ok(Outcome::MerchantApproved { merchant_id, api_key, limits }) => {
            // No limits given: the application's own volumes set them.
            let cents = |c| Some(Money::from_cents(c));
            let from_application = Limits {
                max_transaction_amount: cents(500_000),
                min_transaction_amount: cents(100),
                period_days: Some(7),
                monthly_count: Some(300),
                monthly_amount: cents(2_565_000),
                monthly_average_amount: cents(25_650),
                monthly_average_min_count: Some(50),
                ..Limits::default()
            };
            assert_eq!((merchant_id, limits), (b.underwriting.clone(), from_application));
            let merchant = Caller::Merchant { partner_id: b.id.clone(), merchant_id: b.underwriting.clone() };
            assert_eq!(t.w.engine.authenticate(&api_key), Ok(merchant));
        }
        other => panic!("{other:?}"),
    }
    let ret = Operation::RecordReturn {
        transaction_id: b.settled.clone(),
        return_code: "R01".into(),
        return_date: None,
    };
    // B's merchant's first return puts it over the overall return-rate threshold.
    let crossing = ThresholdCrossing {
        merchant_id: b.merchant.clone(),
        partner_id: b.id.clone(),
        group: ReturnGroup::Overall,
        count: 1,
        debits: 1,
    };
    assert_eq!(
        t.w.run(&Caller::Operator, ret),
        Ok(Outcome::ReturnRecorded { transaction_id: b.settled.clone(), crossings: vec![crossing] })
    );
    let last = t.w.history(&b.id, &b.caller, &b.settled).pop().unwrap();
    assert_eq!((last.status, last.return_code.as_deref()), (Status::R, Some("R01")));
    assert!(matches!(
        t.w.run(&Caller::Operator, Operation::LoadDirectory { text: directory }),
        Ok(Outcome::DirectoryLoaded { records: 1 })
    ));
}

#[test]
fn idempotency_keys_belong_to_their_partner() {
    let t = two();
    let (a, b) = (&t.a, &t.b);
    let idem = |key: &str, op: Operation| Operation::Idempotent { key: key.into(), operation: Box::new(op) };
    let create = |p: &str, m: &str, amount: &str| Operation::CreateTransaction {
        partner_id: p.into(),
        body: body(&transaction(m, "debit", amount)),
    };
    // B naming A's partner id under a key: refused before anything is stored, so A
    // can then use that key for another request.
    let refused = t.w.run(&b.caller, idem("order-1", create(&a.id, &a.merchant, "60.00")));
    assert_eq!(refused, Err(Refusal::Authentication));
    let a_first = t.w.run(&a.caller, idem("order-1", create(&a.id, &a.merchant, "61.00"))).unwrap();
    // B's use of the same key is its own: a new transaction, not A's answer, not message 2.
    let b_first = t.w.run(&b.caller, idem("order-1", create(&b.id, &b.merchant, "62.00"))).unwrap();
    assert_ne!(a_first, b_first);
    let b_again = t.w.run(&b.caller, idem("order-1", create(&b.id, &b.merchant, "62.00"))).unwrap();
    assert_eq!(b_again, Outcome::Replayed(Box::new(b_first.clone())));
    // A body's idempotency_key too.
    let mut v = transaction(&a.merchant, "debit", "63.00");
    v["idempotency_key"] = json!("order-2");
    let a_body = t.w.create(&a.id, &a.caller, &v).unwrap();
    v["merchant_id"] = json!(b.merchant);
    let b_body = t.w.create(&b.id, &b.caller, &v).unwrap();
    assert_ne!(a_body, b_body);
    // Wrapped operations on A's resources still answer like unknown ids.
    let pb = b.id.clone();
    let void = |id: &str| {
        let op = Operation::VoidTransaction { partner_id: pb.clone(), transaction_id: id.into() };
        idem(&format!("void-{id}"), op)
    };
    same_as_unknown(&t, &a.pending, "txn_", void);
    assert!(matches!(t.w.void(&a.id, &a.caller, &a.pending), Ok(Outcome::TransactionVoided { .. })));
}
