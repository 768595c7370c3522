//! US Eastern wall-clock conversions, parsing, the 6 PM ET cut-off instant,
//! and the day/month keys used for limits.

use chrono::{
    DateTime, Datelike, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone, Timelike, Utc,
};
use chrono_tz::America::New_York;
use chrono_tz::Tz;

use super::CalendarError;

/// The Eastern wall-clock time of the daily cut-off: 18:00:00 (6 PM ET).
pub const CUTOFF_TIME: NaiveTime = match NaiveTime::from_hms_opt(18, 0, 0) {
    Some(t) => t,
    // Evaluated at compile time; can never be reached at run time.
    None => panic!("18:00:00 is a valid time of day"),
};

/// Converts a UTC instant to US Eastern time (`America/New_York`, DST-aware).
///
/// Never panics. Note that for the very first instants chrono can represent
/// (`DateTime::<Utc>::MIN_UTC`) the Eastern wall-clock reading lies before
/// [`NaiveDate::MIN`]; use [`eastern_date`] / [`eastern_naive`] rather than
/// `DateTime::date_naive` / `naive_local` on the result if such inputs are possible.
pub fn to_eastern(instant: DateTime<Utc>) -> DateTime<Tz> {
    instant.with_timezone(&New_York)
}

/// The Eastern wall-clock date and time of a UTC instant.
///
/// Never panics: for the first few hours of chrono's range (before
/// `-262143-01-01T04:56:02Z`), whose Eastern reading would fall before
/// [`NaiveDate::MIN`], the result is clamped to [`NaiveDateTime::MIN`].
pub fn eastern_naive(instant: DateTime<Utc>) -> NaiveDateTime {
    let offset = New_York.offset_from_utc_datetime(&instant.naive_utc()).fix();
    match instant.naive_utc().checked_add_offset(offset) {
        Some(local) => local,
        None if offset.local_minus_utc() < 0 => NaiveDateTime::MIN,
        None => NaiveDateTime::MAX,
    }
}

/// The Eastern calendar date of a UTC instant.
///
/// For example 2026-11-23T04:30:00Z is 2026-11-22 23:30 EST, so the date is
/// 2026-11-22. Never panics (see [`eastern_naive`] for the clamping at the
/// extreme low end of chrono's range).
pub fn eastern_date(instant: DateTime<Utc>) -> NaiveDate {
    eastern_naive(instant).date()
}

/// [`eastern_date`] for hosts that ask on every call with the current instant (the
/// validators without an engine, by the system clock or the browser's). The
/// Eastern date changes only at midnight Eastern, which is always a whole UTC hour
/// (05:00 or 04:00 UTC), so each thread converts once per UTC hour and answers
/// from its cache otherwise. Exactly [`eastern_date`] for every instant.
pub fn eastern_date_cached(instant: DateTime<Utc>) -> NaiveDate {
    thread_local!(static TODAY: std::cell::Cell<Option<(i64, NaiveDate)>> = const { std::cell::Cell::new(None) });
    let hour = instant.timestamp().div_euclid(3600);
    let convert = || eastern_date(instant);
    TODAY
        .try_with(|cached| match cached.get() {
            Some((h, date)) if h == hour => date,
            _ => {
                let date = convert();
                cached.set(Some((hour, date)));
                date
            }
        })
        .unwrap_or_else(|_| convert())
}

/// Formats a UTC instant as Eastern wall-clock time, `YYYY-MM-DD HH:MM:SS`
/// (24-hour clock, no offset or zone suffix, sub-second part dropped).
///
/// For example 2026-11-23T23:30:00Z formats as `2026-11-23 18:30:00`.
pub fn format_eastern_timestamp(instant: DateTime<Utc>) -> String {
    let t = eastern_naive(instant);
    let Some(year) = u32::try_from(t.year()).ok().filter(|y| *y <= 9999) else {
        return t.format("%Y-%m-%d %H:%M:%S").to_string();
    };
    // Written digit by digit: this runs for every status change a create makes.
    let mut out = *b"0000-00-00 00:00:00";
    for (at, width, v) in [
        (0, 4, year),
        (5, 2, t.month()),
        (8, 2, t.day()),
        (11, 2, t.hour()),
        (14, 2, t.minute()),
        (17, 2, t.second()),
    ] {
        put_digits(&mut out[at..at + width], v);
    }
    // ASCII digits and dashes: always UTF-8.
    String::from_utf8(out.to_vec()).unwrap_or_default()
}

