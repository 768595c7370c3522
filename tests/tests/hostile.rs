//! Hostile input at the router (`api::route`, and `api::route_json` for every row
//! its JSON form can carry), table-driven. Every row is answered with a clear
//! refusal: its status and the JSON envelope with a catalogue message (exactly
//! `Authentication failed.` for a 401), never a reflection of a large input. After
//! every row the engine still answers a normal request and nothing was stored:
//! neither partner's status-changes feed nor any merchant's events feed moved, and
//! at the end the usage counters are exactly where they were (the merchant and
//! overall daily limits, set to leave room for exactly one more debit, still do)
//! and agree with the stored transactions.
//!
//! The same table over HTTPS, with what only HTTP has (Basic-auth headers,
//! invalid UTF-8 in the request line, huge headers, a 10 MB streamed body), is
//! `server/tests/hostile_https.rs`; the C library and the browser module have
//! their own.
#![allow(clippy::unwrap_used)]

use ach_core::api::{route, route_json, Request, Response, MAX_FORM_DEPTH};
use ach_core::engine::{Caller, Operation};
use ach_core::error::{catalogue_samples, AUTHENTICATION_FAILED};
use ach_core::ids::random_alphanumeric;
use ach_core::limits::Limits;
use ach_core::Money;
use ach_tests::json_paths::{leaves, nested_arrays, nested_objects, set};
use ach_tests::lookalike::{cyrillic, fullwidth};
use ach_tests::world::{application, customer_body, transaction, World, OPERATOR_KEY};
use serde_json::{json, Value};

const MB: usize = 1 << 20;

/// A PNG signature and zeros in base64: a valid check image.
const PNG: &str = "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

/// A BOC debit of 1.00 with its check number and both images.
fn boc(merchant: &str) -> Value {
    let mut v = transaction(merchant, "debit", "1.00");
    v["standard_entry_class"] = json!("BOC");
    v["check_number"] = json!("1001");
    v["check_image_front"] = json!(PNG);
    v["check_image_back"] = json!(PNG);
    v
}

/// One partner of the fixture and what it owns.
struct Tenant {
    id: String,
    key: String,
    caller: Caller,
    merchant: String,
    merchant_key: String,
    merchant_caller: Caller,
    second: String,
    customer: String,
    pending: String,
    /// A status-changes pointer issued before the last debit (to replay).
    early_pointer: String,
    /// Where the status-changes and events feeds stood after the set-up.
    pointer: String,
    events: String,
}

struct Fixture {
    w: World,
    a: Tenant,
    b: Tenant,
}

fn tenant(w: &World) -> Tenant {
    let (id, key, caller) = w.partner_with_key();
    let (merchant, merchant_key, merchant_caller) = w.roomy_merchant(&id, &caller, &["PPD", "WEB"]);
    let (second, _, _) = w.roomy_merchant(&id, &caller, &["PPD"]);
    let customer = w.customer(&id, &caller, "global", "918273645500");
    let pending = w.debit(&id, &caller, &merchant, "10.00");
    let early_pointer = w.engine.status_changes(&caller, &id, "0").unwrap().new_pointer;
    w.debit(&id, &caller, &merchant, "20.00");
    let pointer = w.engine.status_changes(&caller, &id, "0").unwrap().new_pointer;
    let events = w.engine.events(&merchant_caller, None).unwrap().new_pointer;
    // Room for exactly one more debit of 1.00 today: for the merchant (2 debits,
    // 30.00 so far) and for the partner overall (2 debits).
    let limits =
        Limits { daily_count: Some(3), daily_amount: Some(Money::from_cents(3_100)), ..Limits::default() };
    let op = Operation::SetMerchantLimits { merchant_id: merchant.clone(), limits };
    w.run(&Caller::Operator, op).unwrap();
    let overall = Limits { daily_count: Some(3), ..Limits::default() };
    w.run(&Caller::Operator, Operation::SetPartnerLimits { partner_id: id.clone(), limits: overall })
        .unwrap();
    Tenant {
        id,
        key,
        caller,
        merchant,
        merchant_key,
        merchant_caller,
        second,
        customer,
        pending,
        early_pointer,
        pointer,
        events,
    }
}

fn fixture() -> Fixture {
    let w = World::new("2026-11-23 10:00");
    let a = tenant(&w);
    let b = tenant(&w);
    Fixture { w, a, b }
}

/// What a row must be answered with.
#[derive(Clone, Debug)]
enum Expect {
    /// Exactly `{"success":false,"message":"Authentication failed."}`, 401.
    Auth,
    /// A refusal: HTTP status, catalogue code, and the first field problem's field
    /// and code.
    Refused(u16, u16, &'static str, &'static str),
    /// Some refusal (status 400-422) with a catalogue message.
    AnyRefusal,
    /// A success with exactly this JSON body.
    Ok(Value),
}

