//! `GET /admin/return-rates` through the router (what every host answers): Nacha
//! return-rate monitoring per merchant over the last 60 Eastern days, and the
//! threshold crossings a recorded return reports. Dates are fixed: the sandbox
//! starts Monday 2026-11-23 10:00 Eastern.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, Operation, Outcome, ReturnGroup, ThresholdCrossing};
use ach_tests::router::{roomy_limit_values, Router};
use ach_tests::world::{application, partner_transaction, OPERATOR_KEY};
use serde_json::{json, Value};

type Api = Router;

/// An approved PPD merchant of the partner with limits out of the way.
fn merchant(api: &Api, pid: &str, key: &str) -> String {
    let mut app = application(&["PPD"]);
    app["velocities"]["decline_duplicates"] = json!(false);
    let mid = api.submit(pid, key, app);
    api.approve(&mid, roomy_limit_values());
    mid
}

/// `n` transactions of `kind` for the merchant: their ids.
fn create(api: &Api, pid: &str, key: &str, mid: &str, kind: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let t = partner_transaction(pid, mid, kind, "10.00");
            let (status, created) = api.call("POST", "/transactions", Some(key), Some(t));
            assert_eq!(status, 201, "{created}");
            created["payload"]["id"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn clock(api: &Api, now: &str) {
    let (status, v) = api.op("POST", "/admin/clock", json!({ "now": now }));
    assert_eq!(status, 200, "{v}");
}

fn ret(api: &Api, txn: &str, code: &str) {
    let (status, v) = api.op("POST", "/admin/returns", json!({"transaction_id": txn, "return_code": code}));
    assert_eq!(status, 200, "{v}");
}

/// The answer's merchants, by merchant id.
fn return_rates(api: &Api) -> Vec<Value> {
    let (status, v) = api.call("GET", "/admin/return-rates", Some(OPERATOR_KEY), None);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["success"], json!(true), "{v}");
    v["payload"].as_array().unwrap().clone()
}

/// Record a return through the engine, for the crossings its outcome carries.
fn ret_crossings(api: &Api, txn: &str, code: &str) -> Vec<ThresholdCrossing> {
    let op = Operation::RecordReturn {
        transaction_id: txn.to_owned(),
        return_code: code.to_owned(),
        return_date: None,
    };
    match api.engine.execute(&Caller::Operator, op) {
        Ok(Outcome::ReturnRecorded { crossings, .. }) => crossings,
        other => panic!("{other:?}"),
    }
}

fn of<'a>(rates: &'a [Value], mid: &str) -> &'a Value {
    rates.iter().find(|r| r["merchant_id"] == json!(mid)).unwrap_or_else(|| panic!("{mid} in {rates:?}"))
}

/// `{count, rate, threshold, exceeded}` with the rate as the fraction of integers.
fn group(count: u64, debits: u64, threshold: f64, exceeded: bool) -> Value {
    json!({"count": count, "rate": count as f64 / debits as f64, "threshold": threshold, "exceeded": exceeded})
}