/// Formats a date as `YYYY-MM-DD` (the feeds' date shape), as chrono's
/// `%Y-%m-%d` does, digit by digit: every status change carries up to four.
pub fn format_date(date: NaiveDate) -> String {
    match date_text(date) {
        // ASCII digits and dashes: always UTF-8.
        Some(out) => String::from_utf8(out.to_vec()).unwrap_or_default(),
        None => date.format("%Y-%m-%d").to_string(),
    }
}

/// [`format_date`]'s bytes without allocating, for years 0 to 9999 (`None`
/// for any other).
pub(crate) fn date_text(date: NaiveDate) -> Option<[u8; 10]> {
    let year = u32::try_from(date.year()).ok().filter(|y| *y <= 9999)?;
    let mut out = *b"0000-00-00";
    for (at, width, v) in [(0, 4, year), (5, 2, date.month()), (8, 2, date.day())] {
        put_digits(&mut out[at..at + width], v);
    }
    Some(out)
}

/// `v`'s last `slots.len()` decimal digits into `slots`, zero-padded.
fn put_digits(slots: &mut [u8], mut v: u32) {
    for slot in slots.iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// Parses an RFC 3339 timestamp carrying an explicit offset (`Z` or `±HH:MM`)
/// into a UTC instant.
///
/// `"2026-11-23T18:30:00-05:00"` parses to 2026-11-23T23:30:00Z. A timestamp
/// without an offset is rejected: a bare wall-clock time is ambiguous.
///
/// # Errors
///
/// [`CalendarError::InvalidTimestamp`] if `text` is not RFC 3339.
pub fn parse_instant(text: &str) -> Result<DateTime<Utc>, CalendarError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|source| CalendarError::InvalidTimestamp { input: text.to_owned(), source })
}

/// Parses a calendar date written `YYYY-MM-DD` (e.g. `"2026-11-27"`).
///
/// # Errors
///
/// [`CalendarError::InvalidDate`] if `text` is not a valid date in that form.
pub fn parse_date(text: &str) -> Result<NaiveDate, CalendarError> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|source| CalendarError::InvalidDate { input: text.to_owned(), source })
}

/// The instant US Eastern `date` begins (midnight Eastern; DST changes at
/// 02:00, so midnight is never skipped or repeated). Never panics.
pub fn start_of_eastern_day(date: NaiveDate) -> DateTime<Utc> {
    let local = date.and_time(NaiveTime::MIN);
    if let Some(t) = New_York.from_local_datetime(&local).earliest() {
        return t.with_timezone(&Utc);
    }
    let est = FixedOffset::west_opt(5 * 3600).unwrap_or(Utc.fix());
    local.checked_sub_offset(est).unwrap_or(local).and_utc()
}

/// The 6 PM Eastern cut-off of `date` as a UTC instant.
///
/// 22:00 UTC while New York is on EDT (summer), 23:00 UTC on EST (winter).
/// The DST switch happens at 2 AM, so 18:00 always exists exactly once and the
/// cut-off is always on the same UTC date as `date`. Defined for every date,
/// whether or not it is a banking day; never panics.
pub fn cutoff_instant(date: NaiveDate) -> DateTime<Utc> {
    eastern_instant(date, CUTOFF_TIME)
}

/// US Eastern `time` of `date` as a UTC instant. For a time DST skips (02:00
/// to 03:00 on the spring switch) the instant as if on standard time; for one
/// it repeats, the earlier. Never panics.
pub fn eastern_instant(date: NaiveDate, time: NaiveTime) -> DateTime<Utc> {
    let local = date.and_time(time);
    if let Some(t) = New_York.from_local_datetime(&local).earliest() {
        return t.with_timezone(&Utc);
    }
    // A skipped hour: read as standard time. At most 5 h from the day's
    // start, so the subtraction stays within chrono's range but at its ends.
    let est = FixedOffset::west_opt(5 * 3600).unwrap_or(Utc.fix());
    local.checked_sub_offset(est).unwrap_or(local).and_utc()
}

