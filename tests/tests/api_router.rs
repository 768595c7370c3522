//! The router: every endpoint's envelope, and every documented error, through the
//! same function the HTTPS server, the C library and the browser module call.
#![allow(clippy::unwrap_used)]

use ach_core::api::{route, route_json, Request};
use ach_tests::router::{request, roomy_limit_values, send, Router};
use ach_tests::world::{application, partner_transaction, transaction, OPERATOR_KEY};
use serde_json::{json, Value};

type Api = Router;

/// A request whose body is this exact text (number literals as written).
fn call_raw(api: &Api, path: &str, key: &str, body: &str) -> (u16, Value) {
    send(&api.engine, &request("POST", path, Some(key), body.as_bytes().to_vec()))
}

/// A partner with an approved merchant for `classes`, approved with `limits`
/// (the others roomy): (partner_id, partner key, merchant id).
fn merchant(
    api: &Api,
    classes: &[&str],
    decline_duplicates: bool,
    limits: Value,
) -> (String, String, String) {
    let (pid, key) = api.partner("Acme Payments");
    let mut app = application(classes);
    app["velocities"]["decline_duplicates"] = json!(decline_duplicates);
    let mid = api.submit(&pid, &key, app);
    // Roomy limits (none of them in the way) but those given.
    let mut all = roomy_limit_values();
    for (k, v) in limits.as_object().unwrap() {
        all[k] = v.clone();
    }
    api.approve(&mid, all);
    (pid, key, mid)
}

/// A new router with a partner and an approved merchant: (the router, partner_id,
/// partner key, merchant id, merchant key).
fn setup() -> (Api, String, String, String, String) {
    let api = Api::new();
    let (pid, key) = api.partner("Acme Payments");
    let mut app = application(&["PPD", "WEB"]);
    app["velocities"]["decline_duplicates"] = json!(false);
    let mid = api.submit(&pid, &key, app);
    let merchant_key = api.approve(&mid, json!({"max_transaction_amount": "10000.00"}));
    (api, pid, key, mid, merchant_key)
}

#[test]
fn envelopes_exactly_as_the_spec_shows_them() {
    let (api, pid, key, mid, mkey) = setup();
    let t = partner_transaction(&pid, &mid, "debit", "10.00");
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
    let (api, pid, key, mid, _) = setup();
    let t = partner_transaction(&pid, &mid, "debit", "abc");
    let (status, v) = api.call("POST", "/transactions", Some(&key), Some(t));
    assert_eq!(status, 422);
    assert_eq!(v["success"], json!(false));
    assert_eq!(v["message"], json!("'abc' is an invalid Amount"));
    assert_eq!((v["error_code"].clone(), v["error_type"].clone()), (json!(14), json!("E")));
    assert_eq!(v["errors"][0]["field"], json!("amount"));
}

#[test]
fn authentication_failures_are_exactly_the_spec_envelope() {
    let (api, pid, key, mid, mkey) = setup();
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
    let (api, pid, key, _, _) = setup();
    let (status, v) = api.call("GET", "/nope", Some(&key), None);
    assert_eq!(
        (status, v["message"].clone(), v["errors"][0]["field"].clone()),
        (404, json!("Failed to accept this transaction"), json!("path"))
    );
    let (status, v) = api.call("DELETE", "/transactions", Some(&key), None);
    assert_eq!(status, 405);
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("use POST, GET"), "{v}");
    let req = request("POST", "/transactions", Some(&key), b"{\"partner_id\": ".to_vec());
    let r = route(&api.engine, &req);
    assert_eq!(r.status, 400);
    assert!(r.body.contains("invalid_json"));
    let big = Request { body: vec![b' '; ach_core::api::MAX_BODY_BYTES + 1], ..req };
    assert_eq!(route(&api.engine, &big).status, 413);
    let _ = pid;
}

