//! The lifecycle's deciders: every state against every operation, and the dates.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::calendar::{cutoff_instant, is_banking_day, next_cutoff_after, parse_instant, to_eastern};
use chrono::{Datelike, TimeDelta};
use proptest::prelude::*;

/// From a date's 18:00 cut-off back to its 08:30 settlement time.
const CUTOFF_TO_SETTLEMENT: TimeDelta = TimeDelta::minutes(9 * 60 + 30);

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

fn utc(text: &str) -> DateTime<Utc> {
    parse_instant(text).unwrap()
}

const REVERSAL_ID: &str = "txn_7Hq2mB9xKpL4vN8sR3tW1y";

const FAILED: &str = "Failed to accept this transaction";
const SUBMITTED: &str = "The reversal for transaction has been submitted";
const ALREADY: &str =
    "The original transaction has already been reversed with transaction ID txn_7Hq2mB9xKpL4vN8sR3tW1y";

/// `Ok` → `None`; a refusal → `(message, detail)`, checking the state-conflict
/// shape every lifecycle refusal has.
fn outcome(result: Result<(), TransitionRefusal>) -> Option<(String, String)> {
    let refusal = result.err()?;
    assert_eq!(refusal.category, ErrorCategory::StateConflict, "{refusal}");
    assert_eq!(refusal.http_status(), 409);
    assert_eq!(refusal.field, "");
    assert_eq!(refusal.code, ProblemCode::Conflict);
    assert_eq!(refusal.message(), refusal.error.to_string());
    Some((refusal.error.to_string(), refusal.detail))
}

fn refused(message: &str, detail: &str) -> Option<(String, String)> {
    Some((message.to_owned(), detail.to_owned()))
}

#[test]
fn states_map_to_feed_statuses_and_names() {
    let rows: Vec<(State, Status, &str, bool)> =
        State::ALL.iter().map(|s| (*s, s.feed_status(), s.name(), s.is_final())).collect();
    assert_eq!(
        rows,
        [
            (State::Pending, Status::A, "Pending", false),
            (State::Originated, Status::B, "Originated", false),
            (State::Settled, Status::S, "Settled", false),
            (State::Returned, Status::R, "Returned", true),
            (State::Voided, Status::R, "Voided", true),
        ]
    );
    // The spec's names agree with the feed status names, except the internal Voided.
    for state in [State::Pending, State::Originated, State::Settled, State::Returned] {
        assert_eq!(state.name(), state.feed_status().name());
    }
    assert_eq!(State::Voided.to_string(), "Voided");
    assert_eq!(VOID_REASON, "Voided");
}

#[test]
fn void_in_every_state() {
    let only_pending =
        |s: &str| refused(FAILED, &format!("only a Pending transaction can be voided; this one is {s}"));
    assert_eq!(outcome(can_void(State::Pending)), None);
    assert_eq!(outcome(can_void(State::Originated)), only_pending("Originated"));
    assert_eq!(outcome(can_void(State::Settled)), only_pending("Settled"));
    assert_eq!(outcome(can_void(State::Returned)), only_pending("Returned"));
    assert_eq!(outcome(can_void(State::Voided)), refused(FAILED, "this transaction is already voided"));
}

#[test]
fn return_in_every_state() {
    assert_eq!(outcome(can_return(State::Originated)), None);
    assert_eq!(outcome(can_return(State::Settled)), None);
    assert_eq!(
        outcome(can_return(State::Pending)),
        refused(
            FAILED,
            "only an Originated or Settled transaction can be returned; this one is Pending \
             (it has not reached the bank)"
        )
    );
    assert_eq!(
        outcome(can_return(State::Voided)),
        refused(
            FAILED,
            "only an Originated or Settled transaction can be returned; this one is Voided \
             (it was never originated)"
        )
    );
    assert_eq!(outcome(can_return(State::Returned)), refused(FAILED, "this transaction is already returned"));
}

#[test]
fn reverse_without_a_previous_reversal_in_every_state() {
    let only_settled = |s: &str, hint: &str| {
        refused(FAILED, &format!("only a Settled transaction can be reversed; this one is {s} ({hint})"))
    };
    assert_eq!(outcome(can_reverse(State::Settled, false, None)), None);
    for (state, name, hint) in [
        (State::Pending, "Pending", "void it instead"),
        (State::Originated, "Originated", "it can be reversed once it has settled"),
        (State::Returned, "Returned", "its funds were already sent back"),
        (State::Voided, "Voided", "it never moved funds"),
    ] {
        assert_eq!(outcome(can_reverse(state, false, None)), only_settled(name, hint), "{name}");
    }
}