struct Row {
    name: String,
    request: Request,
    expect: Expect,
    /// The same request naming a never-issued id of the same shape must be
    /// answered identically (the id replaced): `(real id, prefix)`.
    like_unknown: Option<(String, &'static str)>,
}

fn request(method: &str, path: &str, key: Option<&str>, body: Vec<u8>) -> Request {
    Request {
        method: method.into(),
        path: path.into(),
        api_key: key.map(str::to_owned),
        body,
        ..Request::default()
    }
}

fn row(name: impl Into<String>, request: Request, expect: Expect) -> Row {
    Row { name: name.into(), request, expect, like_unknown: None }
}

/// Whether `message` is the catalogue's message `code`, its placeholder (if any)
/// filled with anything.
fn is_catalogue_message(code: u64, message: &str) -> bool {
    let placeholders = [
        "txn_0000000000000000000000".to_owned(),
        "mer_x".to_owned(),
        "123456789".to_owned(),
        "****1234".to_owned(),
        "011000015".to_owned(),
        "1001".to_owned(),
        "abc".to_owned(),
        "BOC".to_owned(),
        "TEL".to_owned(),
        Money::from_cents(500_000).dollars(),
        Money::from_cents(1_000_000).dollars(),
    ];
    catalogue_samples().iter().filter(|e| u64::from(e.code()) == code).any(|e| {
        let sample = e.to_string();
        match placeholders.iter().find_map(|p| sample.split_once(p.as_str())) {
            None => message == sample,
            Some((before, after)) => {
                message.len() >= before.len() + after.len()
                    && message.starts_with(before)
                    && message.ends_with(after)
            }
        }
    })
}

/// The refusal's envelope: `(status, code, first field, first problem code)`,
/// after checking its shape and that it is small.
fn refusal(name: &str, r: &Response) -> (u16, u16, String, String) {
    let v: Value = serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{name}: not JSON ({e})"));
    assert!(r.body.len() <= 16 * 1024, "{name}: a {}-byte refusal", r.body.len());
    assert_eq!(v["success"], json!(false), "{name}: {v}");
    if r.status == 401 {
        assert_eq!(v, json!({"success": false, "message": AUTHENTICATION_FAILED}), "{name}");
        return (401, 0, String::new(), String::new());
    }
    let code = v["error_code"].as_u64().unwrap_or_else(|| panic!("{name}: no error_code: {v}"));
    let message = v["message"].as_str().unwrap();
    assert!(is_catalogue_message(code, message), "{name}: {message:?} is not catalogue message {code}");
    assert_eq!(v["error_type"], json!("E"), "{name}");
    let first = &v["errors"][0];
    let text = |x: &Value| x.as_str().unwrap_or_default().to_owned();
    (r.status, code as u16, text(&first["field"]), text(&first["code"]))
}

/// The request in the JSON form `route_json` takes, when that form can carry it
/// (no `Content-Type`, a UTF-8 body) and the row is not one of the large ones
/// (which take long in a debug build, and exercise no code of `route_json` that
/// smaller ones do not).
fn json_form(r: &Request) -> Option<String> {
    let large = r.body.len() > 64 * 1024 || r.path.len() > 64 * 1024 || r.query.len() > 64 * 1024;
    if r.content_type.is_some() || large {
        return None;
    }
    let body = std::str::from_utf8(&r.body).ok()?;
    Some(
        json!({"method": r.method, "path": r.path, "query": r.query, "api_key": r.api_key,
               "idempotency_key": r.idempotency_key, "body": (!body.is_empty()).then_some(body)})
        .to_string(),
    )
}

impl Fixture {
    fn route(&self, r: &Request) -> Response {
        route(&self.w.engine, r)
    }

    fn run(&self, row: &Row) {
        let name = row.name.as_str();
        let answer = self.route(&row.request);
        match &row.expect {
            Expect::Ok(body) => {
                let got: Value = serde_json::from_str(&answer.body).unwrap();
                assert_eq!((answer.status, &got), (200, body), "{name}");
            }
            Expect::Auth => assert_eq!(refusal(name, &answer).0, 401, "{name}: {}", answer.body),
            Expect::AnyRefusal => {
                let status = refusal(name, &answer).0;
                assert!((400..=422).contains(&status), "{name}: {status} {}", answer.body);
            }
            Expect::Refused(status, code, field, problem) => {
                let got = refusal(name, &answer);
                let want = (*status, *code, field.to_string(), problem.to_string());
                assert_eq!(got, want, "{name}: {}", answer.body);
            }
        }
        if let Some((real, prefix)) = &row.like_unknown {
            let never = format!("{prefix}{}", random_alphanumeric(real.len() - prefix.len()));
            let swap = |s: &str| s.replace(real.as_str(), &never);
            let other = Request {
                path: swap(&row.request.path),
                query: swap(&row.request.query),
                body: swap(&String::from_utf8_lossy(&row.request.body)).into_bytes(),
                ..row.request.clone()
            };
            let unknown = self.route(&other);
            let same = Response { status: unknown.status, body: unknown.body.replace(&never, real) };
            assert_eq!(same, answer, "{name}: another partner's id answers unlike an unknown one");
        }
        if let Some(text) = json_form(&row.request) {
            assert_eq!(route_json(&self.w.engine, &text), answer.to_json(), "{name}: route_json differs");
        }
        self.assert_nothing_stored(name);
    }

    /// Neither partner's feeds moved since the set-up, and a normal request
    /// through the router is still answered.
    fn assert_nothing_stored(&self, name: &str) {
        for t in [&self.a, &self.b] {
            let path = format!("/status-changes/{}?partner_id={}", t.pointer, t.id);
            let page = self.route(&request("GET", &path, Some(&t.key), Vec::new()));
            let page: Value = serde_json::from_str(&page.body).unwrap();
            assert_eq!(page["payload"]["changes"], json!([]), "{name}: the status-changes feed moved");
            let events = self.w.engine.events(&t.merchant_caller, Some(&t.events)).unwrap();
            assert!(events.events.is_empty(), "{name}: the events feed moved");
        }
    }

