//! Re-initiation (Nacha Rules 2.12.4): only a debit returned R01 or R09, at
//! most twice after the original, within 180 days of the original's
//! settlement date, as the same entry in a `RETRY PYMT` batch; everything
//! else is refused with the rule it breaks.
#![allow(clippy::unwrap_used)]

use ach_core::api::{route, Request};
use ach_core::engine::{Caller, Engine, Operation, Outcome, Refusal};
use ach_core::nacha;
use ach_core::validation::ProblemCode;
use ach_tests::world::{transaction, World, OPERATOR_KEY};
use serde_json::Value;

fn reinitiate(w: &World, partner_id: &str, partner: &Caller, id: &str) -> Result<String, Refusal> {
    let op = Operation::ReinitiateTransaction {
        partner_id: partner_id.into(),
        transaction_id: id.into(),
        same_day: false,
    };
    match w.run(partner, op)? {
        Outcome::TransactionReinitiated { transaction_id, reinitiation_id } => {
            assert_eq!(transaction_id, id);
            Ok(reinitiation_id)
        }
        other => panic!("{other:?}"),
    }
}

/// The refusal's status and its one problem's message, after checking it is
/// `reinitiation_not_allowed` on `transaction_id`.
fn not_allowed(result: Result<String, Refusal>) -> String {
    let refusal = result.unwrap_err();
    assert_eq!(refusal.status(), 409, "{refusal:?}");
    assert_eq!(refusal.message(), "Failed to accept this transaction");
    let problem = &refusal.errors()[0];
    assert_eq!(
        (problem.field.as_str(), problem.code),
        ("transaction_id", ProblemCode::ReinitiationNotAllowed)
    );
    problem.message.clone()
}

/// A batch as `(description, company name, [(transaction code, cents)])`.
type Batch = (String, String, Vec<(u8, i64)>);

/// Every origination file's batches.
fn batches(engine: &Engine) -> Vec<Batch> {
    let call = |path: &str| -> Value {
        let request = Request {
            method: "GET".into(),
            path: path.into(),
            api_key: Some(OPERATOR_KEY.into()),
            ..Request::default()
        };
        serde_json::from_str(&route(engine, &request).body).unwrap()
    };
    let mut out = Vec::new();
    for summary in call("/admin/origination-files")["payload"].as_array().unwrap() {
        let file = call(&format!("/admin/origination-files/{}", summary["id"].as_str().unwrap()));
        let parsed = nacha::read(file["payload"]["text"].as_str().unwrap().as_bytes()).unwrap();
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        for b in parsed.file.batches {
            let entries = b.entries.iter().map(|e| (e.transaction_code, e.amount.cents())).collect();
            out.push((b.company_entry_description.to_string(), b.company_name.to_string(), entries));
        }
    }
    out
}

#[test]
fn a_debit_returned_for_funds_is_retried_twice_at_most_in_retry_batches() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, merchant) = w.tenant(&["PPD"]);
    let original = w.debit(&partner_id, &partner, &merchant, "25.00");
    w.at("2026-11-24 09:00");
    w.return_(&original, "R01").unwrap();

    let first = reinitiate(&w, &partner_id, &partner, &original).unwrap();
    // The original has been retried: only its retry may be, once returned.
    let again = not_allowed(reinitiate(&w, &partner_id, &partner, &original));
    assert!(again.contains(&format!("already re-initiated as {first}")), "{again}");
    assert!(not_allowed(reinitiate(&w, &partner_id, &partner, &first)).contains("this one is Pending"));
    w.at("2026-11-25 09:00");
    w.return_(&first, "R09").unwrap();
    let second = reinitiate(&w, &partner_id, &partner, &first).unwrap();
    w.at("2026-11-26 09:00");
    w.return_(&second, "R01").unwrap();
    let third = not_allowed(reinitiate(&w, &partner_id, &partner, &second));
    assert!(third.contains("at most 2 times"), "{third}");

    // Each retry is the same debit in a RETRY PYMT batch of the same company.
    let all = batches(&w.engine);
    let retry: Vec<_> = all.iter().filter(|b| b.0 == "RETRY PYMT").collect();
    assert_eq!(retry.len(), 2, "{all:?}");
    let company = &all.iter().find(|b| b.0 == "PAYMENT").unwrap().1;
    for (_, name, entries) in retry {
        assert_eq!((name, entries.as_slice()), (company, &[(27, 2500)][..]));
    }
    // The feed shows each retry as a transaction of its own.
    for id in [&first, &second] {
        let statuses: Vec<_> =
            w.history(&partner_id, &partner, id).iter().map(|c| c.status.as_str().to_owned()).collect();
        assert_eq!(
            (statuses.first(), statuses.last()),
            (Some(&"A".to_owned()), Some(&"R".to_owned())),
            "{id}"
        );
        assert!(statuses.contains(&"B".to_owned()), "{id}: {statuses:?}");
    }
}

