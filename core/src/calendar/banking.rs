//! Banking days (weekdays that are not Fed holiday closures) and the daily
//! 6 PM ET cut-off schedule built on them.

use chrono::{DateTime, Datelike, NaiveDate, Utc};

use super::{cutoff_instant, eastern_date, fed_holiday, is_weekend};

/// Whether `date` is a banking day: Monday–Friday and not a Fed holiday closure.
pub fn is_banking_day(date: NaiveDate) -> bool {
    !is_weekend(date) && fed_holiday(date).is_none()
}

/// The first banking day strictly after `date`, or `None` if there is none
/// within chrono's range.
pub fn checked_next_banking_day(date: NaiveDate) -> Option<NaiveDate> {
    first_banking_day(date, NaiveDate::succ_opt)
}

/// The first banking day reached from `date` by repeating `step` (at least
/// once), or `None` if `step` runs out of chrono's range first.
fn first_banking_day(date: NaiveDate, step: fn(&NaiveDate) -> Option<NaiveDate>) -> Option<NaiveDate> {
    let mut day = step(&date)?;
    while !is_banking_day(day) {
        day = step(&day)?;
    }
    Some(day)
}

/// The first banking day strictly after `date`.
///
/// E.g. Wednesday 2026-11-25 → Friday 2026-11-27 (Thanksgiving skipped), and
/// Friday 2026-11-27 → Monday 2026-11-30. Saturates at [`NaiveDate::MAX`] at
/// the end of chrono's range (year 262142).
pub fn next_banking_day(date: NaiveDate) -> NaiveDate {
    checked_next_banking_day(date).unwrap_or(NaiveDate::MAX)
}

/// The last banking day strictly before `date`, or `None` if there is none
/// within chrono's range.
pub fn checked_previous_banking_day(date: NaiveDate) -> Option<NaiveDate> {
    first_banking_day(date, NaiveDate::pred_opt)
}

/// The last banking day strictly before `date`. Saturates at
/// [`NaiveDate::MIN`] at the start of chrono's range.
pub fn previous_banking_day(date: NaiveDate) -> NaiveDate {
    checked_previous_banking_day(date).unwrap_or(NaiveDate::MIN)
}

/// `date` itself if it is a banking day, otherwise the next banking day.
/// Saturates at [`NaiveDate::MAX`].
pub fn banking_day_on_or_after(date: NaiveDate) -> NaiveDate {
    if is_banking_day(date) {
        date
    } else {
        next_banking_day(date)
    }
}

/// `date` itself if it is a banking day, otherwise the previous banking day.
/// Saturates at [`NaiveDate::MIN`].
pub fn banking_day_on_or_before(date: NaiveDate) -> NaiveDate {
    if is_banking_day(date) {
        date
    } else {
        previous_banking_day(date)
    }
}

/// `date` advanced by `n` banking days (the `n`-th banking day strictly
/// after `date`), or `None` if that is beyond chrono's range. `n == 0`
/// returns `date` unchanged, even if it is not a banking day.
///
/// Runs in O(n) calendar steps.
pub fn checked_add_banking_days(date: NaiveDate, n: u32) -> Option<NaiveDate> {
    // Cheap rejection: there are at most 5 banking days in any 7 calendar
    // days, so a request beyond that bound cannot be satisfied in range.
    let days_left = i64::from(NaiveDate::MAX.num_days_from_ce() - date.num_days_from_ce());
    if i64::from(n) > days_left / 7 * 5 + 5 {
        return None;
    }
    let mut day = date;
    for _ in 0..n {
        day = checked_next_banking_day(day)?;
    }
    Some(day)
}

/// `date` advanced by `n` banking days; see [`checked_add_banking_days`].
/// Saturates at [`NaiveDate::MAX`]. Monotonic in both `date` and `n`.
pub fn add_banking_days(date: NaiveDate, n: u32) -> NaiveDate {
    checked_add_banking_days(date, n).unwrap_or(NaiveDate::MAX)
}

/// The first banking-day cut-off strictly after `instant`, as
/// `(banking date, cut-off instant)`, or `None` beyond chrono's range.
/// See [`next_cutoff_after`].
pub fn checked_next_cutoff_after(instant: DateTime<Utc>) -> Option<(NaiveDate, DateTime<Utc>)> {
    let today = eastern_date(instant);
    let first = if is_banking_day(today) { today } else { checked_next_banking_day(today)? };
    let cutoff = cutoff_instant(first);
    if cutoff > instant {
        return Some((first, cutoff));
    }
    let next = checked_next_banking_day(first)?;
    Some((next, cutoff_instant(next)))
}

