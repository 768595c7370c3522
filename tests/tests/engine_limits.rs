//! Merchant and overall limits and duplicate detection through the engine: every
//! message 17 to 32 reached by a real scenario with its exact text, and the day,
//! period and month boundaries in Eastern Time.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, Operation, Outcome};
use ach_core::limits::Limits;
use ach_core::model::Status;
use ach_core::Money;
use ach_tests::router;
use ach_tests::world::{
    amount, application, open_application, partner_transaction, transaction, World, OPERATOR_KEY,
};
use serde_json::json;

/// The statuses of a transaction's changes, oldest first.
fn statuses(w: &World, partner_id: &str, partner: &Caller, id: &str) -> Vec<Status> {
    w.history(partner_id, partner, id).iter().map(|c| c.status).collect()
}

fn dollars(d: i64) -> Option<Money> {
    Some(Money::from_cents(d * 100))
}

/// One step of a scenario: a debit of an amount and its expected answer (the
/// message or "ok"), or a move of the clock.
#[derive(Clone, Copy)]
enum Step {
    Debit(&'static str, &'static str),
    At(&'static str),
}
use Step::{At, Debit};

struct Shop {
    w: World,
    p: String,
    pc: Caller,
    m: String,
}

impl Shop {
    fn new(start: &str, limits: Limits) -> Shop {
        Shop::with_app(start, limits, &open_application(&["PPD", "WEB", "POP"]))
    }

    fn with_app(start: &str, limits: Limits, app: &serde_json::Value) -> Shop {
        let w = World::new(start);
        w.screening_off();
        let (p, pc) = w.partner();
        let (m, _) = w.merchant_with(&p, &pc, app, limits);
        Shop { w, p, pc, m }
    }

    /// A partner with the overall limits `overall` and two PPD merchants of
    /// it: the shop (of the first) and both merchants' ids.
    fn overall(start: &str, overall: Limits) -> (Shop, String, String) {
        let w = World::new(start);
        let (p, pc) = w.partner();
        assert!(matches!(
            w.run(&Caller::Operator, Operation::SetPartnerLimits { partner_id: p.clone(), limits: overall }),
            Ok(Outcome::LimitsSet { .. })
        ));
        let (a, _) = w.merchant(&p, &pc, &["PPD"]);
        let (b, _) = w.merchant(&p, &pc, &["PPD"]);
        (Shop { w, p, pc, m: a.clone() }, a, b)
    }

    /// A debit of `amount` to a distinct account (`n` picks it), as the message or "ok".
    fn debit(&self, amount: &str, n: u32) -> String {
        self.send(&self.m, "debit", amount, n)
    }

    /// Runs `steps` in order, the debits numbered from `1` (each to its own
    /// account), asserting each debit's answer.
    fn run(&self, steps: &[Step]) {
        let mut n = 0;
        for step in steps {
            match *step {
                At(time) => self.w.at(time),
                Debit(amount, expected) => {
                    n += 1;
                    assert_eq!(self.debit(amount, n), expected, "debit {n} of {amount}");
                }
            }
        }
    }

