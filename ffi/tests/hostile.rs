//! Hostile input through the C ABI, called from Rust exactly as C calls it: a
//! NUL-terminated envelope into `ach_engine_request`, an `AchBuffer` out, freed
//! with `ach_buffer_free`; the detail of a failure read back with
//! `ach_last_error`.
//!
//! Every case of the shared corpus `tests/hostile/*.json` (as the host `c`: its
//! body passed as a string member of the envelope), judged by
//! `ach_tests::hostile::check` and compared byte for byte with what
//! `api::route_json` answers (the C program `tests/c/hostile.c`, under
//! valgrind, still has its own smaller table). Then what only the ABI has: envelopes nested 100,000
//! deep, cut short at every byte by a NUL, with invalid UTF-8, of the wrong
//! shape; every one-character forgery of a feed pointer; NULL for every pointer
//! argument and thousands of forged handles; threads that close a handle (three
//! at once) while others send hostile requests and still others open and close
//! engines.
//!
//! After every row neither partner's status-changes feed nor either merchant's
//! events feed moved; at the end the database file is reopened, the feeds still
//! have not moved, and the usage counters are where the set-up left them.
#![allow(clippy::unwrap_used)]

mod support;

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ach::{
    ach_buffer_free, ach_engine_close, ach_engine_open, ach_engine_request, ach_last_error, ach_validate,
    ach_validate_bytes, AchBuffer, AchEngine, AchResult,
};
use ach_core::api::route_json;
use ach_tests::hostile::{check, corpus, never_issued, Case, Side, Values};
use ach_tests::json_paths::{nested_arrays, nested_objects, set};
use serde_json::{json, Value};
use support::open;

const OPERATOR: &str = "ok_ffi_hostile_operator_key_0123456789";
const START: &str = "2026-11-23T10:00:00-05:00";

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

/// One partner of the fixture: what it owns, and its `partner_id=` query.
#[derive(Default, Clone)]
struct Tenant {
    side: Side,
    query: String,
}

impl Tenant {
    /// An envelope without a body from this partner, its `partner_id` in the query.
    fn bodiless(&self, method: &str, path: &str) -> String {
        envelope(method, path, Some(&self.query), Some(&self.side.key), None)
    }
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
    json!({"partner_id": t.side.id, "merchant_id": merchant, "amount": amount, "description": "ffi hostile",
           "type": "debit", "standard_entry_class": "PPD",
           "customer": {"name": "Ada Lovelace", "routing_number": "021000021",
                        "account_number": "987654321", "account_type": "checking"}})
}