#[test]
fn no_other_return_and_no_credit_is_ever_retried() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, merchant) = w.tenant(&["PPD"]);
    let returned = |code: &str, kind: &str| {
        let id = w.create(&partner_id, &partner, &transaction(&merchant, kind, "10.00")).unwrap();
        (id, code.to_owned())
    };
    let cases: Vec<(String, String)> = ["R02", "R05", "R07", "R08", "R10", "R11", "R29"]
        .iter()
        .map(|code| returned(code, "debit"))
        .chain([returned("R01", "credit")])
        .collect();
    let pending = w.create(&partner_id, &partner, &transaction(&merchant, "debit", "11.00")).unwrap();
    assert!(not_allowed(reinitiate(&w, &partner_id, &partner, &pending)).contains("this one is Pending"));
    w.at("2026-11-24 09:00");
    for (id, code) in &cases {
        w.return_(id, code).unwrap();
    }
    for (id, code) in &cases[..7] {
        let why = not_allowed(reinitiate(&w, &partner_id, &partner, id));
        assert!(why.contains(&format!("returned {code} may never be re-initiated")), "{code}: {why}");
    }
    let credit = not_allowed(reinitiate(&w, &partner_id, &partner, &cases[7].0));
    assert!(credit.contains("only a debit"), "{credit}");
    // Another partner's transaction is unknown to this one.
    let (other_id, other) = w.partner();
    let unknown = reinitiate(&w, &other_id, &other, &cases[0].0).unwrap_err();
    assert_eq!(unknown.status(), 404, "{unknown:?}");
}

#[test]
fn a_retry_is_allowed_up_to_180_days_after_the_originals_settlement() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, merchant) = w.tenant(&["PPD"]);
    let late = w.debit(&partner_id, &partner, &merchant, "30.00");
    let last_day = w.debit(&partner_id, &partner, &merchant, "31.00");
    w.at("2026-11-24 09:00");
    w.return_(&late, "R01").unwrap();
    w.return_(&last_day, "R01").unwrap();
    let settled = w.history(&partner_id, &partner, &late).last().unwrap().settlement_date.clone();
    // A debit is held two banking days after its effective date (Thanksgiving
    // between): the 180th day after 2026-11-27 is 2027-05-26.
    assert_eq!(settled.as_deref(), Some("2026-11-27"));
    w.at("2027-05-26 12:00");
    let again = reinitiate(&w, &partner_id, &partner, &last_day).unwrap();
    assert!(again.starts_with("txn_"), "{again}");
    w.at("2027-05-27 00:01");
    let why = not_allowed(reinitiate(&w, &partner_id, &partner, &late));
    assert!(why.contains("more than 180 days after the original's settlement date (2026-11-27)"), "{why}");
}

#[test]
fn over_the_router_a_retry_answers_201_with_its_id_and_a_refusal_409() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, key, partner) = w.partner_with_key();
    let (merchant, _) = w.merchant(&partner_id, &partner, &["PPD"]);
    let original = w.debit(&partner_id, &partner, &merchant, "25.00");
    let call = |id: &str| {
        let request = Request {
            method: "POST".into(),
            path: format!("/transactions/{id}/reinitiate"),
            query: format!("partner_id={partner_id}"),
            api_key: Some(key.clone()),
            ..Request::default()
        };
        let response = route(&w.engine, &request);
        (response.status, serde_json::from_str::<Value>(&response.body).unwrap())
    };
    let (status, body) = call(&original);
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["errors"][0]["code"], "reinitiation_not_allowed", "{body}");
    w.at("2026-11-24 09:00");
    w.return_(&original, "R01").unwrap();
    let (status, body) = call(&original);
    assert_eq!(
        (status, &body["success"], &body["payload"]["reinitiation_of"]),
        (201, &Value::Bool(true), &Value::from(original.clone()))
    );
    let retry = body["payload"]["id"].as_str().unwrap();
    assert_ne!(retry, original);
    assert_eq!(w.history(&partner_id, &partner, retry)[0].status.as_str(), "A");
}
