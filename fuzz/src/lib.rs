//! What the fuzz targets share: an in-memory sandbox engine prepared once (two
//! partners, each with an approved merchant, a customer token, a transaction and
//! feed pointers), a readable input format for router requests, and the oracle
//! every answer must pass.
//!
//! Inputs name the sandbox's ids, keys and pointers by tokens (`@A.partner`,
//! `@B.mkey`, …, see [`Sandbox::substitute`]), so a short seed reaches the
//! engine's deep paths although every id and key is random per process.

use std::sync::{Mutex, OnceLock};

use ach_core::api::{route, Request, Response};
use ach_core::engine::{Caller, Engine, EngineOptions};
use ach_core::error::{catalogue_samples, AUTHENTICATION_FAILED, ERROR_TYPE};
use ach_core::Money;
use serde_json::{json, Value};

/// The sandbox operator's key.
pub const OPERATOR_KEY: &str = "ok_fuzz_operator_key_0123456789abcdef";

/// How often (in inputs) the stored usage counters are audited against the
/// stored transactions.
const AUDIT_EVERY: u64 = 512;

/// One partner of the sandbox and what it owns.
#[derive(Debug)]
struct Tenant {
    caller: Caller,
    partner_id: String,
    merchant_caller: Caller,
}

/// What the oracle remembers between inputs: where each partner's status-changes
/// feed and its merchant's events feed stood.
#[derive(Debug, Default)]
struct Tracker {
    runs: u64,
    pointers: [String; 2],
    events: [String; 2],
}

/// The engine every input runs against, and what the inputs can name.
#[derive(Debug)]
pub struct Sandbox {
    /// The engine (in memory, sandbox clock).
    pub engine: Engine,
    tokens: Vec<(String, String)>,
    tenants: [Tenant; 2],
    tracker: Mutex<Tracker>,
}

/// The sandbox, made on first use.
pub fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(Sandbox::new)
}