/// The Eastern calendar day an instant counts toward for daily limits
/// (same as [`eastern_date`]).
pub fn eastern_day_key(instant: DateTime<Utc>) -> NaiveDate {
    eastern_date(instant)
}

/// The Eastern `(year, month)` an instant counts toward for monthly limits;
/// `month` is 1–12. E.g. 2026-12-01T03:00Z is still November 30 in New York,
/// so its key is `(2026, 11)`.
pub fn eastern_month_key(instant: DateTime<Utc>) -> (i32, u32) {
    let date = eastern_date(instant);
    (date.year(), date.month())
}

/// The number of days in `month` (1–12) of `year`, or `None` if the month is
/// not valid or outside chrono's range.
pub fn days_in_month(year: i32, month: u32) -> Option<u32> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    Some(u32::from(first.num_days_in_month()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;
    use chrono::{Datelike, NaiveDate, Offset, TimeZone, Utc};
    use proptest::prelude::*;

    #[test]
    fn midnight_eastern_is_a_whole_utc_hour_so_the_cache_is_exact() {
        // What `eastern_date_cached` relies on: within any UTC hour of two years
        // (both offsets, every DST change) the Eastern date is constant; and the
        // cache answers eastern_date at both ends of every hour, in any order.
        let mut t = utc("2026-01-01T00:00:00Z");
        for _ in 0..(2 * 366 * 24) {
            let last = t + chrono::TimeDelta::milliseconds(3_599_999);
            assert_eq!(eastern_date(t), eastern_date(last), "{t}");
            assert_eq!(eastern_date_cached(last), eastern_date(last), "{last}");
            assert_eq!(eastern_date_cached(t), eastern_date(t), "{t}");
            t += chrono::TimeDelta::hours(1);
        }
    }

    #[test]
    fn format_date_writes_what_chrono_writes_for_every_day_and_the_extremes() {
        let mut d = NaiveDate::from_ymd_opt(1, 1, 1).unwrap_or_default();
        let end = NaiveDate::from_ymd_opt(9999, 12, 31).unwrap_or_default();
        while d <= end {
            assert_eq!(format_date(d), d.format("%Y-%m-%d").to_string());
            d = d + chrono::Days::new(if d.year() % 400 < 3 { 1 } else { 97 });
        }
        for d in [NaiveDate::MIN, NaiveDate::MAX, end, NaiveDate::from_ymd_opt(0, 3, 1).unwrap_or_default()] {
            assert_eq!(format_date(d), d.format("%Y-%m-%d").to_string());
        }
    }

    proptest! {
        #[test]
        fn the_cached_eastern_date_is_the_eastern_date(instants in proptest::collection::vec(any_instant(), 1..20)) {
            for t in instants {
                prop_assert_eq!(eastern_date_cached(t), eastern_date(t));
            }
        }
    }

    /// 6 PM Eastern is 23:00 UTC under standard time and 22:00 UTC under
    /// daylight saving time.
    #[test]
    fn cutoff_follows_dst() {
        // Around spring forward (2026-03-08) and fall back (2026-11-01), and late
        // in the century, when DST still applies.
        let standard = [d(2026, 3, 6), d(2026, 3, 7), d(2026, 11, 1), d(2026, 11, 2), d(2099, 12, 1)];
        let daylight = [d(2026, 3, 8), d(2026, 3, 9), d(2026, 10, 30), d(2026, 10, 31), d(2099, 7, 1)];
        for (days, utc_hour) in [(standard, 23), (daylight, 22)] {
            for day in days {
                let expected = day.and_hms_opt(utc_hour, 0, 0).unwrap().and_utc();
                assert_eq!(cutoff_instant(day), expected, "{day}");
            }
        }
    }

    #[test]
    fn eastern_date_and_keys() {
        let t = utc("2026-11-23T04:30:00Z");
        assert_eq!(eastern_date(t), d(2026, 11, 22));
        assert_eq!(eastern_day_key(t), d(2026, 11, 22));
        assert_eq!(to_eastern(t).date_naive(), d(2026, 11, 22));
        assert_eq!(eastern_date(utc("2026-11-23T05:00:00Z")), d(2026, 11, 23));
        // Summer: midnight ET is 04:00Z.
        assert_eq!(eastern_date(utc("2026-07-01T03:59:59Z")), d(2026, 6, 30));
        assert_eq!(eastern_date(utc("2026-07-01T04:00:00Z")), d(2026, 7, 1));

        assert_eq!(eastern_month_key(utc("2026-12-01T03:00:00Z")), (2026, 11));
        assert_eq!(eastern_month_key(utc("2026-12-01T05:00:00Z")), (2026, 12));
        assert_eq!(eastern_month_key(utc("2027-01-01T04:59:59Z")), (2026, 12));
        assert_eq!(eastern_month_key(utc("2027-01-01T05:00:00Z")), (2027, 1));
    }

    #[test]
    fn formatting_and_parsing() {
        let t = utc("2026-11-23T18:30:00-05:00");
        assert_eq!(t, Utc.with_ymd_and_hms(2026, 11, 23, 23, 30, 0).unwrap());
        assert_eq!(format_eastern_timestamp(t), "2026-11-23 18:30:00");
        assert_eq!(format_eastern_timestamp(utc("2026-07-04T00:00:00.999Z")), "2026-07-03 20:00:00");
        assert_eq!(utc("2026-07-04T00:00:00+00:00"), utc("2026-07-04T00:00:00Z"));

        for bad in [
            "",
            "2026-11-23",
            "2026-11-23T18:30:00", // no offset
            "2026-13-01T00:00:00Z",
            "2026-11-23T18:30:00-05:00 trailing",
            "yesterday",
        ] {
            let err = parse_instant(bad).unwrap_err();
            assert!(matches!(&err, CalendarError::InvalidTimestamp { input, .. } if input == bad));
            assert!(err.to_string().contains("invalid timestamp"), "{err}");
        }

        assert_eq!(parse_date("2026-11-27").unwrap(), d(2026, 11, 27));
        assert!(matches!(parse_date("2026-02-29"), Err(CalendarError::InvalidDate { .. })));
        assert_eq!(
            parse_date("11/27/2026").unwrap_err().to_string(),
            "invalid date \"11/27/2026\": expected YYYY-MM-DD (input contains invalid characters)"
        );
    }

    #[test]
    fn days_in_month_values() {
        assert_eq!(days_in_month(2026, 1), Some(31));
        assert_eq!(days_in_month(2026, 2), Some(28));
        assert_eq!(days_in_month(2028, 2), Some(29));
        assert_eq!(days_in_month(2100, 2), Some(28));
        assert_eq!(days_in_month(2000, 2), Some(29));
        assert_eq!(days_in_month(2026, 4), Some(30));
        assert_eq!(days_in_month(2026, 12), Some(31));
        assert_eq!(days_in_month(2026, 0), None);
        assert_eq!(days_in_month(2026, 13), None);
        assert_eq!(days_in_month(i32::MAX, 1), None);
    }

    proptest! {
        #[test]
        fn prop_eastern_views_agree(t in instant_2000_2100()) {
            let local = to_eastern(t);
            prop_assert_eq!(eastern_date(t), local.date_naive());
            prop_assert_eq!(eastern_naive(t), local.naive_local());
            prop_assert_eq!(eastern_month_key(t), (local.year(), local.month()));
            prop_assert_eq!(format_eastern_timestamp(t), local.format("%Y-%m-%d %H:%M:%S").to_string());
            let offset = local.offset().fix().local_minus_utc();
            prop_assert!(offset == -4 * 3600 || offset == -5 * 3600);
            // Round trip through the formatted RFC 3339 text.
            prop_assert_eq!(parse_instant(&local.to_rfc3339()).unwrap(), t);
        }

        #[test]
        fn timestamps_format_as_chrono_formats_them(secs in -62_000_000_000i64..300_000_000_000, nanos in 0u32..1_000_000_000) {
            // Years 0 to 9999 and beyond (the fallback), every second and sub-second.
            let t = chrono::DateTime::from_timestamp(secs, nanos).unwrap();
            let chrono_text = eastern_naive(t).format("%Y-%m-%d %H:%M:%S").to_string();
            prop_assert_eq!(format_eastern_timestamp(t), chrono_text);
        }
    }
}