    /// The usage counters did not move: each partner still has room for exactly
    /// one more 1.00 debit on its first merchant, then the merchant's daily count
    /// (22) and the partner's overall daily count (24) refuse.
    fn assert_counters_unchanged(&self) {
        assert_eq!(self.w.engine.audit_usage(), Ok(Ok(())));
        for t in [&self.a, &self.b] {
            self.w.debit(&t.id, &t.caller, &t.merchant, "1.00");
            let again = self.w.create(&t.id, &t.caller, &transaction(&t.merchant, "debit", "1.00"));
            assert_eq!(again.unwrap_err().error().map(|e| e.code()), Some(22));
            let other = self.w.create(&t.id, &t.caller, &transaction(&t.second, "debit", "1.00"));
            assert_eq!(other.unwrap_err().error().map(|e| e.code()), Some(24));
        }
    }

    /// A's transaction body (partner id included) with `field` set to `value`.
    fn transaction_with(&self, field: &str, value: Value) -> Vec<u8> {
        let mut v = transaction(&self.a.merchant, "debit", "1.00");
        v["partner_id"] = json!(self.a.id);
        set(&mut v, field, value);
        v.to_string().into_bytes()
    }

    /// [`Fixture::transaction_with`] for a BOC check: every member a class can use
    /// but the POP state (which BOC ignores) is present and read.
    fn check_with(&self, field: &str, value: Value) -> Vec<u8> {
        let mut v = boc(&self.a.merchant);
        v["partner_id"] = json!(self.a.id);
        set(&mut v, field, value);
        v.to_string().into_bytes()
    }

