//! Hostile input at the router (`api::route`, and `api::route_json` for every case
//! its JSON form can carry): every case of the shared corpus `tests/hostile/*.json`
//! (the C library, the browser module and HTTPS run the same files), judged by
//! `ach_tests::hostile::check`: its status and the JSON envelope with a catalogue
//! message and first problem (exactly `Authentication failed.` for a 401), never
//! a reflection of a large input. After every case the engine still answers a
//! normal request and nothing was stored: neither partner's status-changes feed
//! nor any merchant's events feed moved, and at the end the usage counters are
//! exactly where they were (the merchant and overall daily limits, set to leave
//! room for exactly one more debit, still do) and agree with the stored
//! transactions.
//!
//! `ACH_HOSTILE_SHOW=1` prints what the router answered each case, as an
//! `expect`, to fill in a new case.
#![allow(clippy::unwrap_used)]

use ach_core::api::{route, route_json, Request, Response};
use ach_core::engine::{Caller, Operation};
use ach_core::error::catalogue_samples;
use ach_core::limits::Limits;
use ach_core::Money;
use ach_tests::hostile::{check, corpus, is_catalogue_message, never_issued, observed, Case, Side, Values};
use ach_tests::json_paths::{nested_arrays, nested_objects};
use ach_tests::router::request;
use ach_tests::world::{partner_transaction, transaction, World, OPERATOR_KEY};
use serde_json::{json, Value};

const MB: usize = 1 << 20;

/// One partner of the fixture: what it owns, and its callers.
struct Tenant {
    side: Side,
    caller: Caller,
    merchant_caller: Caller,
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
    let last = w.debit(&id, &caller, &merchant, "20.00");
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
    let side = Side {
        id,
        key,
        merchant,
        merchant_key,
        second,
        customer,
        pending,
        last: Some(last),
        early_pointer,
        pointer,
        events,
    };
    Tenant { side, caller, merchant_caller }
}

fn fixture() -> Fixture {
    let w = World::new("2026-11-23 10:00");
    let a = tenant(&w);
    let b = tenant(&w);
    Fixture { w, a, b }
}

/// The request in the JSON form `route_json` takes, when that form can carry it
/// (no `Content-Type`, a UTF-8 body) and the case is not one of the large ones
/// (which take long in a debug build, and exercise no code of `route_json` that
/// smaller ones do not).
fn json_form(r: &Request) -> Option<String> {
    let large = r.body.len() > 64 * 1024 || r.path.len() > 64 * 1024 || r.method.len() > 64 * 1024;
    if r.content_type.is_some() || large {
        return None;
    }
    let body = std::str::from_utf8(&r.body).ok()?;
    Some(
        json!({"method": r.method, "path": r.path, "api_key": r.api_key,
               "idempotency_key": r.idempotency_key, "body": (!body.is_empty()).then_some(body)})
        .to_string(),
    )
}

impl Fixture {
    fn route(&self, r: &Request) -> Response {
        route(&self.w.engine, r)
    }

    fn values(&self) -> Values {
        self.b.side.values("b", self.a.side.values("a", Values::default().with("operator", OPERATOR_KEY)))
    }

    fn request(&self, c: &Case, values: &Values) -> Request {
        let c = &c.request;
        Request {
            method: values.text(&c.method),
            path: values.text(&c.path),
            api_key: c.key.as_deref().map(|k| values.text(k)),
            idempotency_key: c.idempotency_key.as_deref().map(|k| values.text(k)),
            content_type: c.content_type.clone(),
            body: c.body.as_deref().map(|b| values.expand(b)).unwrap_or_default(),
            ..Request::default()
        }
    }

    fn run(&self, c: &Case, values: &Values) -> Result<(), String> {
        let r = self.request(c, values);
        let answer = self.route(&r);
        if std::env::var_os("ACH_HOSTILE_SHOW").is_some() {
            println!("SHOW\t{}\t{}", c.name, observed(answer.status, &answer.body));
        }
        check(&c.expect, answer.status, &answer.body, values)?;
        if let Some(name) = &c.like_unknown {
            // Another partner's id is answered exactly as a never-issued one.
            let real = &values.0[name];
            let never = never_issued(real);
            let swap = |s: &str| s.replace(real.as_str(), &never);
            let other = Request {
                path: swap(&r.path),
                body: swap(&String::from_utf8_lossy(&r.body)).into_bytes(),
                ..r.clone()
            };
            let unknown = self.route(&other);
            let same = Response {
                status: unknown.status,
                body: unknown.body.replace(&never, real),
                replayed: false,
            };
            if same != answer {
                return Err(format!("answered unlike a never-issued id: {same:?}"));
            }
        }
        if let Some(text) = json_form(&r) {
            if route_json(&self.w.engine, &text) != answer.to_json() {
                return Err("route_json answers differently".into());
            }
        }
        self.assert_nothing_stored(&c.name);
        Ok(())
    }

