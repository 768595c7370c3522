//! Hostile input and security checks over real HTTPS, against the built `achd
//! serve --sandbox`, with a raw HTTP/1.1 client over TLS (so a request may carry
//! bytes no HTTP library would send: NUL and invalid UTF-8 in the request line
//! and headers, malformed Basic auth, huge headers, a 10 MB body streamed).
//!
//! Each hostile request gets a clear error — its status and the router's JSON
//! envelope with a catalogue message, or, where hyper refuses the request before
//! the router sees it, hyper's own status with an empty body — the server stays
//! up (a normal request on a new connection is answered after every row), and
//! nothing is stored (both partners' feeds unchanged after every row; the usage
//! counters, probed through daily limits, unchanged at the end).
//!
//! The security section: a partner's key reaches no other partner's data through
//! any endpoint or pointer (answers byte-identical to those for never-issued ids);
//! every issued key is absent from the database file and the log; account numbers,
//! SSNs and tax ids are absent from the database file, the log and every answer;
//! the secret files are created 0600 (the data directory 0700) even under umask
//! 000. The router-level table is `tests/tests/hostile.rs`.
// The tests' tasks are clients, not the server's async workers.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used)]

use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ach_testkit::{basic_auth as basic, complete, Achd, Raw, TlsStream};
use ach_tests::hostile::{check, corpus, never_issued, CaseRequest, Side, Values};
use base64::Engine as _;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MB: usize = 1 << 20;
const AUTH_FAILED: &str = r#"{"success":false,"message":"Authentication failed."}"#;

/// A running `achd serve --sandbox` on a data directory it makes itself,
/// started under umask 000 (so the secret files' modes are the server's doing,
/// not the umask's); killed on drop.
struct Server {
    server: ach_testkit::Server,
    /// Every answer's body, for the scan for secrets.
    answers: Mutex<Vec<u8>>,
}

impl std::ops::Deref for Server {
    type Target = ach_testkit::Server;

    fn deref(&self) -> &ach_testkit::Server {
        &self.server
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut ach_testkit::Server {
        &mut self.server
    }
}

impl Server {
    fn start() -> Server {
        Server::start_with("", &[])
    }

    /// Started by a shell that first runs `setup` (`ulimit -n 64 &&`), with more
    /// flags.
    fn start_with(setup: &str, flags: &[&str]) -> Server {
        let server = Achd::new(env!("CARGO_BIN_EXE_achd"))
            .sandbox_start("2026-11-23T10:00:00-05:00")
            .shell(&format!("umask 000 && {setup}"))
            .flags(flags)
            .start();
        Server { server, answers: Mutex::default() }
    }

    /// Send these bytes on a new TLS connection and read the answer (kept for
    /// the scan for secrets).
    async fn raw(&self, request: Vec<Vec<u8>>) -> Raw {
        let raw = self.server.raw(request).await;
        self.answers.lock().unwrap().extend_from_slice(&raw.body);
        raw
    }

    /// A request with a `Content-Length` body (and `Connection: close`).
    async fn send(&self, method: &str, target: &[u8], headers: &[(&str, &[u8])], body: &[u8]) -> Raw {
        let host = self.addr().to_string();
        let headers: Vec<(&str, Vec<u8>)> = headers.iter().map(|(k, v)| (*k, v.to_vec())).collect();
        self.raw(ach_testkit::request_bytes(method, target, &host, &typed(target, &headers, body), body))
            .await
    }

