//! Hostile input through the C ABI, called from Rust exactly as C calls it: a
//! NUL-terminated envelope into `ach_engine_request`, an `AchBuffer` out, freed
//! with `ach_buffer_free`; the detail of a failure read back with
//! `ach_last_error`. The C program `tests/c/hostile.c` (run under valgrind by
//! `tests/c/run.sh`) has the same rows where valgrind's time allows; here every
//! row runs in full, plus tables too large for valgrind: a 1 MB string in every
//! field of every body, 10 MB bodies at every endpoint, every envelope cut short
//! at every byte by a NUL, every one-character forgery of a feed pointer,
//! thousands of forged handles, and threads that close a handle (three at once)
//! while others send hostile requests and still others open and close engines.
//!
//! Every row gets its result code (`*out` untouched, a short detail naming the
//! argument) or `ACH_OK` with the router's refusal (a catalogue message, exactly
//! `Authentication failed.` for a 401), byte for byte what `api::route_json`
//! answers on the same engine. After every row neither partner's status-changes
//! feed nor either merchant's events feed moved; at the end the database file is
//! reopened, the feeds still have not moved, and the usage counters are where the
//! set-up left them.
#![allow(clippy::unwrap_used)]

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ach::{
    ach_buffer_free, ach_engine_close, ach_engine_open, ach_engine_request, ach_last_error, ach_validate,
    ach_validate_bytes, AchBuffer, AchEngine, AchResult,
};
use ach_core::api::route_json;
use ach_core::error::catalogue_samples;
use ach_tests::json_paths::{leaves, nested_arrays, nested_objects, set};
use ach_tests::lookalike::{cyrillic, fullwidth};
use serde_json::{json, Value};

const OPERATOR: &str = "ok_ffi_hostile_operator_key_0123456789";
const START: &str = "2026-11-23T10:00:00-05:00";
const MB: usize = 1 << 20;

// ---------------------------------------------------------------------------
// Calling the ABI as C does

/// What a call answered: the text of `*out` on `ACH_OK`, or the code and the
/// thread's last error.
type Answer = Result<String, (AchResult, String)>;

fn last_error() -> String {
    let mut out = AchBuffer::default();
    // SAFETY: a valid out-buffer.
    assert_eq!(unsafe { ach_last_error(&mut out) }, AchResult::ACH_OK);
    let text = out.to_text();
    ach_buffer_free(out);
    text
}

/// Send the bytes of `envelope` up to its first NUL (as C's strlen sees them).
fn request_bytes(engine: *mut AchEngine, envelope: &[u8]) -> Answer {
    let end = envelope.iter().position(|&b| b == 0).unwrap_or(envelope.len());
    let c = CString::new(&envelope[..end]).unwrap();
    let sentinel = AchBuffer { data: std::ptr::dangling_mut(), len: 7 };
    let mut out = AchBuffer { data: sentinel.data, len: sentinel.len };
    // SAFETY: a NUL-terminated string and a writable out-buffer; any engine value
    // is allowed.
    let code = unsafe { ach_engine_request(engine, c.as_ptr(), &mut out) };
    if code == AchResult::ACH_OK {
        let bytes = out.as_bytes().to_vec();
        // SAFETY: on success `data[len]` is the final NUL.
        assert_eq!(unsafe { *out.data.add(out.len) }, 0, "no final NUL");
        ach_buffer_free(out);
        Ok(String::from_utf8(bytes).expect("answers are UTF-8"))
    } else {
        assert!(out.data == sentinel.data && out.len == sentinel.len, "*out written on failure");
        Err((code, last_error()))
    }
}

fn request(engine: *mut AchEngine, envelope: &str) -> Answer {
    request_bytes(engine, envelope.as_bytes())
}

fn open(options: &str) -> Result<*mut AchEngine, AchResult> {
    let options = CString::new(options).unwrap();
    let mut engine = std::ptr::null_mut();
    // SAFETY: a valid C string and a valid out-pointer.
    match unsafe { ach_engine_open(options.as_ptr(), &mut engine) } {
        AchResult::ACH_OK => Ok(engine),
        other => Err(other),
    }
}

/// An envelope; `body` is a JSON value, or raw text when it is a `Value::String`
/// (the envelope carries both alike).
fn envelope(method: &str, path: &str, query: Option<&str>, key: Option<&str>, body: Option<Value>) -> String {
    let mut e = json!({"method": method, "path": path});
    if let Some(q) = query {
        e["query"] = json!(q);
    }
    if let Some(k) = key {
        e["api_key"] = json!(k);
    }
    if let Some(b) = body {
        e["body"] = b;
    }
    e.to_string()
}

fn status_of(answer: &str) -> u16 {
    let v: Value = serde_json::from_str(answer).unwrap();
    v["status"].as_u64().unwrap() as u16
}

// ---------------------------------------------------------------------------
// The fixture: two partners, as in tests/tests/hostile.rs, set up through the ABI

#[derive(Default, Clone)]
struct Tenant {
    id: String,
    key: String,
    query: String,
    merchant: String,
    merchant_key: String,
    second: String,
    customer: String,
    pending: String,
    last: String,
    early_pointer: String,
    pointer: String,
    events: String,
}