/// The cut-off a transaction created at `instant` waits for: the first
/// 18:00:00 ET cut-off of a banking day that is **strictly after** `instant`,
/// as `(banking date, cut-off instant in UTC)`.
///
/// Boundary: the comparison is strict. A creation at 17:59:59.999… ET on a
/// banking day belongs to that day's cut-off; a creation at *exactly*
/// 18:00:00.000 ET (the cut-off instant itself) or later belongs to the
/// **next** banking day's cut-off. A creation on a Saturday, Sunday or Fed
/// holiday closure waits for the next banking day's cut-off. E.g. created Wed
/// 2026-11-25 17:59:59 ET → 2026-11-25 18:00 ET; created 18:00:00 ET → Fri
/// 2026-11-27 18:00 ET (Thanksgiving skipped).
///
/// There is never a banking-day cut-off `c` with `instant < c < result`.
/// Saturates at the last banking day of chrono's range (year 262142) for
/// instants beyond it, where the strictly-after guarantee cannot hold; use
/// [`checked_next_cutoff_after`] to detect that.
pub fn next_cutoff_after(instant: DateTime<Utc>) -> (NaiveDate, DateTime<Utc>) {
    checked_next_cutoff_after(instant).unwrap_or_else(|| {
        let last = banking_day_on_or_before(NaiveDate::MAX);
        (last, cutoff_instant(last))
    })
}

