//! Key rotation, revocation and suspension on the operator plane, through the
//! router every host calls: the grace window on the injected clock, the refused
//! caller's answer (exactly an unknown key's), and every change surviving a
//! reopen of a file-backed engine.
#![allow(clippy::unwrap_used)]

use ach_core::engine::Engine;
use ach_tests::router;
use ach_tests::world::{application, options, partner_transaction, OPERATOR_KEY};
use serde_json::{json, Value};

struct Api {
    engine: Engine,
}

/// A partner with an approved merchant, and their keys.
struct Tenant {
    pid: String,
    key: String,
    mid: String,
    mkey: String,
}

impl Api {
    fn new() -> Api {
        Api { engine: Engine::in_memory(options("2026-11-23 10:00")).unwrap() }
    }

    fn call(&self, method: &str, path: &str, key: &str, body: Option<Value>) -> (u16, Value) {
        router::call(&self.engine, method, path, Some(key), body.as_ref())
    }

    fn op(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("POST", path, OPERATOR_KEY, Some(body))
    }

    /// An operator request that must answer 200: its answer.
    #[track_caller]
    fn op_ok(&self, path: &str, body: Value) -> Value {
        let (status, v) = self.op(path, body);
        assert_eq!(status, 200, "{v}");
        v
    }

    fn tenant(&self) -> Tenant {
        let (_, p) = self.op("/admin/partners", json!({"name": "Acme Payments"}));
        let pid = p["payload"]["partner_id"].as_str().unwrap().to_owned();
        let key = p["payload"]["api_key"].as_str().unwrap().to_owned();
        let mut app = application(&["PPD"]);
        app["partner_id"] = json!(pid);
        let (status, m) = self.call("POST", "/merchants", &key, Some(app));
        assert_eq!(status, 201, "{m}");
        let mid = m["id"].as_str().unwrap().to_owned();
        let (status, a) = self.op(&format!("/admin/merchants/{mid}/approve"), json!({}));
        assert_eq!(status, 200, "{a}");
        let mkey = a["payload"]["api_key"].as_str().unwrap().to_owned();
        Tenant { pid, key, mid, mkey }
    }

    /// A partner call with this key: its status-changes feed.
    fn partner_status(&self, pid: &str, key: &str) -> u16 {
        self.call("GET", &format!("/status-changes/0?partner_id={pid}"), key, None).0
    }

    /// A merchant call with this key: its events feed.
    fn merchant_status(&self, key: &str) -> u16 {
        self.call("GET", "/events", key, None).0
    }

    /// The sandbox clock to this instant.
    fn clock(&self, now: &str) {
        let (status, v) = self.op("/admin/clock", json!({ "now": now }));
        assert_eq!(status, 200, "{v}");
    }

    /// A key that never existed answers this; every refused key must too.
    fn unknown_key_answer(&self) -> (u16, Value) {
        self.call("GET", "/events", "mk_neverissued0000000000000000000000", None)
    }
}

fn refused(api: &Api, answer: (u16, Value)) {
    assert_eq!(answer, api.unknown_key_answer());
    assert_eq!(answer, (401, json!({"success": false, "message": "Authentication failed."})));
}

#[test]
fn a_rotated_partner_key_works_for_the_grace_window_then_is_refused() {
    let api = Api::new();
    let t = api.tenant();
    let r = api.op_ok(&format!("/admin/partners/{}/keys/rotate", t.pid), json!({}));
    let new = r["payload"]["api_key"].as_str().unwrap().to_owned();
    assert!(new.starts_with("pk_") && new != t.key);
    assert_eq!(r["payload"]["id"], json!(t.pid));
    assert_eq!(r["payload"]["previous_keys"], json!(1));
    // The default window: 24 hours from the sandbox clock's now.
    assert_eq!(r["payload"]["previous_keys_valid_until"], json!("2026-11-24T15:00:00+00:00"));
    assert_eq!(r["success"], json!(true));

    // Both work inside the window, to its last second.
    api.clock("2026-11-24T09:59:59-05:00");
    assert_eq!(api.partner_status(&t.pid, &t.key), 200);
    assert_eq!(api.partner_status(&t.pid, &new), 200);
    // At its end the old one is refused exactly like an unknown key.
    api.clock("2026-11-24T10:00:00-05:00");
    refused(&api, api.call("GET", &format!("/status-changes/0?partner_id={}", t.pid), &t.key, None));
    assert_eq!(api.partner_status(&t.pid, &new), 200);
    // The merchant's key is its own: untouched by the partner's rotation.
    assert_eq!(api.merchant_status(&t.mkey), 200);
}