#[test]
fn a_reversal_is_never_reversed() {
    for state in State::ALL {
        for reversal in [None, Some((REVERSAL_ID, State::Settled))] {
            assert_eq!(
                outcome(can_reverse(state, true, reversal)),
                refused(FAILED, "a reversal cannot itself be reversed"),
                "{state}"
            );
        }
    }
}

#[test]
fn reversing_twice() {
    // First reverse of a Settled transaction: allowed.
    assert_eq!(outcome(can_reverse(State::Settled, false, None)), None);
    // Again while the reversal is on its way: message 6.
    assert_eq!(
        outcome(can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Pending)))),
        refused(SUBMITTED, "reversal txn_7Hq2mB9xKpL4vN8sR3tW1y is Pending and has not settled yet")
    );
    assert_eq!(
        outcome(can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Originated)))),
        refused(SUBMITTED, "reversal txn_7Hq2mB9xKpL4vN8sR3tW1y is Originated and has not settled yet")
    );
    // Again once the reversal has settled: message 5 with the reversal's id.
    let settled = can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Settled))).unwrap_err();
    assert_eq!(settled.error, AchError::AlreadyReversed { reversal_id: REVERSAL_ID.to_owned() });
    assert_eq!(settled.error.code(), 5);
    assert_eq!(outcome(Err(settled)), refused(ALREADY, "reversal txn_7Hq2mB9xKpL4vN8sR3tW1y has settled"));
    // A voided or returned reversal frees the original.
    assert_eq!(outcome(can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Voided)))), None);
    assert_eq!(outcome(can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Returned)))), None);
}

#[test]
fn reverse_every_original_state_against_every_reversal_state() {
    use State::*;
    for original in State::ALL {
        let without = outcome(can_reverse(original, false, None));
        for reversal in State::ALL {
            let got = outcome(can_reverse(original, false, Some((REVERSAL_ID, reversal))));
            let expected = match reversal {
                Pending | Originated => refused(
                    SUBMITTED,
                    &format!("reversal {REVERSAL_ID} is {reversal} and has not settled yet"),
                ),
                Settled => refused(ALREADY, &format!("reversal {REVERSAL_ID} has settled")),
                // Does not count: same answer as with no reversal at all.
                Returned | Voided => without.clone(),
            };
            assert_eq!(got, expected, "original {original}, reversal {reversal}");
        }
    }
    // A returned original whose reversal settled still reports the repeat.
    assert_eq!(
        outcome(can_reverse(Returned, false, Some((REVERSAL_ID, Settled)))).map(|(m, _)| m),
        Some(ALREADY.to_owned())
    );
}

#[test]
fn refusals_render_for_hosts() {
    let refusal = can_void(State::Originated).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "Failed to accept this transaction (only a Pending transaction can be voided; this one is Originated)"
    );
    let fe = refusal.field_error();
    assert_eq!((fe.field.as_str(), fe.code), ("", ProblemCode::Conflict));
    assert_eq!(fe.message, refusal.detail);
    let json = serde_json::to_string(&fe).unwrap();
    assert_eq!(
        json,
        r#"{"field":"","code":"conflict","message":"only a Pending transaction can be voided; this one is Originated"}"#
    );
    assert!(std::error::Error::source(&refusal).is_some());
}

