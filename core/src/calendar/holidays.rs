//! Federal Reserve holidays and the Fed's weekend observance rules.

use std::fmt;

use chrono::{Datelike, Days, NaiveDate, Weekday};

/// The first year in which the Federal Reserve observed Juneteenth (June 19).
pub const JUNETEENTH_FIRST_YEAR: i32 = 2022;

/// A Federal Reserve holiday.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holiday {
    /// New Year's Day, January 1.
    NewYearsDay,
    /// Martin Luther King Jr. Day, the third Monday of January.
    MartinLutherKingJrDay,
    /// Washington's Birthday (Presidents' Day), the third Monday of February.
    WashingtonsBirthday,
    /// Memorial Day, the last Monday of May.
    MemorialDay,
    /// Juneteenth National Independence Day, June 19 (observed by the Fed from 2022).
    Juneteenth,
    /// Independence Day, July 4.
    IndependenceDay,
    /// Labor Day, the first Monday of September.
    LaborDay,
    /// Columbus Day, the second Monday of October.
    ColumbusDay,
    /// Veterans Day, November 11.
    VeteransDay,
    /// Thanksgiving Day, the fourth Thursday of November.
    ThanksgivingDay,
    /// Christmas Day, December 25.
    ChristmasDay,
}

impl Holiday {
    /// Every Fed holiday, in calendar order.
    pub const ALL: [Holiday; 11] = [
        Holiday::NewYearsDay,
        Holiday::MartinLutherKingJrDay,
        Holiday::WashingtonsBirthday,
        Holiday::MemorialDay,
        Holiday::Juneteenth,
        Holiday::IndependenceDay,
        Holiday::LaborDay,
        Holiday::ColumbusDay,
        Holiday::VeteransDay,
        Holiday::ThanksgivingDay,
        Holiday::ChristmasDay,
    ];

    /// The holiday's English name, e.g. `"Thanksgiving Day"`.
    pub const fn name(self) -> &'static str {
        match self {
            Holiday::NewYearsDay => "New Year's Day",
            Holiday::MartinLutherKingJrDay => "Martin Luther King Jr. Day",
            Holiday::WashingtonsBirthday => "Washington's Birthday",
            Holiday::MemorialDay => "Memorial Day",
            Holiday::Juneteenth => "Juneteenth National Independence Day",
            Holiday::IndependenceDay => "Independence Day",
            Holiday::LaborDay => "Labor Day",
            Holiday::ColumbusDay => "Columbus Day",
            Holiday::VeteransDay => "Veterans Day",
            Holiday::ThanksgivingDay => "Thanksgiving Day",
            Holiday::ChristmasDay => "Christmas Day",
        }
    }

    /// The month (1–12) the holiday falls in. The Fed's observed closure is
    /// always in the same month too (a Sunday holiday moves to Monday, and no
    /// fixed-date holiday is on the last day of its month).
    pub const fn month(self) -> u32 {
        match self {
            Holiday::NewYearsDay | Holiday::MartinLutherKingJrDay => 1,
            Holiday::WashingtonsBirthday => 2,
            Holiday::MemorialDay => 5,
            Holiday::Juneteenth => 6,
            Holiday::IndependenceDay => 7,
            Holiday::LaborDay => 9,
            Holiday::ColumbusDay => 10,
            Holiday::VeteransDay | Holiday::ThanksgivingDay => 11,
            Holiday::ChristmasDay => 12,
        }
    }

    /// The nominal (unadjusted) date of the holiday in `year`, which may fall
    /// on a weekend. `None` if the Fed did not observe the holiday that year
    /// (Juneteenth before [`JUNETEENTH_FIRST_YEAR`]) or the date is outside
    /// chrono's range.
    pub fn date_in(self, year: i32) -> Option<NaiveDate> {
        let fixed = |day| NaiveDate::from_ymd_opt(year, self.month(), day);
        let nth = |weekday, n| NaiveDate::from_weekday_of_month_opt(year, self.month(), weekday, n);
        match self {
            Holiday::NewYearsDay => fixed(1),
            Holiday::MartinLutherKingJrDay | Holiday::WashingtonsBirthday => nth(Weekday::Mon, 3),
            Holiday::MemorialDay => {
                let may_31 = fixed(31)?;
                let back = u64::from(may_31.weekday().num_days_from_monday());
                may_31.checked_sub_days(Days::new(back))
            }
            Holiday::Juneteenth if year < JUNETEENTH_FIRST_YEAR => None,
            Holiday::Juneteenth => fixed(19),
            Holiday::IndependenceDay => fixed(4),
            Holiday::LaborDay => nth(Weekday::Mon, 1),
            Holiday::ColumbusDay => nth(Weekday::Mon, 2),
            Holiday::VeteransDay => fixed(11),
            Holiday::ThanksgivingDay => nth(Weekday::Thu, 4),
            Holiday::ChristmasDay => fixed(25),
        }
    }

    /// The weekday on which the Fed is closed for this holiday in `year`.
    ///
    /// Fed rule: a holiday on a Sunday is observed the following Monday; a
    /// holiday on a Saturday is not observed on any weekday (the Fed is open
    /// the Friday before), so this returns `None` for it. Also `None` whenever
    /// [`Holiday::date_in`] is.
    pub fn observed_in(self, year: i32) -> Option<NaiveDate> {
        let date = self.date_in(year)?;
        match date.weekday() {
            Weekday::Sat => None,
            Weekday::Sun => date.succ_opt(),
            _ => Some(date),
        }
    }
}