    /// Neither partner's feeds moved since the set-up, and a normal request
    /// through the router is still answered.
    fn assert_nothing_stored(&self, name: &str) {
        for t in [&self.a, &self.b] {
            let path = format!("/status-changes/{}?partner_id={}", t.side.pointer, t.side.id);
            let page = self.route(&request("GET", &path, Some(&t.side.key), Vec::new()));
            let page: Value = serde_json::from_str(&page.body).unwrap();
            assert_eq!(page["payload"]["changes"], json!([]), "{name}: the status-changes feed moved");
            let events = self.w.engine.events(&t.merchant_caller, Some(&t.side.events)).unwrap();
            assert!(events.events.is_empty(), "{name}: the events feed moved");
        }
    }

    /// The usage counters did not move: each partner still has room for exactly
    /// one more 1.00 debit on its first merchant, then the merchant's daily count
    /// (22) and the partner's overall daily count (24) refuse.
    fn assert_counters_unchanged(&self) {
        assert_eq!(self.w.engine.audit_usage(), Ok(Ok(())));
        for t in [&self.a, &self.b] {
            self.w.debit(&t.side.id, &t.caller, &t.side.merchant, "1.00");
            let again = self.w.create(&t.side.id, &t.caller, &transaction(&t.side.merchant, "debit", "1.00"));
            assert_eq!(again.unwrap_err().error().map(|e| e.code()), Some(22));
            let other = self.w.create(&t.side.id, &t.caller, &transaction(&t.side.second, "debit", "1.00"));
            assert_eq!(other.unwrap_err().error().map(|e| e.code()), Some(24));
        }
    }
}

/// Hostile status codes and envelopes come from one catalogue file: it must say
/// what the engine's catalogue says.
#[test]
fn the_corpus_catalogue_is_the_engines() {
    for e in catalogue_samples() {
        assert!(is_catalogue_message(e.code().into(), &e.to_string()), "{}: {e}", e.code());
    }
    assert!(!is_catalogue_message(10, "Failed to accept this transaction."));
}

#[test]
fn the_hostile_corpus_is_refused_clearly_and_stores_nothing() {
    let f = fixture();
    let values = f.values();
    let (cases, skipped) = corpus("router");
    assert!(cases.len() > 350, "{} cases", cases.len());
    // Every case runs (each failure is printed), on two threads (the 1 MB cases
    // are slow in a debug build); then the test fails if any did.
    let run = |half: usize| -> Vec<String> {
        cases
            .iter()
            .skip(half)
            .step_by(2)
            .filter_map(|c| {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.run(c, &values)));
                let why = match outcome {
                    Ok(Ok(())) => return None,
                    Ok(Err(why)) => why,
                    Err(_) => "panicked".to_owned(),
                };
                Some(format!("{} ({}): {why}", c.name, c.file))
            })
            .collect()
    };
    let failed: Vec<String> = std::thread::scope(|s| {
        let other = s.spawn(|| run(1));
        let mut failed = run(0);
        failed.extend(other.join().unwrap_or_default());
        failed
    });
    println!("{} cases run, {skipped} left to other hosts", cases.len());
    assert!(failed.is_empty(), "{} of {} cases failed: {failed:#?}", failed.len(), cases.len());
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
                let mut t = partner_transaction(&id, &merchant, "debit", "1.00");
                t["standard_entry_class"] = json!(class);
                t["account_validation"] = ach_tests::world::outside_validation();
                t[member] = value;
                let r = post(&t);
                assert_eq!(r.status, 201, "{class} {member}: {}", &r.body[..r.body.len().min(200)]);
                assert!(r.body.len() < 256 && !r.body.contains("999"), "{class} {member}: {}", r.body);
            }
        }
        // Refused for another reason: the ignored member is not reflected either.
        let mut t = partner_transaction(&id, &merchant, "debit", "abc");
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
        let mut t = partner_transaction(&id, &merchant, "debit", "2.00");
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
    let key = f.a.side.key.as_str();
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
        let body = &answer["body"];
        assert!(matches!(status, 400 | 404 | 405 | 413 | 422), "{name}: {answer}");
        let code = body["error_code"].as_u64().unwrap_or_default();
        let message = body["message"].as_str().unwrap_or_default();
        assert!(is_catalogue_message(code, message) && body["error_type"] == json!("E"), "{name}: {answer}");
        f.assert_nothing_stored(name);
    }
    f.assert_counters_unchanged();
}
