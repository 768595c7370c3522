//! The router: every endpoint's envelope, and every documented error, through the
//! same function the HTTPS server, the C library and the browser module call.
#![allow(clippy::unwrap_used)]

use ach_core::api::{route, route_json, Request, Response};
use ach_core::engine::Engine;
use ach_tests::world::{application, options, transaction, OPERATOR_KEY};
use serde_json::{json, Value};

struct Api {
    engine: Engine,
}

impl Api {
    fn new() -> Api {
        Api { engine: Engine::in_memory(options("2026-11-23 10:00")).unwrap() }
    }

    fn call(&self, method: &str, path: &str, key: Option<&str>, body: Option<Value>) -> (u16, Value) {
        let req = Request {
            method: method.into(),
            path: path.into(),
            api_key: key.map(str::to_owned),
            body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
            ..Request::default()
        };
        let Response { status, body } = route(&self.engine, &req);
        (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")))
    }

    fn op(&self, method: &str, path: &str, body: Value) -> (u16, Value) {
        self.call(method, path, Some(OPERATOR_KEY), Some(body))
    }

    /// A partner and an approved merchant: (partner_id, partner key, merchant id, merchant key).
    fn setup(&self) -> (String, String, String, String) {
        let (_, p) = self.op("POST", "/admin/partners", json!({"name": "Acme Payments"}));
        let (pid, key) = (
            p["payload"]["partner_id"].as_str().unwrap().to_owned(),
            p["payload"]["api_key"].as_str().unwrap().to_owned(),
        );
        let mut app = application(&["PPD", "WEB"]);
        app["partner_id"] = json!(pid);
        app["velocities"]["decline_duplicates"] = json!(false);
        let (status, m) = self.call("POST", "/merchants", Some(&key), Some(app));
        assert_eq!(status, 201, "{m}");
        let mid = m["id"].as_str().unwrap().to_owned();
        let (status, a) = self.op(
            "POST",
            &format!("/admin/merchants/{mid}/approve"),
            json!({"limits": {"max_transaction_amount": "10000.00"}}),
        );
        assert_eq!(status, 200, "{a}");
        (pid, key, mid, a["payload"]["api_key"].as_str().unwrap().to_owned())
    }
}

#[test]
fn envelopes_exactly_as_the_spec_shows_them() {
    let api = Api::new();
    let (pid, key, mid, mkey) = api.setup();
    let mut t = transaction(&mid, "debit", "10.00");
    t["partner_id"] = json!(pid);
    let (status, created) = api.call("POST", "/transactions", Some(&key), Some(t.clone()));
    assert_eq!(status, 201);
    assert_eq!(created["success"], json!(true));
    let txn = created["payload"]["id"].as_str().unwrap().to_owned();
    assert!(txn.starts_with("txn_"));
    assert_eq!(created.as_object().unwrap().len(), 2);

    let c = json!({"partner_id": pid, "merchant_id": "global", "name": "Grace", "routing_number": "026009593", "account_number": "12345678", "account_type": "savings"});
    let (status, customer) = api.call("POST", "/customers", Some(&key), Some(c));
    assert_eq!((status, customer["success"].clone()), (201, json!("true")));
    let token = customer["payload"]["id"].as_str().unwrap().to_owned();
    let (status, deleted) =
        api.call("DELETE", &format!("/customers/{token}?partner_id={pid}"), Some(&key), None);
    assert_eq!((status, deleted), (200, json!({"success": "true"})));

    let (status, changes) = api.call("GET", &format!("/status-changes/0?partner_id={pid}"), Some(&key), None);
    assert_eq!((status, changes["success"].clone()), (200, json!("true")));
    let change = &changes["payload"]["changes"][0];
    assert_eq!(change["transaction_id"], json!(txn));
    assert_eq!(change["status"], json!("A"));
    for k in [
        "change_timestamp",
        "origination_date",
        "effective_date",
        "settlement_date",
        "return_date",
        "return_code",
        "reason",
    ] {
        assert!(change.get(k).is_some(), "{k} missing");
    }
    assert!(changes["payload"]["new_pointer"].is_string());

    let (status, events) = api.call("GET", "/events", Some(&mkey), None);
    assert_eq!(status, 200);
    assert_eq!(events["events"][0]["transaction_id"], json!(txn));
    assert_eq!(events["exists_more_events"], json!(false));
    let next = events["new_pointer"].as_str().unwrap();
    let (_, more) = api.call("GET", &format!("/events/{next}"), Some(&mkey), None);
    assert_eq!(more["events"], json!([]));

    let (status, voided) =
        api.call("PUT", &format!("/transactions/{txn}/void?partner_id={pid}"), Some(&key), None);
    assert_eq!((status, voided), (200, json!({"success": true, "payload": {"id": txn, "status": "voided"}})));
}

#[test]
fn failures_carry_the_catalogue_message_code_type_and_fields() {
    let api = Api::new();
    let (pid, key, mid, _) = api.setup();
    let mut t = transaction(&mid, "debit", "abc");
    t["partner_id"] = json!(pid);
    let (status, v) = api.call("POST", "/transactions", Some(&key), Some(t));
    assert_eq!(status, 422);
    assert_eq!(v["success"], json!(false));
    assert_eq!(v["message"], json!("'abc' is an invalid Amount"));
    assert_eq!((v["error_code"].clone(), v["error_type"].clone()), (json!(14), json!("E")));
    assert_eq!(v["errors"][0]["field"], json!("amount"));
}

#[test]
fn authentication_failures_are_exactly_the_spec_envelope() {
    let api = Api::new();
    let (pid, key, mid, mkey) = api.setup();
    let (_, other) = api.op("POST", "/admin/partners", json!({"name": "Other"}));
    let other_pid = other["payload"]["partner_id"].as_str().unwrap();
    let mut t = transaction(&mid, "debit", "1.00");
    let exact = json!({"success": false, "message": "Authentication failed."});
    for (k, partner) in [
        (None, Some(pid.as_str())),
        (None, None),
        (Some("pk_wrong"), Some(&pid)),
        (Some("pk_wrong"), None),
        (Some(&key), Some(other_pid)),
        (Some(&mkey), Some(&pid)),
        (Some(&mkey), None),
        (Some(OPERATOR_KEY), None),
    ] {
        match partner {
            Some(p) => t["partner_id"] = json!(p),
            None => drop(t.as_object_mut().unwrap().remove("partner_id")),
        }
        assert_eq!(
            api.call("POST", "/transactions", k, Some(t.clone())),
            (401, exact.clone()),
            "{k:?} {partner:?}"
        );
    }
    // The partner's own key without partner_id (absent, empty, not a string):
    // the answer names partner_id, in the body or the query string alike.
    let named = json!({"success": false, "message": "Authentication failed.", "errors": [{"field": "partner_id",
        "code": "required", "message": "partner_id is required with this key: send it in the body or in the query string"}]});
    for partner in [None, Some(json!("")), Some(json!(7)), Some(json!(null))] {
        match &partner {
            Some(p) => t["partner_id"] = p.clone(),
            None => drop(t.as_object_mut().unwrap().remove("partner_id")),
        }
        assert_eq!(
            api.call("POST", "/transactions", Some(&key), Some(t.clone())),
            (401, named.clone()),
            "{partner:?}"
        );
    }
    assert_eq!(api.call("GET", "/status-changes/0", Some(&key), None), (401, named.clone()));
    assert_eq!(api.call("PUT", "/transactions/txn_x/void", Some(&key), None), (401, named.clone()));
    assert_eq!(
        api.call("POST", "/admin/partners", Some(&key), Some(json!({"name": "x"}))),
        (401, exact.clone())
    );
    assert_eq!(api.call("GET", "/events", Some(&key), None), (401, exact));
}

#[test]
fn unknown_paths_wrong_methods_bad_json_and_big_bodies() {
    let api = Api::new();
    let (pid, key, _, _) = api.setup();
    let (status, v) = api.call("GET", "/nope", Some(&key), None);
    assert_eq!(
        (status, v["message"].clone(), v["errors"][0]["field"].clone()),
        (404, json!("Failed to accept this transaction"), json!("path"))
    );
    let (status, v) = api.call("GET", "/transactions", Some(&key), None);
    assert_eq!(status, 405);
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("POST"));
    let req = Request {
        method: "POST".into(),
        path: "/transactions".into(),
        api_key: Some(key.clone()),
        body: b"{\"partner_id\": ".to_vec(),
        ..Request::default()
    };
    let r = route(&api.engine, &req);
    assert_eq!(r.status, 400);
    assert!(r.body.contains("invalid_json"));
    let big = Request { body: vec![b' '; ach_core::api::MAX_BODY_BYTES + 1], ..req };
    assert_eq!(route(&api.engine, &big).status, 413);
    let _ = pid;
}

