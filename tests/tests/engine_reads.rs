//! Reads of one's own data: a transaction with its history exactly as the
//! status-changes feed showed it on every path through the lifecycle, never
//! its account number; pages of transactions and merchants walked by cursor;
//! merchants and customers; and nothing of another partner's or merchant's.
//! Dates are fixed: Monday 2026-11-23 10:00 Eastern, Thanksgiving on the
//! Thursday.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;

use ach_core::engine::{Caller, Refusal};
use ach_core::model::{MerchantState, PageRequest, Status, TransactionFilter, TransactionView};
use ach_tests::router;
use ach_tests::world::{transaction, World, OPERATOR_KEY};
use serde_json::{json, Value};

fn admin(w: &World, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    router::call(&w.engine, method, path, Some(OPERATOR_KEY), body.as_ref())
}

fn read(w: &World, caller: &Caller, partner_id: &str, id: &str) -> TransactionView {
    w.engine.transaction(caller, Some(partner_id), id).unwrap_or_else(|e| panic!("{id}: {e:?}"))
}

fn entry(w: &World, p: &str, pc: &Caller, m: &str, kind: &str, amount: &str, account: &str) -> String {
    let mut t = transaction(m, kind, amount);
    t["customer"]["account_number"] = json!(account);
    // A payee of its own: a credit to a known payee's other account is held.
    t["customer"]["name"] = json!(format!("Payee {account}"));
    w.create(p, pc, &t).unwrap()
}

fn statuses(v: &TransactionView) -> Vec<Status> {
    v.history.iter().map(|c| c.status).collect()
}

#[test]
fn a_history_is_what_the_status_feed_showed_on_every_path() {
    use Status::{A, B, R, S};
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let pending = entry(&w, &p, &pc, &m, "debit", "10.00", "10000001");
    let voided = entry(&w, &p, &pc, &m, "debit", "11.00", "10000002");
    w.void(&p, &pc, &voided).unwrap();
    // A first credit of $1,000 or more is held for review.
    let rejected = entry(&w, &p, &pc, &m, "credit", "1000.00", "10000003");
    let released = entry(&w, &p, &pc, &m, "credit", "1000.00", "10000004");
    assert_eq!(admin(&w, "POST", &format!("/admin/reviews/{rejected}/reject"), None).0, 200);
    w.at("2026-11-23 19:00");
    // Released after its cut-off: it waits for the next one.
    assert_eq!(admin(&w, "POST", &format!("/admin/reviews/{released}/release"), None).0, 200);
    let returned_early = entry(&w, &p, &pc, &m, "debit", "12.00", "10000005");
    let settled = entry(&w, &p, &pc, &m, "credit", "13.00", "10000006");
    let returned_late = entry(&w, &p, &pc, &m, "debit", "14.00", "10000007");
    w.at("2026-11-24 19:00");
    w.return_(&returned_early, "R01").unwrap();
    w.at("2026-11-30 10:00");
    w.return_(&returned_late, "R10").unwrap();
    let reversal = match w.reverse(&p, &pc, &settled).unwrap() {
        ach_core::engine::Outcome::TransactionReversed { reversal_id, .. } => reversal_id,
        other => panic!("{other:?}"),
    };
    let expected = [
        (&pending, vec![A, B, S]),
        (&voided, vec![A, R]),
        (&rejected, vec![A, R]),
        (&released, vec![A, B, S]),
        (&returned_early, vec![A, B, R]),
        (&settled, vec![A, B, S]),
        (&returned_late, vec![A, B, S, R]),
        (&reversal, vec![A]),
    ];
    for (id, path) in expected {
        let view = read(&w, &pc, &p, id);
        assert_eq!(statuses(&view), path, "{id}");
        assert_eq!(view.history, w.history(&p, &pc, id), "{id}: the history is the feed's");
        assert_eq!(view.status, *path.last().unwrap());
    }
    let late = read(&w, &pc, &p, &returned_late);
    let ret = late.returned.unwrap();
    assert_eq!((ret.code.as_str(), ret.reason.as_deref()), ("R10", late.history[3].reason.as_deref()));
    assert_eq!(ret.date.as_deref(), Some("2026-11-30"));
    assert!(read(&w, &pc, &p, &voided).returned.is_none(), "a void is no return");
    assert_eq!(read(&w, &pc, &p, &reversal).links.reversal_of.as_deref(), Some(settled.as_str()));
    assert_eq!(read(&w, &pc, &p, &settled).links.reversed_by.as_deref(), Some(reversal.as_str()));
}

