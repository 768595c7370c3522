//! Origination files through the router: each cut-off writes one NACHA file for
//! what it originated, readable by the engine's reader with no problems, with
//! trace numbers that never repeat across files, listed and fetched by the
//! operator; the originator set and validated.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use ach_core::api::{route, Request};
use ach_core::engine::{Caller, Engine, Operation, Outcome};
use ach_core::nacha::{self, NachaFile};
use ach_tests::router;
use ach_tests::world::{et, options, transaction, World, OPERATOR_KEY};
use serde_json::{json, Value};
use sha2::Digest as _;

fn call(engine: &Engine, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    router::call(engine, method, path, Some(OPERATOR_KEY), body.as_ref())
}

/// Every file listed, with its parsed text (read with no problems).
fn files(engine: &Engine) -> Vec<(Value, NachaFile, String)> {
    let (status, list) = call(engine, "GET", "/admin/origination-files", None);
    assert_eq!(status, 200, "{list}");
    let mut out = Vec::new();
    for summary in list["payload"].as_array().unwrap() {
        let id = summary["id"].as_str().unwrap();
        let (status, file) = call(engine, "GET", &format!("/admin/origination-files/{id}"), None);
        assert_eq!(status, 200, "{file}");
        let text = file["payload"]["text"].as_str().unwrap().to_owned();
        let sha256: String =
            sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            summary["sha256"].as_str(),
            Some(sha256.as_str()),
            "{id}: the listed digest is the text's"
        );
        let parsed = nacha::read(text.as_bytes()).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(parsed.problems.is_empty(), "{id}: {:?}", parsed.problems);
        assert!(nacha::findings(&parsed.file).is_empty(), "{id}: {:?}", nacha::findings(&parsed.file));
        out.push((summary.clone(), parsed.file, text));
    }
    out
}

fn pop(merchant_id: &str, amount: &str, check: &str) -> Value {
    json!({
        "merchant_id": merchant_id, "amount": amount, "description": "lane 3", "type": "debit",
        "standard_entry_class": "POP", "check_number": check, "state": "ny",
        "check_image_front": "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "check_image_back": "SUkqAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "customer": {"name": "José Núñez", "routing_number": "021000021", "account_number": "12345678901", "account_type": "savings"}
    })
}

fn web(merchant_id: &str, kind: &str, amount: &str) -> Value {
    let mut v = transaction(merchant_id, kind, amount);
    v["standard_entry_class"] = json!("WEB");
    v["account_validation"] = ach_tests::world::outside_validation();
    v
}

/// `v` with the purpose `purpose`.
fn purpose(mut v: Value, purpose: &str) -> Value {
    v["purpose"] = json!(purpose);
    v
}