    fn post(&self, path: &str, body: Vec<u8>) -> Request {
        request("POST", path, Some(&self.a.key), body)
    }
}

use Expect::{AnyRefusal, Auth, Refused};

/// Deep nesting, bodies far over the limit, NUL bytes, invalid UTF-8.
fn structure_rows(f: &Fixture) -> Vec<Row> {
    let (a, op) = (&f.a, Some(OPERATOR_KEY));
    let deep = [nested_arrays(100_000), nested_objects(100_000)];
    let mut rows = Vec::new();
    for (i, text) in deep.iter().enumerate() {
        let shape = ["arrays", "objects"][i];
        for path in [
            "/transactions".to_owned(),
            "/customers".to_owned(),
            "/merchants".to_owned(),
            format!("/transactions/{}/void", a.pending),
            format!("/status-changes/0?partner_id={}", a.id),
        ] {
            let method = if path.contains("void") { "PUT" } else { "POST" };
            let method = if path.starts_with("/status") { "GET" } else { method };
            let r = request(method, &path, Some(&a.key), text.clone().into_bytes());
            // An endpoint that takes no large body refuses it on its size first.
            let large = path == "/transactions" || path == "/merchants";
            let expect =
                if large { Refused(400, 10, "", "invalid_json") } else { Refused(413, 10, "", "over_limit") };
            rows.push(row(format!("100,000 nested {shape}: {path}"), r, expect));
        }
        for path in ["/admin/partners", "/admin/returns", "/admin/clock"] {
            let r = request("POST", path, op, text.clone().into_bytes());
            rows.push(row(format!("100,000 nested {shape}: {path}"), r, AnyRefusal));
        }
        let r = request("POST", &format!("/admin/merchants/{}/limits", a.merchant), op, text.clone().into());
        rows.push(row(format!("100,000 nested {shape}: merchant limits"), r, AnyRefusal));
    }
    // Form data nested as deep (the stack overflow the fuzzing brief asked about).
    let form_name = format!("customer{}", "[a]".repeat(100_000));
    let mut r = f.post(&format!("/transactions?partner_id={}", a.id), format!("{form_name}=1").into_bytes());
    r.content_type = Some("application/x-www-form-urlencoded".into());
    rows.push(row("form body nested 100,000 levels", r, Refused(400, 10, "", "invalid_json")));
    let r = f.post(&format!("/transactions?partner_id={}&{form_name}=1", a.id), Vec::new());
    rows.push(row("query string nested 100,000 levels", r, Refused(400, 10, "", "invalid_json")));
    let r =
        f.post(&format!("/transactions?{}=1&partner_id={}", "a[b]".repeat(MAX_FORM_DEPTH + 1), a.id), vec![]);
    rows.push(row("query string one level too deep", r, Refused(400, 10, "", "invalid_json")));

    // 10 MB bodies at every endpoint, with and without a key.
    let huge = vec![b' '; 10 * MB];
    for (method, path) in [
        ("POST", "/transactions".to_owned()),
        ("POST", "/customers".to_owned()),
        ("POST", "/merchants".to_owned()),
        ("PUT", format!("/transactions/{}/void", a.pending)),
        ("PUT", format!("/transactions/{}/reverse", a.pending)),
        ("DELETE", format!("/customers/{}", a.customer)),
        ("GET", format!("/status-changes/{}", a.pointer)),
        ("GET", "/events".to_owned()),
        ("GET", "/institutions/021000021".to_owned()),
        ("GET", "/categories".to_owned()),
        ("POST", "/admin/partners".to_owned()),
        ("POST", "/admin/routing".to_owned()),
        ("POST", "/admin/clock".to_owned()),
        ("POST", format!("/admin/merchants/{}/approve", a.merchant)),
    ] {
        let key = match path.as_str() {
            "/events" => Some(a.merchant_key.as_str()),
            p if p.starts_with("/admin") => op,
            _ => Some(a.key.as_str()),
        };
        let r = request(method, &path, key, huge.clone());
        rows.push(row(format!("10 MB body: {method} {path}"), r, Refused(413, 10, "", "over_limit")));
    }
    // The caller is known before the body counts: a missing or wrong key, or a
    // key of the wrong kind, is 401 whatever the body.
    for key in [None, Some("pk_wrong"), Some(a.merchant_key.as_str())] {
        let r = request("POST", "/transactions", key, huge.clone());
        rows.push(row(format!("10 MB body, key {key:?}"), r, Auth));
    }

    // NUL bytes in strings, in the path, the query, the key.
    let nul_fields = [
        ("description", json!("Invoice\u{0}42"), Refused(422, 10, "description", "invalid_format")),
        ("customer/name", json!("Ada\u{0}Lovelace"), Refused(422, 10, "customer.name", "invalid_format")),
        (
            "customer/account_number",
            json!("98765\u{0}4321"),
            Refused(422, 13, "customer.account_number", "invalid_format"),
        ),
        (
            "merchant_id",
            json!(format!("{}\u{0}", a.merchant)),
            Refused(422, 11, "merchant_id", "invalid_format"),
        ),
        ("amount", json!("1.00\u{0}"), Refused(422, 14, "amount", "invalid_amount")),
        ("partner_id", json!(format!("{}\u{0}", a.id)), Auth),
    ];
    for (field, value, expect) in nul_fields {
        rows.push(row(
            format!("NUL in {field}"),
            f.post("/transactions", f.transaction_with(field, value)),
            expect,
        ));
    }
    let not_found = Refused(404, 10, "path", "not_found");
    for path in [
        "/transactions\u{0}".to_owned(),
        "/transactions%00".to_owned(),
        format!("/transactions/{}%00/void?partner_id={}", a.pending, a.id),
        format!("/transactions/{}\u{0}/void?partner_id={}", a.pending, a.id),
    ] {
        let expect = if path.contains("void") {
            Refused(404, 10, "transaction_id", "not_found")
        } else {
            not_found.clone()
        };
        let method = if path.contains("void") { "PUT" } else { "POST" };
        rows.push(row(
            format!("NUL in the path {path:?}"),
            request(method, &path, Some(&a.key), vec![]),
            expect,
        ));
    }
    // An id followed by `&…` is not that id (it once was: `&` ended the segment).
    for (method, path, field) in [
        ("PUT", format!("/transactions/{}&x/void?partner_id={}", a.pending, a.id), "transaction_id"),
        ("PUT", format!("/transactions/{}&/reverse?partner_id={}", a.pending, a.id), "transaction_id"),
        ("DELETE", format!("/customers/{}&x=1?partner_id={}", a.customer, a.id), "customer_id"),
    ] {
        let r = request(method, &path, Some(&a.key), vec![]);
        rows.push(row(
            format!("an id followed by & in {method} {path:.30}"),
            r,
            Refused(404, 10, field, "not_found"),
        ));
    }
    let r =
        request("DELETE", &format!("/customers/{}%00?partner_id={}", a.customer, a.id), Some(&a.key), vec![]);
    rows.push(row("NUL after a customer id", r, Refused(404, 10, "customer_id", "not_found")));
    let r = f.post(&format!("/transactions?partner_id={}%00", a.id), Vec::new());
    rows.push(row("NUL in the query's partner_id", r, Auth));
    let r = request(
        "POST",
        "/transactions",
        Some(&format!("{}\u{0}", a.key)),
        f.transaction_with("amount", json!("1.00")),
    );
    rows.push(row("NUL after the API key", r, Auth));
    let mut r = f.post("/transactions", f.transaction_with("amount", json!("2.00")));
    r.idempotency_key = Some("order\u{0}1".into());
    rows.push(row("NUL in the idempotency key", r, Refused(422, 10, "idempotency_key", "invalid_format")));

    // Invalid UTF-8: in the body; in the path, query and key as the HTTPS host
    // hands them over (percent-escapes, or U+FFFD for header bytes).
    let mut bad = f.transaction_with("description", json!("XX"));
    let at = bad.windows(2).position(|w| w == b"XX").unwrap();
    bad[at] = 0xff;
    rows.push(row(
        "invalid UTF-8 in a JSON string",
        f.post("/transactions", bad),
        Refused(400, 10, "", "invalid_json"),
    ));
    rows.push(row(
        "a body of bare 0xFF bytes",
        f.post("/customers", vec![0xff; 64]),
        Refused(400, 10, "", "invalid_json"),
    ));
    let r = request("PUT", &format!("/transactions/%FF%FE/void?partner_id={}", a.id), Some(&a.key), vec![]);
    rows.push(row("invalid UTF-8 in the path", r, Refused(404, 10, "transaction_id", "not_found")));
    let r = f.post("/transactions?partner_id=%FF%FE", Vec::new());
    rows.push(row("invalid UTF-8 in the query", r, Auth));
    let r = f.post(&format!("/transactions?partner_id={}&amount=%FF", a.id), Vec::new());
    rows.push(row("invalid UTF-8 in a query amount", r, AnyRefusal));
    let r = request("GET", "/categories", Some("pk_\u{FFFD}\u{FFFD}"), Vec::new());
    rows.push(row("invalid UTF-8 in the key (as U+FFFD)", r, Auth));
    rows
}

/// Numbers with 400 digits, negative zero, look-alike Unicode.
fn value_rows(f: &Fixture) -> Vec<Row> {
    let a = &f.a;
    let digits = "9".repeat(400);
    let invalid_amount = Refused(422, 14, "amount", "invalid_amount");
    let mut rows = Vec::new();
    let literal_in = |body: Vec<u8>, literal: &str| {
        String::from_utf8(body).unwrap().replace("\"@@NUMBER@@\"", literal).into_bytes()
    };
    let raw_number =
        |field: &str, literal: &str| literal_in(f.transaction_with(field, json!("@@NUMBER@@")), literal);
    for (name, literal) in [
        ("a 400-digit amount", digits.clone()),
        ("a 400-digit fraction", format!("0.{}", "0".repeat(399))),
        ("an amount of 1e400", "1e400".to_owned()),
        ("negative zero", "-0".to_owned()),
        ("negative zero with decimals", "-0.00".to_owned()),
        ("negative zero, exponent", "-0e0".to_owned()),
    ] {
        rows.push(row(
            format!("{name} (number)"),
            f.post("/transactions", raw_number("amount", &literal)),
            invalid_amount.clone(),
        ));
        let text = f.transaction_with("amount", json!(literal));
        rows.push(row(format!("{name} (string)"), f.post("/transactions", text), invalid_amount.clone()));
    }
    // A check number is read by the classes that use it (a PPD's is ignored).
    let bad_check = Refused(422, 10, "check_number", "invalid_format");
    let r = f.post("/transactions", literal_in(f.check_with("check_number", json!("@@NUMBER@@")), &digits));
    rows.push(row("a 400-digit check number", r, bad_check.clone()));
    let r = f.post("/transactions", raw_number("customer/routing_number", &digits));
    rows.push(row(
        "a 400-digit routing number",
        r,
        Refused(422, 12, "customer.routing_number", "invalid_type"),
    ));
    let r = f.post("/transactions", literal_in(f.check_with("check_number", json!("@@NUMBER@@")), "-0"));
    rows.push(row("check number negative zero", r, bad_check));
    let mut app = application(&["PPD"]);
    app["partner_id"] = json!(a.id);
    for field in [
        "velocities/expected_checks_per_year",
        "velocities/highest_amount_allowed",
        "business_data/merchant_category_code",
        "business_data/federal_tax_id",
    ] {
        for literal in [digits.as_str(), "-0"] {
            let mut v = app.clone();
            set(&mut v, field, json!("@@NUMBER@@"));
            let body = v.to_string().replace("\"@@NUMBER@@\"", literal).into_bytes();
            rows.push(row(
                format!("merchant {field} = {:.10}", literal),
                f.post("/merchants", body),
                AnyRefusal,
            ));
        }
    }
    let op = Some(OPERATOR_KEY);
    for (path, member) in [
        (format!("/admin/partners/{}/limits", a.id), "daily_count"),
        (format!("/admin/merchants/{}/limits", a.merchant), "max_transaction_amount"),
        (format!("/admin/merchants/{}/limits", a.merchant), "period_days"),
    ] {
        for literal in [digits.as_str(), "-0", "-0.0"] {
            let body = format!("{{\"{member}\": {literal}}}").into_bytes();
            rows.push(row(format!("{member} = {literal:.10}"), request("POST", &path, op, body), AnyRefusal));
        }
    }

    // Look-alikes: Cyrillic letters and fullwidth digits in ids and codes.
    for (name, id) in [
        ("Cyrillic", cyrillic(&a.merchant)),
        ("fullwidth digits", fullwidth(&a.merchant)),
        ("fullwidth prefix", a.merchant.replacen("mer", "ｍｅｒ", 1)),
    ] {
        assert_ne!(id, a.merchant);
        let r = f.post("/transactions", f.transaction_with("merchant_id", json!(id)));
        rows.push(row(
            format!("merchant id with {name}"),
            r,
            Refused(422, 11, "merchant_id", "invalid_format"),
        ));
    }
    let lookalike_partner = a.id.replacen("par", "\u{0440}ar", 1);
    let r = f.post("/transactions", f.transaction_with("partner_id", json!(lookalike_partner)));
    rows.push(row("partner id with a Cyrillic р", r, Auth));
    for (name, id) in [("Cyrillic", cyrillic(&a.pending)), ("fullwidth digits", fullwidth(&a.pending))] {
        let r = request("PUT", &format!("/transactions/{id}/void?partner_id={}", a.id), Some(&a.key), vec![]);
        rows.push(row(
            format!("transaction id with {name}"),
            r,
            Refused(404, 10, "transaction_id", "not_found"),
        ));
    }
    let r = f.post("/transactions", f.transaction_with("customer", json!({"id": fullwidth(&a.customer)})));
    rows.push(row("customer token with fullwidth digits", r, AnyRefusal));
    let r =
        f.post("/transactions", f.transaction_with("customer/routing_number", json!("０２１００００２１")));
    rows.push(row(
        "routing number in fullwidth digits",
        r,
        Refused(422, 12, "customer.routing_number", "invalid_format"),
    ));
    let r = f.post("/transactions", f.transaction_with("amount", json!("１.００")));
    rows.push(row("amount in fullwidth digits", r, invalid_amount.clone()));
    let r = f.post("/transactions", f.transaction_with("standard_entry_class", json!("\u{0420}\u{0420}D")));
    rows.push(row("class in Cyrillic", r, Refused(403, 20, "standard_entry_class", "invalid_value")));
    let r = request("GET", "/institutions/０２１００００２１", Some(&a.key), vec![]);
    rows.push(row(
        "institution in fullwidth digits",
        r,
        Refused(422, 12, "routing_number", "invalid_format"),
    ));
    let r = request(
        "POST",
        "/transactions",
        Some(&cyrillic(&a.key)),
        f.transaction_with("amount", json!("1.00")),
    );
    rows.push(row("API key with a Cyrillic letter", r, Auth));
    rows
}

/// 1 MB strings in every field, and a 100 KB path.
fn size_rows(f: &Fixture) -> Vec<Row> {
    let a = &f.a;
    let big = "9".repeat(MB);
    let mut rows = Vec::new();
    let mut bodies = Vec::new();
    // A BOC, so that the check number and images are read (see
    // `a_megabyte_in_a_member_the_class_does_not_use_is_ignored` for a PPD's).
    let mut t = boc(&a.merchant);
    t["partner_id"] = json!(a.id);
    bodies.push(("/transactions", t));
    let mut c = customer_body("global", "918273645599");
    c["partner_id"] = json!(a.id);
    bodies.push(("/customers", c));
    let mut m = application(&["PPD", "WEB"]);
    m["partner_id"] = json!(a.id);
    bodies.push(("/merchants", m));
    for (path, body) in bodies {
        let mut fields = Vec::new();
        leaves(&body, "", &mut fields);
        for field in fields {
            let mut v = body.clone();
            set(&mut v, &field, json!(big));
            // `/customers` takes no large body: 413 before its partner_id is read.
            let expect = if field == "partner_id" && path != "/customers" { Auth } else { AnyRefusal };
            rows.push(row(
                format!("1 MB in {path} {field}"),
                f.post(path, v.to_string().into_bytes()),
                expect,
            ));
        }
    }
    let op = Some(OPERATOR_KEY);
    for (path, body) in [
        ("/admin/partners".to_owned(), json!({"name": big})),
        ("/admin/returns".to_owned(), json!({"transaction_id": big, "return_code": "R01"})),
        ("/admin/returns".to_owned(), json!({"transaction_id": a.pending, "return_code": big})),
        (
            "/admin/returns".to_owned(),
            json!({"transaction_id": a.pending, "return_code": "R01", "return_date": big}),
        ),
        ("/admin/clock".to_owned(), json!({"now": big})),
        (format!("/admin/merchants/{}/limits", a.merchant), json!({"max_transaction_amount": big})),
        (format!("/admin/partners/{big}/limits"), json!({"daily_count": 1})),
        (format!("/admin/partners/{}/limits", a.id), json!({big.clone(): 1})),
        ("/admin/partners".to_owned(), json!({"name": "x", big.clone(): 1})),
    ] {
        let r = request("POST", &path, op, body.to_string().into_bytes());
        rows.push(row(format!("1 MB in {:.40}", path), r, AnyRefusal));
    }
    let r = request("POST", "/admin/routing", op, big.clone().into_bytes());
    rows.push(row("1 MB directory line", r, Refused(422, 10, "", "invalid_format")));
    let r = f.post(&format!("/transactions?partner_id={big}"), Vec::new());
    rows.push(row("1 MB partner_id in the query", r, Auth));
    let r = request("GET", "/categories", Some(&big), Vec::new());
    rows.push(row("1 MB API key", r, Auth));
    let mut r = f.post("/transactions", f.transaction_with("amount", json!("3.00")));
    r.idempotency_key = Some(big.clone());
    rows.push(row("1 MB idempotency key", r, Refused(422, 10, "idempotency_key", "invalid_format")));
    let r = request("GET", &format!("/status-changes/{big}?partner_id={}", a.id), Some(&a.key), vec![]);
    rows.push(row("1 MB pointer", r, Refused(422, 10, "pointer", "invalid_value")));
    let r = request("GET", &format!("/events/{big}"), Some(&a.merchant_key), vec![]);
    rows.push(row("1 MB events pointer", r, Refused(422, 10, "pointer", "invalid_value")));

    let long = "a".repeat(100 * 1024);
    let paths = [
        ("GET", format!("/{long}"), Refused(404, 10, "path", "not_found")),
        ("GET", format!("/transactions/{long}"), Refused(404, 10, "path", "not_found")),
        (
            "PUT",
            format!("/transactions/{long}/void?partner_id={}", a.id),
            Refused(404, 10, "transaction_id", "not_found"),
        ),
        (
            "DELETE",
            format!("/customers/{long}?partner_id={}", a.id),
            Refused(404, 10, "customer_id", "not_found"),
        ),
        ("GET", format!("/institutions/{long}"), Refused(422, 12, "routing_number", "invalid_format")),
        (
            "GET",
            format!("/status-changes/{long}?partner_id={}", a.id),
            Refused(422, 10, "pointer", "invalid_value"),
        ),
        ("GET", format!("/{}", "x/".repeat(50 * 1024)), Refused(404, 10, "path", "not_found")),
    ];
    for (method, path, expect) in paths {
        rows.push(row(
            format!("100 KB path {:.30}", path),
            request(method, &path, Some(&a.key), vec![]),
            expect,
        ));
    }
    rows
}

/// Pointers (forged; replayed after more changes, which continues) and another
/// partner's ids at every endpoint.
fn tenancy_rows(f: &Fixture) -> Vec<Row> {
    let (a, b) = (&f.a, &f.b);
    let mut rows = Vec::new();
    // A pointer replayed after more changes continues where it was: the last debit.
    let feed = f.w.changes(&a.id, &a.caller);
    let tail = serde_json::to_value(&feed[feed.len() - 1..]).unwrap();
    for _ in 0..2 {
        let path = format!("/status-changes/{}?partner_id={}", a.early_pointer, a.id);
        let expect =
            Expect::Ok(json!({"success": "true", "payload": {"new_pointer": a.pointer, "changes": tail}}));
        rows.push(row(
            "a pointer replayed after more changes",
            request("GET", &path, Some(&a.key), vec![]),
            expect,
        ));
    }
    let bad_pointer = Refused(422, 10, "pointer", "invalid_value");
    let mut flipped = a.pointer.clone().into_bytes();
    flipped[3] = if flipped[3] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).unwrap();
    for (name, pointer, key, partner) in [
        ("forged (one character changed)", flipped.as_str(), &a.key, &a.id),
        ("forged (random)", &random_alphanumeric(32), &a.key, &a.id),
        ("another partner's", &a.pointer, &b.key, &b.id),
        ("an events pointer as a status pointer", &a.events, &a.key, &a.id),
        ("0 with a sign", "-0", &a.key, &a.id),
        ("a number", "1", &a.key, &a.id),
    ] {
        let path = format!("/status-changes/{pointer}?partner_id={partner}");
        rows.push(row(
            format!("status pointer {name}"),
            request("GET", &path, Some(key), vec![]),
            bad_pointer.clone(),
        ));
    }
    for (name, pointer, key) in [
        ("forged", flipped.as_str(), &a.merchant_key),
        ("another merchant's", &a.events, &b.merchant_key),
        ("a status pointer", &a.pointer, &a.merchant_key),
    ] {
        let r = request("GET", &format!("/events/{pointer}"), Some(key), vec![]);
        rows.push(row(format!("events pointer {name}"), r, bad_pointer.clone()));
    }