#[test]
fn a_read_shows_the_transaction_and_never_its_account_number() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc) = w.partner();
    let (m, mc) = w.merchant(&p, &pc, &["PPD"]);
    let mut body = transaction(&m, "debit", "1234.5");
    body["description"] = json!("Invoice 7 ﬁnal");
    body["customer"]["account_number"] = json!("98765432101");
    let id = w.create(&p, &pc, &body).unwrap();
    let view = read(&w, &pc, &p, &id);
    let text = serde_json::to_string(&view).unwrap();
    assert!(!text.contains("98765432101"), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["amount"].to_string(), "1234.50");
    assert_eq!((v["type"].as_str(), v["standard_entry_class"].as_str()), (Some("debit"), Some("PPD")));
    assert_eq!(v["description"], "Invoice 7 final", "kept as NFKC");
    assert_eq!(
        v["customer"],
        json!({"name": "Ada Lovelace", "routing_number": "021000021",
        "account_number_last4": "2101", "account_type": "checking"})
    );
    assert_eq!((v["status"].as_str(), v["created_at"].as_str()), (Some("A"), Some("2026-11-23 10:00:00")));
    assert_eq!(v["return"], Value::Null);
    assert_eq!(v["origination_date"], Value::Null);
    // The merchant's own key reads it too, with or without naming the partner.
    assert_eq!(w.engine.transaction(&mc, None, &id).unwrap(), view);
    assert_eq!(w.engine.transaction(&mc, Some(&p), &id).unwrap(), view);
    // Made with a stored customer: the token is shown.
    let token = w.customer(&p, &pc, "global", "55554444");
    let id = w
        .create(
            &p,
            &pc,
            &json!({"merchant_id": m, "amount": "5.00", "description": "t",
        "type": "credit", "standard_entry_class": "PPD", "customer": {"id": token}}),
        )
        .unwrap();
    let v = read(&w, &pc, &p, &id);
    assert_eq!(
        (v.customer.id.as_deref(), v.customer.account_number_last4.as_str()),
        (Some(token.as_str()), "4444")
    );
    w.at("2026-11-23 18:30");
    let v = read(&w, &pc, &p, &id);
    assert_eq!(
        [v.origination_date.as_deref(), v.effective_date.as_deref(), v.settlement_date.as_deref()],
        [Some("2026-11-23"), Some("2026-11-24"), Some("2026-11-24")]
    );
}

#[test]
fn nobody_reads_another_partners_or_merchants_data() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc) = w.partner();
    let (m, mc) = w.merchant(&p, &pc, &["PPD"]);
    let (other_m, other_mc) = w.merchant(&p, &pc, &["PPD"]);
    let (q, qc) = w.partner();
    let id = w.debit(&p, &pc, &m, "10.00");
    let token = w.customer(&p, &pc, &m, "12121212");
    let global = w.customer(&p, &pc, "global", "13131313");
    let not_found = |r: Result<TransactionView, Refusal>| {
        let r = r.err().unwrap();
        assert_eq!((r.status(), r.errors()[0].field.as_str()), (404, "transaction_id"), "{r:?}");
        r.message()
    };
    let unknown = not_found(w.engine.transaction(&pc, Some(&p), "txn_0000000000000000000000"));
    // Another partner, another merchant of the same partner: as if unknown.
    assert_eq!(not_found(w.engine.transaction(&qc, Some(&q), &id)), unknown);
    assert_eq!(not_found(w.engine.transaction(&other_mc, None, &id)), unknown);
    // A partner naming another partner, or none, is refused as every endpoint does.
    assert_eq!(w.engine.transaction(&qc, Some(&p), &id).err(), Some(Refusal::Authentication));
    assert_eq!(w.engine.transaction(&pc, None, &id).err(), Some(Refusal::PartnerIdRequired));
    assert_eq!(w.engine.transaction(&mc, Some(&q), &id).err(), Some(Refusal::Authentication));
    assert_eq!(w.engine.transaction(&Caller::Operator, Some(&p), &id).err(), Some(Refusal::Authentication));
    // Merchants: another partner's answers as unknown (message 11).
    assert_eq!(w.engine.merchant(&pc, Some(&p), &m).unwrap().id, m);
    let refused = w.engine.merchant(&qc, Some(&q), &m).err().unwrap();
    assert_eq!(refused.message(), format!("'{m}' is an invalid Merchant ID"));
    let unknown = format!("'{m}' is an invalid Merchant ID");
    assert_eq!(w.engine.merchant(&other_mc, None, &m).err().unwrap().message(), unknown);
    assert_eq!(w.engine.merchant(&mc, None, &m).unwrap().id, m);
    // Lists: another partner's merchant is unknown; a merchant key lists its own.
    let filter = |merchant: Option<&str>| TransactionFilter {
        merchant_id: merchant.map(str::to_owned),
        status: None,
        created_from: None,
        created_to: None,
        page: PageRequest::default(),
    };
    assert_eq!(w.engine.transactions(&qc, Some(&q), &filter(Some(&m))).err().unwrap().message(), unknown);
    assert!(w.engine.transactions(&qc, Some(&q), &filter(None)).unwrap().transactions.is_empty());
    assert_eq!(w.engine.transactions(&other_mc, None, &filter(Some(&m))).err().unwrap().message(), unknown);
    assert!(w.engine.transactions(&other_mc, None, &filter(None)).unwrap().transactions.is_empty());
    assert_eq!(w.engine.transactions(&mc, None, &filter(None)).unwrap().transactions[0].id, id);
    let merchants = w.engine.merchants(&other_mc, None, &PageRequest::default()).unwrap();
    assert_eq!(merchants.merchants.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), [other_m.as_str()]);
    // Customers: a merchant key sees those stored for it, not the partner's global ones.
    assert_eq!(w.engine.customer(&mc, None, &token).unwrap().merchant_id, m);
    assert_eq!(w.engine.customer(&pc, Some(&p), &global).unwrap().merchant_id, "global");
    for (caller, partner, id) in
        [(&mc, None, &global), (&other_mc, None, &token), (&qc, Some(q.as_str()), &token)]
    {
        let r = w.engine.customer(caller, partner, id).err().unwrap();
        assert_eq!((r.status(), r.errors()[0].field.as_str()), (404, "customer_id"), "{r:?}");
    }
}