#[test]
fn form_data_and_query_strings_carry_requests_and_the_body_wins() {
    let api = Api::new();
    let (pid, key, mid, _) = api.setup();
    let form = format!("partner_id={pid}&merchant_id={mid}&amount=12.34&description=form&type=debit&standard_entry_class=PPD&customer[name]=Ada&customer[routing_number]=021000021&customer[account_number]=5551234&customer[account_type]=checking");
    let req = Request {
        method: "POST".into(),
        path: "/transactions".into(),
        api_key: Some(key.clone()),
        content_type: Some("application/x-www-form-urlencoded".into()),
        body: form.clone().into_bytes(),
        ..Request::default()
    };
    assert_eq!(route(&api.engine, &req).status, 201);
    let query = Request {
        query: form.replace("amount=12.34", "amount=99.99"),
        body: Vec::new(),
        content_type: None,
        ..req.clone()
    };
    assert_eq!(route(&api.engine, &query).status, 201);
    // Body and query both carry amount: the body's 1.00 wins over the query's junk.
    let mut t = transaction(&mid, "debit", "1.00");
    t["partner_id"] = json!(pid);
    let both =
        Request { query: "amount=junk".into(), body: t.to_string().into_bytes(), content_type: None, ..req };
    assert_eq!(route(&api.engine, &both).status, 201, "{}", route(&api.engine, &both).body);
}