#[test]
fn each_cutoff_writes_one_file_of_what_it_originated() {
    let w = World::new("2026-11-23 10:00");
    w.screening_off();
    let (partner_id, partner, m1) = w.tenant(&["PPD", "WEB", "POP"]);
    let (m2, _) = w.merchant(&partner_id, &partner, &["PPD"]);
    let mut ids = BTreeSet::new();
    for n in 0..5 {
        ids.insert(w.create(&partner_id, &partner, &transaction(&m1, "debit", &format!("1{n}.00"))).unwrap());
        let wages = purpose(transaction(&m1, "credit", "7.25"), "payroll");
        ids.insert(w.create(&partner_id, &partner, &wages).unwrap());
        // Three WEB debits for goods bought online, two for something else.
        let web_debit = web(&m1, "debit", "3.10");
        let web_debit = if n < 3 { purpose(web_debit, "purchase") } else { web_debit };
        ids.insert(w.create(&partner_id, &partner, &web_debit).unwrap());
        ids.insert(w.create(&partner_id, &partner, &pop(&m1, "42.00", &format!("10{n}"))).unwrap());
        ids.insert(w.create(&partner_id, &partner, &transaction(&m2, "debit", "99.99")).unwrap());
    }
    let voided = w.create(&partner_id, &partner, &transaction(&m2, "debit", "1.00")).unwrap();
    w.void(&partner_id, &partner, &voided).unwrap();
    assert!(files(&w.engine).is_empty(), "no file before the cut-off");

    w.at("2026-11-23 18:00");
    let written = files(&w.engine);
    assert_eq!(written.len(), 1, "one file for the cut-off");
    let (summary, file, text) = &written[0];
    assert_eq!(summary["id"], "fil_20261123A");
    assert_eq!(summary["entries"], 25);
    assert_eq!(summary["effective_date"], "2026-11-24");
    assert!(text.lines().all(|l| l.len() == 94) && text.ends_with('\n') && text.lines().count() % 10 == 0);
    // One batch per merchant, class and description: m1 PPD debits (PAYMENT), m1
    // PPD wage credits (PAYROLL), m1 WEB purchases (PURCHASE) and other WEB
    // debits (PAYMENT), m1 POP, m2 PPD.
    let mut batches: Vec<(String, String, usize)> = file
        .batches
        .iter()
        .map(|b| (b.sec_code.to_string(), b.company_entry_description.to_string(), b.entries.len()))
        .collect();
    batches.sort();
    let want: Vec<(String, String, usize)> = [
        ("POP", "PAYMENT", 5),
        ("PPD", "PAYMENT", 5),
        ("PPD", "PAYMENT", 5),
        ("PPD", "PAYROLL", 5),
        ("WEB", "PAYMENT", 2),
        ("WEB", "PURCHASE", 3),
    ]
    .into_iter()
    .map(|(s, d, n)| (s.to_owned(), d.to_owned(), n))
    .collect();
    assert_eq!(batches, want);
    assert_eq!(file.batches.len(), 6, "m1's and m2's PPD debits are separate batches");
    for b in &file.batches {
        let class = b.service_class_code;
        let credits = b.entries.iter().all(|e| e.is_credit());
        let debits = b.entries.iter().all(|e| e.is_debit());
        assert_eq!(
            class,
            if credits {
                220
            } else if debits {
                225
            } else {
                200
            }
        );
        assert_eq!(b.effective_entry_date.to_string(), "2026-11-24");
        assert!(b.company_identification.as_str().starts_with('1') && b.company_identification.len() == 10);
        for e in &b.entries {
            assert!(e.trace_number.as_str().starts_with("01100001"), "trace prefix is the ODFI");
            if b.sec_code.as_str() == "POP" {
                let t = e.pop_terminal();
                assert!(t.check_serial.as_str().starts_with("10") && t.state.as_str() == "NY", "{t:?}");
                assert_eq!(e.name.as_str(), "JOSE NUNEZ");
                assert_eq!(e.account_number.as_str(), "12345678901");
                assert_eq!(e.transaction_code, 37, "savings debit");
            }
            if b.sec_code.as_str() == "WEB" {
                assert_eq!(e.discretionary_data.as_str(), "S");
            }
        }
    }
    let traces: Vec<String> =
        file.batches.iter().flat_map(|b| b.entries.iter().map(|e| e.trace_number.to_string())).collect();
    assert!(traces.windows(2).all(|p| p[0] < p[1]), "trace numbers ascend through the file");
    let debit: i64 =
        file.batches.iter().flat_map(|b| &b.entries).filter(|e| e.is_debit()).map(|e| e.amount.cents()).sum();
    assert_eq!(summary["total_debit"], json!(ach_core::Money::from_cents(debit)));

    // The next cut-off: a second file, trace numbers continuing, none repeated.
    w.create(&partner_id, &partner, &transaction(&m2, "debit", "5.00")).unwrap();
    w.at("2026-11-24 18:05");
    let written = files(&w.engine);
    assert_eq!(written.len(), 2);
    assert_eq!(written[1].0["id"], "fil_20261124A");
    let second: Vec<String> =
        written[1].1.batches[0].entries.iter().map(|e| e.trace_number.to_string()).collect();
    assert_eq!(second.len(), 1);
    assert!(second[0] > *traces.last().unwrap(), "the sequence does not restart per file");
}

#[test]
fn a_reversal_goes_in_a_reversal_batch_and_a_late_refund_as_a_refund() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, m) = w.tenant(&["PPD", "TEL"]);
    let mut tel = transaction(&m, "debit", "20.00");
    tel["standard_entry_class"] = json!("TEL");
    let prompt = w.create(&partner_id, &partner, &tel).unwrap();
    tel["amount"] = json!("21.00");
    let late = w.create(&partner_id, &partner, &tel).unwrap();
    // Effective Tue 11-24; debits settle two banking days later (Fri 11-27, after
    // Thanksgiving).
    w.at("2026-11-27 09:00");
    w.reverse(&partner_id, &partner, &prompt).unwrap();
    w.at("2026-11-27 18:00");
    // Five banking days after 11-27 is 12-04: a reversal made after it is a refund.
    w.at("2026-12-07 09:00");
    w.reverse(&partner_id, &partner, &late).unwrap();
    w.at("2026-12-07 18:00");
    let written = files(&w.engine);
    assert_eq!(written.len(), 3, "{:?}", written.iter().map(|f| &f.0["id"]).collect::<Vec<_>>());
    let reversal = &written[1].1.batches;
    assert_eq!(reversal.len(), 1);
    assert_eq!(
        (reversal[0].sec_code.as_str(), reversal[0].company_entry_description.as_str()),
        ("TEL", "REVERSAL")
    );
    assert!(reversal[0].entries[0].is_credit());
    let refund = &written[2].1.batches;
    assert_eq!(
        (refund[0].sec_code.as_str(), refund[0].company_entry_description.as_str()),
        ("PPD", "REFUND")
    );
    assert_eq!(refund[0].service_class_code, 220);
}