#[test]
fn grace_zero_and_revoke_refuse_the_old_keys_at_once() {
    let api = Api::new();
    let t = api.tenant();
    let path = format!("/admin/partners/{}/keys/rotate", t.pid);
    let r = api.op_ok(&path, json!({"grace_seconds": 0}));
    assert_eq!(r["payload"]["previous_keys_valid_until"], Value::Null);
    let new = r["payload"]["api_key"].as_str().unwrap().to_owned();
    refused(&api, api.call("GET", &format!("/status-changes/0?partner_id={}", t.pid), &t.key, None));
    assert_eq!(api.partner_status(&t.pid, &new), 200);

    // A second rotation with a window, then a revocation: every key refused.
    let (_, r) = api.op(&path, json!({"grace_seconds": 3600}));
    let newer = r["payload"]["api_key"].as_str().unwrap().to_owned();
    assert_eq!(api.partner_status(&t.pid, &new), 200, "inside its window");
    let (status, v) = api.op(&format!("/admin/partners/{}/keys/revoke", t.pid), json!({}));
    assert_eq!((status, v), (200, json!({"success": true, "payload": {"id": t.pid, "revoked": 2}})));
    for k in [&t.key, &new, &newer] {
        assert_eq!(api.partner_status(&t.pid, k), 401);
    }
    // A rotation issues a working key again.
    let (_, r) = api.op(&path, json!({}));
    assert_eq!(r["payload"]["previous_keys"], json!(0));
    assert_eq!(api.partner_status(&t.pid, r["payload"]["api_key"].as_str().unwrap()), 200);
}

#[test]
fn a_merchant_key_rotates_and_revokes_on_its_own() {
    let api = Api::new();
    let t = api.tenant();
    let (status, r) =
        api.op(&format!("/admin/merchants/{}/keys/rotate", t.mid), json!({"grace_seconds": 60}));
    assert_eq!(status, 200, "{r}");
    let new = r["payload"]["api_key"].as_str().unwrap().to_owned();
    assert!(new.starts_with("mk_"));
    assert_eq!(api.merchant_status(&t.mkey), 200);
    api.clock("2026-11-23T10:01:00-05:00");
    refused(&api, api.call("GET", "/events", &t.mkey, None));
    assert_eq!(api.merchant_status(&new), 200);
    let (status, v) = api.op(&format!("/admin/merchants/{}/keys/revoke", t.mid), json!({}));
    assert_eq!((status, v["payload"]["revoked"].clone()), (200, json!(1)));
    assert_eq!(api.merchant_status(&new), 401);
    assert_eq!(api.partner_status(&t.pid, &t.key), 200, "the partner's key is its own");
}

