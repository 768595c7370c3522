//! The model's own banking calendar, written from the rules in
//! `docs/decisions.md` ("Calendar", "Engine and lifecycle") independently of
//! `ach_core::calendar`, so the simulator checks the engine's dates rather than
//! repeating them. Only the time-zone database (chrono-tz) is shared.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc, Weekday};
use chrono_tz::America::New_York;

/// Eastern wall time of an instant.
pub fn eastern(t: DateTime<Utc>) -> NaiveDateTime {
    t.with_timezone(&New_York).naive_local()
}

/// Eastern date of an instant.
pub fn eastern_date(t: DateTime<Utc>) -> NaiveDate {
    eastern(t).date()
}

/// `YYYY-MM-DD HH:MM:SS` Eastern (the feeds' `change_timestamp`).
pub fn timestamp(t: DateTime<Utc>) -> String {
    eastern(t).format("%Y-%m-%d %H:%M:%S").to_string()
}

/// `YYYY-MM-DD`.
pub fn day(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// The instant of an Eastern wall time (the earlier one when it occurs twice; an
/// hour later when it falls in the spring-forward gap).
pub fn at_eastern(date: NaiveDate, h: u32, m: u32, s: u32) -> DateTime<Utc> {
    let time = NaiveTime::from_hms_opt(h, m, s).unwrap_or(NaiveTime::MIN);
    let local = date.and_time(time);
    match New_York.from_local_datetime(&local).earliest() {
        Some(t) => t.with_timezone(&Utc),
        None => at_eastern(date, h + 1, m, s),
    }
}

/// The `n`-th (1-based) `weekday` of a month.
fn nth(year: i32, month: u32, weekday: Weekday, n: u32) -> NaiveDate {
    NaiveDate::from_weekday_of_month_opt(year, month, weekday, n as u8).unwrap_or(NaiveDate::MIN)
}

/// The last `weekday` of a month.
fn last(year: i32, month: u32, weekday: Weekday) -> NaiveDate {
    (1..=5u32)
        .rev()
        .find_map(|n| NaiveDate::from_weekday_of_month_opt(year, month, weekday, n as u8))
        .unwrap_or(NaiveDate::MIN)
}

fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or(NaiveDate::MIN)
}

/// The days the Federal Reserve is closed in `year`: the eleven holidays, a
/// Sunday holiday moved to Monday, a Saturday holiday closing nothing.
fn closed_days(year: i32) -> Vec<NaiveDate> {
    let mut days = vec![
        ymd(year, 1, 1),
        nth(year, 1, Weekday::Mon, 3),
        nth(year, 2, Weekday::Mon, 3),
        last(year, 5, Weekday::Mon),
        ymd(year, 7, 4),
        nth(year, 9, Weekday::Mon, 1),
        nth(year, 10, Weekday::Mon, 2),
        ymd(year, 11, 11),
        nth(year, 11, Weekday::Thu, 4),
        ymd(year, 12, 25),
    ];
    if year >= 2022 {
        days.push(ymd(year, 6, 19));
    }
    days.into_iter()
        .filter_map(|d| match d.weekday() {
            Weekday::Sat => None,
            Weekday::Sun => Some(d + Duration::days(1)),
            _ => Some(d),
        })
        .collect()
}

/// Whether the Fed is open: a weekday that is not a (moved) holiday.
pub fn is_banking_day(d: NaiveDate) -> bool {
    !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) && !closed_days(d.year()).contains(&d)
}

/// The first banking day after `d`.
pub fn next_banking_day(d: NaiveDate) -> NaiveDate {
    let mut n = d + Duration::days(1);
    while !is_banking_day(n) {
        n += Duration::days(1);
    }
    n
}

/// `n` banking days after `d`.
pub fn add_banking_days(d: NaiveDate, n: u32) -> NaiveDate {
    (0..n).fold(d, |d, _| next_banking_day(d))
}

/// The 6 PM ET cut-off of a date.
pub fn cutoff_of(d: NaiveDate) -> DateTime<Utc> {
    at_eastern(d, 18, 0, 0)
}

/// The first cut-off on a banking day strictly after `t`: its date and instant.
pub fn cutoff_after(t: DateTime<Utc>) -> (NaiveDate, DateTime<Utc>) {
    let mut d = eastern_date(t);
    loop {
        if is_banking_day(d) && cutoff_of(d) > t {
            return (d, cutoff_of(d));
        }
        d += Duration::days(1);
    }
}

/// When a settlement date settles: 08:30 ET.
pub fn settlement_instant(d: NaiveDate) -> DateTime<Utc> {
    at_eastern(d, 8, 30, 0)
}

/// Thanksgiving of a year (for choosing start dates).
pub fn thanksgiving(year: i32) -> NaiveDate {
    nth(year, 11, Weekday::Thu, 4)
}

/// The second Sunday of March and the first Sunday of November (DST changes).
pub fn dst_changes(year: i32) -> [NaiveDate; 2] {
    [nth(year, 3, Weekday::Sun, 2), nth(year, 11, Weekday::Sun, 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_on_known_dates() {
        // Thanksgiving 2026 and the day after; Christmas 2027 is a Saturday (nothing
        // closes), July 4 2027 a Sunday (Monday the 5th closes).
        assert!(!is_banking_day(ymd(2026, 11, 26)) && is_banking_day(ymd(2026, 11, 27)));
        assert!(is_banking_day(ymd(2027, 12, 24)) && !is_banking_day(ymd(2027, 7, 5)));
        assert!(is_banking_day(ymd(2026, 7, 3)), "July 4 2026 is a Saturday: the Friday is open");
        assert_eq!(timestamp(cutoff_of(ymd(2026, 3, 9))), "2026-03-09 18:00:00");
        assert_eq!(cutoff_of(ymd(2026, 3, 9)).format("%H").to_string(), "22");
        assert_eq!(cutoff_of(ymd(2026, 11, 2)).format("%H").to_string(), "23");
        let (d, _) = cutoff_after(cutoff_of(ymd(2026, 11, 25)));
        assert_eq!(d, ymd(2026, 11, 27), "exactly 18:00 belongs to the next banking day");
        assert_eq!(add_banking_days(ymd(2026, 11, 27), 2), ymd(2026, 12, 1));
    }

    #[test]
    fn agrees_with_the_engine_calendar_every_day_of_2022_to_2035() {
        let mut d = ymd(2022, 1, 1);
        while d < ymd(2036, 1, 1) {
            assert_eq!(is_banking_day(d), ach_core::calendar::is_banking_day(d), "{d}");
            let noon = at_eastern(d, 12, 0, 0);
            assert_eq!(cutoff_after(noon), ach_core::calendar::next_cutoff_after(noon), "{d}");
            d += Duration::days(1);
        }
    }
}
