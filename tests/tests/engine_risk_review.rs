//! Fraud monitoring through the router (what every host answers): each rule
//! holds what it names and nothing else, a held entry never originates until
//! released, a rejected one never does, the partner may void it, the events
//! feed tells the merchant, the report counts it, and the exposure figure
//! follows the merchant's entries. Dates are fixed: Monday 2026-11-23 10:00
//! Eastern, Thanksgiving on the Thursday.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, HELD_EVENT_TYPE, RELEASED_EVENT_TYPE};
use ach_core::model::{Event, Status};
use ach_tests::router;
use ach_tests::world::{transaction, World, OPERATOR_KEY};
use serde_json::{json, Value};

/// A partner with one merchant (PPD) and the merchant's events caller.
struct Shop {
    w: World,
    p: String,
    pc: Caller,
    m: String,
    mc: Caller,
}

impl Shop {
    fn new() -> Shop {
        let w = World::new("2026-11-23 10:00");
        let (p, pc) = w.partner();
        let (m, mc) = w.merchant(&p, &pc, &["PPD"]);
        Shop { w, p, pc, m, mc }
    }

    /// A PPD entry of `kind` and `amount` to `account` under `name`: its id.
    fn entry(&self, kind: &str, amount: &str, account: &str, name: &str) -> String {
        let mut t = transaction(&self.m, kind, amount);
        t["customer"]["account_number"] = json!(account);
        t["customer"]["name"] = json!(name);
        self.w.create(&self.p, &self.pc, &t).unwrap()
    }

    /// The open reviews: (transaction id, rules).
    fn held(&self) -> Vec<(String, Vec<String>)> {
        let (status, v) = self.admin("GET", "/admin/reviews", None);
        assert_eq!(status, 200, "{v}");
        v["payload"]["reviews"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                assert_eq!(r["status"], "held", "{r}");
                let rules = r["rules"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_owned());
                (r["transaction_id"].as_str().unwrap().to_owned(), rules.collect())
            })
            .collect()
    }

    /// Ten debits to one account, then an eleventh, held by `velocity`: its id.
    fn held_by_velocity(&self) -> String {
        for _ in 0..10 {
            self.entry("debit", "10.00", "11110000", "Ada Lovelace");
        }
        self.entry("debit", "10.00", "11110000", "Ada Lovelace")
    }

    /// An operator request.
    fn admin(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        router::call(&self.w.engine, method, path, Some(OPERATOR_KEY), body.as_ref())
    }

    fn decide(&self, id: &str, how: &str, note: Option<&str>) -> (u16, Value) {
        let body = note.map(|n| json!({ "note": n }));
        self.admin("POST", &format!("/admin/reviews/{id}/{how}"), body)
    }

    fn status(&self, id: &str) -> Option<Status> {
        self.w.history(&self.p, &self.pc, id).last().map(|c| c.status)
    }

    fn events(&self) -> Vec<Event> {
        self.w.events(&self.mc)
    }

    fn rules(&self, body: Value) -> (u16, Value) {
        self.admin("PUT", "/admin/risk-rules", Some(body))
    }
}

/// A JSON number's text (amounts are exact decimals: `100.00`).
fn text(v: &Value) -> String {
    v.to_string()
}

fn ids(held: &[(String, Vec<String>)]) -> Vec<&str> {
    held.iter().map(|(id, _)| id.as_str()).collect()
}

