//! Security at the router over a database file: account numbers, SSNs, tax ids
//! and driver's licences reach neither the file nor any answer in clear, through
//! every way the router takes them in (JSON bodies, form data, query strings, the
//! JSON form of the C and WebAssembly hosts, idempotent retries, refusals) and
//! every operation that copies them (customers, tokens, check numbers, reversals,
//! returns, deletion, both feeds).
//!
//! What exists elsewhere and is not repeated here: the engine-level scan of the
//! file for keys and secrets (`engine_storage::secrets_never_reach_the_database_file_in_clear`,
//! `operator_operations_are_never_idempotent_so_no_api_key_is_stored`,
//! `idempotent_requests_leave_no_unkeyed_hash_of_the_account_number`), tenancy at
//! the engine (`engine_tenancy`) and the router (`hostile::tenancy_rows`), and,
//! over HTTPS, every issued key absent from the file and the log, secrets absent
//! from the log and the answers, cross-partner requests at every endpoint and the
//! file modes under umask 000 (`server/tests/hostile_https.rs`).
#![allow(clippy::unwrap_used)]

use std::cell::RefCell;

use ach_core::api::{route, route_json, Request};
use ach_core::engine::Engine;
use ach_tests::router::request;
use ach_tests::world::{application, options, OPERATOR_KEY};
use serde_json::{json, Value};

/// Every secret the test sends, each unique, in the form it is sent.
const SECRETS: &[&str] = &[
    "55501928831",     // 0 custodial account
    "55501928832",     // 1 billing account
    "472-83-1956",     // 2 first principal's SSN
    "523456789",       // 3 second principal's SSN (a JSON number)
    "987650123",       // 4 federal tax id (a JSON number)
    "Q555-1234-9876",  // 5 driver's licence
    "71625384901",     // 6 customer, JSON body
    "71625384902",     // 7 customer, form data
    "71625384903",     // 8 customer, query string
    "90817263401",     // 9 transaction, JSON body (settled, reversed)
    "90817263402",     // 10 transaction, form data (returned)
    "90817263403",     // 11 transaction, idempotent (header)
    "90817263404",     // 12 transaction, JSON form (route_json)
    "90817263405",     // 13 refused: unknown merchant, idempotent
    "90817263406",     // 14 refused: invalid amount
    "90817263407",     // 15 refused: routing number not found
    "90817263408",     // 16 refused: over the merchant's maximum
    "ABC-90817263409", // 17 letters and hyphens
];

/// The router over a database file, keeping every answer.
struct Api {
    engine: Engine,
    answers: RefCell<String>,
}

impl Api {
    fn send(&self, request: Request) -> (u16, Value) {
        let r = route(&self.engine, &request);
        self.answers.borrow_mut().push_str(&r.body);
        (r.status, serde_json::from_str(&r.body).unwrap())
    }

    fn call(&self, method: &str, path: &str, key: &str, body: &Value) -> (u16, Value) {
        self.send(request(method, path, Some(key), body.to_string().into_bytes()))
    }

    /// Form fields sent in the query string (a body is JSON only).
    fn form(&self, path: &str, key: &str, form: &str) -> (u16, Value) {
        self.send(request("POST", &format!("{path}?{form}"), Some(key), Vec::new()))
    }

    fn json_form(&self, request: &Value) -> (u16, Value) {
        let answer = route_json(&self.engine, &request.to_string());
        self.answers.borrow_mut().push_str(&answer);
        let v: Value = serde_json::from_str(&answer).unwrap();
        (v["status"].as_u64().unwrap() as u16, v["body"].clone())
    }
}

