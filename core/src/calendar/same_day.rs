//! Same Day ACH windows: the FedACH deadlines and settlement times of each
//! window, the engine's cut-off in each, and the dates an entry of a
//! same-day cut-off takes.
//!
//! Invariant: every same-day cut-off is before its window's deadline, so
//! before 16:45 ET, never at the standard 18:00 cut-off: a cut-off instant
//! whose Eastern time is not 18:00 is a same-day one, and its time names its
//! window.

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};

use super::banking::{checked_next_banking_day, is_banking_day};
use super::eastern::{eastern_instant, eastern_naive, CUTOFF_TIME};

const fn hm(h: u32, m: u32) -> NaiveTime {
    match NaiveTime::from_hms_opt(h, m, 0) {
        Some(t) => t,
        // Evaluated at compile time with constant, valid arguments.
        None => panic!("a valid time of day"),
    }
}

/// The FedACH deadlines of the three same-day windows (US Eastern): a file
/// must reach the Fed before the deadline of the window it is for.
pub const SAME_DAY_DEADLINES: [NaiveTime; 3] = [hm(10, 30), hm(14, 45), hm(16, 45)];

/// When each window's entries settle (US Eastern), the same day.
pub const SAME_DAY_SETTLEMENTS: [NaiveTime; 3] = [hm(13, 0), hm(17, 0), hm(18, 0)];

/// The engine's same-day cut-offs unless the operator sets others: half an
/// hour before each FedACH deadline, time for the ODFI to send the file.
pub const DEFAULT_SAME_DAY_CUTOFFS: [NaiveTime; 3] = [hm(10, 0), hm(14, 15), hm(16, 15)];

/// A same-day window: which one (0, 1, 2) and its times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SameDayWindow {
    /// 0, 1 or 2: the day's first, second or third window.
    pub index: usize,
    /// Its FedACH deadline.
    pub deadline: NaiveTime,
    /// When its entries settle.
    pub settlement: NaiveTime,
}

/// The window a cut-off at Eastern `time` serves: the first whose deadline
/// is after it (`None` at or after the last deadline).
pub fn same_day_window(time: NaiveTime) -> Option<SameDayWindow> {
    let index = SAME_DAY_DEADLINES.iter().position(|d| time < *d)?;
    Some(SameDayWindow {
        index,
        deadline: SAME_DAY_DEADLINES[index],
        settlement: SAME_DAY_SETTLEMENTS[index],
    })
}

/// The operator's same-day cut-offs from their `HH:MM` texts: one to three,
/// each before its window's deadline, at most one per window; answered in
/// time order. `Err`: what is wrong, with the index of the text at fault.
pub fn parse_same_day_cutoffs(texts: &[String]) -> Result<Vec<NaiveTime>, (Option<usize>, String)> {
    if texts.is_empty() || texts.len() > SAME_DAY_DEADLINES.len() {
        return Err((None, "same_day_cutoffs must list one to three times (HH:MM, US Eastern)".into()));
    }
    let mut times: Vec<(NaiveTime, usize)> = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let time = NaiveTime::parse_from_str(text, "%H:%M")
            .map_err(|_| (Some(i), format!("'{}' is not a time of day as HH:MM", crate::echo::echo(text))))?;
        let Some(window) = same_day_window(time) else {
            let last = SAME_DAY_DEADLINES[SAME_DAY_DEADLINES.len() - 1].format("%H:%M");
            return Err((Some(i), format!("{text} is after FedACH's last same-day deadline ({last} ET)")));
        };
        if let Some((_, j)) =
            times.iter().find(|(t, _)| same_day_window(*t).map(|w| w.index) == Some(window.index))
        {
            let deadline = window.deadline.format("%H:%M");
            return Err((
                Some(i),
                format!(
                    "{text} and {} are in the same window (deadline {deadline} ET): one cut-off a window",
                    texts[*j]
                ),
            ));
        }
        times.push((time, i));
    }
    times.sort();
    Ok(times.into_iter().map(|(t, _)| t).collect())
}

/// The first same-day cut-off of a banking day strictly after `instant`
/// among `cutoffs` (Eastern times, in order, each before 16:45), as
/// `(banking date, cut-off instant)`: an entry made after the day's last
/// window waits for the next banking day's first. `None` beyond chrono's
/// range, or with no cut-offs.
pub fn next_same_day_cutoff_after(
    instant: DateTime<Utc>,
    cutoffs: &[NaiveTime],
) -> Option<(NaiveDate, DateTime<Utc>)> {
    let first_time = *cutoffs.first()?;
    let today = eastern_naive(instant).date();
    if is_banking_day(today) {
        if let Some(at) = cutoffs.iter().map(|t| eastern_instant(today, *t)).find(|at| *at > instant) {
            return Some((today, at));
        }
    }
    let next = checked_next_banking_day(today)?;
    Some((next, eastern_instant(next, first_time)))
}