    /// A JSON call with the key as the Basic-auth user name.
    async fn call(&self, method: &str, path: &str, key: Option<&str>, body: Option<&Value>) -> (u16, Value) {
        let auth = key.map(basic);
        let headers: Vec<(&str, &[u8])> = auth.iter().map(|a| ("authorization", a.as_bytes())).collect();
        let body = body.map(Value::to_string).unwrap_or_default();
        let answer = self.send(method, path.as_bytes(), &headers, body.as_bytes()).await;
        (answer.status, answer.json())
    }
}

/// What a partner owns on the server. This fixture issues no pointer between
/// its debits: the early pointer is the last one (the cases that replay one are
/// the other hosts'), and it keeps no last debit apart.
struct Tenant {
    side: Side,
    /// Every key issued for this tenant (partner, both merchants).
    keys: Vec<String>,
}

fn example(name: &str) -> Value {
    let path = format!("{}/../examples/requests/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The example transaction from this partner for this merchant.
fn transaction_of(partner_id: &str, merchant_id: &str) -> Value {
    let mut t = example("transaction.json");
    t["partner_id"] = json!(partner_id);
    t["merchant_id"] = json!(merchant_id);
    t
}

/// The account numbers, SSNs and tax ids every tenant's requests carry (unique
/// per tenant, so a scan finds exactly what was sent).
fn secrets(n: usize) -> [String; 6] {
    [
        format!("90817263{n}45"), // inline transaction account
        format!("71625384{n}90"), // customer account
        format!("5550192{n}883"), // merchant custodial account
        format!("47{n}-83-1956"), // principal SSN
        format!("98-76{n}0123"),  // federal tax id
        format!("6161{n}2727"),   // form-data transaction account
    ]
}

async fn tenant(s: &Server, op: &str, n: usize) -> Tenant {
    let [inline, stored, custodial, ssn, tax_id, form_account] = secrets(n);
    let (status, p) =
        s.call("POST", "/admin/partners", Some(op), Some(&json!({"name": format!("P{n}")}))).await;
    assert_eq!(status, 201, "{p}");
    let id = p["payload"]["partner_id"].as_str().unwrap().to_owned();
    let key = p["payload"]["api_key"].as_str().unwrap().to_owned();
    let mut merchants = Vec::new();
    for _ in 0..2 {
        let mut app = example("merchant.json");
        app["partner_id"] = json!(id);
        app["velocities"]["decline_duplicates"] = json!(false);
        app["custodial_bank_account"]["account"] = json!(custodial);
        app["principal"][0]["ssn"] = json!(ssn);
        app["business_data"]["federal_tax_id"] = json!(tax_id);
        let (status, m) = s.call("POST", "/merchants", Some(&key), Some(&app)).await;
        assert_eq!(status, 201, "{m}");
        let merchant = m["id"].as_str().unwrap().to_owned();
        let limits = json!({"limits": {"monthly_count": 1_000_000, "monthly_amount": "90000000.00"}});
        let path = format!("/admin/merchants/{merchant}/approve");
        let (status, a) = s.call("POST", &path, Some(op), Some(&limits)).await;
        assert_eq!(status, 200, "{a}");
        merchants.push((merchant, a["payload"]["api_key"].as_str().unwrap().to_owned()));
    }
    let keys = [vec![key.clone()], merchants.iter().map(|(_, k)| k.clone()).collect()].concat();
    let [(merchant, merchant_key), (second, _)] = <[_; 2]>::try_from(merchants).ok().unwrap();
    let mut customer = example("customer.json");
    customer["partner_id"] = json!(id);
    customer["account_number"] = json!(stored);
    let (status, c) = s.call("POST", "/customers", Some(&key), Some(&customer)).await;
    assert_eq!(status, 201, "{c}");
    let mut t = transaction_of(&id, &merchant);
    t["amount"] = json!("10.00");
    t["customer"]["account_number"] = json!(inline);
    let (status, created) = s.call("POST", "/transactions", Some(&key), Some(&t)).await;
    assert_eq!(status, 201, "{created}");
    let pending = created["payload"]["id"].as_str().unwrap().to_owned();
    let form = format!(
        "merchant_id={merchant}&amount=20.00&description=form&type=debit&standard_entry_class=PPD&customer[name]=Ada&customer[routing_number]=021000021&customer[account_number]={form_account}&customer[account_type]=checking"
    );
    // Form fields in the query string (a body is JSON only).
    let target = format!("/transactions?partner_id={id}&{form}");
    let auth = basic(&key);
    let formed = s.send("POST", target.as_bytes(), &[("authorization", auth.as_bytes())], b"").await;
    assert_eq!(formed.status, 201, "{}", formed.text());
    // Room for exactly one more 1.00 debit today, for the merchant and overall.
    let path = format!("/admin/merchants/{merchant}/limits");
    let (status, v) =
        s.call("POST", &path, Some(op), Some(&json!({"daily_count": 3, "daily_amount": "31.00"}))).await;
    assert_eq!(status, 200, "{v}");
    let path = format!("/admin/partners/{id}/limits");
    let (status, v) = s.call("POST", &path, Some(op), Some(&json!({"daily_count": 3}))).await;
    assert_eq!(status, 200, "{v}");
    let customer = c["payload"]["id"].as_str().unwrap().to_owned();
    let side = Side { id, key, merchant, merchant_key, second, customer, pending, ..Side::default() };
    let mut tenant = Tenant { side, keys };
    tenant.mark(s).await;
    tenant
}

impl Tenant {
    /// Remember where both feeds stand now.
    async fn mark(&mut self, s: &Server) {
        let (pointer, changes) = self.feed(s, "0").await;
        assert!(!changes.is_empty());
        self.side.early_pointer.clone_from(&pointer);
        self.side.pointer = pointer;
        let (status, events) = s.call("GET", "/events", Some(&self.side.merchant_key), None).await;
        assert_eq!(status, 200, "{events}");
        assert_eq!(events["exists_more_events"], json!(false));
        self.side.events = events["new_pointer"].as_str().unwrap().to_owned();
    }

    async fn feed(&self, s: &Server, pointer: &str) -> (String, Vec<Value>) {
        let path = format!("/status-changes/{pointer}?partner_id={}", self.side.id);
        let (status, page) = s.call("GET", &path, Some(&self.side.key), None).await;
        assert_eq!(status, 200, "{page}");
        let changes = page["payload"]["changes"].as_array().unwrap().clone();
        (page["payload"]["new_pointer"].as_str().unwrap().to_owned(), changes)
    }

    /// Nothing new in either feed: also the normal request the server must answer.
    async fn assert_unchanged(&self, s: &Server, row: &str) {
        let (_, changes) = self.feed(s, &self.side.pointer).await;
        assert!(changes.is_empty(), "{row}: the status-changes feed moved: {changes:?}");
        let (status, events) = s
            .call("GET", &format!("/events/{}", self.side.events), Some(&self.side.merchant_key), None)
            .await;
        assert_eq!((status, events["events"].clone()), (200, json!([])), "{row}: the events feed moved");
    }

    /// The daily counters did not move: one more 1.00 debit fits, then the
    /// merchant's daily count (22) and the overall daily count (24) refuse.
    async fn assert_counters_unchanged(&self, s: &Server) {
        let debit = |merchant: &str| {
            let mut t = transaction_of(&self.side.id, merchant);
            t["amount"] = json!("1.00");
            t
        };
        let (status, v) =
            s.call("POST", "/transactions", Some(&self.side.key), Some(&debit(&self.side.merchant))).await;
        assert_eq!(status, 201, "{v}");
        let (_, v) =
            s.call("POST", "/transactions", Some(&self.side.key), Some(&debit(&self.side.merchant))).await;
        assert_eq!(v["error_code"], json!(22), "{v}");
        let (_, v) =
            s.call("POST", "/transactions", Some(&self.side.key), Some(&debit(&self.side.second))).await;
        assert_eq!(v["error_code"], json!(24), "{v}");
    }
}

/// What a row must be answered with.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Exactly the spec's authentication envelope, 401.
    Auth,
    /// The router's refusal: status and catalogue code.
    Refused(u16, u16),
    /// hyper's own refusal before the router: this status, no body.
    Hyper(u16),
}

use Expect::{Auth, Hyper, Refused};

fn check_http(row: &str, answer: &Raw, expect: Expect) {
    match expect {
        Hyper(status) => {
            assert_eq!((answer.status, answer.body.len()), (status, 0), "{row}: {}", answer.head)
        }
        Auth => assert_eq!((answer.status, answer.text()), (401, AUTH_FAILED.to_owned()), "{row}"),
        Refused(status, code) => {
            let json = answer.head.to_ascii_lowercase().contains("content-type: application/json");
            assert!(json, "{row}: {}", answer.head);
            let v = answer.json();
            assert_eq!((answer.status, v["error_code"].clone()), (status, json!(code)), "{row}: {v}");
            assert_eq!((v["success"].clone(), v["error_type"].clone()), (json!(false), json!("E")), "{row}");
            assert!(v["message"].is_string() && v["errors"].is_array(), "{row}: {v}");
            assert!(answer.body.len() < 16 * 1024, "{row}: a {}-byte refusal", answer.body.len());
        }
    }
}

/// One hostile request: its name, its bytes (sent in these chunks), what it gets.
struct Row {
    name: String,
    chunks: Vec<Vec<u8>>,
    expect: Expect,
}

/// A request's bytes: request line, headers (host and `connection: close`
/// added), body with its `Content-Length`.
fn http(method: &str, target: &[u8], headers: &[(&str, Vec<u8>)], body: &[u8]) -> Vec<Vec<u8>> {
    ach_testkit::request_bytes(method, target, "localhost", &typed(target, headers, body), body)
}

/// `headers` with a `Content-Type` for the body ([`ach_testkit::body_type`])
/// unless they name one or there is no body.
fn typed<'a>(target: &[u8], headers: &[(&'a str, Vec<u8>)], body: &[u8]) -> Vec<(&'a str, Vec<u8>)> {
    let mut out = headers.to_vec();
    if !body.is_empty() && !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("content-type")) {
        out.push(("content-type", ach_testkit::body_type(target).as_bytes().to_vec()));
    }
    out
}