#[test]
fn return_requests() {
    let orig = d(2026, 11, 25);
    let today = d(2026, 11, 30);

    let (code, date) = validate_return("R01", None, today, orig).unwrap();
    assert_eq!((code.code(), code.reason(), date), ("R01", "Insufficient Funds", today));
    let (code, date) = validate_return("R90", Some(orig), today, orig).unwrap();
    assert_eq!((code.code(), date), ("R90", orig));
    assert_eq!(validate_return("R02", Some(d(2026, 11, 27)), today, orig).unwrap().1, d(2026, 11, 27));

    let refusal = |code: &str, date: Option<NaiveDate>| {
        let r = validate_return(code, date, today, orig).unwrap_err();
        assert_eq!(r.error, AchError::FailedToAccept);
        assert_eq!(r.message(), FAILED);
        assert_eq!((r.category, r.http_status()), (ErrorCategory::Validation, 422));
        (r.field, r.code, r.detail)
    };
    assert_eq!(
        refusal("R00", None),
        ("return_code", ProblemCode::InvalidValue, "'R00' is not a NACHA return reason code".to_owned())
    );
    assert_eq!(refusal("R48", None).1, ProblemCode::InvalidValue);
    for bad in ["r01", "R1", "R011", " R01", "01"] {
        assert_eq!(
            refusal(bad, None),
            (
                "return_code",
                ProblemCode::InvalidFormat,
                format!("'{bad}' is not a return code: expected R followed by two digits")
            ),
        );
    }
    assert_eq!(
        refusal("", None),
        ("return_code", ProblemCode::Required, "a return code is required".to_owned())
    );
    // A hostile code is echoed cut short.
    let long = "X".repeat(10_000);
    let detail = refusal(&long, None).2;
    assert!(detail.starts_with(&format!("'{}...'", "X".repeat(40))), "{detail}");
    // The code is checked before the date.
    assert_eq!(refusal("R00", Some(d(2030, 1, 1))).0, "return_code");

    assert_eq!(
        refusal("R01", Some(d(2026, 12, 1))),
        (
            "return_date",
            ProblemCode::FutureDate,
            "the return date 2026-12-01 is in the future (today is 2026-11-30)".to_owned()
        )
    );
    assert_eq!(
        refusal("R01", Some(d(2026, 11, 24))),
        (
            "return_date",
            ProblemCode::InvalidValue,
            "the return date 2026-11-24 is before the origination date 2026-11-25".to_owned()
        )
    );
    // Today before the origination date (defaulted) is refused too.
    let r = validate_return("R01", None, d(2026, 11, 24), orig).unwrap_err();
    assert_eq!((r.field, r.code), ("return_date", ProblemCode::InvalidValue));
}

#[test]
fn thanksgiving_2026() {
    // Cut-off Wed 2026-11-25; Thursday 2026-11-26 is Thanksgiving.
    let (origination_date, effective) = origination(d(2026, 11, 25));
    assert_eq!((origination_date, effective), (d(2026, 11, 25), d(2026, 11, 27)));
    assert_eq!(settlement_date(Direction::Credit, effective), d(2026, 11, 27));
    assert_eq!(settlement_date(Direction::Debit, effective), d(2026, 12, 1));
    // The next cut-off: Friday → effective Monday.
    assert_eq!(origination(d(2026, 11, 27)), (d(2026, 11, 27), d(2026, 11, 30)));
    assert_eq!(settlement_date(Direction::Debit, d(2026, 11, 30)), d(2026, 12, 2));
    // Whole path from a creation instant: Wed 17:59:59 ET vs. 18:00:00 ET.
    let (cut, _) = next_cutoff_after(utc("2026-11-25T17:59:59-05:00"));
    assert_eq!(origination(cut).1, d(2026, 11, 27));
    let (cut, _) = next_cutoff_after(utc("2026-11-25T18:00:00-05:00"));
    assert_eq!(cut, d(2026, 11, 27));
    assert_eq!(origination(cut).1, d(2026, 11, 30));
    assert_eq!(settlement_instant(d(2026, 12, 1)), utc("2026-12-01T13:30:00Z"));
}

#[test]
fn independence_day_2026_and_2027() {
    // July 4 2026 is a Saturday: the Fed stays open on Friday 2026-07-03.
    assert!(is_banking_day(d(2026, 7, 3)));
    assert_eq!(origination(d(2026, 7, 2)), (d(2026, 7, 2), d(2026, 7, 3)));
    assert_eq!(settlement_date(Direction::Credit, d(2026, 7, 3)), d(2026, 7, 3));
    assert_eq!(settlement_date(Direction::Debit, d(2026, 7, 3)), d(2026, 7, 7));
    assert_eq!(origination(d(2026, 7, 3)), (d(2026, 7, 3), d(2026, 7, 6)));
    assert_eq!(settlement_instant(d(2026, 7, 3)), utc("2026-07-03T12:30:00Z"));

    // July 4 2027 is a Sunday: Monday 2027-07-05 is closed.
    assert!(!is_banking_day(d(2027, 7, 5)));
    assert_eq!(origination(d(2027, 7, 2)), (d(2027, 7, 2), d(2027, 7, 6)));
    assert_eq!(settlement_date(Direction::Credit, d(2027, 7, 6)), d(2027, 7, 6));
    assert_eq!(settlement_date(Direction::Debit, d(2027, 7, 6)), d(2027, 7, 8));
    assert_eq!(settlement_date(Direction::Debit, d(2027, 7, 1)), d(2027, 7, 6));
}

