//! The router parses a request's body once: the partner, the typed request
//! and the idempotency digest all come from that one parse, and the digest
//! is the same for any text of the same request.
#![allow(clippy::unwrap_used)]

use super::{route, Request};
use crate::engine::{Caller, Engine, EngineOptions, Operation, Outcome};
use crate::validation::json::PARSED;

fn engine_and_partner() -> (Engine, String, String) {
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-23T15:00:00Z").unwrap().to_utc();
    let engine = Engine::in_memory(EngineOptions::manual(now)).unwrap();
    let created = engine.execute(&Caller::Operator, Operation::CreatePartner { name: "P".into() });
    let Ok(Outcome::PartnerCreated { partner_id, api_key }) = created else { panic!("{created:?}") };
    (engine, partner_id, api_key)
}

/// [`post`] with the `Idempotency-Key` header `same`.
fn post_same(path: &str, query: &str, key: &str, body: &str) -> Request {
    Request { idempotency_key: Some("same".into()), ..post(path, query, key, body) }
}

fn post(path: &str, query: &str, key: &str, body: &str) -> Request {
    Request {
        method: "POST".into(),
        path: path.into(),
        query: query.into(),
        api_key: Some(key.into()),
        content_type: Some("application/json".into()),
        body: body.as_bytes().to_vec(),
        ..Request::default()
    }
}

/// How many times the router parsed `request`'s body (or a copy of it).
fn parses_of_body(engine: &Engine, request: &Request) -> (usize, u16) {
    PARSED.with(|p| p.borrow_mut().clear());
    let response = route(engine, request);
    let body = String::from_utf8_lossy(&request.body);
    (PARSED.with(|p| p.borrow().iter().filter(|text| **text == body).count()), response.status)
}

#[test]
fn a_create_parses_its_body_once_with_or_without_an_idempotency_key() {
    let (engine, partner, key) = engine_and_partner();
    let customer = r#""customer":{"name":"Ada","routing_number":"021000021","account_number":"12345678","account_type":"checking"}"#;
    let body = |extra: &str| {
        format!(
            r#"{{"partner_id":"{partner}","merchant_id":"mer_0123456789abcdefghijKL","amount":"1.00","description":"Invoice 42","type":"debit","standard_entry_class":"PPD",{customer}{extra}}}"#
        )
    };
    for extra in ["", r#","idempotency_key":"k-1""#] {
        let request = post("/transactions", "", &key, &body(extra));
        // The merchant does not exist: refused after validation, in the write transaction.
        assert_eq!(parses_of_body(&engine, &request), (1, 422), "{extra}");
    }
    let customer = format!(
        r#"{{"partner_id":"{partner}","merchant_id":"mer_0123456789abcdefghijKL","name":"Ada","routing_number":"021000021","account_number":"12345678","account_type":"checking"}}"#
    );
    let (parses, status) = parses_of_body(&engine, &post("/customers", "", &key, &customer));
    assert_eq!((parses, status), (1, 422));
}

#[test]
fn a_body_that_is_not_json_is_refused_before_the_engine() {
    let (engine, _, key) = engine_and_partner();
    let request = post("/customers", "", &key, r#"{"name":"Ada","name":"Bob"}"#);
    let response = route(&engine, &request);
    assert_eq!(response.status, 400);
    assert!(response.body.contains("member 'name' appears twice"), "{}", response.body);
}

#[test]
fn the_same_request_in_other_words_is_the_same_idempotent_request() {
    let (engine, partner, key) = engine_and_partner();
    let first = format!(
        r#"{{"partner_id":"{partner}","merchant_id":"mer_0123456789abcdefghijKL","name":"Ada","routing_number":"021000021","account_number":"12345678","account_type":"checking","note":[1.50,{{"b":1,"a":"\u0041"}}]}}"#
    );
    // The merchant does not exist: the refusal is the stored answer.
    let created = route(&engine, &post_same("/customers", "", &key, &first));
    assert_eq!(created.status, 422, "{}", created.body);
    // Members reordered, spaces, escapes spelled otherwise, the partner in the
    // query: the same request, answered as the first was.
    let again = r#"{ "note" : [ 1.50 , { "a" : "A", "b" : 1 } ], "account_type":"checking", "account_number":"12345678", "merchant_id" : "mer_0123456789abcdefghijKL",
             "routing_number":"021000021", "name":"\u0041da" }"#;
    let replayed = route(&engine, &post_same("/customers", &format!("partner_id={partner}"), &key, again));
    assert_eq!((replayed.status, &replayed.body), (422, &created.body));
    // A number spelled otherwise is another request: message 2, never a replay.
    let other = first.replace("1.50", "1.5");
    let refused = route(&engine, &post_same("/customers", "", &key, &other));
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(refused.body.contains("already used for a different request"), "{}", refused.body);
}
