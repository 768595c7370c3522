//! The limit checks over values: each limit, its message, and the month's average.
#![allow(clippy::unwrap_used)]

use super::*;

/// An ordinary month, in cents, of a merchant expecting 1,200 checks a year at
/// $250 (the limits [`Limits::from_velocities`] gives it), ordered to test the
/// average limit hardest: 100 debits of $5 to $900 averaging $250, the first
/// $1,000 and the biggest next (the running average is about $904 after 27 of
/// them). The fixture the engine's tests share (`tests/data/`).
fn ordinary_month() -> Vec<i64> {
    serde_json::from_str(include_str!("../../tests/data/ordinary_month.json")).unwrap()
}

fn m(c: i64) -> Money {
    Money::from_cents(c)
}

fn debit(c: i64) -> Candidate {
    Candidate { amount: m(c), credit: false }
}

#[test]
fn per_transaction_limits_in_order() {
    let l = Limits {
        min_transaction_amount: Some(m(100)),
        max_transaction_amount: Some(m(500_000)),
        max_credit_amount: Some(m(100_000)),
        ..Limits::default()
    };
    assert_eq!(
        check_transaction(&l, debit(99)).map_err(|e| e.to_string()),
        Err("'0.99' is an invalid Amount".into())
    );
    assert_eq!(check_transaction(&l, debit(100)), Ok(()));
    assert_eq!(
        check_transaction(&l, debit(500_001)).map_err(|e| e.to_string()),
        Err("Exceeded maximum dollar amount ($5,000.00) for this merchant.".into())
    );
    assert_eq!(
        check_transaction(&l, Candidate { amount: m(100_001), credit: true }),
        Err(AchError::CreditOverMaximum)
    );
    assert_eq!(check_transaction(&l, Candidate { amount: m(100_000), credit: true }), Ok(()));
    let debit_only = Limits { max_credit_amount: Some(m(0)), ..Limits::default() };
    assert_eq!(
        check_transaction(&debit_only, Candidate { amount: m(1), credit: true }).map_err(|e| e.to_string()),
        Err("Unable to accept credit transactions for this merchant".into())
    );
}

/// Sets one limit: the merchant's (first) or the partner's overall (second).
type SetLimit = fn(&mut Limits, &mut Limits);
/// The usage of one window.
type Window = fn(&mut Windows) -> &mut Usage;

#[test]
fn window_limits_each_reached_exactly_at_the_boundary() {
    use AchError::*;
    // Each window limit alone: a count reached by as many used, $10.00 by
    // $9.01 used (the debit is $1.00).
    const TEN: Money = Money::from_cents(1000);
    let count = |count| Usage { count, amount: 0 };
    let spent = Usage { count: 1, amount: 901 };
    let table: [(SetLimit, Window, Usage, AchError); 10] = [
        (|l, _| l.daily_count = Some(2), |w| &mut w.merchant_day, count(2), DailyCountMerchant),
        (
            |l, _| l.daily_amount = Some(TEN),
            |w| &mut w.merchant_day,
            spent,
            DailyAmountMerchant { limit: TEN },
        ),
        (|_, l| l.daily_count = Some(5), |w| &mut w.overall_day, count(5), DailyCountOverall),
        (|_, l| l.daily_amount = Some(TEN), |w| &mut w.overall_day, spent, DailyAmountOverall { limit: TEN }),
        (|l, _| l.period_count = Some(3), |w| &mut w.merchant_period, count(3), PeriodCountMerchant),
        (|l, _| l.period_amount = Some(TEN), |w| &mut w.merchant_period, spent, PeriodAmountMerchant),
        (|_, l| l.period_count = Some(3), |w| &mut w.overall_period, count(3), PeriodCountOverall),
        (|_, l| l.period_amount = Some(TEN), |w| &mut w.overall_period, spent, PeriodAmountOverall),
        (|l, _| l.monthly_count = Some(4), |w| &mut w.merchant_month, count(4), MonthlyVolume),
        (|l, _| l.monthly_amount = Some(TEN), |w| &mut w.merchant_month, spent, MonthlyAmount),
    ];
    let cases = table.into_iter().map(|(set, window, used, expected)| {
        let (mut merchant, mut overall) = (Limits::default(), Limits::default());
        set(&mut merchant, &mut overall);
        let mut windows = Windows::default();
        *window(&mut windows) = used;
        (merchant, overall, windows, expected)
    });
    for (merchant, overall, windows, expected) in cases {
        assert_eq!(
            check_windows(&merchant, &overall, &windows, debit(100)),
            Err(expected.clone()),
            "{expected:?}"
        );
        // One cent (or one transaction) less used: accepted.
        let mut fewer = windows;
        for u in [
            &mut fewer.merchant_day,
            &mut fewer.merchant_period,
            &mut fewer.merchant_month,
            &mut fewer.overall_day,
            &mut fewer.overall_period,
        ] {
            u.count = u.count.saturating_sub(1);
            u.amount = (u.amount - 1).max(0);
        }
        assert_eq!(
            check_windows(&merchant, &overall, &fewer, debit(100)),
            Ok(()),
            "{expected:?} at the boundary"
        );
    }
}

