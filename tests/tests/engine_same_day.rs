//! Same Day ACH through the router: an entry with `same_day: true` waits for
//! the next same-day cut-off (10:00, 14:15, 16:15 ET by default, or the
//! operator's), originates in a file of its own dated that day, is effective
//! that day and settles at its window's settlement time (13:00, 17:00, 18:00
//! ET) whatever its direction; others keep the 18:00 cut-off. Over
//! $1,000,000.00, or an ICL item, is refused; a void before the window keeps
//! it out of every file.
#![allow(clippy::unwrap_used)]

use ach_core::engine::Engine;
use ach_core::nacha;
use ach_tests::router;
use ach_tests::world::{transaction, World, OPERATOR_KEY};
use serde_json::{json, Value};

struct Day {
    w: World,
    partner: String,
    key: String,
    merchant: String,
}

impl Day {
    fn new(start: &str) -> Day {
        let w = World::new(start);
        w.screening_off();
        let (partner, key, caller) = w.partner_with_key();
        let (merchant, _) = w.merchant(&partner, &caller, &["PPD", "ICL"]);
        Day { w, partner, key, merchant }
    }

    fn engine(&self) -> &Engine {
        &self.w.engine
    }

    fn create(&self, kind: &str, amount: &str, same_day: Option<Value>) -> (u16, Value) {
        let mut body = transaction(&self.merchant, kind, amount);
        body["partner_id"] = json!(self.partner);
        if let Some(v) = same_day {
            body["same_day"] = v;
        }
        router::call(self.engine(), "POST", "/transactions", Some(&self.key), Some(&body))
    }

    fn created(&self, kind: &str, amount: &str, same_day: bool) -> String {
        let (status, answer) = self.create(kind, amount, Some(json!(same_day)));
        assert_eq!(status, 201, "{answer}");
        answer["payload"]["id"].as_str().unwrap().to_owned()
    }

    fn read(&self, id: &str) -> Value {
        let path = format!("/transactions/{id}?partner_id={}", self.partner);
        let (status, answer) = router::call(self.engine(), "GET", &path, Some(&self.key), None);
        assert_eq!(status, 200, "{answer}");
        answer["payload"].clone()
    }

    fn status(&self, id: &str) -> String {
        self.read(id)["history"].as_array().unwrap().last().unwrap()["status"].as_str().unwrap().to_owned()
    }

    fn operator(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        router::call(self.engine(), method, path, Some(OPERATOR_KEY), body.as_ref())
    }

    /// Every file listed: its summary and its parsed records.
    fn files(&self) -> Vec<(Value, nacha::NachaFile)> {
        let (status, list) = self.operator("GET", "/admin/origination-files", None);
        assert_eq!(status, 200, "{list}");
        let mut out = Vec::new();
        for summary in list["payload"].as_array().unwrap() {
            let id = summary["id"].as_str().unwrap();
            let (_, file) = self.operator("GET", &format!("/admin/origination-files/{id}"), None);
            let text = file["payload"]["text"].as_str().unwrap();
            let parsed = nacha::read(text.as_bytes()).unwrap();
            assert!(parsed.problems.is_empty(), "{id}: {:?}", parsed.problems);
            assert!(nacha::findings(&parsed.file).is_empty(), "{id}: {:?}", nacha::findings(&parsed.file));
            out.push((summary.clone(), parsed.file));
        }
        out
    }
}