/// Every banking-day cut-off `c` with `from_exclusive < c <= to_inclusive`,
/// in increasing order, as `(banking date, cut-off instant)`.
///
/// Empty when `to_inclusive <= from_exclusive`. The first item is
/// `next_cutoff_after(from_exclusive)` when that is within the bound, so the
/// same boundary convention applies: a cut-off equal to `from_exclusive` is
/// excluded, one equal to `to_inclusive` is included.
pub fn cutoffs_between(
    from_exclusive: DateTime<Utc>,
    to_inclusive: DateTime<Utc>,
) -> impl Iterator<Item = (NaiveDate, DateTime<Utc>)> {
    std::iter::successors(checked_next_cutoff_after(from_exclusive), |&(date, _)| {
        checked_next_banking_day(date).map(|next| (next, cutoff_instant(next)))
    })
    .take_while(move |&(_, cutoff)| cutoff <= to_inclusive)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;
    use chrono::{DateTime, Datelike, Days, NaiveDate, Utc};
    use proptest::prelude::*;

    #[test]
    fn thanksgiving_weekend_navigation() {
        assert_eq!(next_banking_day(d(2026, 11, 25)), d(2026, 11, 27));
        assert_eq!(next_banking_day(d(2026, 11, 27)), d(2026, 11, 30));
        assert_eq!(previous_banking_day(d(2026, 11, 27)), d(2026, 11, 25));
        assert_eq!(previous_banking_day(d(2026, 11, 30)), d(2026, 11, 27));
        assert_eq!(banking_day_on_or_after(d(2026, 11, 26)), d(2026, 11, 27));
        assert_eq!(banking_day_on_or_after(d(2026, 11, 25)), d(2026, 11, 25));
        assert_eq!(banking_day_on_or_after(d(2026, 11, 28)), d(2026, 11, 30));
        assert_eq!(banking_day_on_or_before(d(2026, 11, 29)), d(2026, 11, 27));
        assert_eq!(add_banking_days(d(2026, 11, 25), 0), d(2026, 11, 25));
        assert_eq!(add_banking_days(d(2026, 11, 26), 0), d(2026, 11, 26));
        assert_eq!(add_banking_days(d(2026, 11, 25), 1), d(2026, 11, 27));
        assert_eq!(add_banking_days(d(2026, 11, 25), 2), d(2026, 11, 30));
        assert_eq!(add_banking_days(d(2026, 12, 24), 1), d(2026, 12, 28));
        assert_eq!(add_banking_days(d(2026, 12, 31), 1), d(2027, 1, 4));
    }

    #[test]
    fn range_extremes_never_panic() {
        for date in [
            NaiveDate::MIN,
            NaiveDate::MAX,
            NaiveDate::MIN.succ_opt().unwrap(),
            NaiveDate::MAX.pred_opt().unwrap(),
        ] {
            let _ = fed_holiday(date);
            let _ = holiday_on(date);
            let _ = is_banking_day(date);
            let _ = next_banking_day(date);
            let _ = previous_banking_day(date);
            let _ = banking_day_on_or_after(date);
            let _ = banking_day_on_or_before(date);
            let _ = add_banking_days(date, 10);
            let c = cutoff_instant(date);
            assert_eq!(c.date_naive(), date);
        }
        assert_eq!(checked_next_banking_day(NaiveDate::MAX), None);
        assert_eq!(next_banking_day(NaiveDate::MAX), NaiveDate::MAX);
        assert_eq!(checked_previous_banking_day(NaiveDate::MIN), None);
        assert_eq!(previous_banking_day(NaiveDate::MIN), NaiveDate::MIN);
        assert_eq!(checked_add_banking_days(NaiveDate::MAX, 1), None);
        assert_eq!(add_banking_days(NaiveDate::MAX, u32::MAX), NaiveDate::MAX);
        assert_eq!(checked_add_banking_days(NaiveDate::MIN, u32::MAX), None);
        let near_end = NaiveDate::MAX.checked_sub_days(Days::new(30)).unwrap();
        assert_eq!(checked_add_banking_days(near_end, 30), None);
        assert!(checked_add_banking_days(near_end, 15).is_some());
        for year in [i32::MIN, i32::MAX, -262_144, 262_143] {
            assert!(fed_holidays_in(year).is_empty());
            assert_eq!(days_in_month(year, 1), None);
        }

        for t in [DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC] {
            let _ = to_eastern(t);
            let _ = eastern_date(t);
            let _ = eastern_month_key(t);
            let _ = format_eastern_timestamp(t);
            let _ = next_cutoff_after(t);
            let _ = cutoffs_between(t, DateTime::<Utc>::MAX_UTC).take(3).count();
        }
        assert_eq!(eastern_date(DateTime::<Utc>::MIN_UTC), NaiveDate::MIN);
        assert_eq!(checked_next_cutoff_after(DateTime::<Utc>::MAX_UTC), None);
        let (last, _) = next_cutoff_after(DateTime::<Utc>::MAX_UTC);
        assert!(is_banking_day(last));
    }

    #[test]
    fn next_cutoff_thanksgiving_boundary() {
        let wed = d(2026, 11, 25);
        let fri = d(2026, 11, 27);
        let wed_cut = et(2026, 11, 25, 18, 0, 0);
        let fri_cut = et(2026, 11, 27, 18, 0, 0);
        assert_eq!(wed_cut, utc("2026-11-25T23:00:00Z"));

        assert_eq!(next_cutoff_after(et(2026, 11, 25, 17, 59, 59)), (wed, wed_cut));
        let just_before = wed_cut - chrono::Duration::nanoseconds(1);
        assert_eq!(next_cutoff_after(just_before), (wed, wed_cut));
        // Exactly at the cut-off: next banking day (Thanksgiving skipped).
        assert_eq!(next_cutoff_after(wed_cut), (fri, fri_cut));
        assert_eq!(next_cutoff_after(et(2026, 11, 25, 23, 59, 59)), (fri, fri_cut));
        // Created on Thanksgiving itself.
        assert_eq!(next_cutoff_after(et(2026, 11, 26, 9, 0, 0)), (fri, fri_cut));
        // Early morning on a banking day: same day.
        assert_eq!(next_cutoff_after(et(2026, 11, 25, 0, 0, 0)), (wed, wed_cut));
    }

    #[test]
    fn next_cutoff_from_weekend() {
        let mon = d(2026, 11, 30);
        let mon_cut = et(2026, 11, 30, 18, 0, 0);
        assert_eq!(next_cutoff_after(et(2026, 11, 28, 10, 0, 0)), (mon, mon_cut));
        assert_eq!(next_cutoff_after(et(2026, 11, 28, 19, 0, 0)), (mon, mon_cut));
        assert_eq!(next_cutoff_after(et(2026, 11, 29, 23, 59, 59)), (mon, mon_cut));
        // Friday after cut-off -> Monday.
        assert_eq!(next_cutoff_after(et(2026, 11, 27, 18, 0, 0)), (mon, mon_cut));
        // Friday 23:30 ET is Saturday in UTC: still Monday.
        assert_eq!(next_cutoff_after(utc("2026-11-28T04:30:00Z")), (mon, mon_cut));
        // Over a DST change: Saturday 2026-03-07 (EST) -> Monday 2026-03-09 (EDT).
        assert_eq!(
            next_cutoff_after(utc("2026-03-07T12:00:00Z")),
            (d(2026, 3, 9), utc("2026-03-09T22:00:00Z"))
        );
    }

    #[test]
    fn cutoffs_between_lists_banking_days() {
        let from = et(2026, 11, 25, 18, 0, 0); // exactly Wednesday's cut-off: excluded
        let to = et(2026, 12, 1, 18, 0, 0); // exactly Tuesday's cut-off: included
        let got: Vec<_> = cutoffs_between(from, to).collect();
        assert_eq!(
            got,
            vec![
                (d(2026, 11, 27), et(2026, 11, 27, 18, 0, 0)),
                (d(2026, 11, 30), et(2026, 11, 30, 18, 0, 0)),
                (d(2026, 12, 1), et(2026, 12, 1, 18, 0, 0)),
            ]
        );
        let before = from - chrono::Duration::seconds(1);
        assert_eq!(cutoffs_between(before, to).count(), 4);
        assert_eq!(cutoffs_between(to, from).count(), 0);
        assert_eq!(cutoffs_between(from, from).count(), 0);
        // A full year has as many cut-offs as banking days.
        let y_from = utc("2026-01-01T05:00:00Z"); // midnight ET
        let y_to = utc("2027-01-01T05:00:00Z");
        let banking =
            d(2026, 1, 1).iter_days().take_while(|x| x.year() == 2026).filter(|x| is_banking_day(*x)).count();
        assert_eq!(banking, 261 - 10);
        assert_eq!(cutoffs_between(y_from, y_to).count(), banking);
    }

    proptest! {
        #[test]
        fn prop_next_cutoff_is_first_banking_cutoff_after(t in instant_2000_2100()) {
            let (date, cutoff) = next_cutoff_after(t);
            prop_assert!(cutoff > t);
            prop_assert!(is_banking_day(date));
            prop_assert_eq!(cutoff, cutoff_instant(date));
            prop_assert_eq!(eastern_date(cutoff), date);
            // No banking-day cut-off strictly between t and the result.
            prop_assert!(cutoff_instant(previous_banking_day(date)) <= t);
            prop_assert_eq!(checked_next_cutoff_after(t), Some((date, cutoff)));
            // The cut-off is at 18:00:00 Eastern, 22:00 or 23:00 UTC.
            prop_assert_eq!(to_eastern(cutoff).time(), CUTOFF_TIME);
            prop_assert!(matches!(cutoff.format("%H:%M:%S").to_string().as_str(), "22:00:00" | "23:00:00"));
        }

        #[test]
        fn prop_cutoffs_between_matches_next_cutoff(t in instant_2000_2100(), hours in 0i64..24 * 30) {
            let to = t + chrono::Duration::hours(hours);
            let mut prev = t;
            for (date, cutoff) in cutoffs_between(t, to) {
                prop_assert!(cutoff > t && cutoff <= to);
                prop_assert_eq!(next_cutoff_after(prev), (date, cutoff));
                prev = cutoff;
            }
            // Nothing left in (prev, to].
            prop_assert!(next_cutoff_after(prev).1 > to);
        }

        #[test]
        fn prop_next_banking_day(date in date_2000_2100()) {
            let next = next_banking_day(date);
            prop_assert!(next > date);
            prop_assert!(is_banking_day(next));
            prop_assert!((next - date).num_days() <= 4);
            let mut x = date.succ_opt().unwrap();
            while x < next {
                prop_assert!(!is_banking_day(x));
                x = x.succ_opt().unwrap();
            }
            prop_assert_eq!(previous_banking_day(next), banking_day_on_or_before(date));
            prop_assert_eq!(banking_day_on_or_after(date), if is_banking_day(date) { date } else { next });
        }

        #[test]
        fn prop_add_banking_days_monotonic(
            a in date_2000_2100(),
            b in date_2000_2100(),
            n in 0u32..300,
            m in 0u32..300,
        ) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let (n, m) = if n <= m { (n, m) } else { (m, n) };
            prop_assert!(add_banking_days(lo, n) <= add_banking_days(hi, n));
            prop_assert!(add_banking_days(lo, n) <= add_banking_days(lo, m));
            if n < m {
                prop_assert!(add_banking_days(lo, n) < add_banking_days(lo, m));
            }
            prop_assert_eq!(add_banking_days(lo, n + 1), next_banking_day(add_banking_days(lo, n)));
        }

        #[test]
        fn prop_no_panic_anywhere_in_range(date in any_date(), t in any_instant(), n in 0u32..50) {
            let _ = fed_holiday(date);
            let _ = holiday_on(date);
            let banking = is_banking_day(date);
            prop_assert_eq!(banking, !is_weekend(date) && fed_holiday(date).is_none());
            let _ = next_banking_day(date);
            let _ = previous_banking_day(date);
            let _ = add_banking_days(date, n);
            prop_assert_eq!(cutoff_instant(date).date_naive(), date);
            let _ = fed_holidays_in(date.year());
            let _ = format_eastern_timestamp(t);
            let _ = eastern_month_key(t);
            let (_, c) = next_cutoff_after(t);
            if let Some((_, c2)) = checked_next_cutoff_after(t) {
                prop_assert!(c2 > t);
                prop_assert_eq!(c, c2);
            }
        }
    }
}