#[test]
fn institutions_and_categories() {
    let api = Api::new();
    let (_, key, _, merchant_key) = api.setup();
    let (status, v) = api.call("GET", "/institutions/021000021", Some(&key), None);
    assert_eq!(
        (status, v["payload"]["name"].clone(), v["payload"]["state"].clone()),
        (200, json!("JPMORGAN CHASE"), json!("FL"))
    );
    let (status, v) = api.call("GET", "/institutions/021000022", Some(&key), None);
    assert_eq!((status, v["message"].clone()), (422, json!("'021000022' is an invalid Routing Number")));
    let (status, v) = api.call("GET", "/institutions/231380104", Some(&key), None);
    // Message 16 answers 422 here as it does for a transaction's routing number.
    assert_eq!((status, v["message"].clone()), (422, json!("Routing Number '231380104' was not found")));
    assert_eq!(
        (v["errors"][0]["field"].clone(), v["errors"][0]["code"].clone()),
        (json!("routing_number"), json!("not_found"))
    );
    let (status, v) = api.call("GET", "/institutions/02100002", Some(&key), None);
    assert_eq!((status, v["errors"][0]["code"].clone()), (422, json!("invalid_format")));
    let (status, v) = api.call("GET", "/institutions/021000022", Some(&key), None);
    assert_eq!((status, v["errors"][0]["code"].clone()), (422, json!("invalid_check_digit")));
    let (status, v) = api.call("GET", "/categories", Some(&key), None);
    assert_eq!(status, 200);
    assert!(v["payload"]["categories"].as_array().unwrap().iter().any(|c| c["code"] == json!(5411)));
    assert_eq!(api.call("GET", "/categories", None, None).0, 401);
    // Any kind of key, no partner_id.
    for other in [merchant_key.as_str(), OPERATOR_KEY] {
        assert_eq!(api.call("GET", "/categories", Some(other), None).0, 200);
        assert_eq!(api.call("GET", "/institutions/021000021", Some(other), None).0, 200);
    }
    assert_eq!(api.call("GET", "/institutions/021000021", Some("pk_forged"), None).0, 401);
}

#[test]
fn the_operator_plane_runs_the_whole_lifecycle() {
    let api = Api::new();
    let (pid, key, mid, _) = api.setup();
    let (status, _) = api.op(
        "POST",
        &format!("/admin/partners/{pid}/limits"),
        json!({"daily_count": 5, "daily_amount": "1000.00"}),
    );
    assert_eq!(status, 200);
    let (status, v) = api.op("POST", &format!("/admin/partners/{pid}/limits"), json!({"daily_cuont": 5}));
    assert_eq!(status, 422, "{v}");
    let mut t = transaction(&mid, "debit", "10.00");
    t["partner_id"] = json!(pid);
    let (_, created) = api.call("POST", "/transactions", Some(&key), Some(t));
    let txn = created["payload"]["id"].as_str().unwrap().to_owned();
    let (status, clock) = api.op("POST", "/admin/clock", json!({"now": "2026-11-23T18:30:00-05:00"}));
    assert_eq!((status, clock["payload"]["originated"].clone()), (200, json!(1)));
    let (status, r) = api.op("POST", "/admin/returns", json!({"transaction_id": txn, "return_code": "R01"}));
    assert_eq!(status, 200, "{r}");
    let (status, _) = api.op("POST", "/admin/clock", json!({"now": "2026-11-01T00:00:00Z"}));
    assert_eq!(status, 422, "the clock never moves backwards");
    let fedach = std::fs::read_to_string(ach_tests::fedach_path()).unwrap();
    let req = Request {
        method: "POST".into(),
        path: "/admin/routing".into(),
        api_key: Some(OPERATOR_KEY.into()),
        body: fedach.into_bytes(),
        ..Request::default()
    };
    let r = route(&api.engine, &req);
    assert_eq!(
        (r.status, serde_json::from_str::<Value>(&r.body).unwrap()["payload"]["records"].clone()),
        (200, json!(18_198))
    );
    assert_eq!(api.call("GET", "/institutions/231380104", Some(&key), None).0, 200);
}

#[test]
fn the_json_form_for_c_and_wasm_hosts() {
    let api = Api::new();
    let (pid, key, _, _) = api.setup();
    let out: Value = serde_json::from_str(&route_json(
        &api.engine,
        &json!({"method": "GET", "path": "/status-changes/0", "query": {"partner_id": pid}, "api_key": key})
            .to_string(),
    ))
    .unwrap();
    assert_eq!(out["status"], json!(200));
    assert_eq!(out["body"]["success"], json!("true"));
    let bad: Value = serde_json::from_str(&route_json(&api.engine, "{not json")).unwrap();
    assert_eq!(bad["status"], json!(400));
}