fn customer_body(t: &Tenant, scope: &str, account: &str) -> Value {
    json!({"partner_id": t.side.id, "merchant_id": scope, "name": "Grace Hopper", "routing_number": "026009593",
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
    let page = call_ok(engine, 200, &t.bodiless("GET", "/status-changes/0"));
    page["payload"]["new_pointer"].as_str().unwrap().to_owned()
}

fn debit(engine: *mut AchEngine, t: &Tenant, merchant: &str, amount: &str) -> Answer {
    let body = transaction(t, merchant, amount);
    request(engine, &envelope("POST", "/transactions", None, Some(&t.side.key), Some(body)))
}

fn tenant(engine: *mut AchEngine) -> Tenant {
    let mut t = Tenant::default();
    let p = call_ok(
        engine,
        201,
        &envelope("POST", "/admin/partners", None, Some(OPERATOR), Some(json!({"name": "Hostile"}))),
    );
    t.side.id = p["payload"]["partner_id"].as_str().unwrap().to_owned();
    t.side.key = p["payload"]["api_key"].as_str().unwrap().to_owned();
    t.query = format!("partner_id={}", t.side.id);
    let merchant = |classes: &[&str]| {
        let m = call_ok(
            engine,
            201,
            &envelope("POST", "/merchants", None, Some(&t.side.key), Some(application(&t.side.id, classes))),
        );
        let id = m["id"].as_str().unwrap().to_owned();
        let path = format!("/admin/merchants/{id}/approve");
        let a = call_ok(engine, 200, &envelope("POST", &path, None, Some(OPERATOR), Some(roomy())));
        (id, a["payload"]["api_key"].as_str().unwrap().to_owned())
    };
    (t.side.merchant, t.side.merchant_key) = merchant(&["PPD", "WEB"]);
    (t.side.second, _) = merchant(&["PPD"]);
    let c = customer_body(&t, "global", "918273645500");
    let c = call_ok(engine, 201, &envelope("POST", "/customers", None, Some(&t.side.key), Some(c)));
    t.side.customer = c["payload"]["id"].as_str().unwrap().to_owned();
    let id = |a: Answer| -> String {
        let a = a.unwrap();
        assert_eq!(status_of(&a), 201, "{a}");
        serde_json::from_str::<Value>(&a).unwrap()["body"]["payload"]["id"].as_str().unwrap().to_owned()
    };
    t.side.pending = id(debit(engine, &t, &t.side.merchant, "10.00"));
    t.side.early_pointer = pointer_now(engine, &t);
    t.side.last = Some(id(debit(engine, &t, &t.side.merchant, "20.00")));
    t.side.pointer = pointer_now(engine, &t);
    let events = call_ok(engine, 200, &envelope("GET", "/events", None, Some(&t.side.merchant_key), None));
    t.side.events = events["new_pointer"].as_str().unwrap().to_owned();
    // Room for exactly one more debit of 1.00 today, for the merchant and overall.
    let path = format!("/admin/merchants/{}/limits", t.side.merchant);
    let limits = json!({"daily_count": 3, "daily_amount": "31.00"});
    call_ok(engine, 200, &envelope("POST", &path, None, Some(OPERATOR), Some(limits)));
    let path = format!("/admin/partners/{}/limits", t.side.id);
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
            let path = format!("/status-changes/{}", t.side.pointer);
            let page = call_ok(self.engine, 200, &t.bodiless("GET", &path));
            assert_eq!(page["payload"]["changes"], json!([]), "{name}: the status-changes feed moved");
            let path = format!("/events/{}", t.side.events);
            let events =
                call_ok(self.engine, 200, &envelope("GET", &path, None, Some(&t.side.merchant_key), None));
            assert_eq!(events["events"], json!([]), "{name}: the events feed moved");
        }
    }

    /// Each partner can make exactly one more 1.00 debit; then message 22 (the
    /// merchant's daily count), then 24 (the partner's overall daily count).
    fn assert_counters_unchanged(&self) {
        for t in [&self.a, &self.b] {
            assert_eq!(status_of(&debit(self.engine, t, &t.side.merchant, "1.00").unwrap()), 201);
            let again = debit(self.engine, t, &t.side.merchant, "1.00").unwrap();
            assert!(again.contains(r#""error_code":22"#), "{again}");
            let other = debit(self.engine, t, &t.side.second, "1.00").unwrap();
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
// Rows: the shared corpus (tests/hostile/*.json), and what only the C ABI has

#[derive(Debug, Clone)]
enum Expect {
    /// This code; the detail contains the text.
    Code(AchResult, String),
    /// `ACH_OK` and an answer as `ach_tests::hostile::check` judges it (or, with
    /// `result`, a code and a part of its detail).
    Judged(Value),
}
use Expect::{Code, Judged};

struct Row {
    name: String,
    envelope: Vec<u8>,
    expect: Expect,
    /// The fixture value whose never-issued twin must be answered alike.
    like_unknown: Option<String>,
}

fn row(name: impl Into<String>, envelope: impl Into<Vec<u8>>, expect: Expect) -> Row {
    Row { name: name.into(), envelope: envelope.into(), expect, like_unknown: None }
}

/// The C ABI's result codes by name, as the corpus writes them.
fn result_named(name: &str) -> AchResult {
    [AchResult::ACH_INVALID_UTF8, AchResult::ACH_INVALID_JSON, AchResult::ACH_INVALID_ARGUMENT]
        .into_iter()
        .find(|r| format!("{r:?}") == name)
        .unwrap_or_else(|| panic!("no result code {name}"))
}

/// A JSON string of these bytes, escaped as JSON escapes text; bytes that are not
/// UTF-8 are written as they are (as a C host with such a body would).
fn json_string_of(bytes: &[u8]) -> Vec<u8> {
    let mut out = b"\"".to_vec();
    for chunk in bytes.utf8_chunks() {
        let text = serde_json::to_string(chunk.valid()).unwrap();
        out.extend_from_slice(&text.as_bytes()[1..text.len() - 1]);
        out.extend_from_slice(chunk.invalid());
    }
    out.push(b'"');
    out
}

/// A corpus case as a C host sends it: an envelope with the body as a string.
fn corpus_row(c: &Case, values: &Values) -> Row {
    let r = &c.request;
    let mut e = json!({"method": values.text(&r.method), "path": values.text(&r.path)});
    if let Some(k) = &r.key {
        e["api_key"] = json!(values.text(k));
    }
    if let Some(k) = &r.idempotency_key {
        e["idempotency_key"] = json!(values.text(k));
    }
    let mut envelope = e.to_string().into_bytes();
    if let Some(body) = &r.body {
        envelope.pop();
        envelope.extend_from_slice(b",\"body\":");
        envelope.extend(json_string_of(&values.expand(body)));
        envelope.push(b'}');
    }
    let expect = match c.expect["result"].as_str() {
        Some(name) => Code(result_named(name), c.expect["detail"].as_str().unwrap_or_default().to_owned()),
        None => Judged(c.expect.clone()),
    };
    Row { name: c.name.clone(), envelope, expect, like_unknown: c.like_unknown.clone() }
}

impl Fixture {
    fn values(&self) -> Values {
        self.b.side.values("b", self.a.side.values("a", Values::default().with("operator", OPERATOR)))
    }

    fn run(&self, r: &Row, values: &Values) -> Result<(), String> {
        let got = request_bytes(self.engine, &r.envelope);
        match (&r.expect, &got) {
            (Code(code, detail), Err((got_code, got_detail))) => {
                if got_code != code || !got_detail.contains(detail.as_str()) || got_detail.len() >= 1024 {
                    return Err(format!("{got_code:?} {got_detail:.300}, expected {code:?} {detail}"));
                }
            }
            (Code(..), Ok(answer)) => return Err(format!("ACH_OK {answer:.300}")),
            (Judged(_), Err(e)) => return Err(format!("{e:?}")),
            (Judged(expect), Ok(answer)) => {
                let v: Value = serde_json::from_str(answer).unwrap();
                let status = v["status"].as_u64().unwrap_or_default() as u16;
                check(expect, status, &v["body"].to_string(), values)?;
                // The C ABI answers what the router answers, byte for byte.
                let engine = ach::engine::shared_engine(self.engine).unwrap();
                let text = std::str::from_utf8(&r.envelope).unwrap();
                if &route_json(&engine, text) != answer {
                    return Err("route_json answers differently".into());
                }
                if let Some(name) = &r.like_unknown {
                    let real = &values.0[name];
                    let never = never_issued(real);
                    let other = request(self.engine, &text.replace(real.as_str(), &never));
                    if other.map(|a| a.replace(&never, real)).as_ref() != Ok(answer) {
                        return Err("answered unlike a never-issued id".into());
                    }
                }
            }
        }
        self.assert_nothing_stored(&r.name);
        Ok(())
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

/// What only an envelope can carry: itself or its body member nested 100,000
/// deep, cut by a NUL at every byte, invalid UTF-8 at every 7th byte, of the
/// wrong shape; and every one-character forgery of both feed pointers.
fn c_rows(f: &Fixture) -> Vec<Row> {
    let a = &f.a;
    let code = |c: AchResult, detail: &str| Code(c, detail.to_owned());
    let mut rows = Vec::new();
    for (shape, text) in [("arrays", nested_arrays(100_000)), ("objects", nested_objects(100_000))] {
        rows.push(row(
            format!("an envelope of 100,000 nested {shape}"),
            text.clone(),
            code(AchResult::ACH_INVALID_ARGUMENT, "request_json"),
        ));
        let e =
            format!(r#"{{"method":"POST","path":"/transactions","api_key":"{}","body":{text}}}"#, a.side.key);
        rows.push(row(
            format!("a body member of 100,000 nested {shape}"),
            e,
            code(AchResult::ACH_INVALID_ARGUMENT, "recursion limit exceeded"),
        ));
    }
    // An envelope cut by a NUL at every byte: a strict prefix of a JSON object
    // is never JSON.
    let whole = f.post("/transactions", &a.side.key, transaction(a, &a.side.merchant, "1.00"));
    for at in 0..whole.len() {
        let mut bytes = whole.clone().into_bytes();
        bytes[at] = 0;
        rows.push(row(
            format!("a NUL at byte {at}"),
            bytes,
            code(AchResult::ACH_INVALID_JSON, "request_json"),
        ));
    }
    // Invalid UTF-8 at every 7th byte (the bytes up to it are valid).
    for (at, bad) in (0..whole.len())
        .step_by(7)
        .zip([&b"\xff"[..], b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82"].iter().cycle())
    {
        let mut bytes = whole.clone().into_bytes();
        bytes.splice(at..at + 1, bad.iter().copied());
        let detail = "request_json is not valid UTF-8 (bad byte at offset ";
        rows.push(row(
            format!("invalid UTF-8 {bad:x?} at byte {at}"),
            bytes,
            code(AchResult::ACH_INVALID_UTF8, detail),
        ));
    }
    for text in ["", " ", "null", "\"GET\"", "1", "{}", r#"{"method":"GET"}"#, r#"{"path":"/"}"#] {
        let expect = if text.trim().is_empty() {
            AchResult::ACH_INVALID_JSON
        } else {
            AchResult::ACH_INVALID_ARGUMENT
        };
        rows.push(row(format!("envelope {text:?}"), text, code(expect, "request_json")));
    }
    // Every one-character forgery of the status pointer and of the events pointer.
    const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let bad = json!({"status": 422, "message": 10, "field": "pointer", "code": "invalid_value"});
    for (pointer, path, key, query) in [
        (&a.side.pointer, "/status-changes/", &a.side.key, Some(a.query.as_str())),
        (&a.side.events, "/events/", &a.side.merchant_key, None),
    ] {
        for at in 0..pointer.len() {
            let mut forged = pointer.clone().into_bytes();
            let now = ALPHABET.find(forged[at] as char).unwrap_or(0);
            forged[at] = ALPHABET.as_bytes()[(now + 1 + at) % 64];
            let forged = String::from_utf8(forged).unwrap();
            if forged != *pointer {
                let e = envelope("GET", &format!("{path}{forged}"), query, Some(key), None);
                rows.push(row(format!("{path} pointer forged at {at}"), e, Judged(bad.clone())));
            }
        }
    }
    rows
}

#[test]
fn hostile_input_through_the_c_abi_is_refused_clearly_and_stores_nothing() {
    let f = Fixture::new();
    let values = f.values();
    let (cases, skipped) = corpus("c");
    let mut rows: Vec<Row> = cases.iter().map(|c| corpus_row(c, &values)).collect();
    let shared = rows.len();
    rows.extend(c_rows(&f));
    assert!(shared > 350 && rows.len() > 700, "{shared} corpus cases, {} rows", rows.len());
    let failed: Vec<String> = rows
        .iter()
        .filter_map(|r| match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.run(r, &values))) {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(format!("{}: {why}", r.name)),
            Err(_) => Some(format!("{}: panicked", r.name)),
        })
        .collect();
    println!("{shared} corpus cases ({skipped} left to other hosts), {} C ABI rows", rows.len() - shared);
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
fn an_unknown_kind_is_refused_without_echoing_it_whole() {
    let kind = CString::new("k".repeat(100_000)).unwrap();
    let mut out = AchBuffer::default();
    // SAFETY: valid NUL-terminated strings and a writable buffer.
    let result = unsafe { ach_validate(kind.as_ptr(), c"{}".as_ptr(), &mut out) };
    assert_eq!(result, AchResult::ACH_INVALID_ARGUMENT);
    assert!(out.data.is_null(), "nothing written on failure");
    let detail = last_error();
    assert!(detail.starts_with("kind must be transaction, customer or merchant, not \"kkk"), "{detail}");
    assert!(detail.len() < 200, "a 100,000-character kind is echoed cut short: {} bytes", detail.len());
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
        status_of(
            &request(f.engine, &envelope("GET", "/categories", None, Some(&f.a.side.key), None)).unwrap()
        ),
        200
    );
}

#[test]
fn threads_closing_a_handle_while_others_send_hostile_requests() {
    let f = Fixture::new();
    let (a, b) = (&f.a, &f.b);
    // (envelope, code while open, status when ACH_OK)
    let probes: Arc<Vec<(Vec<u8>, AchResult, u16)>> = Arc::new(vec![
        (
            f.post("/transactions", &a.side.key, json!("[".repeat(100_000))).into_bytes(),
            AchResult::ACH_OK,
            400,
        ),
        (b"{\"method\":\"GET\",\"path\":\"/\xff\"}".to_vec(), AchResult::ACH_INVALID_UTF8, 0),
        (
            f.post("/transactions", &b.side.key, transaction(a, &a.side.merchant, "1.00")).into_bytes(),
            AchResult::ACH_OK,
            401,
        ),
        (
            f.post(
                "/transactions",
                &a.side.key,
                with_literal(&transaction(a, &a.side.merchant, "1.00"), "amount", "-0"),
            )
            .into_bytes(),
            AchResult::ACH_OK,
            422,
        ),
        (
            b.bodiless("PUT", &format!("/transactions/{}/void", a.side.pending)).into_bytes(),
            AchResult::ACH_OK,
            404,
        ),
        (b"{\"method\":\"GET\",\"path\"".to_vec(), AchResult::ACH_INVALID_JSON, 0),
        (
            a.bodiless("GET", &format!("/status-changes/{}A", a.side.pointer)).into_bytes(),
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
                    assert_eq!(
                        request(e, r#"{"method":"GET","path":"/categories"}"#),
                        Ok(r#"{"body":{"message":"Authentication failed.","success":false},"status":401}"#
                            .to_owned())
                    );
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
