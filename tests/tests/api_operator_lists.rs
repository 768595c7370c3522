//! The operator's lists through the router (what every host answers):
//! `GET /admin/partners` (every partner, in id order, a page at a time),
//! `GET /admin/partners/{id}/merchants` (a partner's merchants, newest
//! first) and `GET /admin/volume` (what each day's cut-offs sent to the
//! bank). Each is the operator's only, bounded by its page or its period.
//! Dates are fixed: the sandbox starts Monday 2026-11-23 10:00 Eastern.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use ach_tests::router::{roomy_limit_values, Router};
use ach_tests::world::{application, partner_transaction, screening_off_body, OPERATOR_KEY};
use serde_json::{json, Value};

/// A merchant application of the partner, submitted (not approved): its id.
fn submit(api: &Router, pid: &str, key: &str) -> String {
    let mut app = application(&["PPD"]);
    app["velocities"]["decline_duplicates"] = json!(false);
    api.submit(pid, key, app)
}

/// An operator read: its status and answer.
fn get(api: &Router, path: &str) -> (u16, Value) {
    api.call("GET", path, Some(OPERATOR_KEY), None)
}

/// The `field` of every problem of a refusal.
fn fields(v: &Value) -> Vec<String> {
    v["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
}

/// The ids of a page's `list` member.
fn ids(page: &Value, list: &str) -> Vec<String> {
    page["payload"][list].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_owned()).collect()
}

/// Every page of `path` (a query string ending in `limit=N`), following
/// `next_cursor`: the ids of each page, in order.
fn pages(api: &Router, path: &str, list: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut next = path.to_owned();
    loop {
        let (status, page) = get(api, &next);
        assert_eq!(status, 200, "{next}: {page}");
        out.push(ids(&page, list));
        match page["payload"]["next_cursor"].as_str() {
            Some(cursor) => next = format!("{path}&after={cursor}"),
            None => return out,
        }
    }
}

#[test]
fn partners_are_listed_in_id_order_a_bounded_page_at_a_time() {
    let api = Router::new();
    let made: Vec<(String, String)> = (0..7).map(|i| api.partner(&format!("Partner {i}"))).collect();
    let mut sorted: Vec<String> = made.iter().map(|(id, _)| id.clone()).collect();
    sorted.sort();

    // Pages of three: every partner once, in id order, never more than asked.
    let walked = pages(&api, "/admin/partners?limit=3", "partners");
    assert_eq!(walked.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 1]);
    assert_eq!(walked.concat(), sorted);
    // A page that ends exactly at the last partner has no cursor.
    let (_, all) = get(&api, "/admin/partners?limit=7");
    assert_eq!((ids(&all, "partners"), all["payload"]["next_cursor"].clone()), (sorted.clone(), Value::Null));
    // Without a limit: the default page of 25 (all seven here).
    let (_, default) = get(&api, "/admin/partners");
    assert_eq!(ids(&default, "partners"), sorted);

    // What each shows: its name, when it was made, its limits, suspended or not; no key.
    let (first_id, first_key) = &made[0];
    let (status, v) = api.op("POST", &format!("/admin/partners/{first_id}/suspend"), json!({}));
    assert_eq!(status, 200, "{v}");
    let (status, v) =
        api.op("POST", &format!("/admin/partners/{first_id}/limits"), json!({"daily_count": 7}));
    assert_eq!(status, 200, "{v}");
    let (_, all) = get(&api, "/admin/partners?limit=100");
    let shown = all["payload"]["partners"].as_array().unwrap();
    let first = shown.iter().find(|p| p["id"] == json!(first_id)).unwrap();
    assert_eq!(first["name"], "Partner 0");
    assert_eq!(first["created_at"], "2026-11-23 10:00:00");
    assert_eq!((first["suspended"].clone(), first["limits"]["daily_count"].clone()), (json!(true), json!(7)));
    assert_eq!(
        first.as_object().unwrap().keys().map(String::as_str).collect::<BTreeSet<_>>(),
        BTreeSet::from(["id", "name", "created_at", "limits", "suspended"])
    );
    assert_eq!(shown.iter().filter(|p| p["suspended"] == json!(true)).count(), 1);
    assert!(!all.to_string().contains(first_key.as_str()), "no key is ever listed");
}