    // B's key and partner id, naming A's resources: exactly like unknown ids.
    let like = |mut r: Row, id: &str, prefix: &'static str| {
        r.like_unknown = Some((id.to_owned(), prefix));
        r
    };
    let bq = format!("?partner_id={}", b.id);
    let not_found = |field| Refused(404, 10, field, "not_found");
    for verb in ["void", "reverse"] {
        let r = request("PUT", &format!("/transactions/{}/{verb}{bq}", a.pending), Some(&b.key), vec![]);
        rows.push(like(
            row(format!("B {verb}s A's transaction"), r, not_found("transaction_id")),
            &a.pending,
            "txn_",
        ));
    }
    let r = request("DELETE", &format!("/customers/{}{bq}", a.customer), Some(&b.key), vec![]);
    rows.push(like(row("B deletes A's customer", r, not_found("customer_id")), &a.customer, "cus_"));
    let mut t = transaction(&a.merchant, "debit", "1.00");
    t["partner_id"] = json!(b.id);
    let r = request("POST", "/transactions", Some(&b.key), t.to_string().into_bytes());
    rows.push(like(
        row("B pays with A's merchant", r, Refused(422, 11, "merchant_id", "not_found")),
        &a.merchant,
        "mer_",
    ));
    let mut t = transaction(&b.merchant, "debit", "1.00");
    t["partner_id"] = json!(b.id);
    t["customer"] = json!({"id": a.customer});
    let r = request("POST", "/transactions", Some(&b.key), t.to_string().into_bytes());
    rows.push(like(row("B pays with A's customer token", r, AnyRefusal), &a.customer, "cus_"));
    let mut c = customer_body(&a.merchant, "918273645598");
    c["partner_id"] = json!(b.id);
    let r = request("POST", "/customers", Some(&b.key), c.to_string().into_bytes());
    rows.push(like(
        row("B stores a customer for A's merchant", r, Refused(422, 11, "merchant_id", "not_found")),
        &a.merchant,
        "mer_",
    ));
    // B's key naming A's partner id: authentication fails, at every partner endpoint.
    let aq = format!("?partner_id={}", a.id);
    let mut t = transaction(&a.merchant, "debit", "1.00");
    t["partner_id"] = json!(a.id);
    let mut app = application(&["PPD"]);
    app["partner_id"] = json!(a.id);
    let mut c = customer_body("global", "918273645597");
    c["partner_id"] = json!(a.id);
    for (method, path, body) in [
        ("POST", "/transactions".to_owned(), t.to_string()),
        ("POST", "/customers".to_owned(), c.to_string()),
        ("POST", "/merchants".to_owned(), app.to_string()),
        ("PUT", format!("/transactions/{}/void{aq}", a.pending), String::new()),
        ("PUT", format!("/transactions/{}/reverse{aq}", a.pending), String::new()),
        ("DELETE", format!("/customers/{}{aq}", a.customer), String::new()),
        ("GET", format!("/status-changes/0{aq}"), String::new()),
        ("GET", format!("/status-changes/{}{aq}", a.pointer), String::new()),
    ] {
        for key in [&b.key, &a.merchant_key, &b.merchant_key] {
            let r = request(method, &path, Some(key), body.clone().into_bytes());
            rows.push(row(format!("another key on A's {method} {:.40}", path), r, Auth));
        }
    }
    // A partner's key on the merchant's feed, and on the operator plane.
    for key in [&a.key, &b.key] {
        rows.push(row("a partner key on /events", request("GET", "/events", Some(key), vec![]), Auth));
        for (path, body) in [
            ("/admin/partners".to_owned(), json!({"name": "Mallory"})),
            (format!("/admin/partners/{}/limits", a.id), json!({"daily_count": 1_000_000})),
            (format!("/admin/merchants/{}/approve", a.second), json!({})),
            (format!("/admin/merchants/{}/limits", a.merchant), json!({"daily_count": 1_000_000})),
            ("/admin/returns".to_owned(), json!({"transaction_id": a.pending, "return_code": "R01"})),
            ("/admin/clock".to_owned(), json!({"now": "2027-01-01T00:00:00Z"})),
        ] {
            let r = request("POST", &path, Some(key), body.to_string().into_bytes());
            rows.push(row(format!("a partner key on {path}"), r, Auth));
        }
    }
    // Malformed keys, as a host might pass a Basic-auth user name through.
    for key in [
        "",
        " ",
        "pk_",
        ":",
        &format!("{}:", a.key),
        &format!("{}\n", a.key),
        &format!("Basic {}", a.key),
        &a.key.to_uppercase(),
        &"k".repeat(257),
    ] {
        let r = request("GET", &format!("/status-changes/0?partner_id={}", a.id), Some(key), vec![]);
        rows.push(row(format!("malformed key {:?}", &key[..key.len().min(20)]), r, Auth));
    }
    rows
}