#[test]
fn bad_requests_and_other_callers_are_refused() {
    let api = Api::new();
    let t = api.tenant();
    let rotate = format!("/admin/partners/{}/keys/rotate", t.pid);
    for grace in [json!(-1), json!(2_592_001), json!("60"), json!(1.5)] {
        let (status, v) = api.op(&rotate, json!({ "grace_seconds": grace }));
        assert_eq!(status, 422, "{grace}: {v}");
        assert_eq!(v["message"], json!("Failed to accept this transaction"));
    }
    let (status, _) = api.op(&rotate, json!({"grace_seconds": 2_592_000}));
    assert_eq!(status, 200, "30 days is the longest window");
    let (status, v) = api.op(&rotate, json!({"grace_seconds": null}));
    assert_eq!(status, 200, "null is the default window: {v}");
    let (status, v) = api.op(&format!("/admin/partners/{}/suspend", t.pid), json!({"why": "x"}));
    assert_eq!(status, 422, "{v}");
    // Unknown holders.
    let (status, v) = api.op("/admin/partners/par_nosuchpartner00000000000/keys/rotate", json!({}));
    assert_eq!(status, 404, "{v}");
    let (status, v) = api.op("/admin/merchants/mer_nosuchmerchant0000000000/suspend", json!({}));
    assert_eq!(
        (status, v["message"].clone()),
        (422, json!("'mer_nosuchmerchant0000000000' is an invalid Merchant ID"))
    );
    // A merchant in underwriting has no key to rotate.
    let mut app = application(&["PPD"]);
    app["partner_id"] = json!(t.pid);
    let (_, m) = api.call("POST", "/merchants", &t.key, Some(app));
    let (status, v) =
        api.op(&format!("/admin/merchants/{}/keys/rotate", m["id"].as_str().unwrap()), json!({}));
    assert_eq!((status, v["errors"][0]["code"].clone()), (422, json!("conflict")), "{v}");
    // Only the operator: a partner's or a merchant's key is refused.
    for key in [&t.key, &t.mkey] {
        for path in [
            rotate.clone(),
            format!("/admin/partners/{}/suspend", t.pid),
            "/admin/operator-key/rotate".into(),
        ] {
            refused(&api, api.call("POST", &path, key, Some(json!({}))));
        }
    }
}

#[test]
fn a_suspended_partner_and_its_merchants_are_refused_until_resumed() {
    let api = Api::new();
    let t = api.tenant();
    let other = api.tenant();
    let v = api.op_ok(&format!("/admin/partners/{}/suspend", t.pid), json!({}));
    assert_eq!(v["payload"], json!({"id": t.pid, "suspended": true, "since": "2026-11-23T15:00:00+00:00"}));
    let body = partner_transaction(&t.pid, &t.mid, "debit", "10.00");
    refused(&api, api.call("POST", "/transactions", &t.key, Some(body.clone())));
    refused(&api, api.call("GET", "/events", &t.mkey, None));
    assert_eq!(api.partner_status(&other.pid, &other.key), 200, "other partners are untouched");
    // Suspending again keeps the first instant.
    api.clock("2026-11-23T11:00:00-05:00");
    let (_, v) = api.op(&format!("/admin/partners/{}/suspend", t.pid), json!({}));
    assert_eq!(v["payload"]["since"], json!("2026-11-23T15:00:00+00:00"));

    let (status, v) = api.op(&format!("/admin/partners/{}/resume", t.pid), json!({}));
    assert_eq!(
        (status, v["payload"].clone()),
        (200, json!({"id": t.pid, "suspended": false, "since": null}))
    );
    assert_eq!(api.call("POST", "/transactions", &t.key, Some(body)).0, 201);
    assert_eq!(api.merchant_status(&t.mkey), 200);
}

#[test]
fn a_suspended_merchant_takes_no_transactions_and_its_key_is_refused() {
    let api = Api::new();
    let t = api.tenant();
    api.op_ok(&format!("/admin/merchants/{}/suspend", t.mid), json!({}));
    refused(&api, api.call("GET", "/events", &t.mkey, None));
    let body = partner_transaction(&t.pid, &t.mid, "debit", "10.00");
    let (status, v) = api.call("POST", "/transactions", &t.key, Some(body.clone()));
    assert_eq!(status, 403, "{v}");
    assert_eq!(v["message"], json!("Unable to accept PPD transactions for this merchant"));
    assert_eq!(v["errors"][0]["message"], json!("the merchant is suspended"));
    assert_eq!(api.partner_status(&t.pid, &t.key), 200, "the partner itself is not suspended");
    let (status, _) = api.op(&format!("/admin/merchants/{}/resume", t.mid), json!({}));
    assert_eq!(status, 200);
    assert_eq!(api.call("POST", "/transactions", &t.key, Some(body)).0, 201);
    assert_eq!(api.merchant_status(&t.mkey), 200);
}