#[test]
fn the_partner_list_refuses_what_it_cannot_page_by() {
    let api = Router::new();
    let (pid, key) = api.partner("Acme");
    submit(&api, &pid, &key);
    for limit in ["0", "101", "x"] {
        let (status, v) = get(&api, &format!("/admin/partners?limit={limit}"));
        assert_eq!((status, fields(&v)), (422, vec!["limit".to_owned()]), "{limit}: {v}");
    }
    let (status, v) = get(&api, "/admin/partners?after=forged");
    assert_eq!((status, fields(&v)), (422, vec!["after".to_owned()]), "{v}");
    // A cursor of another list (the partner's merchants) is not this list's.
    for _ in 0..2 {
        submit(&api, &pid, &key);
    }
    let (_, merchants) = get(&api, &format!("/admin/partners/{pid}/merchants?limit=1"));
    let cursor = merchants["payload"]["next_cursor"].as_str().unwrap().to_owned();
    let (status, v) = get(&api, &format!("/admin/partners?after={cursor}"));
    assert_eq!((status, fields(&v)), (422, vec!["after".to_owned()]), "{v}");
}

#[test]
fn a_partners_merchants_are_listed_newest_first_with_their_status() {
    let api = Router::new();
    let (pid, key) = api.partner("Acme");
    let (other, other_key) = api.partner("Other");
    let submitted: Vec<String> = (0..5)
        .map(|i| {
            // A second between submissions: newest first is a real order.
            let now = format!("2026-11-23T10:00:{:02}-05:00", 10 + i);
            assert_eq!(api.op("POST", "/admin/clock", json!({ "now": now })).0, 200);
            submit(&api, &pid, &key)
        })
        .collect();
    submit(&api, &other, &other_key);
    let (status, a) = api.op(
        "POST",
        &format!("/admin/merchants/{}/approve", submitted[1]),
        json!({"limits": roomy_limit_values()}),
    );
    assert_eq!(status, 200, "{a}");
    let (status, s) = api.op("POST", &format!("/admin/merchants/{}/suspend", submitted[2]), json!({}));
    assert_eq!(status, 200, "{s}");

    let newest_first: Vec<String> = submitted.iter().rev().cloned().collect();
    let walked = pages(&api, &format!("/admin/partners/{pid}/merchants?limit=2"), "merchants");
    assert_eq!(walked.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
    assert_eq!(walked.concat(), newest_first, "the other partner's merchant is not listed");

    let (_, all) = get(&api, &format!("/admin/partners/{pid}/merchants?limit=100"));
    let status_of = |id: &str| {
        let m =
            all["payload"]["merchants"].as_array().unwrap().iter().find(|m| m["id"] == json!(id)).unwrap();
        m["status"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        [status_of(&submitted[0]), status_of(&submitted[1]), status_of(&submitted[2])],
        ["submitted", "approved", "suspended"]
    );
    // The same page the partner reads of its own merchants.
    let (status, own) = api.call("GET", &format!("/merchants?partner_id={pid}&limit=100"), Some(&key), None);
    assert_eq!((status, &own["payload"]), (200, &all["payload"]));

    let (status, v) = get(&api, "/admin/partners/par_0123456789abcdefghijKL/merchants");
    assert_eq!((status, fields(&v)), (404, vec!["partner_id".to_owned()]), "{v}");
    assert_eq!(v["errors"][0]["message"], "no partner 'par_0123456789abcdefghijKL'");
    let (status, v) = get(&api, &format!("/admin/partners/{pid}/merchants?limit=101"));
    assert_eq!((status, fields(&v)), (422, vec!["limit".to_owned()]), "{v}");
}

#[test]
fn the_volume_per_day_is_what_each_days_cut_offs_sent() {
    let api = Router::new();
    assert_eq!(api.op("PUT", "/admin/risk-rules", screening_off_body()).0, 200);
    let (pid, key) = api.partner("Acme");
    let mid = submit(&api, &pid, &key);
    let (status, a) =
        api.op("POST", &format!("/admin/merchants/{mid}/approve"), json!({"limits": roomy_limit_values()}));
    assert_eq!(status, 200, "{a}");
    let create = |kind: &str, amount: &str| {
        let (status, v) = api.call(
            "POST",
            "/transactions",
            Some(&key),
            Some(partner_transaction(&pid, &mid, kind, amount)),
        );
        assert_eq!(status, 201, "{v}");
    };
    // Monday: two debits and a credit go at 18:00; Tuesday: one debit.
    create("debit", "10.00");
    create("debit", "2.50");
    create("credit", "4.00");
    assert_eq!(api.op("POST", "/admin/clock", json!({"now": "2026-11-23T18:30:00-05:00"})).0, 200);
    create("debit", "7.00");
    assert_eq!(api.op("POST", "/admin/clock", json!({"now": "2026-11-24T18:30:00-05:00"})).0, 200);

    let (status, v) = get(&api, "/admin/volume?from=2026-11-22&to=2026-11-25");
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (v["payload"]["from"].clone(), v["payload"]["to"].clone()),
        (json!("2026-11-22"), json!("2026-11-25"))
    );
    let days = v["payload"]["days"].as_array().unwrap();
    let line = |d: &Value| {
        (
            d["date"].as_str().unwrap().to_owned(),
            d["files"].as_u64().unwrap(),
            d["entries"].as_u64().unwrap(),
            d["total_debit"].to_string(),
            d["total_credit"].to_string(),
            d["cash_letters"].as_u64().unwrap(),
        )
    };
    let zero = |date: &str| (date.to_owned(), 0, 0, "0.00".to_owned(), "0.00".to_owned(), 0);
    assert_eq!(
        days.iter().map(line).collect::<Vec<_>>(),
        [
            zero("2026-11-22"),
            ("2026-11-23".to_owned(), 1, 3, "12.50".to_owned(), "4.00".to_owned(), 0),
            ("2026-11-24".to_owned(), 1, 1, "7.00".to_owned(), "0.00".to_owned(), 0),
            zero("2026-11-25"),
        ],
        "{v}"
    );
    // The files the days count are the ones listed.
    let (_, files) = get(&api, "/admin/origination-files");
    let listed: u64 =
        files["payload"].as_array().unwrap().iter().map(|f| f["entries"].as_u64().unwrap()).sum();
    assert_eq!(listed, 4);
    // A period of one day; at most 366 days; from not after to; both dates needed.
    let (_, one) = get(&api, "/admin/volume?from=2026-11-24&to=2026-11-24");
    assert_eq!(one["payload"]["days"].as_array().unwrap().len(), 1);
    let (status, longest) = get(&api, "/admin/volume?from=2026-01-01&to=2027-01-01");
    assert_eq!((status, longest["payload"]["days"].as_array().map(Vec::len)), (200, Some(366)));
    for (query, field) in [
        ("from=2026-01-01&to=2027-01-02", "to"),
        ("from=2026-11-25&to=2026-11-24", "to"),
        ("from=2026-13-01&to=2026-11-24", "from"),
    ] {
        let (status, v) = get(&api, &format!("/admin/volume?{query}"));
        assert_eq!((status, fields(&v)), (422, vec![field.to_owned()]), "{query}: {v}");
    }
    let (status, v) = get(&api, "/admin/volume?from=2026-11-24");
    assert_eq!(status, 422, "{v}");
}

#[test]
fn the_operator_lists_are_the_operators_only() {
    let api = Router::new();
    let (pid, key) = api.partner("Acme");
    let mid = submit(&api, &pid, &key);
    let (_, a) =
        api.op("POST", &format!("/admin/merchants/{mid}/approve"), json!({"limits": roomy_limit_values()}));
    let merchant_key = a["payload"]["api_key"].as_str().unwrap().to_owned();
    let refused = json!({"success": false, "message": "Authentication failed."});
    for path in [
        format!("/admin/partners?partner_id={pid}"),
        format!("/admin/partners/{pid}/merchants?partner_id={pid}"),
        "/admin/volume?from=2026-11-23&to=2026-11-23".to_owned(),
    ] {
        for caller in [Some(key.as_str()), Some(merchant_key.as_str()), None, Some("ok_wrong")] {
            assert_eq!(api.call("GET", &path, caller, None), (401, refused.clone()), "{path} {caller:?}");
        }
        assert_eq!(get(&api, &path).0, 200, "{path}");
    }
}