#[test]
fn monthly_average_includes_this_transaction() {
    let merchant = Limits { monthly_average_amount: Some(m(100)), ..Limits::default() };
    let month = |count, amount| Windows { merchant_month: Usage { count, amount }, ..Windows::default() };
    // (100 + 100) / 2 = 100: at the maximum, accepted; (101 + 100) / 2 > 100: refused.
    assert_eq!(check_windows(&merchant, &Limits::default(), &month(1, 100), debit(100)), Ok(()));
    assert_eq!(
        check_windows(&merchant, &Limits::default(), &month(1, 101), debit(100)),
        Err(AchError::MonthlyAverage)
    );
    // The first transaction of the month is its own average.
    assert_eq!(
        check_windows(&merchant, &Limits::default(), &month(0, 0), debit(101)),
        Err(AchError::MonthlyAverage)
    );
    assert_eq!(check_windows(&merchant, &Limits::default(), &month(0, 0), debit(100)), Ok(()));
}

#[test]
fn monthly_average_judged_from_its_minimum_count() {
    let merchant = Limits {
        monthly_average_amount: Some(m(100)),
        monthly_average_min_count: Some(3),
        ..Limits::default()
    };
    let month = |count, amount| Windows { merchant_month: Usage { count, amount }, ..Windows::default() };
    let check = |w: Windows, c| check_windows(&merchant, &Limits::default(), &w, debit(c));
    // The first and second transactions of the month are not judged.
    assert_eq!(check(month(0, 0), 10_000), Ok(()));
    assert_eq!(check(month(1, 10_000), 10_000), Ok(()));
    // The third is: 300 over 3 is the maximum, 301 is over it.
    assert_eq!(check(month(2, 200), 100), Ok(()));
    assert_eq!(check(month(2, 200), 101), Err(AchError::MonthlyAverage));
    assert_eq!(check(month(2, 20_000), 1), Err(AchError::MonthlyAverage));
    // And every one after it.
    assert_eq!(check(month(3, 300), 101), Err(AchError::MonthlyAverage));
    // None, 0 and 1 all judge from the first transaction.
    for min in [None, Some(0), Some(1)] {
        let l = Limits { monthly_average_min_count: min, ..merchant.clone() };
        assert_eq!(
            check_windows(&l, &Limits::default(), &month(0, 0), debit(101)),
            Err(AchError::MonthlyAverage),
            "{min:?}"
        );
    }
}

/// The velocities of `examples/requests/merchant.json` (1,200 checks a year,
/// lowest $1, highest $5,000) with this expected average (the file's is $85.50).
fn example_averaging(average_cents: i64) -> Velocities {
    Velocities {
        expected_checks_per_year: 1_200,
        expected_average_check_amount: m(average_cents),
        expected_sales_per_year: m(250_000_000),
        lowest_amount_allowed: Some(m(100)),
        highest_amount_allowed: m(500_000),
        decline_duplicates: true,
    }
}

#[test]
fn defaults_from_velocities() {
    // 1,200 checks a year averaging $250: 100 a month, $25,000.
    let v = example_averaging(25_000);
    assert_eq!(expected_month(&v), (100, m(2_500_000)));
    assert_eq!(
        Limits::from_velocities(&v),
        Limits {
            max_transaction_amount: Some(m(500_000)),
            min_transaction_amount: Some(m(100)),
            period_days: Some(DEFAULT_PERIOD_DAYS),
            monthly_count: Some(300),
            monthly_amount: Some(m(7_500_000)),
            monthly_average_amount: Some(m(75_000)),
            monthly_average_min_count: Some(50),
            ..Limits::default()
        }
    );
    // The expected count rounds up and is at least 1; the threshold is at least 10.
    let few = |checks| Velocities { expected_checks_per_year: checks, ..v.clone() };
    let at = |checks| {
        let l = Limits::from_velocities(&few(checks));
        (expected_month(&few(checks)).0, l.monthly_count, l.monthly_average_min_count)
    };
    assert_eq!(at(0), (1, Some(3), Some(10)));
    assert_eq!(at(13), (2, Some(6), Some(10)));
    assert_eq!(at(240), (20, Some(60), Some(10)));
    assert_eq!(at(241), (21, Some(63), Some(11)));
    assert_eq!(at(1_201), (101, Some(303), Some(51)));
    // A lowest amount of zero is no minimum.
    let zero = Velocities { lowest_amount_allowed: Some(m(0)), ..v };
    assert_eq!(Limits::from_velocities(&zero).min_transaction_amount, None);
}