/// Whether `cutoff` (a cut-off instant) is a same-day one.
pub fn is_same_day_cutoff(cutoff: DateTime<Utc>) -> bool {
    eastern_naive(cutoff).time() != CUTOFF_TIME
}

/// For a same-day cut-off: the instant its entries settle (its window's
/// settlement time that day). `None` for the standard cut-off.
pub fn same_day_settlement(cutoff: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let local = eastern_naive(cutoff);
    if local.time() == CUTOFF_TIME {
        return None;
    }
    let window = same_day_window(local.time())?;
    Some(eastern_instant(local.date(), window.settlement))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::calendar::{cutoff_instant, next_banking_day, next_cutoff_after};
    use chrono::{Datelike, Duration, TimeZone};
    use chrono_tz::America::New_York;

    fn et(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
        New_York.with_ymd_and_hms(y, m, d, h, min, 0).earliest().unwrap().with_timezone(&Utc)
    }

    fn texts(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn cutoffs_parse_one_per_window_before_its_deadline() {
        assert_eq!(
            parse_same_day_cutoffs(&texts(&["16:15", "10:00", "14:15"])).unwrap(),
            DEFAULT_SAME_DAY_CUTOFFS
        );
        assert_eq!(parse_same_day_cutoffs(&texts(&["10:29"])).unwrap(), [hm(10, 29)]);
        assert_eq!(parse_same_day_cutoffs(&texts(&["10:30"])).unwrap(), [hm(10, 30)], "window two");
        assert_eq!(parse_same_day_cutoffs(&texts(&["16:45"])).unwrap_err().0, Some(0));
        assert_eq!(parse_same_day_cutoffs(&texts(&["09:00", "10:00"])).unwrap_err().0, Some(1));
        assert_eq!(parse_same_day_cutoffs(&texts(&["9am"])).unwrap_err().0, Some(0));
        assert_eq!(parse_same_day_cutoffs(&texts(&[])).unwrap_err().0, None);
        assert_eq!(
            parse_same_day_cutoffs(&texts(&["08:00", "11:00", "15:00", "16:00"])).unwrap_err().0,
            None
        );
    }

    /// Every banking day of 2026 and 2027, DST switches and Fed holidays
    /// among them: each window's cut-off, effective date and settlement.
    #[test]
    fn every_window_of_two_years_falls_on_its_banking_day() {
        let mut day = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
        let end = NaiveDate::from_ymd_opt(2028, 1, 1).unwrap();
        let mut days = 0;
        while day < end {
            if is_banking_day(day) {
                days += 1;
                let start = et(day.year(), day.month(), day.day(), 0, 0);
                let mut at = start;
                for (w, cut) in DEFAULT_SAME_DAY_CUTOFFS.iter().enumerate() {
                    let (date, instant) = next_same_day_cutoff_after(at, &DEFAULT_SAME_DAY_CUTOFFS).unwrap();
                    assert_eq!(date, day);
                    assert_eq!(eastern_naive(instant), day.and_time(*cut), "{day} window {w}");
                    assert!(is_same_day_cutoff(instant));
                    let settles = same_day_settlement(instant).unwrap();
                    assert_eq!(eastern_naive(settles), day.and_time(SAME_DAY_SETTLEMENTS[w]));
                    // A cut-off instant itself belongs to the next one.
                    at = instant;
                }
                // After the last window: the next banking day's first.
                let (date, instant) = next_same_day_cutoff_after(at, &DEFAULT_SAME_DAY_CUTOFFS).unwrap();
                assert_eq!(date, next_banking_day(day));
                assert_eq!(eastern_naive(instant), date.and_time(DEFAULT_SAME_DAY_CUTOFFS[0]));
                assert!(!is_same_day_cutoff(cutoff_instant(day)));
                assert_eq!(same_day_settlement(cutoff_instant(day)), None);
            } else {
                // A weekend or holiday entry waits for the next banking day's first window.
                let noon = et(day.year(), day.month(), day.day(), 12, 0);
                let (date, _) = next_same_day_cutoff_after(noon, &DEFAULT_SAME_DAY_CUTOFFS).unwrap();
                assert_eq!(date, next_banking_day(day));
                assert_eq!(date, next_cutoff_after(noon).0);
            }
            day += Duration::days(1);
        }
        assert!(days > 495, "{days} banking days");
    }
}
