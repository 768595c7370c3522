//! Return and notification-of-change files through the router: matched by the
//! original trace number, applied exactly once, a malformed file refused whole.
#![allow(clippy::unwrap_used)]

use ach_core::engine::Engine;
use ach_core::model::Status;
use ach_core::nacha::{self, Addenda, Batch, ChangeEntry, Entry, FileHeader, NachaFile, ReturnEntry, Text};
use ach_core::Money;
use ach_tests::router::{request, send};
use ach_tests::world::{transaction, World, OPERATOR_KEY};
use chrono::NaiveDate;
use serde_json::{json, Value};

fn post_file(engine: &Engine, bytes: &[u8]) -> (u16, Value) {
    send(engine, &request("POST", "/admin/return-files", Some(OPERATOR_KEY), bytes.to_vec()))
}

/// The entries of every origination file written so far, by transaction amount.
fn originated(engine: &Engine) -> Vec<Entry> {
    let mut out = Vec::new();
    for f in engine.origination_files().unwrap() {
        let (_, bytes) = engine.origination_file(&f.id).unwrap().unwrap();
        let parsed = nacha::read(&bytes).unwrap();
        out.extend(parsed.file.batches.into_iter().flat_map(|b| b.entries));
    }
    out
}

const RDFI: &str = "02100002";

/// A return file from the receiving bank: each `(original entry, code)` returned,
/// each `(original entry, change code, corrected data)` a notification of change.
fn bank_file(returns: &[(&Entry, &str)], notices: &[(&Entry, &str, &str)], effective: NaiveDate) -> Vec<u8> {
    let mut sequence = 0u32;
    let mut trace = || {
        sequence += 1;
        Text::from(format!("{RDFI}{sequence:07}"))
    };
    // A return or notice carries the original's code less one (27 → 26, 22 → 21).
    let entry = |original: &Entry, amount: Money, addenda: Addenda, own: Text| Entry {
        transaction_code: original.transaction_code - 1,
        receiving_dfi: Text::from("01100001"),
        check_digit: '5',
        account_number: original.account_number.clone(),
        amount,
        identification: original.identification.clone(),
        name: original.name.clone(),
        discretionary_data: Text::new(),
        trace_number: own,
        addenda: vec![addenda],
    };
    let mut returns_batch = Vec::new();
    for (original, code) in returns {
        let own = trace();
        let addenda = Addenda::Return(ReturnEntry {
            return_code: Text::from(*code),
            original_trace: original.trace_number.clone(),
            date_of_death: Text::new(),
            original_receiving_dfi: original.receiving_dfi.clone(),
            information: Text::new(),
            trace_number: own.clone(),
        });
        returns_batch.push(entry(original, original.amount, addenda, own));
    }
    let mut notices_batch = Vec::new();
    for (original, code, data) in notices {
        let own = trace();
        let addenda = Addenda::Change(ChangeEntry {
            change_code: Text::from(*code),
            original_trace: original.trace_number.clone(),
            original_receiving_dfi: original.receiving_dfi.clone(),
            corrected_data: Text::from(*data),
            trace_number: own.clone(),
        });
        notices_batch.push(entry(original, Money::from_cents(0), addenda, own));
    }
    let batch = |entries: Vec<Entry>, sec: &str, n: u32| Batch {
        service_class_code: nacha::service_class_for(&entries),
        company_name: Text::from("TEST COMPANY"),
        company_discretionary_data: Text::new(),
        company_identification: Text::from("1123456789"),
        sec_code: Text::from(sec),
        company_entry_description: Text::from("PAYMENT"),
        company_descriptive_date: Text::new(),
        effective_entry_date: effective,
        settlement_date: Text::new(),
        originator_status_code: '1',
        odfi_identification: Text::from(RDFI),
        batch_number: n,
        entries,
    };
    let mut batches = Vec::new();
    if !returns_batch.is_empty() {
        batches.push(batch(returns_batch, "PPD", 1));
    }
    if !notices_batch.is_empty() {
        let n = batches.len() as u32 + 1;
        batches.push(batch(notices_batch, "COR", n));
    }
    let header = FileHeader {
        immediate_destination: Text::from("011000015"),
        immediate_origin: Text::from("021000021"),
        creation_date: effective,
        creation_time: None,
        file_id_modifier: 'A',
        immediate_destination_name: Text::from("ACH SANDBOX"),
        immediate_origin_name: Text::from("RDFI"),
        reference_code: Text::new(),
    };
    nacha::write(&NachaFile { header, batches }).unwrap()
}

