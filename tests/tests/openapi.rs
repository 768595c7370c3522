//! `docs/openapi.json` against the router: every endpoint of the router's table
//! `ROUTES` (read from `core/src/api/routes.rs`, so the two cannot drift) is
//! documented, every documented operation is routed, the security each operation
//! declares is the one the router enforces, every `$ref` resolves, the problem
//! codes are the ones `docs/errors.md` lists, the limits schemas name exactly the
//! fields of `Limits`, and `GET /openapi.json` serves this very file.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use ach_core::api::{route, Request};
use ach_core::engine::Engine;
use ach_tests::repo_root;
use ach_tests::world::options;
use serde_json::Value;

/// HTTP methods an OpenAPI path item may hold.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Every status the router (and so every host) can answer.
const ROUTER_STATUSES: [&str; 13] =
    ["200", "201", "400", "401", "403", "404", "405", "409", "413", "415", "422", "429", "503"];

fn document_text() -> String {
    std::fs::read_to_string(repo_root().join("docs/openapi.json")).unwrap()
}

fn document() -> Value {
    serde_json::from_str(&document_text()).unwrap()
}

/// `(METHOD, pattern)` of every row of `ROUTES` in `core/src/api/routes.rs`, as
/// written there (`{}` one segment, `{?}` an optional last segment).
fn router_table() -> Vec<(String, String)> {
    let source = std::fs::read_to_string(repo_root().join("core/src/api/routes.rs")).unwrap();
    let start = source.find("const ROUTES").expect("routes.rs defines const ROUTES");
    let table = &source[start..];
    let table = &table[..table.find("];").expect("ROUTES ends with `];`")];
    let rows: Vec<(String, String)> = table
        .lines()
        .filter_map(|line| {
            let row = line.trim().strip_prefix("(\"")?;
            let mut fields = row.split('"');
            let method = fields.next()?.to_owned();
            let _comma = fields.next()?;
            let pattern = fields.next()?.to_owned();
            line.contains("Endpoint::").then_some((method, pattern))
        })
        .collect();
    let endpoints = table.matches("Endpoint::").count();
    assert_eq!(rows.len(), endpoints, "every row of ROUTES is read (one row per line)");
    assert!(rows.len() >= 18, "ROUTES has at least the 18 endpoints of today: {rows:?}");
    rows
}

/// The router's `(METHOD, path)` pairs with every parameter written `{}`; an
/// optional last segment gives two paths, with and without it.
fn routed() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (method, pattern) in router_table() {
        match pattern.strip_suffix("/{?}") {
            Some(base) => {
                out.insert((method.clone(), base.to_owned()));
                out.insert((method, format!("{base}/{{}}")));
            }
            None => {
                out.insert((method, pattern));
            }
        }
    }
    out
}

/// A documented path with every `{name}` written `{}`.
fn generic(path: &str) -> String {
    path.split('/')
        .map(|s| if s.starts_with('{') && s.ends_with('}') { "{}" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

/// Every operation of the document: `(METHOD, documented path, operation)`.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (key, op) in item.as_object().unwrap() {
            if METHODS.contains(&key.as_str()) {
                out.push((key.to_ascii_uppercase(), path.clone(), op.clone()));
            }
        }
    }
    out
}

#[test]
fn every_routed_endpoint_is_documented_and_every_documented_one_is_routed() {
    let doc = document();
    let documented: BTreeSet<(String, String)> =
        operations(&doc).into_iter().map(|(m, p, _)| (m, generic(&p))).collect();
    let routed = routed();
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    assert!(undocumented.is_empty(), "routed but not in docs/openapi.json: {undocumented:?}");
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(unrouted.is_empty(), "in docs/openapi.json but not in ROUTES: {unrouted:?}");
}

