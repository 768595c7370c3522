//! US Eastern time and the Federal Reserve banking calendar.
//!
//! Everything here is a pure function of its arguments: the module never reads
//! a clock (no `Utc::now`, no `SystemTime::now`), because the engine also runs
//! on `wasm32` where those panic. Time always comes in as a value.
//!
//! Daylight-saving time comes from the tz database (`chrono_tz::America::New_York`),
//! never from hand-written rules. The tz data shipped with `chrono-tz` models
//! DST for the foreseeable future (well past 2100); far outside that window the
//! zone falls back to standard time, which only shifts cut-offs by an hour.
//!
//! # Banking calendar
//!
//! A *banking day* is a Monday–Friday that is not a Federal Reserve holiday
//! closure. The Fed's own observance rules apply (they differ from the federal
//! government's): a holiday falling on a **Sunday** closes the Fed on the
//! following **Monday**; a holiday falling on a **Saturday** does **not** move —
//! the Fed is open on the Friday before, so a Saturday holiday produces no
//! weekday closure at all (e.g. New Year's Day 2028 is a Saturday, and Friday
//! 2027-12-31 is a banking day).
//!
//! # Cut-offs
//!
//! Every banking day has one cut-off at 18:00:00 US Eastern (22:00 UTC under
//! EDT, 23:00 UTC under EST). A cut-off *instant* is exclusive for creation: a
//! transaction created at exactly the cut-off instant belongs to the next
//! banking day's cut-off (see [`next_cutoff_after`]).
//!
//! Same Day ACH adds up to three earlier cut-offs per banking day, one in each
//! FedACH same-day window (deadlines 10:30, 14:45 and 16:45 ET; settlement at
//! 13:00, 17:00 and 18:00 ET): by default 10:00, 14:15 and 16:15 ET
//! ([`next_same_day_cutoff_after`]). None is at 18:00, so a cut-off instant's
//! Eastern time tells which kind it is ([`is_same_day_cutoff`]).
//!
//! # Range
//!
//! No function panics on any date or instant chrono can represent. Functions
//! that step past the representable range come in two flavours: a `checked_*`
//! variant returning `None`, and a plain variant that saturates (clamps) at
//! [`NaiveDate::MAX`](chrono::NaiveDate::MAX) / [`NaiveDate::MIN`](chrono::NaiveDate::MIN),
//! as documented on each.

mod banking;
mod eastern;
mod holidays;
mod same_day;

pub use banking::{
    add_banking_days, banking_day_on_or_after, banking_day_on_or_before, checked_add_banking_days,
    checked_next_banking_day, checked_next_cutoff_after, checked_previous_banking_day, cutoffs_between,
    is_banking_day, next_banking_day, next_cutoff_after, previous_banking_day,
};
pub(crate) use eastern::date_text;
pub use eastern::{
    cutoff_instant, days_in_month, eastern_date, eastern_date_cached, eastern_day_key, eastern_instant,
    eastern_month_key, eastern_naive, format_date, format_eastern_timestamp, parse_date, parse_instant,
    start_of_eastern_day, to_eastern, CUTOFF_TIME,
};
pub use holidays::{fed_holiday, fed_holidays_in, holiday_on, is_weekend, Holiday, JUNETEENTH_FIRST_YEAR};
pub use same_day::{
    is_same_day_cutoff, next_same_day_cutoff_after, parse_same_day_cutoffs, same_day_settlement,
    same_day_window, SameDayWindow, DEFAULT_SAME_DAY_CUTOFFS, SAME_DAY_DEADLINES, SAME_DAY_SETTLEMENTS,
};

/// Error returned by the parsing functions of this module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalendarError {
    /// The text is not an RFC 3339 timestamp with an explicit UTC offset
    /// (for example `2026-11-23T18:30:00-05:00` or `2026-11-23T23:30:00Z`).
    #[error("invalid timestamp {input:?}: expected RFC 3339 with an offset, e.g. 2026-11-23T18:30:00-05:00 ({source})")]
    InvalidTimestamp {
        /// The rejected input, verbatim.
        input: String,
        /// What chrono's parser objected to.
        #[source]
        source: chrono::ParseError,
    },
    /// The text is not a calendar date in the form `YYYY-MM-DD`.
    #[error("invalid date {input:?}: expected YYYY-MM-DD ({source})")]
    InvalidDate {
        /// The rejected input, verbatim.
        input: String,
        /// What chrono's parser objected to.
        #[source]
        source: chrono::ParseError,
    },
}

/// Shared helpers for the submodules' tests.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod test_support {
    use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
    use chrono_tz::America::New_York;
    use proptest::prelude::*;

    pub(super) fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    pub(super) fn utc(text: &str) -> DateTime<Utc> {
        super::parse_instant(text).unwrap()
    }

    /// An Eastern wall-clock time (unambiguous) as a UTC instant.
    pub(super) fn et(y: i32, m: u32, day: u32, h: u32, min: u32, s: u32) -> DateTime<Utc> {
        New_York.with_ymd_and_hms(y, m, day, h, min, s).single().unwrap().with_timezone(&Utc)
    }

    pub(super) const T2000: i64 = 946_684_800; // 2000-01-01T00:00:00Z
    pub(super) const T2100: i64 = 4_102_444_800; // 2100-01-01T00:00:00Z

    pub(super) fn instant_2000_2100() -> impl Strategy<Value = DateTime<Utc>> {
        (T2000..T2100, 0u32..1_000_000_000).prop_map(|(s, ns)| DateTime::from_timestamp(s, ns).unwrap())
    }

    pub(super) fn date_2000_2100() -> impl Strategy<Value = NaiveDate> {
        let lo = d(2000, 1, 1).num_days_from_ce();
        let hi = d(2100, 1, 1).num_days_from_ce();
        (lo..hi).prop_map(|n| NaiveDate::from_num_days_from_ce_opt(n).unwrap())
    }

    pub(super) fn any_date() -> impl Strategy<Value = NaiveDate> {
        let lo = NaiveDate::MIN.num_days_from_ce();
        let hi = NaiveDate::MAX.num_days_from_ce();
        (lo..=hi).prop_map(|n| NaiveDate::from_num_days_from_ce_opt(n).unwrap())
    }

    pub(super) fn any_instant() -> impl Strategy<Value = DateTime<Utc>> {
        let lo = DateTime::<Utc>::MIN_UTC.timestamp();
        let hi = DateTime::<Utc>::MAX_UTC.timestamp();
        (lo..=hi).prop_map(|s| DateTime::from_timestamp(s, 0).unwrap())
    }
}