#[test]
fn the_originator_is_validated_and_named_in_every_file() {
    let w = World::new("2026-11-23 10:00");
    let (status, body) = call(&w.engine, "GET", "/admin/originator", None);
    assert_eq!(
        (status, &body["payload"]["odfi_routing_number"]),
        (200, &json!("011000015")),
        "sandbox default"
    );
    let bad = json!({"odfi_routing_number": "021000022", "immediate_destination": "12345678",
        "immediate_origin": "1 2", "immediate_origin_name": "x".repeat(24)});
    let (status, body) = call(&w.engine, "PUT", "/admin/originator", Some(bad));
    assert_eq!(status, 422, "{body}");
    let fields: BTreeSet<&str> =
        body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(
        fields,
        ["odfi_routing_number", "immediate_destination", "immediate_origin", "immediate_origin_name"].into()
    );
    let good = json!({"odfi_routing_number": "021000021", "immediate_destination": "021000021",
        "immediate_destination_name": "Chase", "immediate_origin": "1234567890", "immediate_origin_name": "Acme Pay"});
    let (status, body) = call(&w.engine, "PUT", "/admin/originator", Some(good));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["payload"]["immediate_destination_name"], "CHASE");
    let (_, partner) = w.partner();
    let Caller::Partner { partner_id } = &partner else { panic!() };
    let (m, _) = w.merchant(partner_id, &partner, &["PPD"]);
    w.create(partner_id, &partner, &transaction(&m, "debit", "1.00")).unwrap();
    w.at("2026-11-23 18:00");
    let written = files(&w.engine);
    let header = &written[0].1.header;
    assert_eq!(
        (header.immediate_destination.as_str(), header.immediate_origin.as_str()),
        ("021000021", "1234567890")
    );
    assert!(written[0].1.batches[0].entries[0].trace_number.as_str().starts_with("02100002"));
    let (status, _) = call(&w.engine, "GET", "/admin/origination-files/fil_20991231A", None);
    assert_eq!(status, 404);
}

#[test]
fn a_production_engine_holds_its_files_until_an_originator_is_set() {
    let mut opts = options("2026-11-23 10:00");
    opts.sandbox = false;
    let w = World::with(Engine::in_memory(opts).unwrap());
    let (partner_id, partner, m) = w.tenant(&["PPD"]);
    let id = w.create(&partner_id, &partner, &transaction(&m, "debit", "1.00")).unwrap();
    w.engine.advance_to(et("2026-11-23 18:00")).unwrap();
    assert_eq!(
        w.history(&partner_id, &partner, &id).last().map(|c| c.status),
        Some(ach_core::model::Status::B)
    );
    assert!(files(&w.engine).is_empty(), "no originator: the file waits");
    let (status, _) = call(&w.engine, "GET", "/admin/originator", None);
    assert_eq!(status, 404);
    let good = json!({"odfi_routing_number": "021000021", "immediate_destination": "021000021", "immediate_origin": "021000021"});
    assert_eq!(call(&w.engine, "PUT", "/admin/originator", Some(good)).0, 200);
    w.engine.advance_to(et("2026-11-23 18:01")).unwrap();
    let written = files(&w.engine);
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].0["cutoff"], json!(et("2026-11-23 18:00")));
}

#[test]
fn a_cutoff_of_many_runs_in_chunks_and_writes_one_file() {
    let w = World::new("2026-11-23 10:00");
    w.screening_off();
    let (partner_id, partner, m) = w.tenant(&["PPD"]);
    let ops = debits(&partner_id, &partner, &m, 2_500);
    for r in w.engine.execute_batch(ops) {
        assert!(matches!(r, Ok(Outcome::TransactionCreated { .. })), "{r:?}");
    }
    // Production's path: the ticker runs chunks until done.
    let progress = w.engine.advance_to(et("2026-11-23 18:00")).unwrap();
    assert_eq!(progress.originated, 2_500);
    let written = files(&w.engine);
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].0["entries"], 2_500);
}