#[test]
fn settlement_instant_follows_dst() {
    // Spring forward Sunday 2026-03-08.
    assert_eq!(settlement_instant(d(2026, 3, 6)), utc("2026-03-06T13:30:00Z"));
    assert_eq!(settlement_instant(d(2026, 3, 8)), utc("2026-03-08T12:30:00Z"));
    assert_eq!(settlement_instant(d(2026, 3, 9)), utc("2026-03-09T12:30:00Z"));
    // Fall back Sunday 2026-11-01.
    assert_eq!(settlement_instant(d(2026, 10, 30)), utc("2026-10-30T12:30:00Z"));
    assert_eq!(settlement_instant(d(2026, 11, 1)), utc("2026-11-01T13:30:00Z"));
    assert_eq!(settlement_instant(d(2026, 11, 2)), utc("2026-11-02T13:30:00Z"));
}

#[test]
fn dates_never_panic_at_the_ends_of_the_range() {
    for date in [NaiveDate::MIN, NaiveDate::MAX] {
        let (o, e) = origination(date);
        assert_eq!(o, date);
        assert!(e >= date);
        for direction in [Direction::Debit, Direction::Credit] {
            assert!(settlement_date(direction, e) >= e);
        }
        assert_eq!(settlement_instant(date).date_naive(), date);
    }
    assert_eq!(origination(NaiveDate::MAX).1, NaiveDate::MAX);
    assert_eq!(settlement_date(Direction::Debit, NaiveDate::MAX), NaiveDate::MAX);
}

fn date_2000_2100() -> impl Strategy<Value = NaiveDate> {
    let lo = d(2000, 1, 1).num_days_from_ce();
    let hi = d(2100, 1, 1).num_days_from_ce();
    (lo..hi).prop_map(|n| NaiveDate::from_num_days_from_ce_opt(n).unwrap())
}

proptest! {
    #[test]
    fn prop_dates_of_a_banking_day_cutoff(
        cut in date_2000_2100().prop_map(crate::calendar::banking_day_on_or_after),
    ) {
        let (o, effective) = origination(cut);
        prop_assert_eq!(o, cut);
        prop_assert!(effective > cut && is_banking_day(effective));
        prop_assert_eq!(effective, next_banking_day(cut));
        let credit = settlement_date(Direction::Credit, effective);
        let debit = settlement_date(Direction::Debit, effective);
        prop_assert_eq!(credit, effective);
        prop_assert!(is_banking_day(debit));
        prop_assert_eq!(debit, next_banking_day(next_banking_day(effective)));
        // Settlement happens after the cut-off that originated the transaction.
        prop_assert!(settlement_instant(credit) > cutoff_instant(cut));
    }

    #[test]
    fn prop_settlement_instant_is_0830_eastern(date in date_2000_2100()) {
        let t = settlement_instant(date);
        prop_assert_eq!(to_eastern(t).date_naive(), date);
        prop_assert_eq!(to_eastern(t).time(), SETTLEMENT_TIME);
        // Same offset as that day's 18:00 cut-off.
        prop_assert_eq!(t, cutoff_instant(date) - CUTOFF_TO_SETTLEMENT);
        prop_assert!(matches!(t.format("%H:%M:%S").to_string().as_str(), "12:30:00" | "13:30:00"));
    }
}

/// Every banking day of 2026 and 2027 (DST switches, Fed holidays): an
/// entry of each same-day window is originated and effective that day and
/// settles that day at the window's time, debit or credit; the standard
/// cut-off's keep the next banking day and the debit hold.
#[test]
fn same_day_windows_date_their_entries_that_day() {
    use crate::calendar::{eastern_instant, DEFAULT_SAME_DAY_CUTOFFS, SAME_DAY_SETTLEMENTS};
    let mut day = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
    while day.year() < 2028 {
        if is_banking_day(day) {
            for (cut, settles) in DEFAULT_SAME_DAY_CUTOFFS.iter().zip(SAME_DAY_SETTLEMENTS) {
                let cutoff = eastern_instant(day, *cut);
                assert_eq!(origination_at(cutoff), (day, day), "{day} {cut}");
                for direction in [Direction::Debit, Direction::Credit] {
                    let (date, at) = settlement_at(direction, cutoff);
                    assert_eq!(
                        (date, to_eastern(at).naive_local()),
                        (day, day.and_time(settles)),
                        "{day} {cut}"
                    );
                }
            }
            let standard = cutoff_instant(day);
            let next = crate::calendar::next_banking_day(day);
            assert_eq!(origination_at(standard), (day, next));
            assert_eq!(
                settlement_at(Direction::Debit, standard).0,
                add_banking_days(next, DEBIT_HOLD_BANKING_DAYS)
            );
        }
        day = day.succ_opt().unwrap();
    }
}
