//! The module's exports as JS sees them, run inside the wasm module under node
//! (`wasm-bindgen-test-runner`; `scripts/wasm-test`): verdicts are plain JS
//! objects, misuse throws a JS `Error`, and an `Engine` runs a sandbox lifecycle.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used)]

use ach_core::calendar;
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use ach_wasm::{check_routing_number, validate_customer, validate_merchant, validate_transaction};
use chrono::DateTime;
use js_sys::{Array, Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

/// A JS value from JSON text.
fn js(json: &str) -> JsValue {
    JSON::parse(json).unwrap()
}

/// `value[key]`.
fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(key)).unwrap()
}

/// `value[key]` along a path of keys.
fn at(value: &JsValue, path: &[&str]) -> JsValue {
    path.iter().fold(value.clone(), |v, k| get(&v, k))
}

/// `[field, code]` of every problem of a verdict.
fn fields(verdict: &JsValue) -> Vec<(String, String)> {
    Array::from(&get(verdict, "errors"))
        .iter()
        .map(|e| (get(&e, "field").as_string().unwrap(), get(&e, "code").as_string().unwrap()))
        .collect()
}

/// The thrown value of a failed call, checked to be a real `Error`; its message.
fn error_message(result: Result<JsValue, JsError>) -> String {
    let Err(error) = result else { panic!("the call does not throw") };
    let thrown = JsValue::from(error);
    assert!(thrown.is_instance_of::<js_sys::Error>(), "a real Error is thrown");
    thrown.dyn_into::<js_sys::Error>().unwrap().message().into()
}

const CUSTOMER: &str = r#"{"partner_id":"par_0123456789abcdefghijKL","merchant_id":"global",
  "name":"Grace Hopper","routing_number":"026009593","account_number":"000123456789","account_type":"savings"}"#;

#[wasm_bindgen_test]
fn a_valid_form_is_a_plain_object() {
    let verdict = validate_customer(&js(CUSTOMER)).unwrap();
    assert!(verdict.is_object());
    assert_eq!(get(&verdict, "valid"), JsValue::TRUE);
    assert!(get(&verdict, "message").is_null());
    assert_eq!(Array::from(&get(&verdict, "errors")).length(), 0);
    // JSON text is read as the request body.
    let from_text = validate_customer(&JsValue::from_str(CUSTOMER)).unwrap();
    assert_eq!(JSON::stringify(&from_text).unwrap(), JSON::stringify(&verdict).unwrap());
}

