//! The router decides from a request's head alone — path, method, key, the
//! key's kind — before a body counts (`api::admit`), gives each endpoint its
//! body limit, holds every JSON text to the value and depth caps on every host,
//! and refuses a name given twice in a query string or form data.
#![allow(clippy::unwrap_used)]

use ach_core::api::{admit, plan, plan_admitted, route, route_json, Plan, MAX_BODY_BYTES, SMALL_BODY_BYTES};
use ach_core::validation::json_bounds::{MAX_JSON_DEPTH, MAX_JSON_VALUES};
use ach_tests::router::request;
use ach_tests::world::{partner_transaction, World, OPERATOR_KEY};
use serde_json::{json, Value};

const AUTH_FAILED: &str = r#"{"success":false,"message":"Authentication failed."}"#;

struct Keys {
    partner_id: String,
    partner: String,
    merchant_id: String,
    merchant: String,
}

fn world() -> (World, Keys) {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, caller) = w.partner_with_key();
    let (merchant_id, merchant, _) = w.roomy_merchant(&partner_id, &caller, &["PPD"]);
    (w, Keys { partner_id, partner, merchant_id, merchant })
}

/// `(status, first problem's field, its code)` of an answer.
fn refusal(body: &str) -> (String, String) {
    let v: Value = serde_json::from_str(body).unwrap();
    let first = &v["errors"][0];
    (first["field"].as_str().unwrap_or_default().into(), first["code"].as_str().unwrap_or_default().into())
}

/// `[0,0,…]` of exactly `bytes` bytes (`bytes` odd).
fn zeros(bytes: usize) -> Vec<u8> {
    let mut text = b"[0".to_vec();
    text.resize(bytes - 1, b'0');
    for pair in text[2..].chunks_mut(2) {
        pair[0] = b',';
    }
    text.push(b']');
    text
}

#[test]
fn the_head_decides_before_the_body_counts() {
    let (w, k) = world();
    let head =
        |method: &str, path: &str, key: Option<&str>| admit(&w.engine, &request(method, path, key, vec![]));
    let refused = |method: &str, path: &str, key: Option<&str>| {
        let answer = head(method, path, key).unwrap_err();
        (answer.status, answer.body)
    };
    // No key, a key never issued, a key of the wrong kind: 401 from the head.
    let auth = (401, AUTH_FAILED.to_owned());
    assert_eq!(refused("POST", "/transactions", None), auth);
    assert_eq!(refused("POST", "/merchants", Some("pk_never_issued_0123456789")), auth);
    assert_eq!(refused("POST", "/transactions", Some(&k.merchant)), auth, "an events-only key");
    assert_eq!(refused("POST", "/admin/return-files", Some(&k.partner)), auth);
    assert_eq!(refused("GET", "/events", Some(&k.partner)), auth);
    assert_eq!(refused("GET", "/status-changes/0", Some(&k.merchant)), auth);
    assert_eq!(refused("POST", "/admin/routing", Some(&k.merchant)), auth);
    // Unknown path, wrong method: 404, 405.
    assert_eq!(refused("POST", "/nope", Some(&k.partner)).0, 404);
    assert_eq!(refused("DELETE", "/transactions", Some(&k.partner)).0, 405);
    // Admitted: each endpoint's body limit.
    let limit = |method: &str, path: &str, key: &str| head(method, path, Some(key)).unwrap().body_limit();
    assert_eq!(limit("POST", "/transactions", &k.partner), MAX_BODY_BYTES);
    assert_eq!(limit("POST", "/merchants", &k.partner), MAX_BODY_BYTES);
    assert_eq!(limit("POST", "/admin/return-files", OPERATOR_KEY), MAX_BODY_BYTES);
    assert_eq!(limit("POST", "/admin/routing", OPERATOR_KEY), MAX_BODY_BYTES);
    assert_eq!(limit("POST", "/customers", &k.partner), SMALL_BODY_BYTES);
    assert_eq!(limit("PUT", "/transactions/txn_x/void", &k.partner), SMALL_BODY_BYTES);
    assert_eq!(limit("POST", "/admin/partners", OPERATOR_KEY), SMALL_BODY_BYTES);
    assert_eq!(limit("GET", "/events", &k.merchant), SMALL_BODY_BYTES);
    assert_eq!(limit("GET", "/categories", &k.merchant), SMALL_BODY_BYTES);
    let openapi = head("GET", "/openapi.json", None).unwrap_or_else(|r| panic!("needs no key: {}", r.body));
    assert_eq!(
        (openapi.caller(), openapi.unconfirmed(), openapi.body_limit()),
        (None, false, SMALL_BODY_BYTES),
        "needs no key"
    );
    // The same answers as planning the whole request, body and all.
    let big = zeros(MAX_BODY_BYTES - 1);
    let whole = route(&w.engine, &request("POST", "/transactions", Some(&k.merchant), big.clone()));
    assert_eq!((whole.status, whole.body), auth);
    let r = request("POST", &format!("/transactions?partner_id={}", k.partner_id), Some(&k.partner), big);
    let admitted = admit(&w.engine, &r).unwrap();
    let (Plan::Done(a), Plan::Done(b)) = (plan_admitted(&w.engine, admitted, &r), plan(&w.engine, &r)) else {
        panic!("refused")
    };
    assert_eq!((a.status, &a.body), (b.status, &b.body));
}