#[test]
fn each_window_originates_its_own_file_effective_and_settled_that_day() {
    // Monday 2026-11-23, a banking day.
    let d = Day::new("2026-11-23 08:00");
    let early = d.created("debit", "10.00", true);
    let credit = d.created("credit", "20.00", true);
    let standard = d.created("debit", "30.00", false);
    assert!(d.read(&early)["same_day"].as_bool().unwrap());
    assert!(!d.read(&standard)["same_day"].as_bool().unwrap());
    d.w.at("2026-11-23 09:59");
    assert_eq!(d.status(&early), "A");
    d.w.at("2026-11-23 10:00");
    for id in [&early, &credit] {
        let t = d.read(id);
        assert_eq!(d.status(id), "B", "{t}");
        assert_eq!(
            (&t["origination_date"], &t["effective_date"], &t["settlement_date"]),
            (&json!("2026-11-23"), &json!("2026-11-23"), &json!("2026-11-23")),
            "{t}"
        );
    }
    assert_eq!(d.status(&standard), "A", "the standard entry waits for 18:00");
    // Created at the first cut-off itself: the second window.
    let second = d.created("debit", "40.00", true);
    let files = d.files();
    assert_eq!(files.len(), 1, "{:?}", files.iter().map(|f| &f.0).collect::<Vec<_>>());
    let (summary, file) = &files[0];
    assert_eq!(summary["effective_date"], "2026-11-23");
    assert_eq!((summary["entries"].as_u64(), summary["total_debit"].as_f64()), (Some(2), Some(10.0)));
    for batch in &file.batches {
        assert_eq!(batch.effective_entry_date.to_string(), "2026-11-23");
    }
    d.w.at("2026-11-23 12:59");
    assert_eq!((d.status(&early), d.status(&credit)), ("B".into(), "B".into()));
    d.w.at("2026-11-23 13:00");
    // Debits and credits alike settle at the window's settlement time.
    assert_eq!((d.status(&early), d.status(&credit)), ("S".into(), "S".into()));
    d.w.at("2026-11-23 14:15");
    assert_eq!(d.status(&second), "B");
    d.w.at("2026-11-23 16:59");
    assert_eq!(d.status(&second), "B");
    d.w.at("2026-11-23 17:00");
    assert_eq!(d.status(&second), "S", "window two settles at 17:00");
    d.w.at("2026-11-23 18:00");
    assert_eq!(d.status(&standard), "B");
    let t = d.read(&standard);
    assert_eq!((&t["effective_date"], &t["settlement_date"]), (&json!("2026-11-24"), &json!("2026-11-27")));
    let files = d.files();
    assert_eq!(files.len(), 3, "10:00, 14:15 and 18:00");
    let ids: std::collections::BTreeSet<&str> = files.iter().map(|f| f.0["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 3, "each file its own id");
    let efficient: Vec<&str> = files.iter().map(|f| f.0["effective_date"].as_str().unwrap()).collect();
    assert_eq!(efficient, ["2026-11-23", "2026-11-23", "2026-11-24"]);
}

#[test]
fn an_entry_after_the_last_window_waits_for_the_next_banking_days_first() {
    // Wednesday before Thanksgiving: the next banking day is Friday.
    let d = Day::new("2026-11-25 16:15");
    let late = d.created("debit", "10.00", true);
    d.w.at("2026-11-25 18:00");
    assert_eq!(d.status(&late), "A");
    d.w.at("2026-11-27 10:00");
    let t = d.read(&late);
    assert_eq!((d.status(&late).as_str(), &t["effective_date"]), ("B", &json!("2026-11-27")));
    // A weekend entry: Monday's first window.
    let d = Day::new("2026-11-28 12:00");
    let weekend = d.created("credit", "10.00", true);
    d.w.at("2026-11-30 10:00");
    assert_eq!(d.read(&weekend)["origination_date"], "2026-11-30");
}

#[test]
fn a_million_dollars_is_the_most_and_checks_are_never_same_day() {
    let d = Day::new("2026-11-23 08:00");
    let (status, answer) = d.create("debit", "1000000.01", Some(json!(true)));
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["message"], "'1000000.01' is an invalid Amount");
    assert_eq!(
        (&answer["errors"][0]["field"], &answer["errors"][0]["code"]),
        (&json!("amount"), &json!("same_day_limit"))
    );
    // The same amount the standard way, and a million exactly same day.
    assert_eq!(d.create("debit", "1000000.01", Some(json!(false))).0, 201);
    assert_eq!(d.create("debit", "1000000.00", Some(json!(true))).0, 201);
    assert_eq!(d.create("debit", "5.00", Some(Value::Null)).0, 201, "null: not same day");
    let (status, answer) = d.create("debit", "5.00", Some(json!("yes")));
    assert_eq!((status, &answer["errors"][0]["field"]), (422, &json!("same_day")), "{answer}");
    let mut icl = transaction(&d.merchant, "debit", "5.00");
    icl["partner_id"] = json!(d.partner);
    icl["standard_entry_class"] = json!("ICL");
    icl["check_number"] = json!("1001");
    icl["check_image_front"] = json!("iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    icl["check_image_back"] = json!("SUkqAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    icl["same_day"] = json!(true);
    let (status, answer) = router::call(d.engine(), "POST", "/transactions", Some(&d.key), Some(&icl));
    assert_eq!((status, &answer["errors"][0]["field"]), (422, &json!("same_day")), "{answer}");
}

#[test]
fn a_same_day_entry_voided_before_its_window_never_leaves() {
    let d = Day::new("2026-11-23 08:00");
    let voided = d.created("debit", "10.00", true);
    let kept = d.created("debit", "11.00", true);
    let (status, answer) = router::call(
        d.engine(),
        "PUT",
        &format!("/transactions/{voided}/void"),
        Some(&d.key),
        Some(&json!({"partner_id": d.partner})),
    );
    assert_eq!(status, 200, "{answer}");
    d.w.at("2026-11-23 10:00");
    let files = d.files();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0["entries"], 1);
    assert_eq!(d.status(&kept), "B");
    assert_eq!(d.status(&voided), "R");
}

#[test]
fn the_operator_sets_the_cutoffs_each_before_its_deadline() {
    let d = Day::new("2026-11-23 08:00");
    let (_, current) = d.operator("GET", "/admin/originator", None);
    assert_eq!(current["payload"]["same_day_cutoffs"], json!(["10:00", "14:15", "16:15"]), "{current}");
    let mut originator = current["payload"].clone();
    for (cutoffs, field) in [
        (json!(["10:45", "11:00"]), "same_day_cutoffs[1]"),
        (json!(["16:45"]), "same_day_cutoffs[0]"),
        (json!(["10:00", "14:15", "16:15", "16:30"]), "same_day_cutoffs"),
        (json!(["noon"]), "same_day_cutoffs[0]"),
    ] {
        originator["same_day_cutoffs"] = cutoffs;
        let (status, answer) = d.operator("PUT", "/admin/originator", Some(originator.clone()));
        assert_eq!((status, &answer["errors"][0]["field"]), (422, &json!(field)), "{answer}");
    }
    // Only the second window, at 11:00: an entry at 09:00 waits for it, and
    // settles at 17:00.
    originator["same_day_cutoffs"] = json!(["11:00"]);
    let (status, answer) = d.operator("PUT", "/admin/originator", Some(originator));
    assert_eq!(status, 200, "{answer}");
    d.w.at("2026-11-23 09:00");
    let id = d.created("debit", "10.00", true);
    d.w.at("2026-11-23 10:59");
    assert_eq!(d.status(&id), "A");
    d.w.at("2026-11-23 11:00");
    assert_eq!(d.status(&id), "B");
    d.w.at("2026-11-23 16:59");
    assert_eq!(d.status(&id), "B");
    d.w.at("2026-11-23 17:00");
    assert_eq!(d.status(&id), "S");
}

#[test]
fn feeds_and_events_carry_the_same_day_dates() {
    let d = Day::new("2026-11-23 08:00");
    let id = d.created("debit", "10.00", true);
    d.w.at("2026-11-23 13:00");
    let (status, page) = router::call(
        d.engine(),
        "GET",
        &format!("/status-changes?partner_id={}", d.partner),
        Some(&d.key),
        None,
    );
    assert_eq!(status, 200, "{page}");
    let changes: Vec<&Value> = page["payload"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["transaction_id"] == id.as_str())
        .collect();
    let statuses: Vec<&str> = changes.iter().map(|c| c["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["A", "B", "S"], "{changes:?}");
    for c in &changes[1..] {
        assert_eq!(
            (&c["effective_date"], &c["settlement_date"]),
            (&json!("2026-11-23"), &json!("2026-11-23")),
            "{c}"
        );
    }
    assert_eq!(changes[1]["change_timestamp"], "2026-11-23 10:00:00");
    assert_eq!(changes[2]["change_timestamp"], "2026-11-23 13:00:00");
}

#[test]
fn a_returned_debit_is_reinitiated_same_day_when_asked() {
    let d = Day::new("2026-11-23 08:00");
    let small = d.created("debit", "10.00", false);
    let big = d.created("debit", "1000000.01", false);
    d.w.at("2026-11-23 18:00");
    d.w.at("2026-11-24 08:00");
    for id in [&small, &big] {
        d.w.return_(id, "R01").unwrap();
    }
    let reinitiate = |id: &str, body: Value| {
        let path = format!("/transactions/{id}/reinitiate");
        router::call(d.engine(), "POST", &path, Some(&d.key), Some(&body))
    };
    let (status, answer) = reinitiate(&big, json!({"partner_id": d.partner, "same_day": true}));
    assert_eq!(status, 422, "{answer}");
    assert_eq!(
        (&answer["errors"][0]["field"], &answer["errors"][0]["code"]),
        (&json!("same_day"), &json!("same_day_limit"))
    );
    let (status, answer) = reinitiate(&small, json!({"partner_id": d.partner, "same_day": 1}));
    assert_eq!((status, &answer["errors"][0]["field"]), (422, &json!("same_day")), "{answer}");
    let (status, answer) = reinitiate(&small, json!({"partner_id": d.partner, "same_day": true}));
    assert_eq!(status, 201, "{answer}");
    let retry = answer["payload"]["id"].as_str().unwrap().to_owned();
    assert!(d.read(&retry)["same_day"].as_bool().unwrap());
    d.w.at("2026-11-24 10:00");
    let t = d.read(&retry);
    assert_eq!((d.status(&retry).as_str(), &t["effective_date"]), ("B", &json!("2026-11-24")));
    // The big one the standard way.
    let (status, answer) = reinitiate(&big, json!({"partner_id": d.partner}));
    assert_eq!(status, 201, "{answer}");
}