    fn send(&self, merchant: &str, kind: &str, amount: &str, n: u32) -> String {
        let mut t = transaction(merchant, kind, amount);
        t["customer"]["account_number"] = json!(format!("55500{n:04}"));
        match self.w.create(&self.p, &self.pc, &t) {
            Ok(_) => "ok".into(),
            Err(f) => f.message(),
        }
    }
}

/// Message 22.
const DAILY_COUNT: &str = "You have exceeded the allowed max daily num checks for this merchant";

fn limits(f: impl FnOnce(&mut Limits)) -> Limits {
    let mut l = ach_tests::world::roomy_limits();
    f(&mut l);
    l
}

#[test]
fn messages_19_20_21_and_the_minimum() {
    let s = Shop::new(
        "2026-11-23 10:00",
        limits(|l| {
            l.max_transaction_amount = dollars(5000);
            l.min_transaction_amount = dollars(1);
            l.max_credit_amount = dollars(1000);
        }),
    );
    s.run(&[
        Debit("5000.01", "Exceeded maximum dollar amount ($5,000.00) for this merchant."),
        Debit("5000.00", "ok"),
        Debit("0.99", "'0.99' is an invalid Amount"),
    ]);
    assert_eq!(s.send(&s.m, "credit", "1000.01", 4), "Credit amount is over the maximum");
    assert_eq!(s.send(&s.m, "credit", "1000.00", 5), "ok");
    // A class the merchant did not apply for.
    let mut ccd = transaction(&s.m, "debit", "5.00");
    ccd["standard_entry_class"] = json!("CCD");
    assert_eq!(
        s.w.create(&s.p, &s.pc, &ccd).unwrap_err().message(),
        "Unable to accept CCD transactions for this merchant"
    );
    // A debit-only merchant (maximum credit of zero).
    let debit_only =
        Shop::new("2026-11-23 10:00", limits(|l| l.max_credit_amount = Some(Money::from_cents(0))));
    assert_eq!(
        debit_only.send(&debit_only.m, "credit", "1.00", 1),
        "Unable to accept credit transactions for this merchant"
    );
    assert_eq!(debit_only.debit("1.00", 2), "ok");
}

#[test]
fn messages_22_and_23_reset_at_eastern_midnight() {
    let s = Shop::new(
        "2026-11-23 09:00",
        limits(|l| {
            l.daily_count = Some(2);
            l.daily_amount = dollars(10_000);
        }),
    );
    s.run(&[
        Debit("6000.00", "ok"),
        Debit("4000.01", "You have exceeded your allowed max dollar amount for this merchant of $10,000.00"),
        Debit("4000.00", "ok"),
        Debit("1.00", DAILY_COUNT),
        // 23:59 Eastern is still the same day (04:59 UTC the next day).
        At("2026-11-23 23:59"),
        Debit("1.00", DAILY_COUNT),
        At("2026-11-24 00:00"),
        Debit("1.00", "ok"),
    ]);
}

#[test]
fn messages_24_and_25_count_every_merchant_of_the_partner() {
    let overall = Limits { daily_count: Some(3), daily_amount: dollars(500), ..Limits::default() };
    let (s, a, b) = Shop::overall("2026-11-23 09:00", overall);
    assert_eq!(s.send(&a, "debit", "200.00", 1), "ok");
    assert_eq!(
        s.send(&b, "debit", "300.01", 2),
        "You have exceeded your allowed max dollar amount overall of $500.00"
    );
    assert_eq!(s.send(&b, "debit", "100.00", 3), "ok");
    assert_eq!(s.send(&a, "debit", "100.00", 4), "ok");
    assert_eq!(s.send(&b, "debit", "1.00", 5), "You have exceeded the allowed max daily num checks overall");
    // Another partner is not counted.
    let (p2, pc2) = s.w.partner();
    let (c, _) = s.w.merchant(&p2, &pc2, &["PPD"]);
    let t = transaction(&c, "debit", "400.00");
    let id = s.w.create(&p2, &pc2, &t).unwrap();
    assert_eq!(statuses(&s.w, &p2, &pc2, &id), [Status::A]);
}

#[test]
fn messages_26_to_29_over_a_rolling_period() {
    let s = Shop::new(
        "2026-11-02 10:00",
        limits(|l| {
            l.period_days = Some(3);
            l.period_count = Some(3);
            l.period_amount = dollars(1000);
        }),
    );
    s.run(&[
        Debit("600.00", "ok"),
        At("2026-11-03 10:00"),
        Debit("400.01", "You have exceeded the maximum dollar amount for this merchant this period"),
        Debit("100.00", "ok"),
        At("2026-11-04 10:00"),
        Debit("100.00", "ok"),
        Debit("1.00", "You have exceeded the maximum number of checks for this merchant this period"),
        // Day 1 leaves the three-day window on day 4.
        At("2026-11-05 00:00"),
        Debit("1.00", "ok"),
    ]);

    let overall = Limits {
        period_days: Some(2),
        period_count: Some(2),
        period_amount: dollars(300),
        ..Limits::default()
    };
    let (s, a, b) = Shop::overall("2026-11-02 10:00", overall);
    assert_eq!(s.send(&a, "debit", "200.00", 1), "ok");
    s.w.at("2026-11-03 10:00");
    assert_eq!(
        s.send(&b, "debit", "100.01", 2),
        "You have exceeded the maximum dollar amount overall this period"
    );
    assert_eq!(s.send(&b, "debit", "100.00", 3), "ok");
    assert_eq!(
        s.send(&a, "debit", "1.00", 4),
        "You have exceeded the maximum number of checks overall this period"
    );
}

#[test]
fn messages_30_to_32_by_eastern_calendar_month() {
    let s = Shop::new(
        "2026-11-30 20:00",
        limits(|l| {
            l.monthly_count = Some(2);
            l.monthly_amount = dollars(1000);
            l.monthly_average_amount = dollars(400);
            // Judged from the first transaction (the default waits for 10).
            l.monthly_average_min_count = Some(1);
        }),
    );
    let average =
        "This transaction brings your monthly dollar amount over the maximum average amount allowed";
    let volume = "You have exceeded your monthly transaction volume";
    s.run(&[
        Debit("450.00", average),
        Debit("400.00", "ok"),
        Debit("500.00", average),
        Debit("350.00", "ok"),
        Debit("1.00", volume),
        // 2026-11-30 23:59 ET is still November; December starts at midnight
        // Eastern (05:00 UTC), not at midnight UTC.
        At("2026-11-30 23:59"),
        Debit("1.00", volume),
        At("2026-12-01 00:00"),
        Debit("400.00", "ok"),
        Debit("400.00", "ok"),
    ]);
    let s2 = Shop::new("2026-12-01 10:00", limits(|l| l.monthly_amount = dollars(1000)));
    s2.run(&[Debit("999.99", "ok"), Debit("1.00", "You have exceeded your monthly dollar amount cap")]);
}

#[test]
fn the_day_boundary_on_daylight_saving_days() {
    // 2026-03-08: clocks spring forward at 02:00 ET. The Eastern day still runs
    // midnight to midnight (23 hours long).
    let s = Shop::new("2026-03-07 23:30", limits(|l| l.daily_count = Some(1)));
    s.run(&[
        Debit("1.00", "ok"),
        At("2026-03-08 00:00"),
        Debit("1.00", "ok"),
        At("2026-03-08 23:59"),
        Debit("1.00", DAILY_COUNT),
        At("2026-03-09 00:00"),
        Debit("1.00", "ok"),
    ]);
}

#[test]
fn a_void_gives_its_usage_back_a_return_does_not() {
    let s = Shop::new("2026-11-23 09:00", limits(|l| l.daily_count = Some(1)));
    let mut t = transaction(&s.m, "debit", "10.00");
    let id = s.w.create(&s.p, &s.pc, &t).unwrap();
    s.w.run(&s.pc, Operation::VoidTransaction { partner_id: s.p.clone(), transaction_id: id }).unwrap();
    t["customer"]["account_number"] = json!("11112222");
    let second = s.w.create(&s.p, &s.pc, &t).unwrap();
    assert_eq!(s.debit("1.00", 9), "You have exceeded the allowed max daily num checks for this merchant");
    s.w.at("2026-11-23 18:00");
    s.w.run(
        &Caller::Operator,
        Operation::RecordReturn { transaction_id: second, return_code: "R01".into(), return_date: None },
    )
    .unwrap();
    assert_eq!(s.debit("1.00", 10), "You have exceeded the allowed max daily num checks for this merchant");
    assert_eq!(s.w.engine.audit_usage().unwrap(), Ok(()));
}

#[test]
fn message_17_duplicates_within_the_window_when_declined() {
    let app = ach_tests::world::application(&["PPD", "POP"]);
    let s = Shop::with_app("2026-11-23 09:00", ach_tests::world::roomy_limits(), &app);
    assert_eq!(s.debit("25.00", 1), "ok");
    assert_eq!(s.debit("25.00", 1), "This is a duplicate transaction");
    assert_eq!(s.debit("25.01", 1), "ok", "another amount");
    assert_eq!(s.debit("25.00", 2), "ok", "another account");
    assert_eq!(s.send(&s.m, "credit", "25.00", 1), "ok", "another direction");
    s.w.at("2026-11-24 08:59");
    assert_eq!(s.debit("25.00", 1), "This is a duplicate transaction");
    s.w.at("2026-11-24 09:00");
    assert_eq!(s.debit("25.00", 1), "ok", "the 24-hour window has passed");
    // A voided original is not a duplicate.
    let t = {
        let mut t = transaction(&s.m, "debit", "77.00");
        t["customer"]["account_number"] = json!("99990000");
        t
    };
    let id = s.w.create(&s.p, &s.pc, &t).unwrap();
    s.w.run(&s.pc, Operation::VoidTransaction { partner_id: s.p.clone(), transaction_id: id.clone() })
        .unwrap();
    let again = s.w.create(&s.p, &s.pc, &t).unwrap();
    assert_ne!(again, id);
    assert_eq!(statuses(&s.w, &s.p, &s.pc, &again), [Status::A]);
    // A merchant that does not decline duplicates accepts them.
    let open = Shop::new("2026-11-23 09:00", ach_tests::world::roomy_limits());
    assert_eq!(open.debit("25.00", 1), "ok");
    assert_eq!(open.debit("25.00", 1), "ok");
}

#[test]
fn the_duplicate_window_keeps_about_one_window_and_forgets_older_days() {
    let app = ach_tests::world::application(&["PPD", "POP"]);
    let s = Shop::with_app("2026-11-23 09:00", ach_tests::world::roomy_limits(), &app);
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let d = (chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap() - epoch).num_days();
    // Each live transaction holds two entries: its similar-transaction print
    // and its account print (screening's velocity).
    let days = || s.w.engine.duplicate_index_days().unwrap();
    for n in 1..=3 {
        assert_eq!(s.debit("25.00", n), "ok");
    }
    s.w.at("2026-11-24 09:00");
    assert_eq!(s.debit("25.00", 4), "ok");
    assert_eq!(days(), vec![(d, 6), (d + 1, 2)], "yesterday is still inside the 24-hour window");
    assert_eq!(s.debit("25.00", 4), "This is a duplicate transaction");
    s.w.at("2026-11-25 08:00");
    assert_eq!(s.debit("25.00", 5), "ok");
    assert_eq!(days(), vec![(d + 1, 2), (d + 2, 2)], "a create lets go of what no window reaches");
    assert_eq!(s.debit("25.00", 6), "ok");
    assert_eq!(days(), vec![(d + 1, 2), (d + 2, 4)]);
    assert_eq!(s.debit("25.00", 4), "This is a duplicate transaction", "made yesterday, 23 hours ago");
    assert_eq!(s.debit("25.00", 6), "This is a duplicate transaction", "made today");
    assert_eq!(s.debit("25.00", 1), "ok", "made two days ago: outside the window");
    let mut t = transaction(&s.m, "debit", "31.00");
    t["customer"]["account_number"] = json!("55509999");
    let id = s.w.create(&s.p, &s.pc, &t).unwrap();
    assert_eq!(days(), vec![(d + 1, 2), (d + 2, 8)]);
    s.w.run(&s.pc, Operation::VoidTransaction { partner_id: s.p.clone(), transaction_id: id }).unwrap();
    assert_eq!(days(), vec![(d + 1, 2), (d + 2, 6)], "a void removes its entries");
    assert_eq!(s.w.engine.audit_records().unwrap(), Ok(()));
}

#[test]
fn message_18_a_check_number_is_spent_forever_even_when_voided() {
    let s = Shop::new("2026-11-23 09:00", ach_tests::world::roomy_limits());
    let png = "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    let pop = |check: &str, amount: &str| {
        let mut t = transaction(&s.m, "debit", amount);
        t["standard_entry_class"] = json!("POP");
        t["check_number"] = json!(check);
        t["state"] = json!("NY");
        t["check_image_front"] = json!(png);
        t["check_image_back"] = json!(png);
        s.w.create(&s.p, &s.pc, &t)
    };
    let first = pop("1001", "10.00").unwrap();
    assert_eq!(
        pop("1001", "99.00").unwrap_err().message(),
        "Duplicate transaction for this check. Check number: 1001"
    );
    let second = pop("1002", "10.00").unwrap();
    assert_eq!(statuses(&s.w, &s.p, &s.pc, &second), [Status::A]);
    s.w.run(&s.pc, Operation::VoidTransaction { partner_id: s.p.clone(), transaction_id: first }).unwrap();
    s.w.at("2027-06-01 10:00");
    assert_eq!(
        pop("1001", "10.00").unwrap_err().message(),
        "Duplicate transaction for this check. Check number: 1001"
    );
}