impl fmt::Display for Holiday {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether `date` is a Saturday or a Sunday.
pub fn is_weekend(date: NaiveDate) -> bool {
    matches!(date.weekday(), Weekday::Sat | Weekday::Sun)
}

/// The Fed holiday for which the Federal Reserve is closed on `date`, if any.
///
/// This is the *observed closure*: it is only ever `Some` on a weekday. For
/// Sunday 2029-11-11 it is `None`, and for Monday 2029-11-12 it is
/// `Some(Holiday::VeteransDay)`; for Saturday 2026-07-04 and Friday 2026-07-03
/// it is `None` (the Fed is open that Friday). Use [`holiday_on`] for the
/// nominal holiday of a date.
pub fn fed_holiday(date: NaiveDate) -> Option<Holiday> {
    if is_weekend(date) {
        return None;
    }
    Holiday::ALL
        .into_iter()
        .filter(|h| h.month() == date.month())
        .find(|h| h.observed_in(date.year()) == Some(date))
}

/// The Fed holiday whose nominal date is `date`, whether or not the Fed is
/// closed that day (e.g. `Some(IndependenceDay)` for Saturday 2026-07-04).
pub fn holiday_on(date: NaiveDate) -> Option<Holiday> {
    Holiday::ALL
        .into_iter()
        .filter(|h| h.month() == date.month())
        .find(|h| h.date_in(date.year()) == Some(date))
}

/// The weekday Fed holiday closures of `year`, in date order.
pub fn fed_holidays_in(year: i32) -> Vec<(NaiveDate, Holiday)> {
    Holiday::ALL.into_iter().filter_map(|h| h.observed_in(year).map(|d| (d, h))).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;
    use chrono::{Datelike, Weekday};

    #[test]
    fn fed_closures_2026() {
        use Holiday::*;
        let expected = vec![
            (d(2026, 1, 1), NewYearsDay),
            (d(2026, 1, 19), MartinLutherKingJrDay),
            (d(2026, 2, 16), WashingtonsBirthday),
            (d(2026, 5, 25), MemorialDay),
            (d(2026, 6, 19), Juneteenth),
            // July 4, 2026 is a Saturday: no weekday closure.
            (d(2026, 9, 7), LaborDay),
            (d(2026, 10, 12), ColumbusDay),
            (d(2026, 11, 11), VeteransDay),
            (d(2026, 11, 26), ThanksgivingDay),
            (d(2026, 12, 25), ChristmasDay),
        ];
        assert_eq!(fed_holidays_in(2026), expected);
        for (date, h) in &expected {
            assert_eq!(fed_holiday(*date), Some(*h), "{date}");
            assert!(!is_banking_day(*date), "{date}");
        }
        assert_eq!(d(2026, 1, 1).weekday(), Weekday::Thu);
        assert_eq!(d(2026, 11, 11).weekday(), Weekday::Wed);
        assert_eq!(d(2026, 12, 25).weekday(), Weekday::Fri);

        // Saturday July 4: Friday July 3 is open; Monday July 6 too.
        assert_eq!(d(2026, 7, 4).weekday(), Weekday::Sat);
        assert!(is_banking_day(d(2026, 7, 3)));
        assert!(is_banking_day(d(2026, 7, 6)));
        assert_eq!(fed_holiday(d(2026, 7, 4)), None);
        assert_eq!(holiday_on(d(2026, 7, 4)), Some(IndependenceDay));
        assert_eq!(holiday_on(d(2026, 7, 3)), None);

        // Ordinary days around the holidays.
        assert!(is_banking_day(d(2026, 1, 2)));
        assert!(is_banking_day(d(2026, 11, 25)));
        assert!(is_banking_day(d(2026, 11, 27)));
        assert!(!is_banking_day(d(2026, 11, 28))); // Saturday
        assert!(!is_banking_day(d(2026, 11, 29))); // Sunday
    }

    #[test]
    fn fed_closures_2027_weekend_rules() {
        use Holiday::*;
        // July 4, 2027 is a Sunday -> Monday July 5 closed.
        assert_eq!(d(2027, 7, 4).weekday(), Weekday::Sun);
        assert_eq!(fed_holiday(d(2027, 7, 5)), Some(IndependenceDay));
        assert!(!is_banking_day(d(2027, 7, 5)));
        assert!(is_banking_day(d(2027, 7, 2)));
        assert_eq!(fed_holiday(d(2027, 7, 4)), None);
        // Juneteenth 2027 is a Saturday -> Friday June 18 open.
        assert_eq!(d(2027, 6, 19).weekday(), Weekday::Sat);
        assert!(is_banking_day(d(2027, 6, 18)));
        assert!(is_banking_day(d(2027, 6, 21)));
        // Christmas 2027 is a Saturday -> Friday Dec 24 open.
        assert_eq!(d(2027, 12, 25).weekday(), Weekday::Sat);
        assert!(is_banking_day(d(2027, 12, 24)));
        assert!(is_banking_day(d(2027, 12, 27)));
        // New Year 2028 is a Saturday -> Friday Dec 31, 2027 open.
        assert_eq!(d(2028, 1, 1).weekday(), Weekday::Sat);
        assert!(is_banking_day(d(2027, 12, 31)));
        assert!(is_banking_day(d(2028, 1, 3)));
        assert_eq!(
            fed_holidays_in(2027),
            vec![
                (d(2027, 1, 1), NewYearsDay),
                (d(2027, 1, 18), MartinLutherKingJrDay),
                (d(2027, 2, 15), WashingtonsBirthday),
                (d(2027, 5, 31), MemorialDay),
                (d(2027, 7, 5), IndependenceDay),
                (d(2027, 9, 6), LaborDay),
                (d(2027, 10, 11), ColumbusDay),
                (d(2027, 11, 11), VeteransDay),
                (d(2027, 11, 25), ThanksgivingDay),
            ]
        );
        // Same rule in 2022: Jan 1 Saturday -> Dec 31, 2021 open.
        assert!(is_banking_day(d(2021, 12, 31)));
        // Sunday New Year 2023 -> Monday Jan 2 closed.
        assert_eq!(fed_holiday(d(2023, 1, 2)), Some(NewYearsDay));
    }

    #[test]
    fn juneteenth_from_2022_only() {
        assert_eq!(Holiday::Juneteenth.date_in(2021), None);
        assert_eq!(holiday_on(d(2021, 6, 19)), None);
        assert!(is_banking_day(d(2021, 6, 18))); // Friday
        assert!(is_banking_day(d(2020, 6, 19))); // Friday, pre-2022
        assert_eq!(fed_holiday(d(2020, 6, 19)), None);
        // 2022: June 19 was a Sunday -> Monday June 20 closed.
        assert_eq!(fed_holiday(d(2022, 6, 20)), Some(Holiday::Juneteenth));
        assert!(!is_banking_day(d(2022, 6, 20)));
        assert_eq!(fed_holiday(d(2023, 6, 19)), Some(Holiday::Juneteenth));
    }

    #[test]
    fn veterans_day_2029_sunday() {
        assert_eq!(d(2029, 11, 11).weekday(), Weekday::Sun);
        assert_eq!(fed_holiday(d(2029, 11, 12)), Some(Holiday::VeteransDay));
        assert!(!is_banking_day(d(2029, 11, 12)));
        assert_eq!(fed_holiday(d(2029, 11, 11)), None);
        assert_eq!(holiday_on(d(2029, 11, 11)), Some(Holiday::VeteransDay));
        assert_eq!(next_banking_day(d(2029, 11, 9)), d(2029, 11, 13));
    }

    #[test]
    fn holiday_rules_by_construction() {
        for year in 1990..2110 {
            for h in Holiday::ALL {
                let Some(date) = h.date_in(year) else {
                    assert!(h == Holiday::Juneteenth && year < 2022);
                    continue;
                };
                assert_eq!(date.year(), year);
                assert_eq!(date.month(), h.month());
                assert_eq!(holiday_on(date), Some(h));
                match h {
                    Holiday::MartinLutherKingJrDay | Holiday::WashingtonsBirthday => {
                        assert_eq!(date.weekday(), Weekday::Mon);
                        assert!((15..=21).contains(&date.day()));
                    }
                    Holiday::MemorialDay => {
                        assert_eq!(date.weekday(), Weekday::Mon);
                        assert!(date.day() >= 25);
                    }
                    Holiday::LaborDay => {
                        assert_eq!(date.weekday(), Weekday::Mon);
                        assert!(date.day() <= 7);
                    }
                    Holiday::ColumbusDay => {
                        assert_eq!(date.weekday(), Weekday::Mon);
                        assert!((8..=14).contains(&date.day()));
                    }
                    Holiday::ThanksgivingDay => {
                        assert_eq!(date.weekday(), Weekday::Thu);
                        assert!((22..=28).contains(&date.day()));
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(Holiday::ThanksgivingDay.name(), "Thanksgiving Day");
        assert_eq!(Holiday::NewYearsDay.to_string(), "New Year's Day");
    }
}