#[test]
fn return_rates_count_the_windows_debits_against_the_nacha_thresholds() {
    let api = Api::new();
    ach_tests::world::screening_off(&api.engine);
    let (pid, key) = api.partner("Acme Payments");
    let mid = merchant(&api, &pid, &key);
    let quiet = merchant(&api, &pid, &key);
    let credits_only = merchant(&api, &pid, &key);
    let debits = create(&api, &pid, &key, &mid, "debit", 200);
    let credits = create(&api, &pid, &key, &mid, "credit", 5);
    create(&api, &pid, &key, &quiet, "debit", 10);
    create(&api, &pid, &key, &credits_only, "credit", 3);

    // Nothing originated yet: no merchant has debits in the window.
    assert_eq!(return_rates(&api), Vec::<Value>::new());
    clock(&api, "2026-11-23T18:30:00-05:00");
    let rates = return_rates(&api);
    assert_eq!(rates.len(), 2, "a merchant without debits is left out: {rates:?}");
    let zero = |n| {
        json!({"merchant_id": mid, "partner_id": pid, "window_days": 60, "debits": n,
            "unauthorized": group(0, n, 0.005, false), "administrative": group(0, n, 0.03, false),
            "overall": group(0, n, 0.15, false)})
    };
    assert_eq!(of(&rates, &mid), &zero(200));
    let mut quiet_zero = zero(10);
    quiet_zero["merchant_id"] = json!(quiet);
    assert_eq!(of(&rates, &quiet), &quiet_zero);

    // 1 unauthorized of 200 is exactly 0.5 %: not over; the second crosses.
    assert_eq!(ret_crossings(&api, &debits[0], "R10"), []);
    let crossed = ret_crossings(&api, &debits[1], "R10");
    let crossing = |group, count| ThresholdCrossing {
        merchant_id: mid.clone(),
        partner_id: pid.clone(),
        group,
        count,
        debits: 200,
    };
    assert_eq!(crossed, [crossing(ReturnGroup::Unauthorized, 2)]);
    assert_eq!(crossed[0].rate(), 0.01);
    assert_eq!(crossed[0].threshold(), 0.005);
    // Already over: a third is no crossing.
    assert_eq!(ret_crossings(&api, &debits[2], "R05"), []);
    // 6 administrative of 200 is exactly 3 %: not over.
    for txn in &debits[3..9] {
        ret(&api, txn, "R03");
    }
    for txn in &debits[9..12] {
        ret(&api, txn, "R01");
    }
    // A returned credit counts nowhere.
    ret(&api, &credits[0], "R10");
    ret(&api, &credits[1], "R03");
    let rates = return_rates(&api);
    let a = of(&rates, &mid);
    assert_eq!(a["debits"], json!(200));
    assert_eq!(a["unauthorized"], group(3, 200, 0.005, true));
    assert_eq!(a["administrative"], group(6, 200, 0.03, false));
    assert_eq!(a["overall"], group(12, 200, 0.15, false));
    assert_eq!(of(&rates, &quiet), &quiet_zero);

    // The seventh administrative return crosses 3 %.
    assert_eq!(ret_crossings(&api, &debits[12], "R02"), [crossing(ReturnGroup::Administrative, 7)]);
    // Overall: 13 now; 30 of 200 is exactly 15 %, the 31st crosses.
    for txn in &debits[13..30] {
        ret(&api, txn, "R01");
    }
    assert_eq!(of(&return_rates(&api), &mid)["overall"], group(30, 200, 0.15, false));
    assert_eq!(ret_crossings(&api, &debits[30], "R01"), [crossing(ReturnGroup::Overall, 31)]);
    let a = of(&return_rates(&api), &mid).clone();
    assert_eq!(a["administrative"], group(7, 200, 0.03, true));
    assert_eq!(a["overall"], group(31, 200, 0.15, true));

    // Later debits, originated Tuesday 2026-12-01.
    clock(&api, "2026-12-01T10:00:00-05:00");
    let later = create(&api, &pid, &key, &mid, "debit", 10);
    clock(&api, "2026-12-01T18:30:00-05:00");
    ret(&api, &later[0], "R10");
    assert_eq!(of(&return_rates(&api), &mid)["debits"], json!(210));

    // 2027-01-21: the window's 60 days begin 2026-11-23, so everything still counts.
    clock(&api, "2027-01-21T10:00:00-05:00");
    let a = of(&return_rates(&api), &mid).clone();
    assert_eq!((a["debits"].clone(), a["unauthorized"]["count"].clone()), (json!(210), json!(4)));
    // A day later the debits of 2026-11-23 (and their returns) have left it.
    clock(&api, "2027-01-22T10:00:00-05:00");
    let rates = return_rates(&api);
    assert_eq!(rates.len(), 1, "{rates:?}");
    let a = of(&rates, &mid);
    assert_eq!(a["debits"], json!(10));
    assert_eq!(a["unauthorized"], group(1, 10, 0.005, true));
    assert_eq!(a["administrative"], group(0, 10, 0.03, false));
    assert_eq!(a["overall"], group(1, 10, 0.15, false));
    // A return outside the window changes no rate and crosses nothing.
    assert_eq!(ret_crossings(&api, &debits[31], "R10"), []);
    assert_eq!(of(&return_rates(&api), &mid)["unauthorized"]["count"], json!(1));
    // And later still, nothing is left.
    clock(&api, "2027-02-01T10:00:00-05:00");
    assert_eq!(return_rates(&api), Vec::<Value>::new());
}

#[test]
fn return_rates_are_for_the_operator_only() {
    let api = Api::new();
    let (pid, key) = api.partner("Acme Payments");
    let mid = merchant(&api, &pid, &key);
    create(&api, &pid, &key, &mid, "debit", 1);
    clock(&api, "2026-11-23T18:30:00-05:00");
    let refused = json!({"success": false, "message": "Authentication failed."});
    for k in [None, Some(key.as_str()), Some("ok_not_the_operator_key")] {
        assert_eq!(api.call("GET", "/admin/return-rates", k, None), (401, refused.clone()), "{k:?}");
    }
    // Another method is a 405.
    assert_eq!(api.op("POST", "/admin/return-rates", json!({})).0, 405);
    assert_eq!(return_rates(&api).len(), 1);
}