fn counts(body: &Value) -> (u64, u64, u64, u64) {
    let p = &body["payload"];
    let n = |k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{k}: {body}"));
    (n("returns"), n("notices_of_change"), n("unmatched"), n("already_applied"))
}

#[test]
fn returns_and_notices_apply_once_and_later_files_carry_the_correction() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner) = w.partner();
    let (m, merchant) = w.merchant(&partner_id, &partner, &["PPD"]);
    let token = w.customer(&partner_id, &partner, &m, "111122223333");
    let with_token = |amount: &str| {
        let mut v = transaction(&m, "debit", amount);
        v["customer"] = json!({"id": token});
        w.create(&partner_id, &partner, &v).unwrap()
    };
    let returned = w.create(&partner_id, &partner, &transaction(&m, "debit", "10.00")).unwrap();
    let settled_then_returned = w.create(&partner_id, &partner, &transaction(&m, "debit", "20.00")).unwrap();
    let corrected = with_token("30.00");
    let inline_notice = w.create(&partner_id, &partner, &transaction(&m, "debit", "40.00")).unwrap();
    w.at("2026-11-23 18:00");
    // Debits effective 11-24 settle on 11-27 (Thanksgiving skipped).
    w.at("2026-11-27 09:00");
    let entries = originated(&w.engine);
    let by_amount = |cents: i64| entries.iter().find(|e| e.amount.cents() == cents).unwrap();
    let effective = NaiveDate::from_ymd_opt(2026, 11, 27).unwrap();
    let unknown = {
        let mut e = by_amount(1_000).clone();
        e.trace_number = Text::from("021000029999999");
        e
    };
    let file = bank_file(
        &[(by_amount(1_000), "R01"), (by_amount(2_000), "R10"), (&unknown, "R03")],
        &[(by_amount(3_000), "C01", "999988887777"), (by_amount(4_000), "C05", "32")],
        effective,
    );
    let (status, body) = post_file(&w.engine, &file);
    assert_eq!(status, 200, "{body}");
    assert_eq!(counts(&body), (2, 2, 1, 0));

    for (id, code, reason) in [
        (&returned, "R01", "Insufficient Funds"),
        (&settled_then_returned, "R10", "Customer Advises Not Authorized"),
    ] {
        let last = w.history(&partner_id, &partner, id).pop().unwrap();
        assert_eq!(last.status, Status::R, "{last:?}");
        assert_eq!(last.return_code.as_deref(), Some(code));
        assert_eq!(last.return_date.as_deref(), Some("2026-11-27"), "the return batch's effective date");
        assert!(last.reason.as_deref().unwrap_or("").starts_with(&reason[..8]), "{last:?}");
    }
    // The same file again changes nothing.
    let changes_before = w.changes(&partner_id, &partner).len();
    let events_before = w.events(&merchant).len();
    let (status, body) = post_file(&w.engine, &file);
    assert_eq!(status, 200);
    assert_eq!(counts(&body), (0, 0, 1, 4));
    assert_eq!(w.changes(&partner_id, &partner).len(), changes_before);
    assert_eq!(w.events(&merchant).len(), events_before);

    // The notices are events; the token's account is corrected, the inline one is not.
    let notices: Vec<_> = w.events(&merchant).into_iter().filter(|e| e.notice_of_change.is_some()).collect();
    assert_eq!(notices.len(), 2);
    let on = |id: &str| {
        notices.iter().find(|e| e.change.transaction_id == id).unwrap().notice_of_change.clone().unwrap()
    };
    let c01 = on(&corrected);
    assert_eq!((c01.account_number.as_deref(), c01.customer_updated), (Some("999988887777"), true));
    assert_eq!(c01.customer_id.as_deref(), Some(token.as_str()));
    let c05 = on(&inline_notice);
    assert_eq!(
        (c05.account_type.as_deref(), c05.customer_updated, c05.customer_id),
        (Some("savings"), false, None)
    );
    assert_eq!(notices[0].kind, ach_core::engine::NOTICE_EVENT_TYPE);

    // The next file carries the corrected account for the token.
    with_token("50.00");
    w.at("2026-11-27 18:00");
    let entries = originated(&w.engine);
    let next = entries.iter().find(|e| e.amount.cents() == 5_000).unwrap();
    assert_eq!(next.account_number.as_str(), "999988887777");
}