#[test]
fn hostile_input_is_refused_clearly_and_stores_nothing() {
    let f = fixture();
    let mut rows = structure_rows(&f);
    rows.extend(value_rows(&f));
    rows.extend(size_rows(&f));
    rows.extend(tenancy_rows(&f));
    assert!(rows.len() > 200, "{} rows", rows.len());
    // Every row runs (each failure is printed), on two threads (the 1 MB rows are
    // slow in a debug build); then the test fails if any row did.
    let run = |half: usize| -> Vec<String> {
        rows.iter()
            .skip(half)
            .step_by(2)
            .filter(|r| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.run(r))).is_err())
            .map(|r| r.name.clone())
            .collect()
    };
    let failed: Vec<String> = std::thread::scope(|s| {
        let other = s.spawn(|| run(1));
        let mut failed = run(0);
        failed.extend(other.join().unwrap_or_default());
        failed
    });
    assert!(failed.is_empty(), "{} of {} rows failed: {failed:#?}", failed.len(), rows.len());
    f.assert_counters_unchanged();
}

/// The rows above are all refused; this is the hostile value a request may carry
/// and still succeed: a member its class does not use (a PPD's or WEB's check
/// number, state and check images) is ignored, whatever it holds, within the body
/// limit. It is neither stored nor answered, and it spends no check number.
#[test]
fn a_megabyte_in_a_member_the_class_does_not_use_is_ignored() {
    let w = World::new("2026-11-23 10:00");
    let (id, key, caller) = w.partner_with_key();
    let (merchant, _, _) = w.roomy_merchant(&id, &caller, &["PPD", "WEB"]);
    let big = "9".repeat(MB);
    let post = |body: &Value| {
        route(&w.engine, &request("POST", "/transactions", Some(&key), body.to_string().into_bytes()))
    };
    for class in ["PPD", "WEB"] {
        for member in ["check_number", "state", "check_image_front", "check_image_back"] {
            for value in [json!(big), json!({"deep": [big]}), json!(-0.0), json!(true)] {
                let mut t = transaction(&merchant, "debit", "1.00");
                t["partner_id"] = json!(id);
                t["standard_entry_class"] = json!(class);
                t[member] = value;
                let r = post(&t);
                assert_eq!(r.status, 201, "{class} {member}: {}", &r.body[..r.body.len().min(200)]);
                assert!(r.body.len() < 256 && !r.body.contains("999"), "{class} {member}: {}", r.body);
            }
        }
        // Refused for another reason: the ignored member is not reflected either.
        let mut t = transaction(&merchant, "debit", "abc");
        t["partner_id"] = json!(id);
        t["standard_entry_class"] = json!(class);
        t["check_number"] = json!(big);
        let r = post(&t);
        assert_eq!(r.status, 422);
        let v: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!((v["error_code"].clone(), v["errors"].as_array().map(Vec::len)), (json!(14), Some(1)));
        assert!(r.body.len() < 1024 && !r.body.contains("999"), "{}", r.body);
    }
    // A PPD's check number is not a check: the same one twice is no duplicate.
    for _ in 0..2 {
        let mut t = transaction(&merchant, "debit", "2.00");
        t["partner_id"] = json!(id);
        t["check_number"] = json!("1001");
        assert_eq!(post(&t).status, 201);
    }
    let feed =
        route(&w.engine, &request("GET", &format!("/status-changes/0?partner_id={id}"), Some(&key), vec![]));
    assert!(!feed.body.contains("999") && !feed.body.contains("1001"));
}