#[test]
fn a_refused_transaction_stores_nothing_and_moves_no_counter() {
    let s = Shop::new("2026-11-23 09:00", limits(|l| l.daily_amount = dollars(100)));
    let before = s.w.changes(&s.p, &s.pc).len();
    assert_eq!(
        s.debit("100.01", 1),
        "You have exceeded your allowed max dollar amount for this merchant of $100.00"
    );
    assert_eq!(s.w.changes(&s.p, &s.pc).len(), before);
    assert_eq!(s.debit("100.00", 2), "ok", "the refused amount was not counted");
    assert_eq!(s.w.engine.audit_usage().unwrap(), Ok(()));
}

#[test]
fn defaults_come_from_the_velocities() {
    // examples/requests/merchant.json: highest 5,000, lowest 1.00, 1,200 checks a
    // year averaging 85.50: 100 a month, $8,550. The month's caps are three times
    // that (300, $25,650.00), its average at most 256.50 once it has 50.
    let w = World::new("2026-11-23 09:00");
    let (p, pc) = w.partner();
    let (m, _) = w.merchant_with(&p, &pc, &open_application(&["PPD"]), Limits::default());
    let s = Shop { w, p, pc, m };
    assert_eq!(s.debit("5000.01", 1), "Exceeded maximum dollar amount ($5,000.00) for this merchant.");
    assert_eq!(s.debit("0.99", 2), "'0.99' is an invalid Amount");
    // A first debit of 5,000 (58 times the average) is accepted: one debit is no
    // average.
    assert_eq!(s.debit("5000.00", 3), "ok");
    for n in 4..=5 {
        assert_eq!(s.debit("5000.00", n), "ok");
    }
    // Three debits, $15,000 so far; 46 more of $1 make 49, $15,046. The 50th is
    // judged: $15,047 is over 50 × 256.50 = $12,825.
    for n in 6..=51 {
        assert_eq!(s.debit("1.00", n), "ok", "debit {n}");
    }
    assert_eq!(
        s.debit("1.00", 52),
        "This transaction brings your monthly dollar amount over the maximum average amount allowed"
    );
}