/// Two batches of 124 and 125: the chunk that originates the last of them
/// leaves a budget of exactly the file's 251 rows (two batch summaries and
/// 249 entries). The file is finished and listed in that chunk, not left
/// waiting with nothing left to write.
#[test]
fn a_file_whose_rows_end_with_its_chunks_budget_is_listed() {
    let w = World::new("2026-11-23 10:00");
    w.screening_off();
    let (partner_id, partner, first) = w.tenant(&["PPD"]);
    let (second, _) = w.merchant(&partner_id, &partner, &["PPD"]);
    let mut ops = debits(&partner_id, &partner, &first, 124);
    ops.extend(debits(&partner_id, &partner, &second, 125));
    assert!(w.engine.execute_batch(ops).iter().all(Result::is_ok));
    assert_eq!(w.engine.advance_to(et("2026-11-23 18:00")).unwrap().originated, 249);
    let written = files(&w.engine);
    assert_eq!(written.len(), 1, "the file is listed");
    assert_eq!((written[0].0["entries"].as_u64(), written[0].1.batches.len()), (Some(249), 2));
}

#[test]
fn a_credit_is_reversible_only_within_the_window() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, m) = w.tenant(&["PPD"]);
    let early = w.create(&partner_id, &partner, &transaction(&m, "credit", "30.00")).unwrap();
    let late = w.create(&partner_id, &partner, &transaction(&m, "credit", "31.00")).unwrap();
    // Effective and settled Tue 11-24; five banking days later (Thanksgiving
    // skipped) is Wed 12-02.
    w.at("2026-12-02 17:59");
    w.reverse(&partner_id, &partner, &early).unwrap();
    w.at("2026-12-02 18:00");
    let refused = w.reverse(&partner_id, &partner, &late).unwrap_err();
    assert_eq!(refused.status(), 409, "{refused:?}");
    assert!(format!("{refused:?}").contains("2026-12-02"), "{refused:?}");
    w.at("2026-12-02 18:01");
    let written = files(&w.engine);
    let last = &written.last().unwrap().1.batches[0];
    assert_eq!((last.sec_code.as_str(), last.company_entry_description.as_str()), ("PPD", "REVERSAL"));
    assert!(last.entries[0].is_debit());
}