/// What only HTTP has: NUL and invalid UTF-8 raw in the request line and
/// headers, malformed Basic auth, huge and many headers, a body streamed without
/// a length. Everything else is the shared corpus (`tests/hostile/*.json`).
fn rows(a: &Tenant) -> Vec<Row> {
    let auth = |key: &str| ("authorization", basic(key).into_bytes());
    let row = |name: &str, chunks, expect| Row { name: name.to_owned(), chunks, expect };
    // `GET /categories` with Basic credentials of exactly these bytes.
    let categories_as = |credentials: Vec<u8>| {
        let header = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials));
        http("GET", b"/categories", &[("authorization", header.into_bytes())], b"")
    };
    let with = |field: &str, value: Value| {
        let mut t = transaction_of(&a.side.id, &a.side.merchant);
        t[field] = value;
        t.to_string().into_bytes()
    };
    let mut rows = vec![
        row(
            "NUL raw in the path",
            http(
                "PUT",
                format!("/transactions/{}\0/void", a.side.pending).as_bytes(),
                &[auth(&a.side.key)],
                b"",
            ),
            Hyper(400),
        ),
        row("NUL in the Basic user name", categories_as(format!("{}\0:", a.side.key).into_bytes()), Auth),
        row(
            "NUL raw in a header",
            http("GET", b"/categories", &[("authorization", b"Basic \0".to_vec())], b""),
            Hyper(400),
        ),
        row(
            "invalid UTF-8 raw in the path",
            http("GET", b"/institutions/\xff\xfe", &[auth(&a.side.key)], b""),
            Hyper(400),
        ),
        row(
            "invalid UTF-8 raw in the query",
            http("GET", b"/status-changes/0?partner_id=\xff\xfe", &[auth(&a.side.key)], b""),
            Hyper(400),
        ),
        row("invalid UTF-8 in the Basic user name", categories_as(vec![0xff, 0xfe, b':']), Auth),
        row(
            "invalid UTF-8 raw in the Authorization header",
            http("GET", b"/categories", &[("authorization", b"Basic \xff\xfe".to_vec())], b""),
            Auth,
        ),
        row(
            "invalid UTF-8 raw in the Idempotency-Key",
            http(
                "POST",
                b"/transactions",
                &[auth(&a.side.key), ("idempotency-key", b"k\xff".to_vec())],
                &with("amount", json!("1.00")),
            ),
            Refused(422, 10),
        ),
        row(
            "Basic without credentials",
            http("GET", b"/categories", &[("authorization", b"Basic".to_vec())], b""),
            Auth,
        ),
        row(
            "Basic with a space only",
            http("GET", b"/categories", &[("authorization", b"Basic ".to_vec())], b""),
            Auth,
        ),
        row(
            "Basic with bad base64",
            http("GET", b"/categories", &[("authorization", b"Basic !!!".to_vec())], b""),
            Auth,
        ),
        row(
            "Bearer with the key",
            http(
                "GET",
                b"/categories",
                &[("authorization", format!("Bearer {}", a.side.key).into_bytes())],
                b"",
            ),
            Auth,
        ),
        row(
            "the key unencoded",
            http(
                "GET",
                b"/categories",
                &[("authorization", format!("Basic {}", a.side.key).into_bytes())],
                b"",
            ),
            Auth,
        ),
        row(
            "an empty user name",
            http("GET", b"/categories", &[("authorization", basic("").into_bytes())], b""),
            Auth,
        ),
        row("the key as the password", categories_as(format!(":{}", a.side.key).into_bytes()), Auth),
        row(
            "a 100 KB Basic header",
            http(
                "GET",
                b"/categories",
                &[("authorization", basic(&"k".repeat(100 * 1024)).into_bytes())],
                b"",
            ),
            Auth,
        ),
        row("a 100 KB header", http("GET", b"/categories", &[("x-junk", vec![b'j'; 100 * 1024])], b""), Auth),
        row("a 1 MB header", http("GET", b"/categories", &[("x-junk", vec![b'j'; MB])], b""), Hyper(431)),
        row(
            "200 headers",
            http(
                "GET",
                b"/categories",
                &(0..200).map(|i| ("x-junk", format!("{i}").into_bytes())).collect::<Vec<_>>(),
                b"",
            ),
            Hyper(431),
        ),
    ];
    // 10 MB streamed in chunks without a length: the server reads up to twice the
    // limit, answers 413, and closes.
    let mut streamed = vec![format!(
        "POST /transactions HTTP/1.1\r\nhost: localhost\r\nauthorization: {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
        basic(&a.side.key)
    )
    .into_bytes()];
    for _ in 0..160 {
        let mut chunk = format!("{:x}\r\n", 64 * 1024).into_bytes();
        chunk.extend_from_slice(&[b' '; 64 * 1024]);
        chunk.extend_from_slice(b"\r\n");
        streamed.push(chunk);
    }
    streamed.push(b"0\r\n\r\n".to_vec());
    rows.push(Row { name: "10 MB streamed".into(), chunks: streamed, expect: Refused(413, 10) });
    rows
}