/// The router and an operator, partner and merchants on a manual clock.
struct Router {
    w: World,
    partner_id: String,
    key: String,
}

impl Router {
    fn new(start: &str) -> Router {
        let w = World::new(start);
        w.screening_off();
        let mut r = Router { w, partner_id: String::new(), key: String::new() };
        let (status, p) = r.call("POST", "/admin/partners", OPERATOR_KEY, &json!({"name": "Acme Payments"}));
        assert_eq!(status, 201, "{p}");
        r.partner_id = p["payload"]["partner_id"].as_str().unwrap().to_owned();
        r.key = p["payload"]["api_key"].as_str().unwrap().to_owned();
        r
    }

    fn call(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: &serde_json::Value,
    ) -> (u16, serde_json::Value) {
        router::call(&self.w.engine, method, path, Some(key), Some(body))
    }

    /// A merchant of the spec's example application (duplicates declined) with
    /// an expected average of $250, approved with `{}`: its id and the limits
    /// the approval answered.
    fn merchant(&self) -> (String, serde_json::Value) {
        self.merchant_approved_with(&json!({}))
    }

    /// [`Router::merchant`] approved with this body.
    fn merchant_approved_with(&self, approval: &serde_json::Value) -> (String, serde_json::Value) {
        let mut app = application(&["PPD"]);
        app["partner_id"] = json!(self.partner_id);
        app["velocities"]["expected_average_check_amount"] = json!(250);
        let (status, m) = self.call("POST", "/merchants", &self.key, &app);
        assert_eq!(status, 201, "{m}");
        let id = m["id"].as_str().unwrap().to_owned();
        let (status, a) =
            self.call("POST", &format!("/admin/merchants/{id}/approve"), OPERATOR_KEY, approval);
        assert_eq!(status, 200, "{a}");
        (id, a["payload"]["limits"].clone())
    }

