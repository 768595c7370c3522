//! The reads through the router (what every host answers): the query string
//! read and every problem in it reported, the keys each read takes, and the
//! envelope each answers.
#![allow(clippy::unwrap_used)]

use ach_tests::router::{roomy_limit_values, Router};
use ach_tests::world::{application, transaction};
use serde_json::{json, Value};

struct Setup {
    api: Router,
    partner: String,
    key: String,
    merchant: String,
    merchant_key: String,
}

fn setup() -> Setup {
    let api = Router::new();
    let (partner, key) = api.partner("Reader");
    let merchant = api.submit(&partner, &key, application(&["PPD"]));
    let merchant_key = api.approve(&merchant, roomy_limit_values());
    Setup { api, partner, key, merchant, merchant_key }
}

impl Setup {
    fn create(&self, amount: &str) -> String {
        let mut t = transaction(&self.merchant, "debit", amount);
        t["partner_id"] = json!(self.partner);
        let (status, v) = self.api.call("POST", "/transactions", Some(&self.key), Some(t));
        assert_eq!(status, 201, "{v}");
        v["payload"]["id"].as_str().unwrap().to_owned()
    }

    fn get(&self, path: &str, key: &str) -> (u16, Value) {
        self.api.call("GET", path, Some(key), None)
    }
}