#[test]
fn a_malformed_file_is_refused_and_changes_nothing() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, m) = w.tenant(&["PPD"]);
    let id = w.create(&partner_id, &partner, &transaction(&m, "debit", "10.00")).unwrap();
    w.at("2026-11-23 18:00");
    let entries = originated(&w.engine);
    let file = bank_file(&[(&entries[0], "R01")], &[], NaiveDate::from_ymd_opt(2026, 11, 24).unwrap());
    // A record one character short, and a control total that does not add up.
    let text = String::from_utf8(file).unwrap();
    let short: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i == 2 { format!("{}\n", &l[..93]) } else { format!("{l}\n") })
        .collect();
    let tampered = text.replacen("0000001000", "0000001001", 1);
    for bad in [short.as_bytes(), tampered.as_bytes(), b"not a nacha file".as_slice(), b"".as_slice()] {
        let (status, body) = post_file(&w.engine, bad);
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["message"], "Failed to accept this transaction", "{body}");
        assert!(!body["errors"].as_array().unwrap().is_empty(), "{body}");
    }
    assert_eq!(w.history(&partner_id, &partner, &id).pop().unwrap().status, Status::B, "nothing applied");
    // A real bank's return file whose traces are not ours: every entry unmatched.
    let real = std::fs::read(ach_tests::shared_data().join("nacha/return-WEB.ach")).unwrap();
    let (status, body) = post_file(&w.engine, &real);
    assert_eq!(status, 200, "{body}");
    assert_eq!(counts(&body), (0, 0, 2, 0));
}

#[test]
fn a_file_that_puts_a_merchant_over_a_threshold_reports_it_once() {
    use ach_core::engine::{Caller, Operation, Outcome, ReturnGroup};
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, m) = w.tenant(&["PPD"]);
    for n in 0..10 {
        w.create(&partner_id, &partner, &transaction(&m, "debit", &format!("{}.00", 10 + n))).unwrap();
    }
    w.at("2026-11-23 18:00");
    let entries = originated(&w.engine);
    // Two unauthorized returns of ten debits: 20 %, over 0.5 % and over 15 % overall.
    let file = bank_file(
        &[(&entries[0], "R10"), (&entries[1], "R05")],
        &[],
        NaiveDate::from_ymd_opt(2026, 11, 24).unwrap(),
    );
    let outcome =
        w.engine.execute(&Caller::Operator, Operation::IngestReturnFile { bytes: file.clone() }).unwrap();
    let Outcome::ReturnFileIngested { ingested, crossings } = outcome else { panic!("{outcome:?}") };
    assert_eq!(ingested.returns, 2);
    let groups: Vec<ReturnGroup> = crossings.iter().map(|c| c.group).collect();
    assert_eq!(groups, [ReturnGroup::Unauthorized, ReturnGroup::Overall], "{crossings:?}");
    assert!(crossings.iter().all(|c| c.merchant_id == m && c.count == 2 && c.debits == 10));
    let again = w.engine.execute(&Caller::Operator, Operation::IngestReturnFile { bytes: file }).unwrap();
    assert!(
        matches!(again, Outcome::ReturnFileIngested { ref crossings, .. } if crossings.is_empty()),
        "{again:?}"
    );
}