#[test]
fn the_operator_key_rotates_with_a_grace_window() {
    let api = Api::new();
    let r = api.op_ok("/admin/operator-key/rotate", json!({"grace_seconds": 600}));
    assert_eq!(r["payload"]["id"], json!("operator"));
    assert_eq!(r["payload"]["previous_keys"], json!(1));
    let new = r["payload"]["api_key"].as_str().unwrap().to_owned();
    assert!(new.starts_with("ok_"));
    assert_eq!(api.op("/admin/partners", json!({"name": "Old key"})).0, 201, "inside the window");
    assert_eq!(api.call("POST", "/admin/partners", &new, Some(json!({"name": "New key"}))).0, 201);
    api.clock("2026-11-23T10:10:00-05:00");
    refused(&api, api.op("/admin/partners", json!({"name": "Too late"})));
    assert_eq!(api.call("GET", "/admin/return-rates", &new, None).0, 200);
    // Rotating again with no window retires the new key too, at once.
    let (_, r) = api.call("POST", "/admin/operator-key/rotate", &new, Some(json!({"grace_seconds": 0})));
    let newest = r["payload"]["api_key"].as_str().unwrap().to_owned();
    refused(&api, api.call("GET", "/admin/return-rates", &new, None));
    assert_eq!(api.call("GET", "/admin/return-rates", &newest, None).0, 200);
}

#[test]
fn every_change_survives_closing_and_reopening_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.redb");
    let open = || Api { engine: Engine::open(&path, options("2026-11-23 10:00")).unwrap() };
    let api = open();
    let t = api.tenant();
    let (_, r) = api.op(&format!("/admin/partners/{}/keys/rotate", t.pid), json!({"grace_seconds": 0}));
    let new = r["payload"]["api_key"].as_str().unwrap().to_owned();
    let (_, r) = api.op(&format!("/admin/merchants/{}/keys/rotate", t.mid), json!({"grace_seconds": 3600}));
    let mnew = r["payload"]["api_key"].as_str().unwrap().to_owned();
    assert_eq!(api.op(&format!("/admin/merchants/{}/suspend", t.mid), json!({})).0, 200);
    let (_, r) = api.op("/admin/operator-key/rotate", json!({"grace_seconds": 0}));
    let operator = r["payload"]["api_key"].as_str().unwrap().to_owned();
    drop(api);

    // The host passes its configured operator key again: the database says it
    // was rotated away.
    let api = open();
    refused(&api, api.op("/admin/partners", json!({"name": "x"})));
    refused(&api, api.call("GET", &format!("/status-changes/0?partner_id={}", t.pid), &t.key, None));
    assert_eq!(api.partner_status(&t.pid, &new), 200);
    assert_eq!(api.merchant_status(&mnew), 401, "still suspended");
    let resume = format!("/admin/merchants/{}/resume", t.mid);
    assert_eq!(api.call("POST", &resume, &operator, Some(json!({}))).0, 200);
    assert_eq!(api.merchant_status(&mnew), 200);
    assert_eq!(api.merchant_status(&t.mkey), 200, "the old merchant key: inside its hour");
    let later = json!({"now": "2026-11-23T11:00:00-05:00"});
    assert_eq!(api.call("POST", "/admin/clock", &operator, Some(later)).0, 200);
    drop(api);

    let api = open();
    assert_eq!(api.merchant_status(&t.mkey), 401, "its window ended");
    assert_eq!(api.merchant_status(&mnew), 200);
    drop(api);

    // A host that configures no operator key has no operator plane, even for a
    // key a rotation stored.
    let start = ach_tests::world::et("2026-11-23 10:00");
    let api = Api { engine: Engine::open(&path, ach_core::engine::EngineOptions::manual(start)).unwrap() };
    refused(&api, api.call("GET", "/admin/return-rates", &operator, None));
    assert_eq!(api.merchant_status(&mnew), 200);
}