#[test]
fn hostile_request_envelopes_for_c_and_wasm_hosts() {
    let f = fixture();
    let key = f.a.key.as_str();
    let big = "x".repeat(MB);
    let texts = [
        nested_arrays(100_000),
        nested_objects(100_000),
        format!(
            r#"{{"method":"GET","path":"/categories","api_key":"{key}","body":{}}}"#,
            nested_arrays(100_000)
        ),
        format!(
            r#"{{"method":"GET","path":"/categories","api_key":"{key}","query":{}}}"#,
            nested_objects(100_000)
        ),
        format!(r#"{{"method":"{big}","path":"/categories","api_key":"{key}"}}"#),
        format!(r#"{{"method":"GET","path":"/categories","api_key":"{key}","bogus":1}}"#),
        format!(r#"{{"method":"GET","path":"/categories","api_key":"{key}","{big}":1}}"#),
        format!(
            r#"{{"method":"POST","path":"/admin/partners","api_key":"{OPERATOR_KEY}","body":{{"{big}":1}}}}"#
        ),
        format!(r#"{{"method":"GET","path":"/categories","api_key":"{key}","query":[1]}}"#),
        format!(r#"{{"method":"GET","path":"/categories","api_key":"{key}","api_key":"{key}"}}"#),
        r#"{"method":"GET","path":"/categories","api_key":"\ud800"}"#.to_owned(),
        format!(r#"{{"method":"GET","path":"/categories","api_key":{}}}"#, "9".repeat(400)),
        "\u{0}".to_owned(),
        String::new(),
    ];
    for text in &texts {
        let answer: Value = serde_json::from_str(&route_json(&f.w.engine, text)).unwrap();
        let name = &text[..text.len().min(60)];
        let status = answer["status"].as_u64().unwrap() as u16;
        let response = Response { status, body: answer["body"].to_string() };
        let (status, ..) = refusal(name, &response);
        assert!(matches!(status, 400 | 404 | 405 | 413 | 422), "{name}: {answer}");
        f.assert_nothing_stored(name);
    }
    f.assert_counters_unchanged();
}