#[test]
fn velocity_holds_the_eleventh_entry_to_one_account_in_24_hours_until_released() {
    let s = Shop::new();
    let first: Vec<String> = (0..10).map(|_| s.entry("debit", "10.00", "11110000", "Ada Lovelace")).collect();
    assert!(s.held().is_empty());
    let eleventh = s.entry("debit", "10.00", "11110000", "Ada Lovelace");
    assert_eq!(s.held(), [(eleventh.clone(), vec!["velocity".to_owned()])]);
    // Another account of the same merchant is not held.
    let other = s.entry("debit", "10.00", "22220000", "Grace Hopper");
    assert_eq!(ids(&s.held()), [eleventh.as_str()]);

    let events = s.events();
    let held_events: Vec<&Event> = events.iter().filter(|e| e.kind == HELD_EVENT_TYPE).collect();
    assert_eq!(held_events.len(), 1);
    assert_eq!(held_events[0].change.transaction_id, eleventh);
    assert_eq!(held_events[0].change.status, Status::A);
    let rules: Vec<&str> = held_events[0].review.as_ref().unwrap().rules.iter().map(|r| r.as_str()).collect();
    assert_eq!(rules, ["velocity"]);

    // The 6 PM cut-off originates everything but the held entry.
    s.w.at("2026-11-23 18:30");
    for id in first.iter().chain([&other]) {
        assert_eq!(s.status(id), Some(Status::B), "{id}");
    }
    assert_eq!(s.status(&eleventh), Some(Status::A));
    s.w.at("2026-11-24 18:30");
    assert_eq!(s.status(&eleventh), Some(Status::A), "a held entry waits for every cut-off");

    // Released: it goes at the next cut-off, and the merchant is told.
    let (status, review) = s.decide(&eleventh, "release", Some("customer called to confirm"));
    assert_eq!(status, 200, "{review}");
    assert_eq!(review["payload"]["status"], "released");
    assert_eq!(review["payload"]["decided_by"], "operator");
    assert_eq!(review["payload"]["note"], "customer called to confirm");
    assert!(s.held().is_empty());
    let released: Vec<Event> = s.events().into_iter().filter(|e| e.kind == RELEASED_EVENT_TYPE).collect();
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].change.transaction_id, eleventh);
    // Released on Tuesday evening: Wednesday's cut-off takes it.
    s.w.at("2026-11-25 17:59");
    assert_eq!(s.status(&eleventh), Some(Status::A));
    s.w.at("2026-11-25 18:30");
    assert_eq!(s.status(&eleventh), Some(Status::B));

    // Decided once: a second decision is a conflict.
    let (status, again) = s.decide(&eleventh, "reject", None);
    assert_eq!(status, 409, "{again}");
    assert_eq!(again["errors"][0]["field"], "transaction_id");
    assert_eq!(again["errors"][0]["code"], "conflict");
    // 24 hours after the tenth, the account takes entries again unheld.
    s.entry("debit", "10.00", "11110000", "Ada Lovelace");
    assert!(s.held().is_empty());
}

#[test]
fn a_rejected_entry_never_originates_and_shows_r_with_its_reason() {
    let s = Shop::new();
    let held = s.held_by_velocity();
    let (status, review) = s.decide(&held, "reject", Some("payee unknown"));
    assert_eq!(status, 200, "{review}");
    assert_eq!(review["payload"]["status"], "rejected");
    let last = s.w.history(&s.p, &s.pc, &held).pop().unwrap();
    assert_eq!(last.status, Status::R);
    assert_eq!(last.return_code, None);
    assert_eq!(last.reason.as_deref(), Some("Rejected in review"));
    s.w.at("2026-11-23 18:30");
    assert_eq!(s.status(&held), Some(Status::R));
    // Neither a release nor a void moves it any more.
    assert_eq!(s.decide(&held, "release", None).0, 409);
    let refused = s.w.void(&s.p, &s.pc, &held).unwrap_err();
    assert_eq!(
        (refused.status(), refused.errors()[0].message.as_str()),
        (409, "this transaction is already voided")
    );
    // A note over 500 characters is refused before anything is decided.
    let another = s.entry("debit", "10.00", "11110000", "Ada Lovelace");
    let (status, long) = s.decide(&another, "release", Some(&"x".repeat(501)));
    assert_eq!(status, 422, "{long}");
    assert_eq!(long["errors"][0]["field"], "note");
    assert_eq!(ids(&s.held()), [another.as_str()]);
    // Unknown entries are 404.
    assert_eq!(s.decide("txn_nope", "release", None).0, 404);
}

#[test]
fn the_partner_may_void_a_held_entry_and_its_review_closes() {
    let s = Shop::new();
    let held = s.held_by_velocity();
    s.w.void(&s.p, &s.pc, &held).unwrap();
    assert!(s.held().is_empty());
    let last = s.w.history(&s.p, &s.pc, &held).pop().unwrap();
    assert_eq!((last.status, last.reason.as_deref()), (Status::R, Some("Voided")));
    assert_eq!(s.decide(&held, "release", None).0, 409);
}