/// A concrete path for a documented one: each `{name}` replaced by a value of the
/// right shape (the router answers before looking the value up).
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|s| match s {
            "{transaction_id}" => "txn_0123456789abcdefghijKL",
            "{customer_token}" => "cus_0123456789abcdefghijKL",
            "{merchant_id}" => "mer_0123456789abcdefghijKL",
            "{partner_id}" => "par_0123456789abcdefghijKL",
            "{routing_number}" => "021000021",
            "{last_pointer}" => "0",
            s if s.starts_with('{') => "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn every_documented_operation_is_routed_with_the_security_it_declares() {
    let doc = document();
    let engine = Engine::in_memory(options("2026-11-23 10:00")).unwrap();
    let top_security = doc["security"].clone();
    for (method, path, op) in operations(&doc) {
        let request = Request { method: method.clone(), path: concrete(&path), ..Request::default() };
        let response = route(&engine, &request);
        let body: Value = serde_json::from_str(&response.body).unwrap();
        assert!(
            response.status != 404 && response.status != 405,
            "{method} {path} is documented but the router answers {}: {body}",
            response.status
        );
        let security = op.get("security").unwrap_or(&top_security);
        let open = security.as_array().is_some_and(Vec::is_empty);
        let responses = op["responses"].as_object().unwrap();
        if open {
            assert_eq!(response.status, 200, "{method} {path} is documented without security");
            assert!(!responses.contains_key("401"), "{method} {path} needs no key: no 401");
        } else {
            assert_eq!(
                (response.status, body),
                (401, serde_json::json!({"success": false, "message": "Authentication failed."})),
                "{method} {path} declares security: without a key the router refuses it"
            );
            assert!(responses.contains_key("401"), "{method} {path} documents its 401");
        }
        for status in responses.keys() {
            assert!(
                ROUTER_STATUSES.contains(&status.as_str()),
                "{method} {path}: {status} is never answered"
            );
        }
        assert!(responses.contains_key("413"), "{method} {path}: every endpoint answers 413 for a huge body");
        if method != "GET" {
            assert!(
                responses.contains_key("415"),
                "{method} {path}: every write answers 415 for a body of another type"
            );
            assert!(
                responses.contains_key("403"),
                "{method} {path}: every write answers 403 from another site"
            );
        }
    }
}

#[test]
fn the_router_serves_this_document() {
    let engine = Engine::in_memory(options("2026-11-23 10:00")).unwrap();
    let request = Request { method: "GET".into(), path: "/openapi.json".into(), ..Request::default() };
    let response = route(&engine, &request);
    assert_eq!(response.status, 200);
    assert_eq!(response.body, document_text());
}

/// Every `$ref` in `value`.
fn refs<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                out.push(r);
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn it_is_openapi_3_1_and_every_reference_resolves() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(!all.is_empty());
    for r in all {
        let pointer = r.strip_prefix('#').unwrap_or_else(|| panic!("{r}: only local references"));
        assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
    }
    let mut ids = BTreeSet::new();
    for (method, path, op) in operations(&doc) {
        let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(ids.insert(id.to_owned()), "operationId {id} repeats");
    }
}

#[test]
fn problem_codes_are_the_ones_docs_errors_md_lists() {
    let errors_md = std::fs::read_to_string(repo_root().join("docs/errors.md")).unwrap();
    let marker = "`code` is one of:";
    let rest = &errors_md[errors_md.find(marker).unwrap() + marker.len()..];
    let paragraph = rest.trim_start().split("\n\n").next().unwrap();
    let listed: Vec<&str> = paragraph.split('`').skip(1).step_by(2).collect();
    assert!(listed.len() >= 17, "{paragraph}");
    let doc = document();
    let documented: Vec<&str> = doc["components"]["schemas"]["FieldProblem"]["properties"]["code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(documented, listed);
}

#[test]
fn the_limits_schemas_name_every_field_of_limits() {
    // Every field set, so that each appears in the serialized form.
    let l = ach_core::limits::Limits {
        max_credit_amount: Some(ach_core::Money::from_cents(1)),
        period_days: Some(7),
        monthly_average_min_count: Some(10),
        exposure_limit: Some(ach_core::Money::from_cents(1)),
        requests_per_second: Some(100),
        ..ach_tests::world::roomy_limits()
    };
    let serialized = serde_json::to_value(&l).unwrap();
    let fields: BTreeSet<&str> = serialized.as_object().unwrap().keys().map(String::as_str).collect();
    assert!(serialized.as_object().unwrap().values().all(|v| !v.is_null()), "{serialized}");
    let doc = document();
    for schema in ["Limits", "LimitsUpdate"] {
        let documented: BTreeSet<&str> = doc["components"]["schemas"][schema]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(documented, fields, "{schema}");
    }
    let required: BTreeSet<&str> = doc["components"]["schemas"]["Limits"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, fields, "the limits in force name every field");
}