#[test]
fn each_endpoint_refuses_a_body_over_its_limit() {
    let (w, k) = world();
    let customers = format!("/customers?partner_id={}", k.partner_id);
    let small =
        route(&w.engine, &request("POST", &customers, Some(&k.partner), vec![b' '; SMALL_BODY_BYTES + 1]));
    assert_eq!(small.status, 413);
    assert!(small.body.contains("the body is larger than 64 KiB"), "{}", small.body);
    let mut t = partner_transaction(&k.partner_id, &k.merchant_id, "debit", "1.00");
    t["note"] = json!("n".repeat(SMALL_BODY_BYTES));
    let large =
        route(&w.engine, &request("POST", "/transactions", Some(&k.partner), t.to_string().into_bytes()));
    assert_eq!(large.status, 201, "a transaction may be larger: {}", large.body);
}

#[test]
fn json_over_the_caps_is_refused_before_it_is_parsed_on_every_host() {
    let (w, k) = world();
    let path = format!("/transactions?partner_id={}", k.partner_id);
    let send = |body: Vec<u8>| route(&w.engine, &request("POST", &path, Some(&k.partner), body));
    // One value more than the cap: 413; at the cap, an ordinary refusal.
    let array = |n: usize| format!("[{}]", vec!["0"; n].join(",")).into_bytes();
    let over = send(array(MAX_JSON_VALUES));
    assert_eq!(
        (over.status, refusal(&over.body)),
        (413, (String::new(), "over_limit".into())),
        "{}",
        over.body
    );
    // (At the caps the body is read: an array carries no `partner_id`.)
    assert_eq!(send(array(MAX_JSON_VALUES - 1)).status, 401);
    // Nested one level past the cap: malformed, as the parse would say.
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes();
    assert_eq!(send(nest(MAX_JSON_DEPTH)).status, 401);
    assert_eq!(send(nest(MAX_JSON_DEPTH + 1)).status, 400);
    // The operator's bodies too.
    let admin = request("POST", "/admin/partners", Some(OPERATOR_KEY), array(MAX_JSON_VALUES));
    assert_eq!(route(&w.engine, &admin).status, 413);
    // The JSON form the C and browser hosts pass: the same answer.
    let zeros = String::from_utf8(zeros(MAX_BODY_BYTES - 1)).unwrap();
    let form = format!(r#"{{"method":"POST","path":"{path}","api_key":"{}","body":{zeros}}}"#, k.partner);
    let answer: Value = serde_json::from_str(&route_json(&w.engine, &form)).unwrap();
    assert_eq!(answer["status"], json!(413), "{answer}");
}

#[test]
fn a_name_given_twice_in_a_query_is_refused_not_the_last_kept() {
    let (w, k) = world();
    let form = format!(
        "merchant_id={}&amount=1.00&amount=6000.00&description=form&type=debit&standard_entry_class=PPD&customer[name]=Ada&customer[routing_number]=021000021&customer[account_number]=5551234&customer[account_type]=checking",
        k.merchant_id
    );
    let r = request(
        "POST",
        &format!("/transactions?partner_id={}&{form}", k.partner_id),
        Some(&k.partner),
        vec![],
    );
    let answer = route(&w.engine, &r);
    let v: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!((answer.status, v["error_code"].clone()), (422, json!(10)), "{v}");
    assert_eq!(refusal(&answer.body), ("amount".into(), "conflict".into()));
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("'amount' is given twice"), "{v}");
    // In the query string.
    let path = format!("/status-changes/0?partner_id={0}&partner_id={0}", k.partner_id);
    let answer = route(&w.engine, &request("GET", &path, Some(&k.partner), vec![]));
    assert_eq!((answer.status, refusal(&answer.body)), (422, ("partner_id".into(), "conflict".into())));
    // Once in the query and once in the body is no repetition: the body wins.
    let t = partner_transaction(&k.partner_id, &k.merchant_id, "debit", "1.00");
    let path = format!("/transactions?partner_id={}&amount=2.00", k.partner_id);
    let answer = route(&w.engine, &request("POST", &path, Some(&k.partner), t.to_string().into_bytes()));
    assert_eq!(answer.status, 201, "{}", answer.body);
}