#[wasm_bindgen_test]
fn an_invalid_form_is_data_with_every_bad_field() {
    let verdict = validate_transaction(&js(r#"{"merchant_id":"mer_1","amount":"1.234"}"#)).unwrap();
    assert_eq!(get(&verdict, "valid"), JsValue::FALSE);
    assert_eq!(get(&verdict, "message").as_string().unwrap(), "Failed to accept this transaction");
    let found = fields(&verdict);
    for field in ["description", "type", "standard_entry_class", "customer", "merchant_id", "amount"] {
        assert!(found.iter().any(|(f, _)| f == field), "{field} is marked: {found:?}");
    }
    let first = Array::from(&get(&verdict, "errors")).get(0);
    assert!(get(&first, "message").as_string().is_some_and(|m| !m.is_empty()));

    let merchant = validate_merchant(&js("{}")).unwrap();
    assert!(fields(&merchant).contains(&("principal".into(), "required".into())));

    let malformed = validate_customer(&JsValue::from_str("{\"name\": ")).unwrap();
    assert_eq!(fields(&malformed), vec![(String::new(), "invalid_json".to_owned())]);
}

/// Every case of the shared corpus, and texts outside ASCII: a verdict is
/// exactly the object `JSON.parse` makes of the verdict JSON the other hosts
/// print (members and their order, every field, code and message), from JSON
/// text and from a JS object. The module builds it from the verdict's texts,
/// without that JSON.
#[wasm_bindgen_test]
fn verdicts_are_the_parsed_verdict_json_of_the_native_validators() {
    let directory = RoutingDirectory::embedded();
    let now = DateTime::from_timestamp_millis(js_sys::Date::now() as i64).unwrap();
    let context = Context { today: calendar::eastern_date(now), directory: &directory };
    type Validate = fn(&JsValue) -> Result<JsValue, JsError>;
    // (kind, validator, body, whether the body is also passed as a JS object:
    // not `raw` text, whose numbers a JS object may not hold)
    let mut bodies: Vec<(Kind, Validate, String, bool)> = Vec::new();
    for (kind, validate, file) in [
        (
            Kind::Transaction,
            validate_transaction as Validate,
            include_str!("../../tests/corpus/transaction.json"),
        ),
        (Kind::Customer, validate_customer, include_str!("../../tests/corpus/customer.json")),
        (Kind::Merchant, validate_merchant, include_str!("../../tests/corpus/merchant.json")),
    ] {
        let cases: Vec<serde_json::Value> = serde_json::from_str(file).unwrap();
        assert!(cases.len() > 5);
        for case in cases {
            let (body, as_object) = match (case.get("raw"), case.get("request")) {
                (Some(serde_json::Value::String(raw)), _) => (raw.clone(), false),
                (_, Some(request)) => (request.to_string(), request.is_object()),
                _ => (String::new(), false),
            };
            bodies.push((kind, validate, body, as_object));
        }
    }
    // UTF-16 lengths differ from UTF-8 ones here: the verdict's texts are cut at them.
    for body in [
        r#"{"amount":"１０","description":"ｍer_😀 é\u0000","type":"débit","customer":{"name":"😀😀"}}"#,
        r#"{"😀":1,"amount":"1.00","description":"é","merchant_id":"mer_😀","type":"credit"}"#,
        "{\"amount\": \"1\u{0}\", \"ß\": [",
        "\u{feff}{}",
    ] {
        let as_object = serde_json::from_str::<serde_json::Value>(body).is_ok_and(|v| v.is_object());
        bodies.push((Kind::Transaction, validate_transaction, body.to_owned(), as_object));
    }
    for (kind, validate, body, as_object) in bodies {
        let native = JSON::parse(&check_bytes(kind, body.as_bytes(), &context).to_json()).unwrap();
        let expected = JSON::stringify(&native).unwrap();
        let from_text = validate(&JsValue::from_str(&body)).unwrap();
        assert_eq!(JSON::stringify(&from_text).unwrap(), expected, "{body}");
        if as_object {
            let object = JSON::parse(&body).unwrap();
            assert_eq!(JSON::stringify(&validate(&object).unwrap()).unwrap(), expected, "{body}");
        }
    }
}

#[wasm_bindgen_test]
fn every_verdict_is_a_new_object() {
    let first = validate_transaction(&js(r#"{"amount":"1.00"}"#)).unwrap();
    let valid = check_routing_number(&"021000021".into()).unwrap();
    Array::from(&get(&valid, "errors")).push(&first);
    Reflect::set(&valid, &"valid".into(), &JsValue::FALSE).unwrap();
    Reflect::set(&get(&first, "errors"), &"0".into(), &JsValue::NULL).unwrap();
    let again = check_routing_number(&"021000021".into()).unwrap();
    assert_eq!(JSON::stringify(&again).unwrap(), r#"{"valid":true,"message":null,"errors":[]}"#);
    let second = validate_transaction(&js(r#"{"amount":"1.00"}"#)).unwrap();
    assert!(!Array::from(&get(&second, "errors")).get(0).is_null());
}

#[wasm_bindgen_test]
fn routing_numbers_against_the_embedded_directory() {
    assert_eq!(get(&check_routing_number(&"021000021".into()).unwrap(), "valid"), JsValue::TRUE);
    let bad = check_routing_number(&"021000022".into()).unwrap();
    assert_eq!(get(&bad, "message").as_string().unwrap(), "'021000022' is an invalid Routing Number");
    // The core's one routing-number rule: nine digits with a bad check digit...
    assert_eq!(fields(&bad), vec![("routing_number".to_owned(), "invalid_check_digit".to_owned())]);
    // ... and not nine digits are told apart, as the server tells them apart.
    let short = check_routing_number(&"02100002".into()).unwrap();
    assert_eq!(fields(&short), vec![("routing_number".to_owned(), "invalid_format".to_owned())]);
    let missing = check_routing_number(&"231380104".into()).unwrap();
    assert_eq!(fields(&missing), vec![("routing_number".to_owned(), "not_found".to_owned())]);
}

#[wasm_bindgen_test]
fn misuse_throws_error() {
    assert_eq!(
        error_message(validate_transaction(&JsValue::from_f64(42.0))),
        "validateTransaction expects an object or a JSON string"
    );
    assert_eq!(
        error_message(validate_merchant(&JsValue::UNDEFINED)),
        "validateMerchant expects an object or a JSON string"
    );
    assert_eq!(
        error_message(check_routing_number(&JsValue::from_f64(21_000_021.0))),
        "checkRoutingNumber expects a string"
    );
    let not_fedach = ach_wasm::load_routing_directory(&"nonsense".into()).map(JsValue::from);
    assert!(error_message(not_fedach).starts_with("not a FedACH directory"));
}

#[cfg(feature = "engine")]
mod engine {
    use super::*;
    use ach_wasm::Engine;

    const OPERATOR: &str = "ok_wasm_test_operator_key_0123456789";

    fn request(engine: &Engine, json: &str) -> (u32, JsValue) {
        let answer = engine.request(&js(json)).unwrap();
        (get(&answer, "status").as_f64().unwrap() as u32, get(&answer, "body"))
    }

    fn text(value: &JsValue, path: &[&str]) -> String {
        at(value, path).as_string().unwrap_or_else(|| panic!("{path:?} is not a string"))
    }

    #[wasm_bindgen_test]
    fn a_sandbox_lifecycle() {
        let options =
            format!(r#"{{"operatorKey":"{OPERATOR}","sandbox":true,"start":"2026-11-23T10:00:00-05:00"}}"#);
        let engine = Engine::new(&js(&options)).unwrap();
        let (status, partner) = request(
            &engine,
            &format!(
                r#"{{"method":"POST","path":"/admin/partners","apiKey":"{OPERATOR}","body":{{"name":"W"}}}}"#
            ),
        );
        assert_eq!(status, 201);
        assert_eq!(get(&partner, "success"), JsValue::TRUE);
        let pid = text(&partner, &["payload", "partner_id"]);
        let key = text(&partner, &["payload", "api_key"]);

        let mut app: serde_json::Value =
            serde_json::from_str(include_str!("../../examples/requests/merchant.json")).unwrap();
        app["partner_id"] = pid.clone().into();
        let submit = serde_json::json!({"method": "POST", "path": "/merchants", "apiKey": key, "body": app});
        let (status, merchant) = request(&engine, &submit.to_string());
        assert_eq!(status, 201);
        let mid = text(&merchant, &["id"]);
        assert!(mid.starts_with("mer_"));
        let (status, _) = request(
            &engine,
            &format!(r#"{{"method":"POST","path":"/admin/merchants/{mid}/approve","apiKey":"{OPERATOR}"}}"#),
        );
        assert_eq!(status, 200);

        let debit = serde_json::json!({"method": "POST", "path": "/transactions", "apiKey": key, "body": {
            "partner_id": pid, "merchant_id": mid, "amount": "12.34", "description": "wasm test",
            "type": "debit", "standard_entry_class": "PPD",
            "customer": {"name": "Ada Lovelace", "routing_number": "021000021",
                         "account_number": "987654321", "account_type": "checking"}}});
        let (status, created) = request(&engine, &debit.to_string());
        assert_eq!(status, 201, "{:?}", JSON::stringify(&created));
        let txn = text(&created, &["payload", "id"]);

        let clock = format!(
            r#"{{"method":"POST","path":"/admin/clock","apiKey":"{OPERATOR}","body":{{"now":"2026-11-23T18:30:00-05:00"}}}}"#
        );
        let (status, moved) = request(&engine, &clock);
        assert_eq!((status, at(&moved, &["payload", "originated"]).as_f64()), (200, Some(1.0)));

        let feed = format!(
            r#"{{"method":"GET","path":"/status-changes/0","query":{{"partner_id":"{pid}"}},"apiKey":"{key}"}}"#
        );
        let (status, changes) = request(&engine, &feed);
        assert_eq!((status, text(&changes, &["success"])), (200, "true".to_owned()));
        let statuses: Vec<(String, String)> = Array::from(&at(&changes, &["payload", "changes"]))
            .iter()
            .map(|c| (text(&c, &["transaction_id"]), text(&c, &["status"])))
            .collect();
        assert_eq!(statuses, vec![(txn.clone(), "A".to_owned()), (txn, "B".to_owned())]);
    }

    #[wasm_bindgen_test]
    fn engine_misuse_throws_error() {
        assert!(error_message(Engine::new(&js(r#"{"bogus":1}"#)).map(JsValue::from))
            .starts_with("unknown option 'bogus'"));
        let engine = Engine::new(&JsValue::UNDEFINED).unwrap();
        assert_eq!(
            error_message(engine.request(&JsValue::from_f64(1.0))),
            "Engine.request expects an object or a JSON string"
        );
        // A malformed request object is the API's 400 answer, not an exception.
        let (status, _) = request(&engine, r#"{"method":"GET","path":"/categories","query":7}"#);
        assert_eq!(status, 400);
    }
}