#[test]
fn a_first_credit_to_an_account_is_held_from_the_minimum_amount() {
    let s = Shop::new();
    let below = s.entry("credit", "999.99", "30000001", "Ada Lovelace");
    let at = s.entry("credit", "1000.00", "30000002", "Grace Hopper");
    let debit = s.entry("debit", "5000.00", "30000003", "Alan Turing");
    assert_eq!(s.held(), [(at.clone(), vec!["new_account_credit".to_owned()])]);
    // The account's second credit is no longer its first.
    s.entry("credit", "1500.00", "30000001", "Ada Lovelace");
    assert_eq!(ids(&s.held()), [at.as_str()]);
    let _ = (below, debit);
    // With the minimum raised, a first credit of 1,000.00 passes.
    let (status, rules) = s.rules(json!({"new_account_credit": {"min_amount": "2000.00"}}));
    assert_eq!(status, 200, "{rules}");
    assert_eq!(text(&rules["payload"]["new_account_credit"]["min_amount"]), "2000.00");
    s.entry("credit", "1000.00", "30000004", "Edsger Dijkstra");
    assert_eq!(ids(&s.held()), [at.as_str()]);
}

#[test]
fn a_credit_to_a_payees_replaced_account_is_held_for_the_rules_days() {
    let s = Shop::new();
    s.entry("credit", "10.00", "40000001", "Jane Doe");
    assert!(s.held().is_empty(), "the first account under a name replaces nothing");
    // Another account under the same name, case and spaces aside.
    let changed = s.entry("credit", "10.00", "40000002", "  JANE   doe ");
    assert_eq!(s.held(), [(changed.clone(), vec!["changed_account_credit".to_owned()])]);
    // A debit to a new account under the name is not what the rule watches.
    s.entry("debit", "10.00", "40000003", "Jane Doe");
    assert_eq!(ids(&s.held()), [changed.as_str()]);
    // The first account is not a replacement of the second.
    s.entry("credit", "10.00", "40000001", "Jane Doe");
    assert_eq!(ids(&s.held()), [changed.as_str()]);
    // 31 days on, the replacing account is no longer new.
    s.w.at("2026-12-24 10:00");
    s.entry("credit", "10.00", "40000002", "Jane Doe");
    assert_eq!(ids(&s.held()), [changed.as_str()], "{:?}", s.held());
    // Within the days it still is: a third account is held again.
    let third = s.entry("credit", "10.00", "40000004", "jane doe");
    assert_eq!(ids(&s.held()), [changed.as_str(), third.as_str()]);
}

#[test]
fn an_amount_far_above_the_merchants_average_is_held_once_there_is_history() {
    let s = Shop::new();
    // Nine debits of 100.00 are not yet history enough.
    for n in 0..9 {
        s.entry("debit", "100.00", &format!("5000000{n}"), "Payer");
    }
    s.entry("debit", "900.00", "50000100", "Payer");
    assert!(s.held().is_empty());
    // Ten debits, average 180.00: five times is 900.00, which is not above it.
    s.entry("debit", "900.00", "50000101", "Payer");
    assert!(s.held().is_empty());
    // Eleven debits, average 245.45...: 1,227.28 is above five times it.
    let outlier = s.entry("debit", "1227.28", "50000102", "Payer");
    assert_eq!(s.held(), [(outlier.clone(), vec!["amount_outlier".to_owned()])]);
    // Credits have their own history (none yet).
    s.entry("credit", "999.00", "50000103", "Payee");
    assert_eq!(ids(&s.held()), [outlier.as_str()]);
}

/// An exposure answer's figure, unsettled credits, unsettled debits and
/// recently settled debits.
fn parts(e: &Value) -> [String; 4] {
    ["exposure", "unsettled_credits", "unsettled_debits", "recently_settled_debits"].map(|k| text(&e[k]))
}