#[test]
fn a_customer_reads_back_without_its_number_and_is_gone_once_deleted() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let token = w.customer(&p, &pc, &m, "77776666");
    let v = serde_json::to_value(w.engine.customer(&pc, Some(&p), &token).unwrap()).unwrap();
    assert_eq!(v["merchant_id"], json!(m));
    let sent = ach_tests::world::customer_body(&m, "77776666");
    assert_eq!(v["account_number_last4"], "6666");
    assert_eq!((&v["routing_number"], &v["name"]), (&sent["routing_number"], &sent["name"]));
    assert_eq!(v["created_at"], "2026-11-23 10:00:00");
    assert!(!v.to_string().contains("77776666"));
    w.at("2026-11-24 09:00");
    let op =
        ach_core::engine::Operation::DeleteCustomer { partner_id: p.clone(), customer_id: token.clone() };
    w.run(&pc, op).unwrap();
    let r = w.engine.customer(&pc, Some(&p), &token).err().unwrap();
    assert_eq!((r.status(), r.message().as_str()), (404, "Failed to accept this transaction"));
    assert_eq!(r.errors()[0].message, format!("customer '{token}' was deleted on 2026-11-24"));
}

#[test]
fn a_merchant_reads_as_submitted_approved_and_suspended_without_its_secrets() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc) = w.partner();
    let app = ach_tests::world::application(&["PPD", "WEB"]);
    let m = w.submit(&p, &pc, &app);
    let view = |w: &World| w.engine.merchant(&pc, Some(&p), &m).unwrap();
    let v = view(&w);
    assert_eq!(
        (v.status, v.company_name.as_str(), v.dba.as_deref()),
        (MerchantState::Submitted, "Acme Groceries LLC", Some("Acme Market"))
    );
    assert_eq!(v.approved_at, None);
    let text = serde_json::to_string(&v).unwrap();
    for secret in ["12-3456789", "123-45-6789", "123456789", "D123-4567-8901", "iVBOR"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    w.at("2026-11-23 11:00");
    w.approve(&m, ach_tests::world::roomy_limits());
    let v = view(&w);
    assert_eq!((v.status, v.approved_at.as_deref()), (MerchantState::Approved, Some("2026-11-23 11:00:00")));
    let roomy = ach_tests::world::roomy_limits();
    assert_eq!(
        (v.limits.max_transaction_amount, v.limits.daily_count),
        (roomy.max_transaction_amount, roomy.daily_count)
    );
    assert_eq!(admin(&w, "POST", &format!("/admin/merchants/{m}/suspend"), None).0, 200);
    assert_eq!(view(&w).status, MerchantState::Suspended);
    assert_eq!(admin(&w, "POST", &format!("/admin/merchants/{m}/resume"), None).0, 200);
    assert_eq!(view(&w).status, MerchantState::Approved);
}