/// A cut-off stopped after any chunk (the engine closed between two of its
/// write transactions, as a crash leaves it) resumes on reopening: one file with
/// every transaction exactly once, trace numbers unique and ascending.
#[test]
fn a_cutoff_interrupted_between_chunks_resumes_into_one_file() {
    use ach_core::clock::ManualClock;
    use ach_core::engine::{EngineClock, EngineOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine.redb");
    let key = ach_core::secrets::EncryptionKey::generate();
    let open = |at: &str| {
        let mut opts = options(at);
        opts.sandbox = false;
        opts.clock = EngineClock::Manual(ManualClock::new(et(at)));
        let opts = EngineOptions { encryption_key: Some(key.clone()), ..opts };
        World::with(Engine::open(&path, opts).unwrap())
    };
    let w = open("2026-11-23 10:00");
    w.screening_off();
    let good = json!({"odfi_routing_number": "021000021", "immediate_destination": "021000021", "immediate_origin": "021000021"});
    assert_eq!(call(&w.engine, "PUT", "/admin/originator", Some(good)).0, 200);
    let (partner_id, partner, m) = w.tenant(&["PPD"]);
    let ops = debits(&partner_id, &partner, &m, 1_700);
    assert!(w.engine.execute_batch(ops).iter().all(Result::is_ok));
    drop(w);
    // After the cut-off, each request's transaction runs one chunk of it first:
    // five requests, each followed by a "crash" (the engine closed).
    let mut ids = Vec::new();
    for minute in 1..=5 {
        let w = open(&format!("2026-11-23 18:0{minute}"));
        ids.push(
            w.create(&partner_id, &partner, &transaction(&m, "debit", &format!("900.0{minute}"))).unwrap(),
        );
        // 1,700 originations and 1,701 rows to write take 7 chunks of 500: after
        // 5, half the file is written and none of it is listed.
        assert!(w.engine.origination_files().unwrap().is_empty(), "no file is listed before it is complete");
    }
    let w = open("2026-11-23 18:10");
    w.engine.advance_to(et("2026-11-23 18:10")).unwrap();
    let written = files(&w.engine);
    assert_eq!(written.len(), 1, "one file for the cut-off");
    let traces: Vec<String> = written[0]
        .1
        .batches
        .iter()
        .flat_map(|b| b.entries.iter().map(|e| e.trace_number.to_string()))
        .collect();
    assert_eq!(traces.len(), 1_700, "every transaction of the cut-off exactly once");
    assert!(traces.windows(2).all(|p| p[0] < p[1]), "unique and ascending");
    // The creates made after the cut-off wait for the next one.
    let next = w.history(&partner_id, &partner, &ids[0]);
    assert_eq!(next.last().map(|c| c.status), Some(ach_core::model::Status::A));
}

/// `count` distinct PPD debits of merchant `m` as one batch of operations.
fn debits(partner_id: &str, partner: &Caller, m: &str, count: u64) -> Vec<(Caller, Operation)> {
    (0..count)
        .map(|n| {
            let body = transaction(m, "debit", &format!("{}.{:02}", 1 + n / 100, n % 100));
            (
                partner.clone(),
                Operation::CreateTransaction {
                    partner_id: partner_id.to_owned(),
                    body: body.to_string().into_bytes(),
                },
            )
        })
        .collect()
}

#[test]
fn a_merchants_own_description_replaces_payment_only() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner_key, partner) = w.partner_with_key();
    let (own, _) = w.merchant(&partner_id, &partner, &["PPD", "WEB"]);
    let (plain, _) = w.merchant(&partner_id, &partner, &["PPD"]);
    let settings = |m: &str, d: Value| {
        call(
            &w.engine,
            "PUT",
            &format!("/admin/merchants/{m}/settings"),
            Some(json!({"company_entry_description": d})),
        )
    };
    for (bad, says) in [("reversal", "'REVERSAL' is reserved"), ("ELEVENCHARS", "1 to 10"), ("", "1 to 10")] {
        let (status, body) = settings(&own, json!(bad));
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["errors"][0]["field"], "company_entry_description", "{body}");
        assert!(body["errors"][0]["message"].as_str().unwrap().contains(says), "{body}");
    }
    let unknown = ach_core::ids::generate(ach_core::ids::IdKind::Merchant);
    let (status, body) = settings(&unknown, json!("RENT"));
    assert_eq!((status, &body["error_code"]), (422, &json!(11)), "message 11, as for every unknown merchant");
    let partner_call = route(
        &w.engine,
        &Request {
            method: "PUT".into(),
            path: format!("/admin/merchants/{own}/settings"),
            api_key: Some(partner_key),
            body: br#"{"company_entry_description": "RENT"}"#.to_vec(),
            ..Request::default()
        },
    );
    assert_eq!(partner_call.status, 401, "only the operator sets it");
    let (status, body) = settings(&own, json!(" Subscribe "));
    assert_eq!(
        (status, &body["payload"]),
        (
            200,
            &json!({"merchant_id": own, "company_entry_description": "SUBSCRIBE", "web_debit_validation": "engine"})
        )
    );

    w.create(&partner_id, &partner, &transaction(&own, "debit", "10.00")).unwrap();
    w.create(&partner_id, &partner, &purpose(transaction(&own, "credit", "11.00"), "payroll")).unwrap();
    w.create(&partner_id, &partner, &purpose(web(&own, "debit", "12.00"), "purchase")).unwrap();
    w.create(&partner_id, &partner, &transaction(&plain, "debit", "13.00")).unwrap();
    w.at("2026-11-23 18:00");
    let written = files(&w.engine);
    let described: BTreeSet<(String, String)> = written[0]
        .1
        .batches
        .iter()
        .map(|b| {
            (b.company_entry_description.as_str().trim().to_owned(), b.entries[0].amount.cents().to_string())
        })
        .collect();
    let expected = [("SUBSCRIBE", "1000"), ("PAYROLL", "1100"), ("PURCHASE", "1200"), ("PAYMENT", "1300")];
    assert_eq!(described, expected.iter().map(|(d, a)| ((*d).to_owned(), (*a).to_owned())).collect());

    // null puts the default back for the next file.
    let (status, body) = settings(&own, Value::Null);
    assert_eq!((status, &body["payload"]["company_entry_description"]), (200, &Value::Null));
    w.create(&partner_id, &partner, &transaction(&own, "debit", "14.00")).unwrap();
    w.at("2026-11-24 18:00");
    let written = files(&w.engine);
    assert_eq!(written[1].1.batches[0].company_entry_description.as_str().trim(), "PAYMENT");
}