/// A large cut-off's file is written in chunks, each chunk's trace numbers
/// stored as one index row: a return matches the entry it names in any chunk
/// (first, last, either side of a chunk's edge), an unknown trace next to
/// them is unmatched, and a transaction returned before it settles is skipped
/// by its settlement while the rest of its day settles.
#[test]
fn returns_match_entries_in_every_chunk_of_a_large_file() {
    use ach_core::engine::{Operation, Outcome};
    use ach_tests::world::et;
    let w = World::new("2026-11-23 10:00");
    w.screening_off();
    let (partner_id, partner, m) = w.tenant(&["PPD"]);
    let count = 1_203;
    let ops = (0..count).map(|n: u64| {
        let body = serde_json::to_vec(&transaction(&m, "debit", &format!("{}.{:02}", 1 + n / 100, n % 100)));
        (
            partner.clone(),
            Operation::CreateTransaction { partner_id: partner_id.clone(), body: body.unwrap() },
        )
    });
    let ids: Vec<String> = w
        .engine
        .execute_batch(ops.collect())
        .into_iter()
        .map(|r| match r {
            Ok(Outcome::TransactionCreated { transaction_id }) => transaction_id,
            other => panic!("{other:?}"),
        })
        .collect();
    // The ticker's path: chunks of 500 originations, then of 500 file rows.
    assert_eq!(w.engine.advance_to(et("2026-11-23 18:00")).unwrap().originated, count);
    let mut entries = originated(&w.engine);
    entries.sort_by(|a, b| a.trace_number.as_str().cmp(b.trace_number.as_str()));
    assert_eq!(entries.len() as u64, count);
    let picks = [0, 1, 498, 499, 500, 501, 999, 1_000, 1_202];
    let mut returns: Vec<(&Entry, &str)> = picks.iter().map(|&i| (&entries[i], "R01")).collect();
    let mut beyond = entries[1_202].clone();
    let last: u64 = beyond.trace_number.as_str().parse().unwrap();
    beyond.trace_number = Text::from(format!("{:015}", last + 1));
    let mut other_odfi = entries[0].clone();
    other_odfi.trace_number = Text::from(format!("99999999{}", &entries[0].trace_number.as_str()[8..]));
    returns.push((&beyond, "R01"));
    returns.push((&other_odfi, "R01"));
    w.at("2026-11-24 10:00");
    let effective = NaiveDate::from_ymd_opt(2026, 11, 24).unwrap();
    let (status, body) = post_file(&w.engine, &bank_file(&returns, &[], effective));
    assert_eq!(status, 200, "{body}");
    assert_eq!(counts(&body), (picks.len() as u64, 0, 2, 0));
    // Debits effective 11-24 settle on 11-27 (Thanksgiving skipped).
    w.at("2026-11-27 09:00");
    let returned: std::collections::BTreeSet<&str> = picks
        .iter()
        .map(|&i| ids[usize::try_from(entries[i].amount.cents() - 100).unwrap()].as_str())
        .collect();
    let mut latest = std::collections::BTreeMap::new();
    let changes = w.changes(&partner_id, &partner);
    for c in &changes {
        latest.insert(c.transaction_id.clone(), c.status);
    }
    assert_eq!(changes.len() as u64, 3 * count, "A, B, then R or S for each, nothing twice");
    for id in &ids {
        let want = if returned.contains(id.as_str()) { Status::R } else { Status::S };
        assert_eq!(latest[id], want, "{id}");
    }
}

/// A notification of change moves an account's validation to the corrected
/// data when the customer took it, and ends it when nobody did.
#[test]
fn a_notice_carries_a_validation_to_the_corrected_account_or_ends_it() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner) = w.partner();
    let (m, _) = w.merchant(&partner_id, &partner, &["PPD", "WEB"]);
    let token = w.customer(&partner_id, &partner, &m, "111122223333");
    let mut body = ach_tests::world::outside_validation();
    body["merchant_id"] = json!(m);
    let op = ach_core::engine::Operation::CreateValidation {
        partner_id: partner_id.clone(),
        customer_id: token.clone(),
        body: body.to_string().into_bytes(),
    };
    w.run(&partner, op).unwrap();
    let web = |customer: Value, carried: bool| {
        let mut v = transaction(&m, "debit", "40.00");
        v["standard_entry_class"] = json!("WEB");
        v["customer"] = customer;
        if carried {
            v["account_validation"] = ach_tests::world::outside_validation();
        }
        w.create(&partner_id, &partner, &v)
    };
    let inline = json!({"name": "Ada", "routing_number": "021000021", "account_number": "555566667777",
                        "account_type": "checking"});
    let mut by_token = transaction(&m, "debit", "30.00");
    by_token["customer"] = json!({"id": token});
    w.create(&partner_id, &partner, &by_token).unwrap();
    web(inline.clone(), true).unwrap();
    w.at("2026-11-23 18:00");
    w.at("2026-11-27 09:00");
    let entries = originated(&w.engine);
    let by_amount = |cents: i64| entries.iter().find(|e| e.amount.cents() == cents).unwrap();
    let effective = NaiveDate::from_ymd_opt(2026, 11, 27).unwrap();
    let file = bank_file(
        &[],
        &[(by_amount(3_000), "C01", "999988887777"), (by_amount(4_000), "C05", "32")],
        effective,
    );
    let (status, body) = post_file(&w.engine, &file);
    assert_eq!(status, 200, "{body}");
    // The token now holds the corrected account, still validated.
    let created = web(json!({"id": token}), false).unwrap();
    assert!(created.starts_with("txn_"), "{created}");
    // Nobody took the inline account's correction: its validation ended.
    let refused = web(inline, false).unwrap_err();
    assert_eq!(refused.errors()[0].code.as_str(), "account_not_validated");
    assert!(refused.errors()[0].message.contains("is failed"), "{refused:?}");
}