fn example(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn call(engine: &Engine, method: &str, path: &str, key: &str, body: &Value) -> Value {
    let request = Request {
        method: method.into(),
        path: path.into(),
        api_key: Some(key.into()),
        body: body.to_string().into_bytes(),
        ..Request::default()
    };
    let response = route(engine, &request);
    let value: Value = serde_json::from_str(&response.body).unwrap_or(Value::Null);
    assert!(response.status < 300, "sandbox set-up: {method} {path}: {}", response.body);
    value
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

impl Sandbox {
    fn new() -> Sandbox {
        let start = chrono::DateTime::parse_from_rfc3339("2026-11-23T10:00:00-05:00")
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default();
        let options = EngineOptions::manual(start).with_operator_key(OPERATOR_KEY).sandbox();
        let engine = Engine::in_memory(options).unwrap_or_else(|e| panic!("sandbox: {e}"));
        let mut tokens = vec![("@op".to_owned(), OPERATOR_KEY.to_owned())];
        let mut tenants = Vec::new();
        let mut pointers = Vec::new();
        let mut event_pointers = Vec::new();
        for name in ["A", "B"] {
            let p = call(&engine, "POST", "/admin/partners", OPERATOR_KEY, &json!({"name": name}));
            let (partner_id, partner_key) =
                (text(&p["payload"]["partner_id"]), text(&p["payload"]["api_key"]));
            let mut app = example(include_str!("../../examples/requests/merchant.json"));
            app["partner_id"] = json!(partner_id);
            app["velocities"]["decline_duplicates"] = json!(false);
            let m = call(&engine, "POST", "/merchants", &partner_key, &app);
            let merchant_id = text(&m["id"]);
            let limits = json!({"limits": {"monthly_count": 1_000_000, "monthly_amount": "90000000.00"}});
            let approved = call(
                &engine,
                "POST",
                &format!("/admin/merchants/{merchant_id}/approve"),
                OPERATOR_KEY,
                &limits,
            );
            let merchant_key = text(&approved["payload"]["api_key"]);
            let mut customer = example(include_str!("../../examples/requests/customer.json"));
            customer["partner_id"] = json!(partner_id);
            let c = call(&engine, "POST", "/customers", &partner_key, &customer);
            let mut transaction = example(include_str!("../../examples/requests/transaction.json"));
            transaction["partner_id"] = json!(partner_id);
            transaction["merchant_id"] = json!(merchant_id);
            let t = call(&engine, "POST", "/transactions", &partner_key, &transaction);
            let caller = engine.authenticate(&partner_key).unwrap_or_else(|e| panic!("{e:?}"));
            let merchant_caller = engine.authenticate(&merchant_key).unwrap_or_else(|e| panic!("{e:?}"));
            let pointer = engine.status_changes(&caller, &partner_id, "0").map(|p| p.new_pointer);
            let events = engine.events(&merchant_caller, None).map(|p| p.new_pointer);
            let (pointer, events) = (pointer.unwrap_or_default(), events.unwrap_or_default());
            pointers.push(pointer.clone());
            event_pointers.push(events.clone());
            let lower = name.to_ascii_lowercase();
            for (what, value) in [
                ("partner", partner_id.clone()),
                ("pkey", partner_key),
                ("merchant", merchant_id),
                ("mkey", merchant_key),
                ("customer", text(&c["payload"]["id"])),
                ("txn", text(&t["payload"]["id"])),
                ("pointer", pointer),
                ("events", events),
            ] {
                tokens.push((format!("@{name}.{what}"), value.clone()));
                tokens.push((format!("@{lower}.{what}"), value));
            }
            tenants.push(Tenant { caller, partner_id, merchant_caller });
        }
        // Longest first, so no token is cut by a shorter one.
        tokens.sort_by_key(|(token, _)| std::cmp::Reverse(token.len()));
        let [a, b]: [Tenant; 2] = tenants.try_into().unwrap_or_else(|_| panic!("two tenants"));
        let tracker = Tracker {
            runs: 0,
            pointers: [pointers[0].clone(), pointers[1].clone()],
            events: [event_pointers[0].clone(), event_pointers[1].clone()],
        };
        Sandbox { engine, tokens, tenants: [a, b], tracker: Mutex::new(tracker) }
    }

    /// `bytes` with every token replaced by what it names in this sandbox:
    /// `@op` (operator key) and, for partners `A` and `B` (or `a`, `b`),
    /// `@A.partner`, `@A.pkey`, `@A.merchant`, `@A.mkey`, `@A.customer`, `@A.txn`,
    /// `@A.pointer` (a status-changes pointer), `@A.events` (an events pointer).
    pub fn substitute(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        'scan: while i < bytes.len() {
            if bytes[i] == b'@' {
                for (token, value) in &self.tokens {
                    if bytes[i..].starts_with(token.as_bytes()) {
                        out.extend_from_slice(value.as_bytes());
                        i += token.len();
                        continue 'scan;
                    }
                }
            }
            out.push(bytes[i]);
            i += 1;
        }
        out
    }

    /// A router request from the readable input format, HTTP-like:
    ///
    /// ```text
    /// METHOD PATH            (the path may carry ?query)
    /// key: API-KEY           (any number of header lines; others are ignored)
    /// query: a=1&b=2
    /// idempotency-key: K
    /// content-type: T
    ///
    /// BODY (the rest, any bytes)
    /// ```
    ///
    /// Tokens are substituted everywhere; bytes that are not UTF-8 become U+FFFD
    /// (as the HTTPS host does with header text), except in the body.
    pub fn request(&self, data: &[u8]) -> Request {
        let data = self.substitute(data);
        let (head, body) = match find(&data, b"\n\n") {
            Some(at) => (&data[..at], data[at + 2..].to_vec()),
            None => (&data[..], Vec::new()),
        };
        let mut lines = head.split(|&b| b == b'\n');
        let first = lines.next().unwrap_or_default();
        let (method, path) = match first.iter().position(|&b| b == b' ') {
            Some(at) => (&first[..at], &first[at + 1..]),
            None => (first, &b""[..]),
        };
        let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut request = Request { method: lossy(method), path: lossy(path), body, ..Request::default() };
        for line in lines {
            let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
            let value = lossy(line[colon + 1..].strip_prefix(b" ").unwrap_or(&line[colon + 1..]));
            match &line[..colon] {
                b"key" => request.api_key = Some(value),
                b"query" => request.query = value,
                b"idempotency-key" => request.idempotency_key = Some(value),
                b"content-type" => request.content_type = Some(value),
                _ => {}
            }
        }
        request
    }

    /// The oracle for one answer of the router (`input_len`: the request's size):
    /// see [`check_envelope`]; besides, a refusal wrote nothing to either partner's
    /// status-changes feed nor to its merchant's events feed, and every
    /// [`AUDIT_EVERY`] inputs the usage counters agree with the stored transactions.
    pub fn check(&self, response: &Response, input_len: usize) {
        check_envelope(response.status, &response.body, input_len);
        let mut tracker = self.tracker.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (i, tenant) in self.tenants.iter().enumerate() {
            let page = self.engine.status_changes(&tenant.caller, &tenant.partner_id, &tracker.pointers[i]);
            let page = page.unwrap_or_else(|f| panic!("the feed of partner {i} is unreadable: {f:?}"));
            unwritten_by_refusal(response.status, "feed", &page.changes);
            tracker.pointers[i] = page.new_pointer;
            let events = self.engine.events(&tenant.merchant_caller, Some(&tracker.events[i]));
            let events =
                events.unwrap_or_else(|f| panic!("the events of merchant {i} are unreadable: {f:?}"));
            unwritten_by_refusal(response.status, "events feed", &events.events);
            tracker.events[i] = events.new_pointer;
        }
        tracker.runs += 1;
        if tracker.runs % AUDIT_EVERY == 0 {
            assert_eq!(self.engine.audit_usage(), Ok(Ok(())), "usage counters disagree with transactions");
        }
    }
}

/// A refusal (`status` 400 or more) must have added nothing to `feed` (what a
/// feed read from its pointer returned).
fn unwritten_by_refusal<T: std::fmt::Debug>(status: u16, feed: &str, added: &[T]) {
    assert!(status < 400 || added.is_empty(), "a refusal ({status}) wrote to the {feed}: {added:?}");
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Statuses the router may answer.
const STATUSES: &[u16] = &[200, 201, 400, 401, 403, 404, 405, 409, 413, 415, 422];

/// Whether `message` is the catalogue's message `code` (its placeholder, if any,
/// filled with anything).
pub fn is_catalogue_message(code: u64, message: &str) -> bool {
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

/// The oracle for any answer: a known status; a JSON body; a failure is exactly
/// the authentication envelope (401, naming `partner_id` when a right key came
/// without it) or `{success: false, message, error_code,
/// error_type: "E", errors: [{field, code, message}]}` with a catalogue message
/// whose code matches; and a failure never reflects a large input whole (its
/// size is bounded by a small multiple of the input's).
pub fn check_envelope(status: u16, body: &str, input_len: usize) {
    assert!(STATUSES.contains(&status), "unexpected status {status}: {body}");
    let value: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    if status < 400 {
        return;
    }
    if status == 401 {
        // Exactly the spec's envelope; when a partner's right key came without
        // partner_id, with the one problem that names it.
        let plain = json!({"success": false, "message": AUTHENTICATION_FAILED});
        let named = json!({"success": false, "message": AUTHENTICATION_FAILED, "errors": [{
            "field": "partner_id", "code": "required",
            "message": "partner_id is required with this key: send it in the body or in the query string"}]});
        assert!(value == plain || value == named, "{body}");
        return;
    }
    assert_eq!(value["success"], json!(false), "{body}");
    assert_eq!(value["error_type"], json!(ERROR_TYPE), "{body}");
    let code = value["error_code"].as_u64().unwrap_or_else(|| panic!("no error_code: {body}"));
    let message = value["message"].as_str().unwrap_or_else(|| panic!("no message: {body}"));
    assert!(is_catalogue_message(code, message), "not catalogue message {code}: {message:?}");
    let errors = value["errors"].as_array().unwrap_or_else(|| panic!("no errors: {body}"));
    for e in errors {
        assert!(
            e["field"].is_string() && e["code"].is_string() && e["message"].is_string(),
            "a malformed field problem: {e}"
        );
    }
    assert!(
        body.len() <= 16 * 1024 + 4 * input_len,
        "a {}-byte refusal of a {input_len}-byte input",
        body.len()
    );
}