/// Runs `amounts` as one month's debits under `l`: the number accepted and
/// the first refusal.
fn month_of(l: &Limits, amounts: &[i64]) -> (usize, Option<AchError>) {
    let mut used = Usage::default();
    for (i, &a) in amounts.iter().enumerate() {
        let w = Windows { merchant_month: used, ..Windows::default() };
        let verdict =
            check_transaction(l, debit(a)).and_then(|()| check_windows(l, &Limits::default(), &w, debit(a)));
        if let Err(e) = verdict {
            return (i, Some(e));
        }
        used = used.plus(Usage::one(m(a)));
    }
    (amounts.len(), None)
}

#[test]
fn averaging_250_an_ordinary_month_is_accepted_in_any_order() {
    let l = Limits::from_velocities(&example_averaging(25_000));
    let month = ordinary_month();
    assert_eq!((month.len(), month.iter().sum::<i64>()), (100, 2_500_000));
    // The worst prefix the average is judged on: the first 50, $24,600 ($492.00
    // each, under the $750 cap by a third).
    let first_50: i64 = month[..50].iter().sum();
    assert_eq!(first_50, 2_460_000);
    let first_27: i64 = month[..27].iter().sum();
    assert!(first_27 > 27 * 90_000, "judged from the first, the 27th would be refused");
    assert_eq!(month_of(&l, &month), (100, None));
    let mut ascending = month.clone();
    ascending.sort_unstable();
    assert_eq!(month_of(&l, &ascending), (100, None));
    // Rotations of it, the $1,000 debit first.
    for k in 1..100 {
        let mut rotated = month[1..].to_vec();
        rotated.rotate_left(k % 99);
        rotated.insert(0, 100_000);
        assert_eq!(month_of(&l, &rotated), (100, None), "rotated by {k}");
    }
}

#[test]
fn averaging_250_three_times_the_month_is_refused() {
    let l = Limits::from_velocities(&example_averaging(25_000));
    // 300 debits are the most; the 301st is message 30.
    assert_eq!(month_of(&l, &[1_000; 301]), (300, Some(AchError::MonthlyVolume)));
    // $75,000 is the most; a cent more is message 31 (15 at $5,000: too few
    // for the average to be judged).
    let mut dollars = vec![500_000; 15];
    dollars.push(100);
    assert_eq!(month_of(&l, &dollars), (15, Some(AchError::MonthlyAmount)));
    // 100 debits of $800 and $1,200 (averaging $1,000): the 50th is message 32.
    let high: Vec<i64> = (0..100).map(|i| if i % 2 == 0 { 80_000 } else { 120_000 }).collect();
    assert_eq!(month_of(&l, &high), (49, Some(AchError::MonthlyAverage)));
    // Ascending, the first 50 are all $800: still over $750.
    let mut sorted = high;
    sorted.sort_unstable();
    assert_eq!(month_of(&l, &sorted), (49, Some(AchError::MonthlyAverage)));
}

#[test]
fn limits_without_the_minimum_count_still_read() {
    // Limits stored before `monthly_average_min_count` existed.
    let old = r#"{"max_transaction_amount":"5000.00","min_transaction_amount":null,
        "max_credit_amount":null,"daily_count":null,"daily_amount":null,"period_days":7,
        "period_count":null,"period_amount":null,"monthly_count":200,
        "monthly_amount":"17100.00","monthly_average_amount":"171.00"}"#;
    let l: Limits = serde_json::from_str(old).unwrap();
    assert_eq!(l.monthly_average_min_count, None);
    assert_eq!(l.monthly_average_amount, Some(m(17_100)));
    // And the field round-trips.
    let set = Limits { monthly_average_min_count: Some(50), ..l.clone() };
    let text = serde_json::to_string(&set).unwrap();
    assert!(text.contains(r#""monthly_average_min_count":50"#), "{text}");
    assert_eq!(serde_json::from_str::<Limits>(&text).unwrap(), set);
    // An update sets it, or keeps it when it does not name it.
    let update = Limits { monthly_average_min_count: Some(7), ..Limits::default() };
    assert_eq!(set.updated(&update).monthly_average_min_count, Some(7));
    assert_eq!(set.updated(&Limits::default()).monthly_average_min_count, Some(50));
    assert_eq!(set.updated(&update).monthly_count, Some(200));
}

#[test]
fn the_first_failure_wins() {
    let merchant = Limits { daily_count: Some(1), monthly_count: Some(1), ..Limits::default() };
    let w = Windows {
        merchant_day: Usage { count: 1, amount: 0 },
        merchant_month: Usage { count: 1, amount: 0 },
        ..Windows::default()
    };
    assert_eq!(check_windows(&merchant, &Limits::default(), &w, debit(1)), Err(AchError::DailyCountMerchant));
}

#[test]
fn usage_arithmetic() {
    let u = Usage::one(m(250)).plus(Usage::one(m(100)));
    assert_eq!(u, Usage { count: 2, amount: 350 });
    assert_eq!(u.minus(Usage::one(m(250))), Usage { count: 1, amount: 100 });
    assert_eq!(Usage::default().minus(u), Usage::default());
}