#[test]
fn merchant_pages_walk_newest_first_to_the_end() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc) = w.partner();
    let (q, qc) = w.partner();
    let mut made = Vec::new();
    for i in 0..7 {
        w.at(&format!("2026-11-23 10:{:02}", i + 1));
        made.push(w.submit(&p, &pc, &ach_tests::world::application(&["PPD"])));
        w.submit(&q, &qc, &ach_tests::world::application(&["PPD"]));
    }
    made.reverse();
    let mut seen = Vec::new();
    let mut page = PageRequest { limit: 3, after: None };
    loop {
        let got = w.engine.merchants(&pc, Some(&p), &page).unwrap();
        assert!(got.merchants.len() <= 3);
        seen.extend(got.merchants.into_iter().map(|m| m.id));
        match got.next_cursor {
            Some(c) => page.after = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, made);
    // Another partner's cursor is refused like a forged one.
    let theirs = w.engine.merchants(&qc, Some(&q), &PageRequest { limit: 1, after: None }).unwrap();
    let r = w
        .engine
        .merchants(&pc, Some(&p), &PageRequest { limit: 1, after: theirs.next_cursor })
        .err()
        .unwrap();
    assert_eq!((r.status(), r.errors()[0].field.as_str()), (422, "after"));
}

/// Every page of `filter` from the first, its ids in order.
fn walk(w: &World, caller: &Caller, p: &str, mut filter: TransactionFilter) -> Vec<String> {
    let mut ids = Vec::new();
    loop {
        let page = w.engine.transactions(caller, Some(p), &filter).unwrap();
        assert!(page.transactions.len() <= filter.page.limit);
        ids.extend(page.transactions.into_iter().map(|t| t.id));
        match page.next_cursor {
            Some(c) => filter.page.after = Some(c),
            None => return ids,
        }
    }
}

fn all(limit: usize) -> TransactionFilter {
    TransactionFilter {
        merchant_id: None,
        status: None,
        created_from: None,
        created_to: None,
        page: PageRequest { limit, after: None },
    }
}

#[test]
fn transaction_pages_filter_by_merchant_status_and_eastern_dates() {
    let w = World::new("2026-11-23 10:00");
    w.screening_off();
    let (p, pc) = w.partner();
    let (m1, _) = w.merchant(&p, &pc, &["PPD"]);
    let (m2, _) = w.merchant(&p, &pc, &["PPD"]);
    let mut by_day: Vec<(String, String, &str)> = Vec::new();
    // Monday before and after the cut-off, Tuesday just before midnight
    // Eastern (already Wednesday in UTC), Wednesday.
    for (when, day) in [
        ("2026-11-23 10:00", "2026-11-23"),
        ("2026-11-23 19:00", "2026-11-23"),
        ("2026-11-24 23:59", "2026-11-24"),
        ("2026-11-25 00:01", "2026-11-25"),
    ] {
        w.at(when);
        for m in [&m1, &m2] {
            by_day.push((w.debit(&p, &pc, m, "10.00"), m.clone(), day));
        }
    }
    let newest_first = |keep: &dyn Fn(&(String, String, &str)) -> bool| {
        by_day.iter().rev().filter(|t| keep(t)).map(|t| t.0.clone()).collect::<Vec<_>>()
    };
    assert_eq!(walk(&w, &pc, &p, all(3)), newest_first(&|_| true));
    let mut f = all(2);
    f.merchant_id = Some(m2.clone());
    assert_eq!(walk(&w, &pc, &p, f), newest_first(&|t| t.1 == m2));
    let day = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    let mut f = all(1);
    f.created_from = Some(day("2026-11-24"));
    f.created_to = Some(day("2026-11-24"));
    assert_eq!(walk(&w, &pc, &p, f), newest_first(&|t| t.2 == "2026-11-24"));
    let mut f = all(100);
    f.created_to = Some(day("2026-11-23"));
    assert_eq!(walk(&w, &pc, &p, f), newest_first(&|t| t.2 == "2026-11-23"));
    // Monday's entries originated at Monday's and Tuesday's cut-offs; the rest wait.
    let mut f = all(3);
    f.status = Some(Status::B);
    let originated: HashSet<String> = walk(&w, &pc, &p, f).into_iter().collect();
    let monday: HashSet<String> = by_day.iter().take(4).map(|t| t.0.clone()).collect();
    assert_eq!(originated, monday);
    // A forged cursor, and a cursor of another list, are refused.
    let mut f = all(1);
    let first = w.engine.transactions(&pc, Some(&p), &f).unwrap();
    let cursor = first.next_cursor.unwrap();
    f.page.after = Some(format!("{cursor}A"));
    let forged = w.engine.transactions(&pc, Some(&p), &f).err().unwrap();
    assert_eq!((forged.status(), forged.errors()[0].field.as_str()), (422, "after"));
    f.merchant_id = Some(m1.clone());
    f.page.after = Some(cursor);
    let r = w.engine.transactions(&pc, Some(&p), &f).err().unwrap();
    assert_eq!((r.status(), r.errors()[0].field.as_str()), (422, "after"));
}