struct Fixture {
    engine: *mut AchEngine,
    a: Tenant,
    b: Tenant,
    dir: PathBuf,
}

fn call_ok(engine: *mut AchEngine, status: u16, e: &str) -> Value {
    let answer = request(engine, e).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(status_of(&answer), status, "{answer}");
    serde_json::from_str::<Value>(&answer).unwrap()["body"].clone()
}

fn example(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/requests").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn application(partner_id: &str, classes: &[&str]) -> Value {
    let mut app = example("merchant.json");
    app["partner_id"] = json!(partner_id);
    app["standard_entry_classes"] = json!(classes);
    app["velocities"]["decline_duplicates"] = json!(false);
    app
}

fn transaction(t: &Tenant, merchant: &str, amount: &str) -> Value {
    json!({"partner_id": t.id, "merchant_id": merchant, "amount": amount, "description": "ffi hostile",
           "type": "debit", "standard_entry_class": "PPD",
           "customer": {"name": "Ada Lovelace", "routing_number": "021000021",
                        "account_number": "987654321", "account_type": "checking"}})
}

/// A BOC debit of 1.00 with its check number and both images: every member a
/// check class reads (a PPD ignores them).
fn check_transaction(t: &Tenant, merchant: &str) -> Value {
    let png = "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    let mut v = transaction(t, merchant, "1.00");
    v["standard_entry_class"] = json!("BOC");
    v["check_number"] = json!("1001");
    v["check_image_front"] = json!(png);
    v["check_image_back"] = json!(png);
    v
}

fn customer_body(t: &Tenant, scope: &str, account: &str) -> Value {
    json!({"partner_id": t.id, "merchant_id": scope, "name": "Grace Hopper", "routing_number": "026009593",
           "account_number": account, "account_type": "savings"})
}

fn roomy() -> Value {
    let big = "99999999.99";
    json!({"limits": {"max_transaction_amount": big, "min_transaction_amount": "0.01",
        "daily_count": 1_000_000_000u64, "daily_amount": big, "period_count": 1_000_000_000u64,
        "period_amount": big, "monthly_count": 1_000_000_000u64, "monthly_amount": big,
        "monthly_average_amount": big}})
}

fn pointer_now(engine: *mut AchEngine, t: &Tenant) -> String {
    let page =
        call_ok(engine, 200, &envelope("GET", "/status-changes/0", Some(&t.query), Some(&t.key), None));
    page["payload"]["new_pointer"].as_str().unwrap().to_owned()
}

fn debit(engine: *mut AchEngine, t: &Tenant, merchant: &str, amount: &str) -> Answer {
    let body = transaction(t, merchant, amount);
    request(engine, &envelope("POST", "/transactions", None, Some(&t.key), Some(body)))
}

fn tenant(engine: *mut AchEngine) -> Tenant {
    let mut t = Tenant::default();
    let p = call_ok(
        engine,
        201,
        &envelope("POST", "/admin/partners", None, Some(OPERATOR), Some(json!({"name": "Hostile"}))),
    );
    t.id = p["payload"]["partner_id"].as_str().unwrap().to_owned();
    t.key = p["payload"]["api_key"].as_str().unwrap().to_owned();
    t.query = format!("partner_id={}", t.id);
    let merchant = |classes: &[&str]| {
        let m = call_ok(
            engine,
            201,
            &envelope("POST", "/merchants", None, Some(&t.key), Some(application(&t.id, classes))),
        );
        let id = m["id"].as_str().unwrap().to_owned();
        let path = format!("/admin/merchants/{id}/approve");
        let a = call_ok(engine, 200, &envelope("POST", &path, None, Some(OPERATOR), Some(roomy())));
        (id, a["payload"]["api_key"].as_str().unwrap().to_owned())
    };
    (t.merchant, t.merchant_key) = merchant(&["PPD", "WEB"]);
    (t.second, _) = merchant(&["PPD"]);
    let c = customer_body(&t, "global", "918273645500");
    let c = call_ok(engine, 201, &envelope("POST", "/customers", None, Some(&t.key), Some(c)));
    t.customer = c["payload"]["id"].as_str().unwrap().to_owned();
    let id = |a: Answer| -> String {
        let a = a.unwrap();
        assert_eq!(status_of(&a), 201, "{a}");
        serde_json::from_str::<Value>(&a).unwrap()["body"]["payload"]["id"].as_str().unwrap().to_owned()
    };
    t.pending = id(debit(engine, &t, &t.merchant, "10.00"));
    t.early_pointer = pointer_now(engine, &t);
    t.last = id(debit(engine, &t, &t.merchant, "20.00"));
    t.pointer = pointer_now(engine, &t);
    let events = call_ok(engine, 200, &envelope("GET", "/events", None, Some(&t.merchant_key), None));
    t.events = events["new_pointer"].as_str().unwrap().to_owned();
    // Room for exactly one more debit of 1.00 today, for the merchant and overall.
    let path = format!("/admin/merchants/{}/limits", t.merchant);
    let limits = json!({"daily_count": 3, "daily_amount": "31.00"});
    call_ok(engine, 200, &envelope("POST", &path, None, Some(OPERATOR), Some(limits)));
    let path = format!("/admin/partners/{}/limits", t.id);
    call_ok(engine, 200, &envelope("POST", &path, None, Some(OPERATOR), Some(json!({"daily_count": 3}))));
    t
}