fn id(v: &Value) -> String {
    v["payload"]["id"].as_str().unwrap_or_else(|| panic!("{v}")).to_owned()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn account_numbers_ssns_and_tax_ids_are_never_stored_or_answered_in_clear() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    let api = Api {
        engine: Engine::open(&path, options("2026-11-23 10:00")).unwrap(),
        answers: RefCell::default(),
    };
    let (status, p) = api.call("POST", "/admin/partners", OPERATOR_KEY, &json!({"name": NAMES[0]}));
    assert_eq!(status, 201);
    let (pid, key) =
        (p["payload"]["partner_id"].as_str().unwrap(), p["payload"]["api_key"].as_str().unwrap());
    let s = |i: usize| SECRETS[i];

    // A merchant application with every kind of secret it holds.
    let mut app = application(&["PPD", "WEB", "BOC"]);
    app["partner_id"] = json!(pid);
    app["velocities"]["decline_duplicates"] = json!(false);
    app["custodial_bank_account"]["account"] = json!(s(0));
    app["billing_bank_account"] = app["custodial_bank_account"].clone();
    app["billing_bank_account"]["account"] = json!(s(1));
    app["principal"][0]["ssn"] = json!(s(2));
    app["principal"][0]["driver_license"] = json!(s(5));
    let mut second = app["principal"][0].clone();
    second["ssn"] = serde_json::from_str(s(3)).unwrap();
    second["name"] = json!("John Owner");
    app["principal"] = json!([app["principal"][0], second]);
    app["business_data"]["federal_tax_id"] = serde_json::from_str(s(4)).unwrap();
    let (status, m) = api.call("POST", "/merchants", key, &app);
    assert_eq!(status, 201, "{m}");
    let mid = m["id"].as_str().unwrap();
    let approve = json!({"limits": {"max_transaction_amount": "1000.00", "monthly_count": 1000}});
    let (status, _) = api.call("POST", &format!("/admin/merchants/{mid}/approve"), OPERATOR_KEY, &approve);
    assert_eq!(status, 200);

    // Customers: a JSON body, form data, the query string.
    let customer = json!({"partner_id": pid, "merchant_id": "global", "name": NAMES[1],
                          "routing_number": "026009593", "account_number": s(6), "account_type": "savings"});
    let (status, c) = api.call("POST", "/customers", key, &customer);
    assert_eq!(status, 201, "{c}");
    let token = id(&c);
    let fields = "merchant_id=global&name=Grace&routing_number=026009593&account_type=checking";
    let (status, _) =
        api.form("/customers", key, &format!("partner_id={pid}&{fields}&account_number={}", s(7)));
    assert_eq!(status, 201);
    let query = format!("/customers?partner_id={pid}&{fields}&account_number={}", s(8));
    let (status, c3) = api.send(request("POST", &query, Some(key), Vec::new()));
    assert_eq!(status, 201, "{c3}");

    // Transactions: a JSON body (a check, with its number), form data, an
    // idempotent retry, the JSON form, by token.
    let png = "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    let tx = |account: &str, amount: &str| {
        json!({"partner_id": pid, "merchant_id": mid, "amount": amount, "description": NAMES[2], "type": "debit",
               "standard_entry_class": "BOC", "check_number": "1001",
               "check_image_front": png, "check_image_back": png,
               "customer": {"name": NAMES[3], "routing_number": "021000021", "account_number": account, "account_type": "checking"}})
    };
    let (status, t1) = api.call("POST", "/transactions", key, &tx(s(9), "10.00"));
    assert_eq!(status, 201, "{t1}");
    let settled = id(&t1);
    let form = format!("partner_id={pid}&merchant_id={mid}&amount=11.00&description=f&type=debit&standard_entry_class=PPD&customer[name]=Ada&customer[routing_number]=021000021&customer[account_number]={}&customer[account_type]=checking", s(10));
    let (status, t2) = api.form("/transactions", key, &form);
    assert_eq!(status, 201, "{t2}");
    let returned = id(&t2);
    for _ in 0..2 {
        let body = tx(s(11), "12.00").to_string().into_bytes();
        let retry = Request {
            idempotency_key: Some("order-1".into()),
            ..request("POST", "/transactions", Some(key), body)
        };
        assert_eq!(api.send(retry).0, 201);
    }
    let envelope =
        json!({"method": "POST", "path": "/transactions", "api_key": key, "body": tx(s(12), "13.00")});
    assert_eq!(api.json_form(&envelope).0, 201);
    let mut by_token = tx(s(9), "14.00");
    by_token["customer"] = json!({"id": token});
    assert_eq!(api.call("POST", "/transactions", key, &by_token).0, 201);
    let mut spent = tx(s(9), "15.00");
    spent["check_number"] = json!("001001");
    let (status, v) = api.call("POST", "/transactions", key, &spent);
    assert_eq!((status, v["error_code"].clone()), (409, json!(18)), "the check number is spent");

    // Refusals that carry a valid account number.
    let mut unknown = tx(s(13), "16.00");
    unknown["merchant_id"] = json!("mer_0123456789abcdefghijKL");
    for _ in 0..2 {
        let body = unknown.to_string().into_bytes();
        let retry = Request {
            idempotency_key: Some("order-2".into()),
            ..request("POST", "/transactions", Some(key), body)
        };
        assert_eq!(api.send(retry).1["error_code"], json!(11));
    }
    assert_eq!(api.call("POST", "/transactions", key, &tx(s(14), "1.234")).1["error_code"], json!(14));
    let mut not_found = tx(s(15), "17.00");
    not_found["customer"]["routing_number"] = json!("231380104");
    assert_eq!(api.call("POST", "/transactions", key, &not_found).1["error_code"], json!(16));
    assert_eq!(api.call("POST", "/transactions", key, &tx(s(16), "5000.00")).1["error_code"], json!(21));
    let (status, v) = api.call("POST", "/transactions", key, &tx(s(17), "18.00"));
    assert_eq!(status, 201, "{v}");

    // Settle, reverse, return, delete, read both feeds.
    let clock = json!({"now": "2026-12-07T12:00:00-05:00"});
    assert_eq!(api.call("POST", "/admin/clock", OPERATOR_KEY, &clock).0, 200);
    let (status, v) =
        api.call("PUT", &format!("/transactions/{settled}/reverse?partner_id={pid}"), key, &json!({}));
    assert_eq!(status, 200, "{v}");
    let r = json!({"transaction_id": returned, "return_code": "R01"});
    assert_eq!(api.call("POST", "/admin/returns", OPERATOR_KEY, &r).0, 200);
    assert_eq!(api.call("DELETE", &format!("/customers/{token}?partner_id={pid}"), key, &json!({})).0, 200);
    let (status, feed) = api.call("GET", &format!("/status-changes/0?partner_id={pid}"), key, &json!({}));
    assert_eq!(status, 200);
    assert!(feed["payload"]["changes"].as_array().unwrap().len() >= 10, "{feed}");
    let (status, approved) =
        api.call("POST", &format!("/admin/merchants/{mid}/limits"), OPERATOR_KEY, &json!({}));
    assert_eq!(status, 200, "{approved}");
    drop(api.engine);

    let database = std::fs::read(&path).unwrap();
    assert!(contains(&database, pid) && contains(&database, &settled), "the scan reads records");
    let answers = api.answers.into_inner();
    assert!(answers.contains(&settled) && answers.contains("\"changes\""), "the scan reads the answers");
    for secret in SECRETS {
        for form in [secret.to_string(), secret.replace('-', "")] {
            assert!(!contains(&database, &form), "{form} is in the database file");
            assert!(!answers.contains(&form), "{form} is in an answer");
        }
    }
    // Names and descriptions are sealed like account numbers, in the
    // database and in every file beside it (the redo log).
    for file in std::fs::read_dir(dir.path()).unwrap() {
        let path = file.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        for name in NAMES.iter().chain(SECRETS.iter()) {
            assert!(!contains(&bytes, name), "{name} is in {}", path.display());
        }
    }
}

/// A partner's, a customer's and a receiver's name and a description: none
/// is kept in clear.
const NAMES: [&str; 4] =
    ["Quillfeather Payments", "Grace Hopperwell", "Invoice Zephyrine", "Ada Lovelacewise"];