    /// A PPD debit of `cents` from account `n`: the status and the message ("" when created).
    fn debit(&self, merchant: &str, cents: u64, n: usize) -> (u16, String) {
        let mut t = partner_transaction(&self.partner_id, merchant, "debit", &amount(cents));
        t["customer"]["account_number"] = json!(format!("7770{n:05}"));
        let (status, v) = self.call("POST", "/transactions", &self.key, &t);
        (status, v["message"].as_str().unwrap_or_default().to_owned())
    }

    /// Debits of `amounts` from distinct accounts, each expected to be created.
    fn accepted(&self, merchant: &str, amounts: &[u64]) {
        for (n, &cents) in amounts.iter().enumerate() {
            assert_eq!(self.debit(merchant, cents, n), (201, String::new()), "debit {n} of {cents} cents");
        }
    }
}

#[test]
fn a_merchant_approved_with_no_limits_runs_an_ordinary_month_and_no_more() {
    let r = Router::new("2026-11-02 09:00");
    let (ordinary, limits) = r.merchant();
    // 1,200 checks a year at $250: 100 a month, $25,000; three times that.
    let expected = r#"{"max_transaction_amount": 5000.00, "min_transaction_amount": 1.00,
        "max_credit_amount": null, "daily_count": null, "daily_amount": null, "period_days": 7,
        "period_count": null, "period_amount": null, "monthly_count": 300, "monthly_amount": 75000.00,
        "monthly_average_amount": 750.00, "monthly_average_min_count": 50, "exposure_limit": null,
        "requests_per_second": null}"#;
    assert_eq!(limits, serde_json::from_str::<serde_json::Value>(expected).unwrap());
    let month: Vec<u64> = ach_tests::ordinary_month().into_iter().map(i64::unsigned_abs).collect();
    assert_eq!((month.len(), month.iter().sum::<u64>()), (100, 2_500_000));
    // Five a business day through November, biggest first.
    for (day, debits) in month.chunks(5).enumerate() {
        let date = chrono::NaiveDate::from_ymd_opt(2026, 11, 2).unwrap()
            + chrono::Days::new(day as u64 / 5 * 7 + day as u64 % 5);
        r.w.at(&format!("{date} 10:00"));
        for (i, &cents) in debits.iter().enumerate() {
            assert_eq!(r.debit(&ordinary, cents, day * 5 + i), (201, String::new()), "{date} debit {i}");
        }
    }
    assert_eq!(r.w.today(), chrono::NaiveDate::from_ymd_opt(2026, 11, 27).unwrap());
    // The same month in another order (the $1,000 first) for another merchant.
    let (shuffled, _) = r.merchant();
    let mut other = vec![month[0]];
    other.extend((0..99).map(|i| month[1 + (i * 37) % 99]));
    assert_eq!(other.iter().sum::<u64>(), 2_500_000);
    r.accepted(&shuffled, &other);

    // 300 debits are the most in a month; the 301st is message 30.
    let (volume, _) = r.merchant();
    r.accepted(&volume, &[1_000; 300]);
    assert_eq!(
        r.debit(&volume, 1_000, 300),
        (403, "You have exceeded your monthly transaction volume".into())
    );
    // $75,000 is the most; a dollar more is message 31.
    let (dollars, _) = r.merchant();
    r.accepted(&dollars, &[500_000; 15]);
    assert_eq!(r.debit(&dollars, 100, 15), (403, "You have exceeded your monthly dollar amount cap".into()));
    // Debits of $800 and $1,200 (averaging $1,000): the 50th is message 32.
    let (average, _) = r.merchant();
    let high: Vec<u64> = (0..49).map(|i| if i % 2 == 0 { 80_000 } else { 120_000 }).collect();
    r.accepted(&average, &high);
    let message =
        "This transaction brings your monthly dollar amount over the maximum average amount allowed";
    assert_eq!(r.debit(&average, 120_000, 49), (403, message.into()));
    assert_eq!(r.debit(&average, 500, 49), (403, message.into()), "$48,805 over 50 is still $976");
    // December is a new month.
    r.w.at("2026-12-01 00:00");
    assert_eq!(r.debit(&average, 120_000, 50), (201, String::new()));
    assert_eq!(r.debit(&volume, 1_000, 301), (201, String::new()));
    assert_eq!(r.w.engine.audit_usage().unwrap(), Ok(()));
}