fn options(dir: &Path) -> String {
    json!({"path": dir.join("hostile.redb"), "operator_key": OPERATOR, "sandbox": true, "start": START})
        .to_string()
}

impl Fixture {
    fn new() -> Fixture {
        let dir = std::env::temp_dir().join(format!(
            "ach-ffi-hostile-{}-{}",
            std::process::id(),
            ach_core::ids::random_alphanumeric(8)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let engine = open(&options(&dir)).unwrap();
        let a = tenant(engine);
        let b = tenant(engine);
        Fixture { engine, a, b, dir }
    }

    /// Neither partner's feeds moved (read through the same handle: it still
    /// answers normal requests).
    fn assert_nothing_stored(&self, name: &str) {
        for t in [&self.a, &self.b] {
            let path = format!("/status-changes/{}", t.pointer);
            let page = call_ok(self.engine, 200, &envelope("GET", &path, Some(&t.query), Some(&t.key), None));
            assert_eq!(page["payload"]["changes"], json!([]), "{name}: the status-changes feed moved");
            let path = format!("/events/{}", t.events);
            let events =
                call_ok(self.engine, 200, &envelope("GET", &path, None, Some(&t.merchant_key), None));
            assert_eq!(events["events"], json!([]), "{name}: the events feed moved");
        }
    }

    /// Each partner can make exactly one more 1.00 debit; then message 22 (the
    /// merchant's daily count), then 24 (the partner's overall daily count).
    fn assert_counters_unchanged(&self) {
        for t in [&self.a, &self.b] {
            assert_eq!(status_of(&debit(self.engine, t, &t.merchant, "1.00").unwrap()), 201);
            let again = debit(self.engine, t, &t.merchant, "1.00").unwrap();
            assert!(again.contains(r#""error_code":22"#), "{again}");
            let other = debit(self.engine, t, &t.second, "1.00").unwrap();
            assert!(other.contains(r#""error_code":24"#), "{other}");
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        ach_engine_close(self.engine);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ---------------------------------------------------------------------------
// Rows

#[derive(Debug, Clone)]
enum Expect {
    /// This code; the detail contains the text.
    Code(AchResult, &'static str),
    /// `ACH_OK`, exactly 401 `{"success":false,"message":"Authentication failed."}`.
    Auth,
    /// `ACH_OK`, 401 `Authentication failed.` naming `partner_id`: a right partner
    /// key without it.
    PartnerIdMissing,
    /// `ACH_OK`, this status, catalogue code, and first field problem.
    Refused(u16, u16, &'static str, &'static str),
    /// `ACH_OK` and some refusal (400 to 422, 401 included) with a catalogue message.
    Any,
}
use Expect::{Any, Auth, Code, PartnerIdMissing, Refused};

struct Row {
    name: String,
    envelope: Vec<u8>,
    expect: Expect,
}

fn row(name: impl Into<String>, envelope: impl Into<Vec<u8>>, expect: Expect) -> Row {
    Row { name: name.into(), envelope: envelope.into(), expect }
}

/// Whether `message` is catalogue message `code`, its placeholder filled with anything.
fn is_catalogue_message(code: u64, message: &str) -> bool {
    let placeholders = [
        "txn_0000000000000000000000",
        "mer_x",
        "123456789",
        "****1234",
        "011000015",
        "1001",
        "abc",
        "BOC",
        "TEL",
        "5,000.00",
        "10,000.00",
    ];
    catalogue_samples().iter().filter(|e| u64::from(e.code()) == code).any(|e| {
        let sample = e.to_string();
        match placeholders.iter().find_map(|p| sample.split_once(p)) {
            None => message == sample,
            Some((before, after)) => {
                message.len() >= before.len() + after.len()
                    && message.starts_with(before)
                    && message.ends_with(after)
            }
        }
    })
}

impl Fixture {
    fn run(&self, r: &Row) {
        let name = r.name.as_str();
        let got = request_bytes(self.engine, &r.envelope);
        match (&r.expect, &got) {
            (Code(code, detail), Err((got_code, got_detail))) => {
                assert_eq!(got_code, code, "{name}: {got_detail}");
                assert!(got_detail.contains(detail), "{name}: {got_detail:?} lacks {detail:?}");
                assert!(got_detail.len() < 1024, "{name}: a {}-byte detail", got_detail.len());
            }
            (Code(..), Ok(answer)) => panic!("{name}: ACH_OK {answer:.300}"),
            (_, Err(e)) => panic!("{name}: {e:?}"),
            (expect, Ok(answer)) => {
                let v: Value = serde_json::from_str(answer).unwrap();
                let (status, body) = (v["status"].as_u64().unwrap() as u16, &v["body"]);
                assert!(answer.len() <= 16 * 1024 + 64, "{name}: a {}-byte answer", answer.len());
                assert_eq!(body["success"], json!(false), "{name}: {answer:.300}");
                if matches!(expect, PartnerIdMissing) {
                    let exact = json!({"success": false, "message": "Authentication failed.", "errors": [
                        {"field": "partner_id", "code": "required",
                         "message": "partner_id is required with this key: send it in the body or in the query string"}]});
                    assert_eq!((status, body), (401, &exact), "{name}");
                } else if status == 401 || matches!(expect, Auth) {
                    let exact = json!({"success": false, "message": "Authentication failed."});
                    assert_eq!((status, body), (401, &exact), "{name}");
                } else {
                    let code = body["error_code"].as_u64().unwrap_or_else(|| panic!("{name}: {body}"));
                    let message = body["message"].as_str().unwrap();
                    assert!(is_catalogue_message(code, message), "{name}: {message:?} is not message {code}");
                    assert_eq!(body["error_type"], json!("E"), "{name}");
                    let first = &body["errors"][0];
                    let text = |x: &Value| x.as_str().unwrap_or_default().to_owned();
                    match expect {
                        Refused(s, c, field, problem) => assert_eq!(
                            (status, code as u16, text(&first["field"]), text(&first["code"])),
                            (*s, *c, field.to_string(), problem.to_string()),
                            "{name}: {answer:.300}"
                        ),
                        _ => assert!((400..=422).contains(&status), "{name}: {answer:.300}"),
                    }
                }
                // The C ABI answers what the router answers, byte for byte.
                let engine = ach::engine::shared_engine(self.engine).unwrap();
                let text = std::str::from_utf8(&r.envelope).unwrap();
                assert_eq!(&route_json(&engine, text), answer, "{name}: route_json differs");
            }
        }
        self.assert_nothing_stored(name);
    }

    fn post(&self, path: &str, key: &str, body: Value) -> String {
        envelope("POST", path, None, Some(key), Some(body))
    }
}

/// A JSON text with the string `"@@"` replaced by a raw literal (a number JSON
/// values cannot hold exactly, like a 400-digit one).
fn with_literal(v: &Value, path: &str, literal: &str) -> Value {
    let mut v = v.clone();
    set(&mut v, path, json!("@@"));
    let text = v.to_string().replace("\"@@\"", literal);
    serde_json::from_str(&text).unwrap()
}

fn nested(depth: usize, objects: bool) -> String {
    if objects {
        nested_objects(depth)
    } else {
        nested_arrays(depth)
    }
}

fn structure_rows(f: &Fixture) -> Vec<Row> {
    let a = &f.a;
    let mut rows = Vec::new();
    let void = format!("/transactions/{}/void", a.pending);
    let reverse = format!("/transactions/{}/reverse", a.pending);
    let delete = format!("/customers/{}", a.customer);
    let approve = format!("/admin/merchants/{}/approve", a.merchant);
    let limits = format!("/admin/merchants/{}/limits", a.merchant);
    let endpoints: Vec<(&str, &str, &str)> = vec![
        ("POST", "/transactions", &a.key),
        ("POST", "/customers", &a.key),
        ("POST", "/merchants", &a.key),
        ("PUT", &void, &a.key),
        ("PUT", &reverse, &a.key),
        ("DELETE", &delete, &a.key),
        ("GET", "/status-changes/0", &a.key),
        ("GET", "/events", &a.merchant_key),
        ("GET", "/institutions/021000021", &a.key),
        ("GET", "/categories", &a.key),
        ("POST", "/admin/partners", OPERATOR),
        ("POST", "/admin/routing", OPERATOR),
        ("POST", "/admin/returns", OPERATOR),
        ("POST", "/admin/clock", OPERATOR),
        ("POST", &approve, OPERATOR),
        ("POST", &limits, OPERATOR),
    ];
    let huge = " ".repeat(10 * MB);
    for objects in [false, true] {
        let text = nested(100_000, objects);
        for (method, path, key) in &endpoints {
            if method == &"GET" && !path.starts_with("/status-changes") {
                continue; // a GET that takes no partner_id ignores its body (200)
            }
            let e = envelope(method, path, Some(&a.query), Some(key), Some(json!(text)));
            // Only the endpoints that take large bodies read one this size (200 KB,
            // 600 KB); the others refuse it on its size (413).
            let large = *path == "/transactions" || *path == "/merchants";
            let expect = if path.starts_with("/admin") || method == &"GET" || method == &"DELETE" {
                Any
            } else if large {
                Refused(400, 10, "", "invalid_json")
            } else {
                Refused(413, 10, "", "over_limit")
            };
            rows.push(row(format!("100,000 nested (objects {objects}) at {method} {path}"), e, expect));
        }
    }
    for (method, path, key) in &endpoints {
        let e = envelope(method, path, Some(&a.query), Some(key), Some(json!(huge)));
        rows.push(row(format!("10 MB body at {method} {path}"), e, Refused(413, 10, "", "over_limit")));
    }
    let e = envelope("POST", "/transactions", None, None, Some(json!(huge)));
    rows.push(row("10 MB body without a key", e, Refused(413, 10, "", "over_limit")));
    let q = format!("partner_id={}&customer{}=1", a.id, "[a]".repeat(100_000));
    rows.push(row(
        "query nested 100,000 levels",
        envelope("POST", "/transactions", Some(&q), Some(&a.key), None),
        Refused(400, 10, "", "invalid_json"),
    ));
    // The envelope itself, nested: well-formed JSON of the wrong shape.
    for objects in [false, true] {
        let text = nested(100_000, objects);
        rows.push(row(
            format!("an envelope nested 100,000 (objects {objects})"),
            text.clone(),
            Code(AchResult::ACH_INVALID_ARGUMENT, "request_json"),
        ));
        let e = format!(r#"{{"method":"POST","path":"/transactions","api_key":"{}","body":{text}}}"#, a.key);
        rows.push(row(
            format!("a body member nested 100,000 (objects {objects})"),
            e,
            Code(AchResult::ACH_INVALID_ARGUMENT, "recursion limit exceeded"),
        ));
    }
    rows
}

fn c_rows(f: &Fixture) -> Vec<Row> {
    let a = &f.a;
    let mut rows = Vec::new();
    // An envelope cut by a NUL at every byte: a strict prefix of a JSON object
    // is never JSON.
    let whole = f.post("/transactions", &a.key, transaction(a, &a.merchant, "1.00"));
    for at in 0..whole.len() {
        let mut bytes = whole.clone().into_bytes();
        bytes[at] = 0;
        rows.push(row(
            format!("a NUL at byte {at}"),
            bytes,
            Code(AchResult::ACH_INVALID_JSON, "request_json"),
        ));
    }
    // Invalid UTF-8 at every byte (the bytes up to it are valid).
    for (at, bad) in (0..whole.len())
        .step_by(7)
        .zip([&b"\xff"[..], b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82"].iter().cycle())
    {
        let mut bytes = whole.clone().into_bytes();
        bytes.splice(at..at + 1, bad.iter().copied());
        rows.push(row(
            format!("invalid UTF-8 {bad:x?} at byte {at}"),
            bytes,
            Code(AchResult::ACH_INVALID_UTF8, "request_json is not valid UTF-8 (bad byte at offset "),
        ));
    }
    for text in ["", " ", "null", "\"GET\"", "1", "{}", r#"{"method":"GET"}"#, r#"{"path":"/"}"#] {
        let expect = if text.trim().is_empty() {
            AchResult::ACH_INVALID_JSON
        } else {
            AchResult::ACH_INVALID_ARGUMENT
        };
        rows.push(row(format!("envelope {text:?}"), text, Code(expect, "request_json")));
    }
    rows
}

fn value_rows(f: &Fixture) -> Vec<Row> {
    let a = &f.a;
    let digits = "9".repeat(400);
    let mut rows = Vec::new();
    let t = transaction(a, &a.merchant, "1.00");
    let check = check_transaction(a, &a.merchant);
    for literal in
        [digits.as_str(), &format!("0.{}", "0".repeat(399)), "1e400", "-0", "-0.00", "-0e0", "-0.0e-0"]
    {
        for (path, expect) in [
            ("amount", Refused(422, 14, "amount", "invalid_amount")),
            ("check_number", Refused(422, 10, "check_number", "invalid_format")),
            ("customer/routing_number", Any),
            ("customer/account_number", Any),
        ] {
            // The check number in a class that reads it (a PPD ignores its own).
            let body = with_literal(if path == "check_number" { &check } else { &t }, path, literal);
            rows.push(row(
                format!("{path} = {literal:.12}"),
                f.post("/transactions", &a.key, body),
                expect.clone(),
            ));
        }
        let body = with_literal(&t, "amount", &format!("\"{literal}\""));
        rows.push(row(
            format!("amount = \"{literal:.12}\""),
            f.post("/transactions", &a.key, body),
            Refused(422, 14, "amount", "invalid_amount"),
        ));
        let app = application(&a.id, &["PPD"]);
        let mut numbers = Vec::new();
        leaves(&app, "", &mut numbers);
        for path in numbers.iter().filter(|p| app.pointer(&format!("/{p}")).is_some_and(Value::is_number)) {
            let body = with_literal(&app, path, literal);
            rows.push(row(
                format!("merchant {path} = {literal:.12}"),
                f.post("/merchants", &a.key, body),
                Any,
            ));
        }
        for (path, member) in [
            (format!("/admin/partners/{}/limits", a.id), "daily_count"),
            (format!("/admin/merchants/{}/limits", a.merchant), "max_transaction_amount"),
            (format!("/admin/merchants/{}/limits", a.merchant), "period_days"),
            (format!("/admin/merchants/{}/approve", a.second), "limits"),
        ] {
            let body = serde_json::from_str(&format!("{{\"{member}\":{literal}}}")).unwrap();
            rows.push(row(format!("{member} = {literal:.12}"), f.post(&path, OPERATOR, body), Any));
        }
    }
    // Look-alikes in every id.
    for (name, id) in [("Cyrillic", cyrillic(&a.merchant)), ("fullwidth", fullwidth(&a.merchant))] {
        let mut body = t.clone();
        body["merchant_id"] = json!(id);
        rows.push(row(
            format!("merchant id in {name}"),
            f.post("/transactions", &a.key, body),
            Refused(422, 11, "merchant_id", "invalid_format"),
        ));
        let mut c = customer_body(a, &id, "918273645501");
        c["merchant_id"] = json!(id);
        rows.push(row(format!("customer scope in {name}"), f.post("/customers", &a.key, c), Any));
    }
    for (name, id) in [("Cyrillic", cyrillic(&a.id)), ("fullwidth", fullwidth(&a.id))] {
        let mut body = t.clone();
        body["partner_id"] = json!(id);
        rows.push(row(format!("partner id in {name}"), f.post("/transactions", &a.key, body), Auth));
        let q = format!("partner_id={id}");
        let e = envelope("GET", "/status-changes/0", Some(&q), Some(&a.key), None);
        rows.push(row(format!("query partner id in {name}"), e, Auth));
    }
    for (name, id) in [("Cyrillic", cyrillic(&a.pending)), ("fullwidth", fullwidth(&a.pending))] {
        for verb in ["void", "reverse"] {
            let e =
                envelope("PUT", &format!("/transactions/{id}/{verb}"), Some(&a.query), Some(&a.key), None);
            rows.push(row(format!("{verb} {name}"), e, Refused(404, 10, "transaction_id", "not_found")));
        }
    }
    for (name, id) in [("Cyrillic", cyrillic(&a.customer)), ("fullwidth", fullwidth(&a.customer))] {
        let e = envelope("DELETE", &format!("/customers/{id}"), Some(&a.query), Some(&a.key), None);
        rows.push(row(format!("delete customer {name}"), e, Refused(404, 10, "customer_id", "not_found")));
        let mut body = t.clone();
        body["customer"] = json!({"id": id});
        rows.push(row(format!("customer token {name}"), f.post("/transactions", &a.key, body), Any));
    }
    for key in [cyrillic(&a.key), fullwidth(&a.key), cyrillic(&a.merchant_key), cyrillic(OPERATOR)] {
        let e = envelope("GET", "/status-changes/0", Some(&a.query), Some(&key), None);
        rows.push(row(format!("key {key:.12} look-alike"), e, Auth));
    }
    rows
}

fn size_rows(f: &Fixture) -> Vec<Row> {
    let a = &f.a;
    let big = "9".repeat(MB);
    let mut rows = Vec::new();
    let t = check_transaction(a, &a.merchant);
    for (path, body) in [
        ("/transactions", t),
        ("/customers", customer_body(a, "global", "918273645599")),
        ("/merchants", application(&a.id, &["PPD", "WEB"])),
    ] {
        let mut fields = Vec::new();
        leaves(&body, "", &mut fields);
        for field in fields {
            let mut v = body.clone();
            set(&mut v, &field, json!(big));
            // `/customers` takes no large body: 413 before its partner_id is read.
            let expect = if field == "partner_id" && path != "/customers" { Auth } else { Any };
            rows.push(row(format!("1 MB in {path} {field}"), f.post(path, &a.key, v), expect));
        }
    }
    let e = |path: &str, key: &str| envelope("GET", path, Some(&a.query), Some(key), None);
    rows.push(row("1 MB API key", e("/categories", &big), Auth));
    rows.push(row(
        "1 MB pointer",
        e(&format!("/status-changes/{big}"), &a.key),
        Refused(422, 10, "pointer", "invalid_value"),
    ));
    rows.push(row(
        "1 MB events pointer",
        e(&format!("/events/{big}"), &a.merchant_key),
        Refused(422, 10, "pointer", "invalid_value"),
    ));
    rows.push(row("1 MB path", e(&format!("/{big}"), &a.key), Refused(404, 10, "path", "not_found")));
    let e = envelope("POST", "/transactions", Some(&big), Some(&a.key), None);
    rows.push(row("1 MB query", e, PartnerIdMissing));
    rows
}

fn tenancy_rows(f: &Fixture) -> Vec<Row> {
    let (a, b) = (&f.a, &f.b);
    let mut rows = Vec::new();
    let bad = Refused(422, 10, "pointer", "invalid_value");
    // Every one-character forgery of the status pointer and of the events pointer.
    const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (pointer, path, key, query) in [
        (&a.pointer, "/status-changes/", &a.key, Some(a.query.as_str())),
        (&a.events, "/events/", &a.merchant_key, None),
    ] {
        for at in 0..pointer.len() {
            let mut forged = pointer.clone().into_bytes();
            let now = ALPHABET.find(forged[at] as char).unwrap_or(0);
            forged[at] = ALPHABET.as_bytes()[(now + 1 + at) % 64];
            let forged = String::from_utf8(forged).unwrap();
            if forged == *pointer {
                continue;
            }
            let e = envelope("GET", &format!("{path}{forged}"), query, Some(key), None);
            rows.push(row(format!("{path} pointer forged at {at}"), e, bad.clone()));
        }
    }
    for (name, path, key, query) in [
        ("A's status pointer with B's key", format!("/status-changes/{}", a.pointer), &b.key, Some(&b.query)),
        ("A's events pointer with B's merchant key", format!("/events/{}", a.events), &b.merchant_key, None),
        (
            "an events pointer as a status pointer",
            format!("/status-changes/{}", a.events),
            &a.key,
            Some(&a.query),
        ),
        ("a status pointer as an events pointer", format!("/events/{}", a.pointer), &a.merchant_key, None),
    ] {
        rows.push(row(name, envelope("GET", &path, query.map(String::as_str), Some(key), None), bad.clone()));
    }
    // B naming A's resources; every key but A's on A's partner id.
    let not_found = |field| Refused(404, 10, field, "not_found");
    for verb in ["void", "reverse"] {
        let e = envelope(
            "PUT",
            &format!("/transactions/{}/{verb}", a.pending),
            Some(&b.query),
            Some(&b.key),
            None,
        );
        rows.push(row(format!("B {verb}s A's transaction"), e, not_found("transaction_id")));
    }
    let e = envelope("DELETE", &format!("/customers/{}", a.customer), Some(&b.query), Some(&b.key), None);
    rows.push(row("B deletes A's customer", e, not_found("customer_id")));
    rows.push(row(
        "B pays with A's merchant",
        f.post("/transactions", &b.key, transaction(b, &a.merchant, "1.00")),
        Refused(422, 11, "merchant_id", "not_found"),
    ));
    let mut t = transaction(b, &b.merchant, "1.00");
    t["customer"] = json!({"id": a.customer});
    rows.push(row("B pays with A's customer", f.post("/transactions", &b.key, t), Any));
    for key in [&b.key, &a.merchant_key, &b.merchant_key, &OPERATOR.to_owned()] {
        for (method, path, body) in [
            ("POST", "/transactions".to_owned(), Some(transaction(a, &a.merchant, "1.00"))),
            ("POST", "/customers".to_owned(), Some(customer_body(a, "global", "918273645597"))),
            ("POST", "/merchants".to_owned(), Some(application(&a.id, &["PPD"]))),
            ("PUT", format!("/transactions/{}/void", a.pending), None),
            ("DELETE", format!("/customers/{}", a.customer), None),
            ("GET", format!("/status-changes/{}", a.early_pointer), None),
        ] {
            let e = envelope(method, &path, Some(&a.query), Some(key), body);
            rows.push(row(format!("key {key:.8} on A's {method} {path:.30}"), e, Auth));
        }
    }
    rows
}

#[test]
fn hostile_input_through_the_c_abi_is_refused_clearly_and_stores_nothing() {
    let f = Fixture::new();
    let mut rows = structure_rows(&f);
    rows.extend(c_rows(&f));
    rows.extend(value_rows(&f));
    rows.extend(size_rows(&f));
    rows.extend(tenancy_rows(&f));
    assert!(rows.len() > 700, "{} rows", rows.len());
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.run(r))).is_err())
        .map(|r| r.name.as_str())
        .collect();
    assert!(failed.is_empty(), "{} of {} rows failed: {failed:#?}", failed.len(), rows.len());

    // Reopened from the file: nothing was stored, the counters did not move.
    ach_engine_close(f.engine);
    let reopened = Fixture {
        engine: open(&options(&f.dir)).unwrap(),
        a: f.a.clone(),
        b: f.b.clone(),
        dir: f.dir.clone(),
    };
    std::mem::forget(f); // the directory now belongs to `reopened`
    reopened.assert_nothing_stored("reopened");
    reopened.assert_counters_unchanged();
}

#[test]
fn null_pointers_and_forged_handles_answer_codes() {
    let f = Fixture::new();
    let get = CString::new(r#"{"method":"GET","path":"/categories"}"#).unwrap();
    let mut out = AchBuffer::default();
    let mut engine = std::ptr::null_mut();
    let null = std::ptr::null_mut::<AchEngine>();
    // SAFETY: NULL is allowed for every pointer argument (it answers a code).
    unsafe {
        assert_eq!(ach_engine_request(null, get.as_ptr(), &mut out), AchResult::ACH_NULL_POINTER);
        assert_eq!(ach_engine_request(f.engine, std::ptr::null(), &mut out), AchResult::ACH_NULL_POINTER);
        assert_eq!(
            ach_engine_request(f.engine, get.as_ptr(), std::ptr::null_mut()),
            AchResult::ACH_NULL_POINTER
        );
        assert_eq!(ach_engine_open(std::ptr::null(), &mut engine), AchResult::ACH_NULL_POINTER);
        assert_eq!(ach_engine_open(c"{}".as_ptr(), std::ptr::null_mut()), AchResult::ACH_NULL_POINTER);
        assert_eq!(ach_validate(std::ptr::null(), c"{}".as_ptr(), &mut out), AchResult::ACH_NULL_POINTER);
        assert_eq!(
            ach_validate(c"merchant".as_ptr(), std::ptr::null(), &mut out),
            AchResult::ACH_NULL_POINTER
        );
        assert_eq!(
            ach_validate(c"merchant".as_ptr(), c"{}".as_ptr(), std::ptr::null_mut()),
            AchResult::ACH_NULL_POINTER
        );
        assert_eq!(
            ach_validate_bytes(c"merchant".as_ptr(), std::ptr::null(), usize::MAX, &mut out),
            AchResult::ACH_NULL_POINTER
        );
        assert_eq!(
            ach_validate_bytes(std::ptr::null(), std::ptr::null(), 0, &mut out),
            AchResult::ACH_NULL_POINTER
        );
        assert_eq!(ach_last_error(std::ptr::null_mut()), AchResult::ACH_NULL_POINTER);
        ach::ach_buffer_release(std::ptr::null_mut());
    }
    assert!(out.data.is_null() && engine.is_null(), "nothing written on failure");
    ach_engine_close(null);

    // Forged handles: values no engine of this process has (other tests open
    // engines meanwhile, so nothing near the real handle's id), and closed ones.
    let real = f.engine.addr();
    let mut forged: Vec<usize> =
        vec![1, 0xAC, usize::MAX, usize::MAX & !0xFF | 0xAC, 1 << 63 | 0xAC, real + 1, real - 1];
    forged.extend((0..2000usize).map(|k| ((1 << 30) + k) << 8 | 0xAC));
    forged.extend((0..8).chain(40..64).map(|bit| real ^ (1usize << bit)));
    for _ in 0..20 {
        let e = open("{}").unwrap();
        ach_engine_close(e);
        forged.push(e.addr());
    }
    let on_stack = 0u64;
    forged.push(std::ptr::from_ref(&on_stack).addr());
    forged.push(Box::into_raw(Box::new(0u64)).addr()); // leaked on purpose: a live heap address
    for h in forged {
        let handle: *mut AchEngine = std::ptr::without_provenance_mut(h);
        let answer = request(handle, r#"{"method":"GET","path":"/categories"}"#);
        let code = answer.as_ref().map_err(|e| e.0).err();
        assert!(
            matches!(code, Some(AchResult::ACH_UNKNOWN_HANDLE | AchResult::ACH_CLOSED)),
            "{h:#x}: {answer:?}"
        );
        ach_engine_close(handle);
    }
    f.assert_nothing_stored("forged handles");
    assert_eq!(
        status_of(&request(f.engine, &envelope("GET", "/categories", None, Some(&f.a.key), None)).unwrap()),
        200
    );
}

#[test]
fn threads_closing_a_handle_while_others_send_hostile_requests() {
    let f = Fixture::new();
    let (a, b) = (&f.a, &f.b);
    // (envelope, code while open, status when ACH_OK)
    let probes: Arc<Vec<(Vec<u8>, AchResult, u16)>> = Arc::new(vec![
        (f.post("/transactions", &a.key, json!("[".repeat(100_000))).into_bytes(), AchResult::ACH_OK, 400),
        (b"{\"method\":\"GET\",\"path\":\"/\xff\"}".to_vec(), AchResult::ACH_INVALID_UTF8, 0),
        (
            f.post("/transactions", &b.key, transaction(a, &a.merchant, "1.00")).into_bytes(),
            AchResult::ACH_OK,
            401,
        ),
        (
            f.post(
                "/transactions",
                &a.key,
                with_literal(&transaction(a, &a.merchant, "1.00"), "amount", "-0"),
            )
            .into_bytes(),
            AchResult::ACH_OK,
            422,
        ),
        (
            envelope("PUT", &format!("/transactions/{}/void", a.pending), Some(&b.query), Some(&b.key), None)
                .into_bytes(),
            AchResult::ACH_OK,
            404,
        ),
        (b"{\"method\":\"GET\",\"path\"".to_vec(), AchResult::ACH_INVALID_JSON, 0),
        (
            envelope("GET", &format!("/status-changes/{}A", a.pointer), Some(&a.query), Some(&a.key), None)
                .into_bytes(),
            AchResult::ACH_OK,
            422,
        ),
    ]);
    let handle = f.engine.addr();
    let rounds = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..6)
        .map(|i| {
            let (probes, rounds) = (Arc::clone(&probes), Arc::clone(&rounds));
            std::thread::spawn(move || {
                let engine: *mut AchEngine = std::ptr::without_provenance_mut(handle);
                let (mut closed, mut n) = (0, i);
                while closed < 3 {
                    let (e, code, status) = &probes[n % probes.len()];
                    match request_bytes(engine, e) {
                        Err((AchResult::ACH_CLOSED, detail)) => {
                            assert!(detail.contains("was closed"), "{detail}");
                            closed += 1;
                        }
                        _ if closed > 0 => panic!("an answer after ACH_CLOSED"),
                        Ok(answer) => assert_eq!((*code, status_of(&answer)), (AchResult::ACH_OK, *status)),
                        Err((got, detail)) => {
                            assert_eq!(got, *code, "{detail}");
                            // This thread's own detail, never another's.
                            let own =
                                if got == AchResult::ACH_INVALID_UTF8 { "UTF-8" } else { "request_json" };
                            assert!(detail.contains(own), "{detail}");
                        }
                    }
                    n += 1;
                    if n == i + probes.len() {
                        rounds.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    // Others open and close engines of their own meanwhile (the registry churns).
    let churn: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..50 {
                    let e = open("{}").unwrap();
                    assert!(request(e, r#"{"method":"GET","path":"/categories"}"#).is_ok());
                    ach_engine_close(e);
                    assert!(matches!(request(e, "{}"), Err((AchResult::ACH_CLOSED, _))));
                }
            })
        })
        .collect();
    while rounds.load(Ordering::SeqCst) < 6 {
        std::thread::yield_now();
    }
    let closers: Vec<_> = (0..3)
        .map(|_| std::thread::spawn(move || ach_engine_close(std::ptr::without_provenance_mut(handle))))
        .collect();
    for t in closers.into_iter().chain(workers).chain(churn) {
        t.join().unwrap();
    }
    // Reopen the file: nothing of it was stored, and normal requests work.
    let reopened = Fixture {
        engine: open(&options(&f.dir)).unwrap(),
        a: f.a.clone(),
        b: f.b.clone(),
        dir: f.dir.clone(),
    };
    std::mem::forget(f);
    reopened.assert_nothing_stored("after the threads");
    reopened.assert_counters_unchanged();
}