#[test]
fn form_data_is_refused_and_query_strings_carry_requests_the_body_wins() {
    let (api, pid, key, mid, _) = setup();
    let form = format!("partner_id={pid}&merchant_id={mid}&amount=12.34&description=form&type=debit&standard_entry_class=PPD&customer[name]=Ada&customer[routing_number]=021000021&customer[account_number]=5551234&customer[account_type]=checking");
    let feed = format!("/status-changes/0?partner_id={pid}");
    let before = api.call("GET", &feed, Some(&key), None);
    for (content_type, named) in [
        ("application/x-www-form-urlencoded", "sent as application/x-www-form-urlencoded"),
        ("text/plain;charset=UTF-8", "sent as text/plain"),
        ("multipart/form-data; boundary=b", "sent as multipart/form-data"),
        ("", "sent without a Content-Type"),
    ] {
        let req = Request {
            content_type: Some(content_type.into()),
            ..request("POST", "/transactions", Some(&key), form.clone().into_bytes())
        };
        let (status, v) = ach_tests::router::send(&api.engine, &req);
        assert_eq!(
            (status, v["error_code"].clone(), v["errors"][0]["code"].clone()),
            (415, json!(10), json!("unsupported_media_type"))
        );
        assert_eq!(
            v["errors"][0]["message"],
            json!(format!("the body was {named}; send JSON as application/json (curl: -H 'Content-Type: application/json')"))
        );
        // A JSON text sent as another type is refused alike (a cross-site form can send one).
        let t = partner_transaction(&pid, &mid, "debit", "1.00");
        let req = Request { body: t.to_string().into_bytes(), ..req };
        assert_eq!(route(&api.engine, &req).status, 415);
    }
    assert_eq!(api.call("GET", &feed, Some(&key), None), before, "nothing created");
    let req = Request {
        content_type: Some("application/json".into()),
        ..request(
            "POST",
            "/transactions",
            Some(&key),
            partner_transaction(&pid, &mid, "debit", "1.00").to_string().into_bytes(),
        )
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
    let t = partner_transaction(&pid, &mid, "debit", "1.00");
    let both =
        Request { query: "amount=junk".into(), body: t.to_string().into_bytes(), content_type: None, ..req };
    assert_eq!(route(&api.engine, &both).status, 201, "{}", route(&api.engine, &both).body);
}

#[test]
fn institutions_and_categories() {
    let (api, pid, key, _, merchant_key) = setup();
    let (status, v) = api.call("GET", "/institutions/021000021", Some(&key), None);
    assert_eq!(
        (status, v["payload"]["name"].clone(), v["payload"]["state"].clone()),
        (200, json!("JPMORGAN CHASE"), json!("FL"))
    );
    let (status, v) = api.call("GET", "/institutions/021000022", Some(&key), None);
    assert_eq!((status, v["message"].clone()), (422, json!("'021000022' is an invalid Routing Number")));
    // A partner_id is not needed here, but one given must be the key's own.
    let own = format!("/institutions/021000021?partner_id={pid}");
    assert_eq!(api.call("GET", &own, Some(&key), None).0, 200);
    assert_eq!(api.call("GET", &own, Some(&merchant_key), None).0, 200, "the merchant's partner");
    for path in
        ["/institutions/021000021?partner_id=par_0000000000000000000000", "/categories?partner_id=par_x"]
    {
        let (status, v) = api.call("GET", path, Some(&key), None);
        assert_eq!(
            (status, v),
            (401, json!({"success": false, "message": "Authentication failed."})),
            "{path}"
        );
    }
    let (status, _) = api.call("GET", &format!("/categories?partner_id={pid}"), Some(&key), None);
    assert_eq!(status, 200);
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
    let (api, pid, key, mid, _) = setup();
    let (status, _) = api.op(
        "POST",
        &format!("/admin/partners/{pid}/limits"),
        json!({"daily_count": 5, "daily_amount": "1000.00"}),
    );
    assert_eq!(status, 200);
    let (status, v) = api.op("POST", &format!("/admin/partners/{pid}/limits"), json!({"daily_cuont": 5}));
    assert_eq!(status, 422, "{v}");
    let t = partner_transaction(&pid, &mid, "debit", "10.00");
    let (_, created) = api.call("POST", "/transactions", Some(&key), Some(t));
    let txn = created["payload"]["id"].as_str().unwrap().to_owned();
    let (status, clock) = api.op("POST", "/admin/clock", json!({"now": "2026-11-23T18:30:00-05:00"}));
    assert_eq!((status, clock["payload"]["originated"].clone()), (200, json!(1)));
    let (status, r) = api.op("POST", "/admin/returns", json!({"transaction_id": txn, "return_code": "R01"}));
    assert_eq!(status, 200, "{r}");
    let (status, _) = api.op("POST", "/admin/clock", json!({"now": "2026-11-01T00:00:00Z"}));
    assert_eq!(status, 422, "the clock never moves backwards");
    let fedach = std::fs::read_to_string(ach_tests::fedach_path()).unwrap();
    let req = request("POST", "/admin/routing", Some(OPERATOR_KEY), fedach.into_bytes());
    let r = route(&api.engine, &req);
    assert_eq!(
        (r.status, serde_json::from_str::<Value>(&r.body).unwrap()["payload"]["records"].clone()),
        (200, json!(18_198))
    );
    assert_eq!(api.call("GET", "/institutions/231380104", Some(&key), None).0, 200);
}

#[test]
fn the_json_form_for_c_and_wasm_hosts() {
    let (api, pid, key, _, _) = setup();
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

/// A POP debit (check number, state, images) of the merchant.
fn pop(pid: &str, mid: &str, amount: &str) -> Value {
    let png = "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    let mut t = partner_transaction(pid, mid, "debit", amount);
    t["standard_entry_class"] = json!("POP");
    t["check_number"] = json!("1001");
    t["state"] = json!("NY");
    t["check_image_front"] = json!(png);
    t["check_image_back"] = json!(png);
    t
}

/// `v` as JSON text with the member `key` written as `literal`.
fn with_literal(v: &Value, key: &str, literal: &str) -> String {
    let mut v = v.clone();
    v[key] = json!("@@LITERAL@@");
    v.to_string().replace("\"@@LITERAL@@\"", literal)
}

/// (HTTP status, catalogue code) of an answer, after checking it is one.
fn refusal(answer: &(u16, Value)) -> (u16, u64) {
    let (status, v) = answer;
    assert_eq!(v["success"], json!(false), "{v}");
    (*status, v["error_code"].as_u64().unwrap_or_else(|| panic!("{v}")))
}

#[test]
fn the_network_cap_and_the_merchants_limits_at_the_router() {
    let api = Api::new();
    let limits = json!({"max_transaction_amount": "30000.00", "min_transaction_amount": "5.00"});
    let (pid, key, mid) = merchant(&api, &["PPD", "BOC", "POP"], false, limits);
    let mut statuses = std::collections::BTreeMap::new();
    let mut seen = |answer: &(u16, Value)| {
        let (status, code) = refusal(answer);
        assert_eq!(*statuses.entry(code).or_insert(status), status, "message {code}: {}", answer.1);
        answer.1.clone()
    };

    // Nacha's cap for BOC and POP: message 14, the amount as sent, not "for this merchant".
    assert_eq!(api.call("POST", "/transactions", Some(&key), Some(pop(&pid, &mid, "25000.00"))).0, 201);
    let v = seen(&api.call("POST", "/transactions", Some(&key), Some(pop(&pid, &mid, "25000.01"))));
    assert_eq!(v["message"], json!("'25000.01' is an invalid Amount"));
    assert_eq!(
        (v["errors"][0]["field"].clone(), v["errors"][0]["code"].clone()),
        (json!("amount"), json!("over_limit"))
    );
    let problem = v["errors"][0]["message"].as_str().unwrap();
    assert!(problem.contains("POP entries are limited to $25,000.00 each by the Nacha rules"), "{problem}");
    assert!(!v.to_string().contains("for this merchant"), "{v}");
    let mut boc = pop(&pid, &mid, "1.00");
    boc["standard_entry_class"] = json!("BOC");
    let v = seen(&call_raw(&api, "/transactions", &key, &with_literal(&boc, "amount", "25000.50")));
    assert_eq!(v["message"], json!("'25000.50' is an invalid Amount"));

    // The merchant's own limits: above its maximum is message 21, below its minimum 14.
    let mut ppd = partner_transaction(&pid, &mid, "debit", "25000.01");
    assert_eq!(api.call("POST", "/transactions", Some(&key), Some(ppd.clone())).0, 201, "no cap for PPD");
    ppd["amount"] = json!("30000.01");
    let v = seen(&api.call("POST", "/transactions", Some(&key), Some(ppd.clone())));
    assert_eq!(v["message"], json!("Exceeded maximum dollar amount ($30,000.00) for this merchant."));
    ppd["amount"] = json!("4.99");
    let v = seen(&api.call("POST", "/transactions", Some(&key), Some(ppd.clone())));
    assert_eq!(v["message"], json!("'4.99' is an invalid Amount"));
    ppd["amount"] = json!("4.999");
    seen(&api.call("POST", "/transactions", Some(&key), Some(ppd)));
    assert_eq!(statuses, [(14, 422), (21, 403)].into_iter().collect());
}

#[test]
fn amounts_are_one_amount_and_message_14_has_one_status() {
    let api = Api::new();
    let (pid, key, mid) = merchant(&api, &["PPD"], true, json!({"max_transaction_amount": "5000.00"}));
    let t = partner_transaction(&pid, &mid, "debit", "1.00");
    // The same amount written three ways is one transaction: the others are its duplicates.
    let (status, v) = call_raw(&api, "/transactions", &key, &with_literal(&t, "amount", "1200.0"));
    assert_eq!(status, 201, "{v}");
    for literal in ["1200", "\"1200.00\"", "1200.00"] {
        let answer = call_raw(&api, "/transactions", &key, &with_literal(&t, "amount", literal));
        assert_eq!(refusal(&answer), (409, 17), "{literal}: {}", answer.1);
    }
    // Message 14 echoes exactly what was sent.
    for (literal, shown) in [("1200.000", "1200.000"), ("\"1200.000\"", "1200.000"), ("12E2", "12E2")] {
        let answer = call_raw(&api, "/transactions", &key, &with_literal(&t, "amount", literal));
        assert_eq!(refusal(&answer), (422, 14), "{literal}");
        assert_eq!(answer.1["message"], json!(format!("'{shown}' is an invalid Amount")));
    }
}

#[test]
fn values_as_the_spec_types_them_at_the_router() {
    let api = Api::new();
    let (pid, key, mid) = merchant(&api, &["PPD", "WEB", "POP"], false, json!({}));
    // SSN and tax id as JSON numbers that lost their leading zero.
    let mut app = application(&["PPD"]);
    app["partner_id"] = json!(pid);
    app["principal"][0]["ssn"] = json!(12345678);
    app["business_data"]["federal_tax_id"] = json!(12345678);
    let (status, m) = api.call("POST", "/merchants", Some(&key), Some(app.clone()));
    assert_eq!(status, 201, "{m}");
    app["principal"][0]["ssn"] = serde_json::from_str("123456789.0").unwrap();
    let answer = api.call("POST", "/merchants", Some(&key), Some(app));
    assert_eq!(refusal(&answer), (422, 10));
    let problem = &answer.1["errors"][0];
    assert_eq!(
        (problem["field"].clone(), problem["code"].clone()),
        (json!("principal[0].ssn"), json!("invalid_format"))
    );
    assert_eq!(
        problem["message"],
        json!("principal[0].ssn is not a valid SSN: a JSON number for it must not have a fraction")
    );

    // The POP state in any letter case.
    for (check, state) in [("2001", "ny"), ("2002", "Ny")] {
        let mut t = pop(&pid, &mid, "10.00");
        t["state"] = json!(state);
        t["check_number"] = json!(check);
        let (status, v) = api.call("POST", "/transactions", Some(&key), Some(t));
        assert_eq!(status, 201, "{state}: {v}");
    }

    // Members the class does not use are ignored, whatever they hold.
    for class in ["PPD", "WEB"] {
        let mut t = partner_transaction(&pid, &mid, "debit", "11.00");
        t["standard_entry_class"] = json!(class);
        t["check_number"] = json!("12a");
        t["state"] = json!(["XX"]);
        t["check_image_front"] = json!("not base64!");
        t["check_image_back"] = json!(7);
        t["account_validation"] = ach_tests::world::outside_validation();
        let (status, v) = api.call("POST", "/transactions", Some(&key), Some(t));
        assert_eq!(status, 201, "{class}: {v}");
    }
}