#[test]
fn the_operator_sets_when_the_average_is_judged() {
    let r = Router::new("2026-11-02 09:00");
    let message =
        "This transaction brings your monthly dollar amount over the maximum average amount allowed";
    // At approval: judged from the first transaction, the other defaults kept.
    let (m, limits) = r.merchant_approved_with(&json!({"limits": {"monthly_average_min_count": 1}}));
    assert_eq!(limits["monthly_average_min_count"], json!(1));
    assert_eq!(limits["monthly_average_amount"].to_string(), "750.00");
    assert_eq!(r.debit(&m, 100_000, 0), (403, message.into()));
    // Later: from the third on.
    let path = format!("/admin/merchants/{m}/limits");
    let (status, v) = r.call("POST", &path, OPERATOR_KEY, &json!({"monthly_average_min_count": 3}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["payload"]["limits"]["monthly_average_min_count"], json!(3));
    assert_eq!(v["payload"]["limits"]["monthly_count"], json!(300));
    assert_eq!(r.debit(&m, 100_000, 1), (201, String::new()));
    assert_eq!(r.debit(&m, 100_000, 2), (201, String::new()));
    assert_eq!(r.debit(&m, 100_000, 3), (403, message.into()), "$3,000 over 3");
    assert_eq!(r.debit(&m, 25_000, 4), (201, String::new()), "$2,250 over 3 is the most");
    // Not a count: refused, nothing changed.
    for bad in [json!({"monthly_average_min_count": -1}), json!({"monthly_average_min_cuont": 3})] {
        let (status, v) = r.call("POST", &path, OPERATOR_KEY, &bad);
        assert_eq!(status, 422, "{bad}: {v}");
    }
    let (_, v) = r.call("POST", &path, OPERATOR_KEY, &json!({}));
    assert_eq!(v["payload"]["limits"]["monthly_average_min_count"], json!(3));
}

#[test]
fn a_reversal_debit_meets_the_limits_and_counts_a_reversal_credit_does_not() {
    let s = Shop::new("2026-11-23 09:00", limits(|_| {}));
    let credit = |amount: &str, n: u32| {
        let mut t = transaction(&s.m, "credit", amount);
        t["customer"]["account_number"] = json!(format!("77700{n:04}"));
        s.w.create(&s.p, &s.pc, &t).unwrap()
    };
    let big = credit("80.00", 1);
    let small = credit("30.00", 2);
    let mut d = transaction(&s.m, "debit", "20.00");
    d["customer"]["account_number"] = json!("77700003");
    let debit = s.w.create(&s.p, &s.pc, &d).unwrap();
    // Effective Tue 11-24; by Fri 11-27 every one has settled, within the window.
    s.w.at("2026-11-27 09:00");
    let set = Operation::SetMerchantLimits {
        merchant_id: s.m.clone(),
        limits: Limits { max_transaction_amount: dollars(50), daily_count: Some(2), ..Limits::default() },
    };
    s.w.run(&Caller::Operator, set).unwrap();
    let reverse = |id: &str| match s.w.reverse(&s.p, &s.pc, id) {
        Ok(_) => "ok".to_owned(),
        Err(f) => f.message(),
    };
    assert_eq!(reverse(&big), "Exceeded maximum dollar amount ($50.00) for this merchant.");
    assert_eq!(reverse(&debit), "ok", "a refund credit is not held to the limits");
    assert_eq!(reverse(&small), "ok");
    // The reversal debit counts (one today), the refund credit does not.
    assert_eq!(s.debit("1.00", 1), "ok");
    assert_eq!(s.debit("1.00", 2), "You have exceeded the allowed max daily num checks for this merchant");
    assert_eq!(s.w.engine.audit_usage().unwrap(), Ok(()));
}