#[test]
fn an_entry_over_the_exposure_limit_is_held_and_the_figure_follows_the_entries() {
    let s = Shop::new();
    let exposure = || {
        let (status, v) = s.admin("GET", &format!("/admin/merchants/{}/exposure", s.m), None);
        assert_eq!(status, 200, "{v}");
        v["payload"].clone()
    };
    let (status, v) = s.admin(
        "POST",
        &format!("/admin/merchants/{}/limits", s.m),
        Some(json!({"exposure_limit": "100.00"})),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(text(&v["payload"]["limits"]["exposure_limit"]), "100.00");
    let d60 = s.entry("debit", "60.00", "60000001", "A");
    let c30 = s.entry("credit", "30.00", "60000002", "B");
    let e = exposure();
    assert_eq!(parts(&e), ["90.00", "30.00", "60.00", "0.00"]);
    assert_eq!(text(&e["exposure_limit"]), "100.00");
    // 90 + 20 is over 100: held, and not counted while held.
    let over = s.entry("debit", "20.00", "60000003", "C");
    assert_eq!(s.held(), [(over.clone(), vec!["exposure_limit".to_owned()])]);
    assert_eq!(parts(&exposure())[0], "90.00");
    // 90 + 10 reaches it, which is allowed.
    s.entry("credit", "10.00", "60000004", "D");
    assert_eq!(parts(&exposure())[0], "100.00");
    // A void takes an entry out; a release puts the held one in.
    s.w.void(&s.p, &s.pc, &c30).unwrap();
    assert_eq!(parts(&exposure()), ["70.00", "10.00", "60.00", "0.00"]);
    assert_eq!(s.decide(&over, "release", None).0, 200);
    assert_eq!(parts(&exposure()), ["90.00", "10.00", "80.00", "0.00"]);
    // Originated Monday: credits settle Tuesday, debits two banking days
    // after (Friday, past Thanksgiving) and count two banking days more.
    s.w.at("2026-11-24 18:00");
    assert_eq!(parts(&exposure()), ["80.00", "0.00", "80.00", "0.00"]);
    s.w.at("2026-11-27 18:00");
    assert_eq!(parts(&exposure()), ["80.00", "0.00", "0.00", "80.00"]);
    s.w.at("2026-12-01 18:00");
    assert_eq!(
        parts(&exposure()),
        ["80.00", "0.00", "0.00", "80.00"],
        "Tuesday is the second banking day after"
    );
    s.w.at("2026-12-02 10:00");
    assert_eq!(parts(&exposure()), ["0.00", "0.00", "0.00", "0.00"]);
    let _ = d60;
    // An unknown merchant is 404; a partner's limits take no exposure limit.
    assert_eq!(s.admin("GET", "/admin/merchants/mer_nope/exposure", None).0, 404);
    let (status, v) =
        s.admin("POST", &format!("/admin/partners/{}/limits", s.p), Some(json!({"exposure_limit": "5.00"})));
    assert_eq!(status, 422, "{v}");
    assert_eq!(v["errors"][0]["field"], "exposure_limit");
}

#[test]
fn the_risk_report_counts_each_rules_screening_and_what_came_of_it() {
    let s = Shop::new();
    let released = s.held_by_velocity();
    let rejected = s.entry("debit", "10.00", "11110000", "Ada Lovelace");
    let first_credit = s.entry("credit", "5000.00", "70000001", "Big Payee");
    assert_eq!(s.decide(&released, "release", None).0, 200);
    assert_eq!(s.decide(&rejected, "reject", None).0, 200);
    s.w.at("2026-11-23 18:30");
    // The released debit comes back unauthorized.
    let (status, v) =
        s.admin("POST", "/admin/returns", Some(json!({"transaction_id": released, "return_code": "R10"})));
    assert_eq!(status, 200, "{v}");
    let (status, v) = s.admin("GET", "/admin/risk-report?from=2026-11-23&to=2026-11-23", None);
    assert_eq!(status, 200, "{v}");
    let line = |rule: &str| {
        v["payload"]["rules"].as_array().unwrap().iter().find(|l| l["rule"] == rule).unwrap().clone()
    };
    assert_eq!(v["payload"]["rules"].as_array().unwrap().len(), 5);
    assert_eq!(
        line("velocity"),
        json!({"rule": "velocity", "screened": 13, "held": 2, "released": 1, "rejected": 1, "returned_unauthorized": 1})
    );
    assert_eq!(
        line("new_account_credit"),
        json!({"rule": "new_account_credit", "screened": 13, "held": 1, "released": 0, "rejected": 0, "returned_unauthorized": 0})
    );
    assert_eq!(line("exposure_limit")["held"], 0);
    assert_eq!(ids(&s.held()), [first_credit.as_str()]);
    // Another period counts nothing; a period backwards or of bad dates is refused.
    let (_, empty) = s.admin("GET", "/admin/risk-report?from=2026-11-24&to=2026-12-31", None);
    assert!(empty["payload"]["rules"].as_array().unwrap().iter().all(|l| l["screened"] == 0), "{empty}");
    let (status, v) = s.admin("GET", "/admin/risk-report?from=2026-11-24&to=2026-11-23", None);
    assert_eq!((status, v["errors"][0]["field"].clone()), (422, json!("to")));
    let (status, v) = s.admin("GET", "/admin/risk-report?from=2026-13-01&to=2026-11-23", None);
    assert_eq!((status, v["errors"][0]["field"].clone()), (422, json!("from")));
}

#[test]
fn the_rules_are_the_operators_to_read_and_set_within_their_ranges() {
    let s = Shop::new();
    let (status, rules) = s.admin("GET", "/admin/risk-rules", None);
    assert_eq!(status, 200, "{rules}");
    assert_eq!(text(&rules["payload"]["new_account_credit"]["min_amount"]), "1000.00");
    let mut shown = rules["payload"].clone();
    shown["new_account_credit"]["min_amount"] = json!(1000);
    assert_eq!(
        shown,
        json!({
            "new_account_credit": {"enabled": true, "min_amount": 1000},
            "changed_account_credit": {"enabled": true, "days": 30},
            "amount_outlier": {"enabled": true, "factor": 5, "min_history": 10},
            "velocity": {"enabled": true, "max_per_day": 10},
            "exposure_limit": {"enabled": true}
        })
    );
    // A rule named is replaced whole; the others stay.
    let (status, set) =
        s.rules(json!({"velocity": {"max_per_day": 3}, "amount_outlier": {"enabled": false}}));
    assert_eq!(status, 200, "{set}");
    assert_eq!(set["payload"]["velocity"], json!({"enabled": true, "max_per_day": 3}));
    assert_eq!(set["payload"]["amount_outlier"], json!({"enabled": false, "factor": 5, "min_history": 10}));
    assert_eq!(set["payload"]["changed_account_credit"], json!({"enabled": true, "days": 30}));
    assert_eq!(s.admin("GET", "/admin/risk-rules", None).1["payload"], set["payload"]);
    // The fourth entry to an account in a day is held now.
    for _ in 0..3 {
        s.entry("debit", "10.00", "11110000", "Ada Lovelace");
    }
    let fourth = s.entry("debit", "10.00", "11110000", "Ada Lovelace");
    assert_eq!(ids(&s.held()), [fourth.as_str()]);
    // Out of range or unknown: refused, nothing changed.
    for (body, field) in [
        (json!({"velocity": {"max_per_day": 0}}), "velocity.max_per_day"),
        (json!({"changed_account_credit": {"days": 366}}), "changed_account_credit.days"),
        (json!({"amount_outlier": {"factor": 1}}), "amount_outlier.factor"),
        (json!({"new_account_credit": {"min_amount": "0.00"}}), "new_account_credit.min_amount"),
    ] {
        let (status, v) = s.rules(body);
        assert_eq!((status, v["errors"][0]["field"].as_str()), (422, Some(field)), "{v}");
    }
    assert_eq!(s.rules(json!({"velocity": {"max": 3}})).0, 422);
    assert_eq!(s.rules(json!([null, null])).0, 422, "members in order are no object");
    assert_eq!(s.rules(json!({"velocity": [true, 3]})).0, 422);
    assert_eq!(s.rules(json!({"speed": {}})).0, 422);
    assert_eq!(s.admin("GET", "/admin/risk-rules", None).1["payload"], set["payload"]);
    // A partner's key does not reach the operator plane.
    let (p, key) = {
        let (status, v) = s.admin("POST", "/admin/partners", Some(json!({"name": "Other"})));
        assert_eq!(status, 201);
        (v["payload"]["partner_id"].clone(), v["payload"]["api_key"].as_str().unwrap().to_owned())
    };
    let _ = p;
    let (status, _) = router::call(&s.w.engine, "GET", "/admin/reviews", Some(&key), None);
    assert_eq!(status, 401);
}