fn fields(v: &Value) -> Vec<String> {
    v["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_transaction_reads_and_lists_through_the_router() {
    let s = setup();
    let ids: Vec<String> = (1..=5).map(|i| s.create(&format!("{i}.00"))).collect();
    let (status, v) = s.get(&format!("/transactions/{}?partner_id={}", ids[0], s.partner), &s.key);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["success"], true);
    assert_eq!(
        (v["payload"]["id"].as_str(), v["payload"]["amount"].to_string()),
        (Some(ids[0].as_str()), "1.00".to_owned())
    );
    assert_eq!(v["payload"]["history"][0]["status"], "A");
    // The merchant's key needs no partner_id.
    let (status, by_merchant) = s.get(&format!("/transactions/{}", ids[0]), &s.merchant_key);
    assert_eq!((status, &by_merchant), (200, &v));
    // A page of two, then the rest by the cursor.
    let (status, page) = s.get(&format!("/transactions?partner_id={}&limit=2", s.partner), &s.key);
    assert_eq!(status, 200, "{page}");
    let listed: Vec<&str> = page["payload"]["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[4].as_str(), ids[3].as_str()]);
    let cursor = page["payload"]["next_cursor"].as_str().unwrap();
    let (_, rest) =
        s.get(&format!("/transactions?partner_id={}&limit=100&after={cursor}", s.partner), &s.key);
    assert_eq!(rest["payload"]["transactions"].as_array().unwrap().len(), 3);
    assert_eq!(rest["payload"]["next_cursor"], Value::Null);
    // A JSON body may carry the query too (a number for limit).
    let (status, v) =
        s.api.call("GET", "/transactions", Some(&s.key), Some(json!({"partner_id": s.partner, "limit": 1})));
    assert_eq!((status, v["payload"]["transactions"].as_array().map(Vec::len)), (200, Some(1)));
    // Status and merchant filters.
    let (_, v) =
        s.get(&format!("/transactions?partner_id={}&status=B&merchant_id={}", s.partner, s.merchant), &s.key);
    assert_eq!(v["payload"], json!({"transactions": [], "next_cursor": null}));
}

#[test]
fn a_list_query_reports_every_problem_at_once() {
    let s = setup();
    let (status, v) = s.get(
        &format!("/transactions?partner_id={}&limit=0&status=Q&created_from=2026-13-01&created_to=x&merchant_id=m&after=%21", s.partner),
        &s.key,
    );
    assert_eq!((status, v["message"].as_str()), (422, Some("Failed to accept this transaction")), "{v}");
    assert_eq!(fields(&v), ["limit", "merchant_id", "status", "created_from", "created_to"]);
    let (status, v) = s.get(&format!("/transactions?partner_id={}&after=forged", s.partner), &s.key);
    assert_eq!((status, fields(&v)), (422, vec!["after".to_owned()]), "{v}");
    // An empty cursor is the first page, as the document's pattern says.
    let first = s.get(&format!("/merchants?partner_id={}", s.partner), &s.key);
    assert_eq!(first.0, 200, "{}", first.1);
    assert_eq!(s.get(&format!("/merchants?partner_id={}&after=", s.partner), &s.key), first);
    let (status, v) = s.get(&format!("/merchants?partner_id={}&limit=101", s.partner), &s.key);
    assert_eq!((status, fields(&v)), (422, vec!["limit".to_owned()]), "{v}");
}

#[test]
fn each_read_takes_a_partners_or_a_merchants_key_and_no_other() {
    let s = setup();
    let id = s.create("1.00");
    let auth = json!({"success": false, "message": "Authentication failed."});
    for path in [
        format!("/transactions/{id}"),
        "/transactions".into(),
        format!("/merchants/{}", s.merchant),
        "/merchants".into(),
    ] {
        // No key, the operator's key: 401 without naming anything.
        assert_eq!(s.api.call("GET", &path, None, None), (401, auth.clone()), "{path}");
        let (status, v) = s.get(&format!("{path}?partner_id={}", s.partner), ach_tests::world::OPERATOR_KEY);
        assert_eq!((status, v), (401, auth.clone()), "{path}");
        // A partner's key without partner_id: 401 naming the member.
        let (status, v) = s.get(&path, &s.key);
        assert_eq!((status, v["errors"][0]["field"].as_str()), (401, Some("partner_id")), "{path}");
        // Both keys that may read.
        assert_eq!(s.get(&format!("{path}?partner_id={}", s.partner), &s.key).0, 200, "{path}");
        assert_eq!(s.get(&path, &s.merchant_key).0, 200, "{path}");
    }
    let (status, v) = s.get(&format!("/merchants/{}", s.merchant), &s.merchant_key);
    assert_eq!((status, v["payload"]["status"].as_str()), (200, Some("approved")));
    let (status, v) =
        s.get(&format!("/customers/cus_0123456789abcdefghijKL?partner_id={}", s.partner), &s.key);
    assert_eq!((status, fields(&v)), (404, vec!["customer_id".to_owned()]), "{v}");
}

#[test]
fn a_request_made_again_answers_the_first_answer_marked_as_a_replay() {
    let s = setup();
    let mut t = transaction(&s.merchant, "debit", "9.00");
    t["partner_id"] = json!(s.partner);
    let request = json!({"method": "POST", "path": "/transactions", "api_key": s.key,
        "idempotency_key": "order-9", "body": t})
    .to_string();
    let first: Value = serde_json::from_str(&ach_core::api::route_json(&s.api.engine, &request)).unwrap();
    let again: Value = serde_json::from_str(&ach_core::api::route_json(&s.api.engine, &request)).unwrap();
    assert_eq!(first.as_object().map(|o| o.len()), Some(2), "{first}");
    assert_eq!((&again["status"], &again["body"]), (&first["status"], &first["body"]));
    assert_eq!(again["headers"], json!({"Idempotent-Replayed": "true"}));
    // A refusal made again is replayed too.
    let mut over = t.clone();
    over["amount"] = json!("0.001");
    let request = json!({"method": "POST", "path": "/transactions", "api_key": s.key,
        "idempotency_key": "order-10", "body": over})
    .to_string();
    let first: Value = serde_json::from_str(&ach_core::api::route_json(&s.api.engine, &request)).unwrap();
    let again: Value = serde_json::from_str(&ach_core::api::route_json(&s.api.engine, &request)).unwrap();
    assert_eq!(first["status"], 422);
    assert_eq!(
        (&again["body"], &again["headers"]),
        (&first["body"], &json!({"Idempotent-Replayed": "true"}))
    );
}