/// The fixture's values for the corpus' templates.
fn values(a: &Tenant, b: &Tenant, op: &str) -> Values {
    b.side.values("b", a.side.values("a", Values::default().with("operator", op)))
}

/// A path as an HTTP client sends it: bytes a request target cannot hold
/// (controls, space, non-ASCII, `"<>\\^`{|}`) percent-escaped.
fn target(path: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for &b in path.as_bytes() {
        if b <= b' ' || b >= 0x7f || b"\"<>\\^`{|}".contains(&b) {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
    out
}

/// A corpus case's bytes: the key as the Basic-auth user name.
fn corpus_chunks(c: &CaseRequest, v: &Values) -> Vec<Vec<u8>> {
    let mut headers = Vec::new();
    if let Some(k) = &c.key {
        headers.push(("authorization", basic(&v.text(k)).into_bytes()));
    }
    if let Some(k) = &c.idempotency_key {
        headers.push(("idempotency-key", v.expand(k)));
    }
    if let Some(t) = &c.content_type {
        headers.push(("content-type", t.clone().into_bytes()));
    }
    let body = c.body.as_deref().map(|b| v.expand(b)).unwrap_or_default();
    http(&v.text(&c.method), &target(&v.text(&c.path)), &headers, &body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_requests_get_clear_errors_and_store_nothing() {
    let mut s = Server::start();
    let op = s.operator_key();
    let a = tenant(&s, &op, 1).await;
    let b = tenant(&s, &op, 2).await;
    let v = values(&a, &b, &op);
    let mut failed = Vec::new();
    let (cases, skipped) = corpus("https");
    for c in &cases {
        let answer = s.raw(corpus_chunks(&c.request, &v)).await;
        let mut verdict = check(&c.expect, answer.status, &answer.text(), &v);
        if let (Some(name), Ok(())) = (&c.like_unknown, &verdict) {
            // Another partner's id is answered exactly as a never-issued one.
            let (real, never) = (&v.0[name], never_issued(&v.0[name]));
            let twin =
                Values(v.0.iter().map(|(k, x)| (k.clone(), x.replace(real.as_str(), &never))).collect());
            let other = s.raw(corpus_chunks(&c.request, &twin)).await;
            if (other.status, other.text().replace(&never, real)) != (answer.status, answer.text()) {
                verdict = Err(format!("answered unlike a never-issued id: {}", other.text()));
            }
        }
        if let Err(why) = verdict {
            failed.push(format!("{} ({}): {why}", c.name, c.file));
        }
        assert!(s.alive(), "{}: the server died; log: {}", c.name, s.log());
        for t in [&a, &b] {
            t.assert_unchanged(&s, &c.name).await;
        }
    }
    for row in rows(&a) {
        let answer = s.raw(row.chunks).await;
        let checked = std::panic::catch_unwind(|| check_http(&row.name, &answer, row.expect));
        if checked.is_err() {
            failed.push(row.name.clone());
        }
        assert!(s.alive(), "{}: the server died; log: {}", row.name, s.log());
        for t in [&a, &b] {
            t.assert_unchanged(&s, &row.name).await;
        }
    }
    println!("{} corpus cases ({skipped} left to other hosts), {} HTTP rows", cases.len(), rows(&a).len());
    assert!(failed.is_empty(), "{} failed: {failed:#?}", failed.len());
    for t in [&a, &b] {
        t.assert_counters_unchanged(&s).await;
    }
}

/// A `/proc/<pid>/status` figure (`VmRSS`, `VmHWM`) in bytes.
fn proc_status(pid: u32, name: &str) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find_map(|l| l.strip_prefix(name)).unwrap();
    let kb: usize = line.trim_start_matches(':').trim().trim_end_matches("kB").trim().parse().unwrap();
    kb * 1024
}

/// Many 3 MiB bodies of `[0,0,…]` at once — without a key, with a key that is
/// not the route's (an events-only merchant key), with a partner's key on a route
/// that takes no large body, and with a partner's key where large bodies are
/// allowed — cost the server at most 64 MiB above idle at its peak, and each
/// gets its clear refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn big_bodies_cost_no_memory_before_the_caller_is_known() {
    const WAVE: usize = 12;
    let s = Server::start();
    let op = s.operator_key();
    let a = tenant(&s, &op, 1).await;
    let pid = s.pid();
    // Measure the peak from here (`5` resets VmHWM to the current VmRSS); were
    // the reset refused, the peak since start only makes the check stricter.
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
    let idle = proc_status(pid, "VmRSS");
    let mut zeros = b"[0".to_vec();
    zeros.resize(3 * MB - 1, b'0');
    for pair in zeros[2..].chunks_mut(2) {
        pair[0] = b',';
    }
    zeros.push(b']');
    assert_eq!(zeros.len(), 3 * MB);
    let partner = format!("/transactions?partner_id={}", a.side.id);
    let customers = format!("/customers?partner_id={}", a.side.id);
    let attacks = [
        ("no key", None, "/transactions", "401"),
        ("a key never issued", Some(format!("pk_{}", "x".repeat(40))), "/merchants", "401"),
        ("the merchant's events key", Some(a.side.merchant_key.clone()), partner.as_str(), "401"),
        ("a partner's key, small route", Some(a.side.key.clone()), customers.as_str(), "413"),
        ("a partner's key, large route", Some(a.side.key.clone()), partner.as_str(), "413 or 503"),
    ];
    let s = Arc::new(s);
    let mut sent = tokio::task::JoinSet::new();
    for (name, key, path, expect) in attacks {
        for _ in 0..WAVE {
            let s = Arc::clone(&s);
            let headers: Vec<(&str, Vec<u8>)> =
                key.iter().map(|k| ("authorization", basic(k).into_bytes())).collect();
            let chunks = http("POST", path.as_bytes(), &headers, &zeros);
            sent.spawn(async move { (name, expect, s.raw(chunks).await) });
        }
    }
    let mut answers = Vec::new();
    while let Some(answer) = sent.join_next().await {
        answers.push(answer.unwrap());
    }
    let peak = proc_status(pid, "VmHWM");
    let above = peak.saturating_sub(idle);
    assert!(above <= 64 * MB, "peak {} MiB above idle ({} MiB)", above / MB, idle / MB);
    for (name, expect, answer) in &answers {
        let status = answer.status.to_string();
        assert!(expect.contains(&status), "{name}: {} {}", answer.head, answer.text());
        if *expect == "401" {
            assert_eq!(answer.text(), AUTH_FAILED, "{name}");
        }
    }
    let mut s = Arc::try_unwrap(s).ok().unwrap();
    assert!(s.alive(), "the server died; log: {}", s.log());
    a.assert_unchanged(&s, "big bodies").await;
}

/// `(status, body)` of a request, and of the same request with `real` replaced by
/// a never-issued id of the same shape (the answer's id put back).
async fn real_and_unknown(
    s: &Server,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&Value>,
    real: &str,
) -> (Raw, Raw) {
    let prefix = &real[..4];
    let never = format!("{prefix}{}", ach_core::ids::random_alphanumeric(real.len() - 4));
    let send = |path: String, body: Option<String>| async move {
        let auth = basic(key);
        s.send(
            method,
            path.as_bytes(),
            &[("authorization", auth.as_bytes())],
            body.unwrap_or_default().as_bytes(),
        )
        .await
    };
    let for_real = send(path.to_owned(), body.map(Value::to_string)).await;
    let mut unknown =
        send(path.replace(real, &never), body.map(|b| b.to_string().replace(real, &never))).await;
    unknown.body = String::from_utf8(unknown.body).unwrap().replace(&never, real).into_bytes();
    (for_real, unknown)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partner_reaches_no_other_partners_data_and_no_secret_is_kept_in_clear() {
    let s = Server::start();
    let op = s.operator_key();
    let mut a = tenant(&s, &op, 1).await;
    let mut b = tenant(&s, &op, 2).await;

    // Created under umask 000, yet private: the secret files 0600, the directory 0700.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let files: &[&str] = if ach_testkit::on_postgres() {
        &["operator.key", "ach.key", "tls-key.pem"]
    } else {
        &["operator.key", "ach.redb.key", "tls-key.pem", "ach.redb", "ach.redb.log"]
    };
    for file in files {
        assert_eq!(mode(&s.data().join(file)), 0o600, "{file}");
    }
    assert_eq!(mode(s.data()), 0o700, "the data directory");

    // B's key and partner id naming A's resources: answered exactly as for ids
    // that were never issued, at every endpoint that takes an id.
    let bq = format!("?partner_id={}", b.side.id);
    let t = transaction_of(&b.side.id, &a.side.merchant);
    let mut by_token = transaction_of(&b.side.id, &b.side.merchant);
    by_token["customer"] = json!({"id": a.side.customer});
    let mut customer = example("customer.json");
    customer["partner_id"] = json!(b.side.id);
    customer["merchant_id"] = json!(a.side.merchant);
    let cases = [
        ("PUT", format!("/transactions/{}/void{bq}", a.side.pending), None, &a.side.pending, 404),
        ("PUT", format!("/transactions/{}/reverse{bq}", a.side.pending), None, &a.side.pending, 404),
        ("DELETE", format!("/customers/{}{bq}", a.side.customer), None, &a.side.customer, 404),
        ("POST", "/transactions".to_owned(), Some(&t), &a.side.merchant, 422),
        ("POST", "/transactions".to_owned(), Some(&by_token), &a.side.customer, 404),
        ("POST", "/customers".to_owned(), Some(&customer), &a.side.merchant, 422),
    ];
    for (method, path, body, real, status) in cases {
        let (for_real, unknown) = real_and_unknown(&s, method, &path, &b.side.key, body, real).await;
        assert_eq!(for_real.status, status, "{method} {path}: {}", for_real.text());
        assert_eq!((for_real.status, for_real.text()), (unknown.status, unknown.text()), "{method} {path}");
    }
    // B's key (and every merchant key) naming A's partner id: authentication fails.
    let aq = format!("?partner_id={}", a.side.id);
    let own = transaction_of(&a.side.id, &a.side.merchant);
    let mut app = example("merchant.json");
    app["partner_id"] = json!(a.side.id);
    let mut a_customer = example("customer.json");
    a_customer["partner_id"] = json!(a.side.id);
    let endpoints = [
        ("POST", "/transactions".to_owned(), Some(&own)),
        ("POST", "/customers".to_owned(), Some(&a_customer)),
        ("POST", "/merchants".to_owned(), Some(&app)),
        ("PUT", format!("/transactions/{}/void{aq}", a.side.pending), None),
        ("PUT", format!("/transactions/{}/reverse{aq}", a.side.pending), None),
        ("DELETE", format!("/customers/{}{aq}", a.side.customer), None),
        ("GET", format!("/status-changes/0{aq}"), None),
        ("GET", format!("/status-changes/{}{aq}", a.side.pointer), None),
    ];
    for key in [&b.side.key, &b.side.merchant_key, &a.side.merchant_key] {
        for (method, path, body) in &endpoints {
            let answer = s.call(method, path, Some(key), *body).await;
            assert_eq!(answer, (401, serde_json::from_str(AUTH_FAILED).unwrap()), "{method} {path}");
        }
    }
    // Pointers: A's feed pointer under B's partner id, A's merchant's events
    // pointer under B's merchant key: refused exactly like forged ones.
    let forged = "A".repeat(32);
    let pointer = |p: &str| format!("/status-changes/{p}{bq}");
    let refused = s.call("GET", &pointer(&a.side.pointer), Some(&b.side.key), None).await;
    assert_eq!(refused, s.call("GET", &pointer(&forged), Some(&b.side.key), None).await);
    assert_eq!(refused.1["errors"][0]["field"], json!("pointer"));
    let refused =
        s.call("GET", &format!("/events/{}", a.side.events), Some(&b.side.merchant_key), None).await;
    assert_eq!(refused, s.call("GET", &format!("/events/{forged}"), Some(&b.side.merchant_key), None).await);
    // Partner keys on the events feed and the operator plane.
    for key in [&a.side.key, &b.side.key] {
        assert_eq!(s.call("GET", "/events", Some(key), None).await.0, 401);
        let limits = json!({"daily_count": 1_000_000});
        for (path, body) in [
            ("/admin/partners".to_owned(), json!({"name": "Mallory"})),
            (format!("/admin/partners/{}/limits", a.side.id), limits.clone()),
            (format!("/admin/merchants/{}/limits", a.side.merchant), limits.clone()),
            (format!("/admin/merchants/{}/approve", a.side.second), json!({})),
            ("/admin/returns".to_owned(), json!({"transaction_id": a.side.pending, "return_code": "R01"})),
            ("/admin/clock".to_owned(), json!({"now": "2099-01-01T00:00:00Z"})),
            ("/admin/routing".to_owned(), json!("")),
        ] {
            assert_eq!(s.call("POST", &path, Some(key), Some(&body)).await.0, 401, "{path}");
        }
    }
    for t in [&a, &b] {
        t.assert_unchanged(&s, "cross-partner requests").await;
        t.assert_counters_unchanged(&s).await;
    }
    // One idempotency key, two partners: each gets its own transaction.
    let mut ids = Vec::new();
    for t in [&a, &b] {
        let mut body = transaction_of(&t.side.id, &t.side.second);
        body["amount"] = json!("1.00");
        let auth = basic(&t.side.key);
        let headers: [(&str, &[u8]); 2] =
            [("authorization", auth.as_bytes()), ("idempotency-key", b"order-1")];
        let answer = s.send("POST", b"/transactions", &headers, body.to_string().as_bytes()).await;
        // The overall daily limit is spent: both are refused (message 24), each its own refusal.
        ids.push((answer.status, answer.json()["error_code"].clone()));
    }
    assert_eq!(ids, [(403, json!(24)), (403, json!(24))]);
    a.mark(&s).await;
    b.mark(&s).await;
    // A refused request carrying an account number stores nothing of it.
    let mut refused = transaction_of(&b.side.id, "mer_0123456789abcdefghijKL");
    refused["customer"]["account_number"] = json!(secrets(3)[0]);
    assert_eq!(s.call("POST", "/transactions", Some(&b.side.key), Some(&refused)).await.0, 422);

    // No key, account number, SSN or tax id in clear: not in the database file
    // or its redo log (the same bytes, written first), not in the server's
    // log, not in any answer (keys: but the one that issued each).
    if !ach_testkit::on_postgres() {
        let redo = std::fs::read(s.data().join("ach.redb.log")).unwrap();
        assert!(contains(&redo, b.side.pending.as_bytes()), "the redo log holds the latest writes");
    }
    // The database file and its redo log, or the PostgreSQL rows.
    let database = s.stored_bytes();
    let log = s.log();
    assert!(log.contains("status=201"), "the log has request lines");
    // Each names its caller by kind and id (never by key).
    assert!(log.contains(&format!(r#"caller="partner" caller_id="{}""#, a.side.id)), "a partner's request");
    assert!(log.contains(r#"caller="operator" caller_id="-""#), "an operator's request");
    assert!(
        contains(&database, a.side.id.as_bytes()) && contains(&database, b.side.pending.as_bytes()),
        "a readable scan"
    );
    let keys: Vec<&String> = a.keys.iter().chain(&b.keys).chain([&op]).collect();
    for key in &keys {
        assert!(!contains(&database, key.as_bytes()), "an API key is in the database file or its redo log");
        assert!(!log.contains(key.as_str()), "an API key is in the log");
    }
    for key in a.keys.iter().chain(&b.keys) {
        let hash = ach_core::secrets::KeyHash::of(key);
        assert!(contains(&database, hash.as_bytes()), "a key's hash is what is stored");
    }
    let answers = s.answers.lock().unwrap().clone();
    for secret in secrets(1).iter().chain(&secrets(2)).chain(&secrets(3)) {
        for form in [secret.clone(), secret.replace('-', "")] {
            assert!(!contains(&database, form.as_bytes()), "{form} is in the database file or its redo log");
            assert!(!log.contains(&form), "{form} is in the log");
            assert!(!contains(&answers, form.as_bytes()), "{form} is in an answer");
        }
    }
}

// Slow readers: connections that send requests and never read the answers.

/// The normal client's address: loopback, but not the attackers' 127.0.0.1.
const ELSEWHERE: [u8; 4] = [127, 0, 0, 2];

impl Server {
    /// A TLS connection from `from` (a loopback address), or the error that
    /// ended the TCP connect or the TLS handshake.
    async fn connect_from(&self, from: [u8; 4]) -> std::io::Result<TlsStream<TcpStream>> {
        self.tls_stream_from(IpAddr::from(from), self.addr()).await
    }

    /// A connection from 127.0.0.1 that sends `GET /openapi.json` (134 KB
    /// answers, no key needed) over and over and never reads; `None` if it was
    /// refused or not served within `patience`. The task ends when a write fails.
    async fn non_reader(&self, patience: Duration) -> Option<tokio::task::JoinHandle<std::io::Error>> {
        let mut stream =
            tokio::time::timeout(patience, self.connect_from([127, 0, 0, 1])).await.ok()?.ok()?;
        let requests = b"GET /openapi.json HTTP/1.1\r\nhost: achd\r\n\r\n".repeat(500);
        Some(tokio::spawn(async move {
            loop {
                if let Err(e) = stream.write_all(&requests).await {
                    return e;
                }
            }
        }))
    }

    /// `GET /` from `from` with `Connection: close`, answered whole within a
    /// second (else `None`).
    async fn quick_answer(&self, from: [u8; 4]) -> Option<Raw> {
        let asked = async {
            let mut stream = self.connect_from(from).await.ok()?;
            let request = format!("GET / HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n", self.addr());
            stream.write_all(request.as_bytes()).await.ok()?;
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes).await;
            Some(Raw::parse(&bytes))
        };
        tokio::time::timeout(Duration::from_secs(1), asked).await.ok().flatten()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clients_that_never_read_lock_no_one_else_out() {
    // As the review ran it: 64 open files at most, and the server cannot raise
    // that (the hard limit is 64 too).
    let mut s = Server::start_with("ulimit -n 64 &&", &[]);
    let attackers =
        futures_join_all((0..80).map(|_| s.non_reader(Duration::from_secs(3)))).await.into_iter().flatten();
    let attackers: Vec<_> = attackers.collect();
    for round in 0..3 {
        let answer = s.quick_answer(ELSEWHERE).await;
        let answer = answer.unwrap_or_else(|| {
            panic!(
                "round {round}: no answer within a second while {} connections never read",
                attackers.len()
            )
        });
        assert_eq!(answer.status, 200, "round {round}: {}", answer.head);
    }
    assert!(attackers.len() < 80, "every non-reading connection was admitted");
    assert!(attackers.iter().all(|a| !a.is_finished()), "the server gave up on the admitted ones early");
    assert!(s.alive(), "log: {}", s.log());
    let said = s.said().join("\n");
    assert!(
        said.contains("connections: at most 16 (4 per client address; 16 more for the operator plane), open-file limit 64"),
        "{said}"
    );
    let log = s.log();
    assert!(log.contains("client=127.0.0.2:") && log.contains(r#"caller="none""#), "{log}");
    for attacker in attackers {
        attacker.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_operator_plane_answers_while_the_public_pool_is_full() {
    let s = Server::start_with("", &["--max-connections", "4", "--max-connections-per-client", "4"]);
    let attackers: Vec<_> = futures_join_all((0..4).map(|_| s.non_reader(Duration::from_secs(3))))
        .await
        .into_iter()
        .map(|a| a.expect("admitted"))
        .collect();
    assert!(s.quick_answer(ELSEWHERE).await.is_none(), "the public pool is full");
    // The operator reaches /admin all the same, over and over.
    let op = s.operator_key();
    for round in 0..3 {
        let (status, v) = s.call("GET", "/admin/return-rates", Some(&op), None).await;
        assert_eq!(status, 200, "round {round}: {v}");
    }
    // The refused connection is a warning in the log, naming the plane.
    let log = s.log();
    assert!(
        log.contains("too many connections: connection closed") && log.contains(r#"plane="public""#),
        "{log}"
    );
    for attacker in attackers {
        attacker.abort();
    }
}

impl Server {
    /// A connection that sends `POST /transactions` with `key`, a declared
    /// 3,000,000-byte JSON body, then 10 bytes every half second: the answer
    /// it ends with (or none within 40 s).
    async fn trickler(&self, key: &str) -> tokio::task::JoinHandle<Option<Raw>> {
        let head = format!(
            "POST /transactions HTTP/1.1\r\nhost: achd\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: 3000000\r\n\r\n",
            basic(key)
        );
        let connected = self.tls_stream_from(IpAddr::from([127, 0, 0, 1]), self.addr()).await;
        tokio::spawn(async move {
            let mut stream = connected.ok()?;
            stream.write_all(head.as_bytes()).await.ok()?;
            let trickle = async {
                while stream.write_all(b"          ").await.is_ok() {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(40), trickle).await;
            let mut bytes = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut bytes)).await;
            Some(Raw::parse(&bytes))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partner_trickling_large_bodies_starves_no_one() {
    let s = Server::start();
    let op = s.operator_key();
    let (a, b) = (tenant(&s, &op, 1).await, tenant(&s, &op, 2).await);
    let mut tricklers = Vec::new();
    for _ in 0..4 {
        tricklers.push(s.trickler(&a.side.key).await);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Another partner's 100 KB create, and the operator's files, are read.
    let mut t = transaction_of(&b.side.id, &b.side.merchant);
    t["amount"] = json!("1.00");
    let padded = format!("{t}{}", " ".repeat(100 * 1024));
    let auth = basic(&b.side.key);
    let created =
        s.send("POST", b"/transactions", &[("authorization", auth.as_bytes())], padded.as_bytes()).await;
    assert_eq!(created.status, 201, "{}", created.text());
    let not_a_file = "x".repeat(100 * 1024);
    let operator = basic(&op);
    let file = s
        .send(
            "POST",
            b"/admin/return-files",
            &[("authorization", operator.as_bytes())],
            not_a_file.as_bytes(),
        )
        .await;
    assert_eq!(file.status, 422, "read and refused as no NACHA file, not turned away: {}", file.text());
    // Past its share the partner is turned away at once; the bodies it holds
    // are cut for their rate, well before the 30 s body timeout.
    let mut statuses = Vec::new();
    for (n, trickler) in tricklers.into_iter().enumerate() {
        let answer = tokio::time::timeout(Duration::from_secs(20), trickler).await;
        let answer = answer.unwrap_or_else(|_| panic!("trickler {n} not cut within 20 s: {statuses:?}"));
        let answer = answer.unwrap().expect("connected");
        statuses.push(answer.status);
        if answer.status == 408 {
            assert!(answer.text().contains("the body arrived slower than 16 KiB/s"), "{}", answer.text());
        }
    }
    // Two within the share, cut (408); two past it (503), unless a place
    // came free first (the share itself: `body.rs`'s tests).
    assert!(statuses.iter().all(|s| [408, 503].contains(s)) && statuses.contains(&408), "{statuses:?}");
    let log = s.log();
    assert!(log.contains("a body cut: it arrived slower than the minimum rate"), "{log}");
    assert!(!statuses.contains(&503) || log.contains("a large body turned away"), "{log}");
}

/// Run every future at once; their outputs, in the order they finish.
async fn futures_join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut outputs = Vec::new();
    let futures: Vec<_> = futures.map(Box::pin).collect();
    let mut pending: Vec<_> = futures.into_iter().map(Some).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for slot in &mut pending {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(output) => {
                        outputs.push(output);
                        *slot = None;
                    }
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    outputs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_answer_no_one_reads_closes_its_connection_after_the_write_timeout() {
    let s = Server::start_with("", &["--write-timeout", "1", "--max-connections-per-client", "1"]);
    let started = std::time::Instant::now();
    let attacker = s.non_reader(Duration::from_secs(5)).await.expect("admitted");
    assert!(s.quick_answer([127, 0, 0, 1]).await.is_none(), "its one connection is taken");
    let failed = tokio::time::timeout(Duration::from_secs(20), attacker).await;
    let failed = failed.expect("still held after 20 s").unwrap();
    let held = started.elapsed();
    assert!(held >= Duration::from_secs(1), "closed after {held:?}: {failed}");
    assert!(s.log().contains("the client took nothing for 1 s"), "log: {}", s.log());
    // Its place is free again.
    let answer = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(answer) = s.quick_answer([127, 0, 0, 1]).await {
                return answer;
            }
        }
    });
    assert_eq!(answer.await.expect("served again").status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_connection_is_closed_at_the_end_of_its_lifetime() {
    let s = Server::start_with("", &["--connection-lifetime", "1", "--write-timeout", "1"]);
    // A busy keep-alive client: answered until its lifetime, then told to go.
    let started = std::time::Instant::now();
    let mut stream = s.connect_from([127, 0, 0, 1]).await.unwrap();
    let keep_alive = async {
        let mut answers = 0;
        loop {
            let request = format!("GET / HTTP/1.1\r\nhost: {}\r\n\r\n", s.addr());
            if stream.write_all(request.as_bytes()).await.is_err() {
                return answers;
            }
            let mut bytes = Vec::new();
            let mut buf = vec![0; 16 * 1024];
            while !complete(&bytes) {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return answers,
                    Ok(n) => bytes.extend_from_slice(&buf[..n]),
                }
            }
            answers += 1;
            if Raw::parse(&bytes).head.to_ascii_lowercase().contains("connection: close") {
                return answers;
            }
        }
    };
    let answers = tokio::time::timeout(Duration::from_secs(10), keep_alive).await.expect("open after 10 s");
    assert!(answers > 0 && started.elapsed() >= Duration::from_secs(1), "{answers} answers");

    // A request whose body never ends: not answered (its body may take 30 s),
    // so the connection is dropped once the grace after its lifetime is over.
    let started = std::time::Instant::now();
    let stream = s.connect_from([127, 0, 0, 1]).await.unwrap();
    let (mut reader, mut writer) = tokio::io::split(stream);
    let trickle = tokio::spawn(async move {
        let head = "POST /transactions HTTP/1.1\r\nhost: achd\r\ncontent-length: 100000\r\n\r\n{";
        let _ = writer.write_all(head.as_bytes()).await;
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if writer.write_all(b" ").await.is_err() {
                return;
            }
        }
    });
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), reader.read_to_end(&mut rest)).await;
    trickle.abort();
    // Dropped, not shut down: the stream ends without TLS close_notify, as an
    // end of file or, when a trickled byte was still unread in the server's
    // socket as it closed, as the kernel's reset.
    let closed = closed.expect("open after 10 s").map_err(|e| e.kind());
    let dropped = [std::io::ErrorKind::UnexpectedEof, std::io::ErrorKind::ConnectionReset];
    assert!(matches!(closed, Err(kind) if dropped.contains(&kind)), "{closed:?}");
    assert!(started.elapsed() >= Duration::from_secs(1), "closed after {:?}", started.elapsed());
    assert!(rest.is_empty(), "no answer: {}", String::from_utf8_lossy(&rest));
    assert!(s.log().contains("connection still busy after its grace: closed"), "log: {}", s.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_open_file_limit_is_raised_to_the_hard_limit() {
    let s = Server::start_with("ulimit -S -n 256 &&", &[]);
    let said = s.said().join("\n");
    let hard: u64 = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| {
            l.lines().find(|l| l.starts_with("Max open files"))?.split_whitespace().nth(4)?.parse().ok()
        })
        .unwrap_or(0);
    if hard > 256 {
        assert!(said.contains(&format!("open-file limit {} (raised from 256)", hard.min(1 << 20))), "{said}");
    } else {
        assert!(said.contains("open-file limit 256;"), "{said}");
    }
}
