//! The tour in process, through the router, for every start day of 2026 and 2027:
//! every weekend, every Federal Reserve holiday and both daylight-saving switches
//! of each year lie inside some tour. The dates the feed reports are checked
//! against a calendar written out here by hand (the Fed's published closures), not
//! against the engine's own.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use ach_core::api::{route, Request};
use ach_core::engine::{Engine, EngineOptions};
use chrono::{Datelike, Duration, NaiveDate, Weekday};
use serde_json::Value;

use super::tour::{self, Api, Call, TourSummary};

const OPERATOR: &str = "ok_demo_tour_operator_key_0123456789";

/// The tour's requests straight into the router of an in-memory sandbox engine.
struct InProcess {
    engine: Engine,
}

impl Api for InProcess {
    fn call(&mut self, call: Call<'_>) -> Result<(u16, Value), String> {
        let Call { method, path, key, body } = call;
        let request = Request {
            method: method.to_owned(),
            path: path.to_owned(),
            api_key: Some(key.to_owned()),
            content_type: Some("application/json".to_owned()),
            body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
            ..Request::default()
        };
        let response = route(&self.engine, &request);
        let value = serde_json::from_str(&response.body).map_err(|e| e.to_string())?;
        Ok((response.status, value))
    }

    fn operator_key(&self) -> String {
        OPERATOR.to_owned()
    }
}

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

/// The days the Federal Reserve is closed on a weekday in 2026 to early 2028
/// (holidays on a Saturday close nothing; on a Sunday, the Monday after).
fn fed_closures() -> Vec<NaiveDate> {
    vec![
        d(2026, 1, 1),
        d(2026, 1, 19),
        d(2026, 2, 16),
        d(2026, 5, 25),
        d(2026, 6, 19),
        // 2026-07-04 is a Saturday: no closure.
        d(2026, 9, 7),
        d(2026, 10, 12),
        d(2026, 11, 11),
        d(2026, 11, 26),
        d(2026, 12, 25),
        d(2027, 1, 1),
        d(2027, 1, 18),
        d(2027, 2, 15),
        d(2027, 5, 31),
        // 2027-06-19 is a Saturday: no closure.
        d(2027, 7, 5),
        d(2027, 9, 6),
        d(2027, 10, 11),
        d(2027, 11, 11),
        d(2027, 11, 25),
        // 2027-12-25 and 2028-01-01 are Saturdays: no closure.
        d(2028, 1, 17),
    ]
}

fn is_banking_day(day: NaiveDate) -> bool {
    !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) && !fed_closures().contains(&day)
}

fn banking_day_on_or_after(mut day: NaiveDate) -> NaiveDate {
    while !is_banking_day(day) {
        day += Duration::days(1);
    }
    day
}

fn next_banking_day(day: NaiveDate) -> NaiveDate {
    banking_day_on_or_after(day + Duration::days(1))
}

/// The feed's changes of one transaction, in order.
fn of<'a>(changes: &'a [Value], id: &str) -> Vec<&'a Value> {
    changes.iter().filter(|c| c["transaction_id"] == id).collect()
}

fn text(change: &Value, key: &str) -> String {
    change[key].as_str().unwrap_or("null").to_owned()
}

/// Everything the tour must have done when started on `day`.
fn check(day: NaiveDate, s: &TourSummary) {
    assert_eq!((s.originated, s.settled), (3, 2), "{day}");
    assert!(s.reversal.starts_with("txn_"), "{day}");
    let origination = banking_day_on_or_after(day);
    let effective = next_banking_day(origination);
    let debit_settles = next_banking_day(next_banking_day(effective));
    let [voided, returned, settled, credit] = &s.ids;

    let v = of(&s.changes, voided);
    assert_eq!(v.iter().map(|c| text(c, "status")).collect::<Vec<_>>(), ["A", "R"], "{day}");
    assert_eq!((text(v[1], "reason"), text(v[1], "return_code")), ("Voided".into(), "null".into()));

    let r = of(&s.changes, returned);
    assert_eq!(r.iter().map(|c| text(c, "status")).collect::<Vec<_>>(), ["A", "B", "R"], "{day}");
    assert_eq!(text(r[2], "return_code"), "R01", "{day}");

    for (id, settles) in [(settled, debit_settles), (credit, effective)] {
        let t = of(&s.changes, id);
        assert_eq!(t.iter().map(|c| text(c, "status")).collect::<Vec<_>>(), ["A", "B", "S"], "{day} {id}");
        let b = t[1];
        assert_eq!(text(b, "origination_date"), origination.to_string(), "{day} {id}");
        assert_eq!(text(b, "effective_date"), effective.to_string(), "{day} {id}");
        assert_eq!(text(b, "settlement_date"), settles.to_string(), "{day} {id}");
        // The cut-off is 6 PM Eastern on either side of a daylight-saving switch,
        // settlement 08:30 Eastern.
        assert_eq!(text(b, "change_timestamp"), format!("{origination} 18:00:00"), "{day} {id}");
        assert_eq!(text(t[2], "change_timestamp"), format!("{settles} 08:30:00"), "{day} {id}");
    }
    let reversal = of(&s.changes, &s.reversal);
    assert_eq!(reversal.iter().map(|c| text(c, "status")).collect::<Vec<_>>(), ["A"], "{day}");
}

#[test]
fn the_tour_completes_from_every_start_day_of_2026_and_2027() {
    let (first, last) = (d(2026, 1, 1), d(2027, 12, 31));
    let mut day = first;
    let mut covered: HashMap<&str, usize> = HashMap::new();
    while day <= last {
        let options = EngineOptions::manual(tour::start_instant(day)).sandbox().with_operator_key(OPERATOR);
        let mut api = InProcess { engine: Engine::in_memory(options).unwrap() };
        let summary = tour::run(&mut api, day, &mut |_| {}).unwrap_or_else(|e| panic!("{day}: {e}"));
        check(day, &summary);
        if fed_closures().contains(&day) {
            *covered.entry("started on a holiday").or_default() += 1;
        }
        let spans = |switch: NaiveDate| day <= switch && switch <= day + Duration::days(7);
        // The second Sunday of March and the first Sunday of November.
        if [d(2026, 3, 8), d(2026, 11, 1), d(2027, 3, 14), d(2027, 11, 7)].into_iter().any(spans) {
            *covered.entry("across a daylight-saving switch").or_default() += 1;
        }
        day += Duration::days(1);
    }
    assert_eq!(covered["started on a holiday"], 19);
    assert!(covered["across a daylight-saving switch"] >= 4 * 7);
}

#[test]
fn the_tour_before_thanksgiving_settles_after_the_holiday() {
    // Started the evening before the day the demo first broke: Wednesday
    // 2026-11-25 originates that day, is effective Friday 11-27 (Thursday is
    // Thanksgiving), and its debits settle Tuesday 12-01.
    let day = d(2026, 11, 25);
    let options = EngineOptions::manual(tour::start_instant(day)).sandbox().with_operator_key(OPERATOR);
    let mut api = InProcess { engine: Engine::in_memory(options).unwrap() };
    let mut lines = Vec::new();
    let s = tour::run(&mut api, day, &mut |l| lines.push(l)).unwrap();
    check(day, &s);
    let b = of(&s.changes, &s.ids[2])[1].clone();
    assert_eq!(
        (text(&b, "effective_date"), text(&b, "settlement_date")),
        ("2026-11-27".into(), "2026-12-01".into())
    );
    assert!(lines.iter().any(|l| l.contains("passes settlement on 2026-12-01")), "{lines:#?}");
}
