//! Properties of the default limits ([`Limits::from_velocities`]) over whole
//! months: an ordinary month, in any order, is accepted in full; a month at three
//! times the declared count or dollars is refused exactly at the first transaction
//! beyond the cap (messages 30, 31); a month whose average runs at 3.5 times the
//! declared one is refused by the time its average is judged (message 32).

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::{check_transaction, check_windows, expected_month, Candidate, Limits, Usage, Windows};
use crate::error::AchError;
use crate::model::Velocities;
use crate::money::Money;

fn m(c: i64) -> Money {
    Money::from_cents(c)
}

/// Runs `amounts` as one month's debits under `l`, as the engine does (the
/// per-transaction checks, then the windows with the month's usage so far): the
/// number accepted before the first refusal, and that refusal.
fn month_of(l: &Limits, amounts: &[i64]) -> (usize, Option<AchError>) {
    let mut used = Usage::default();
    for (i, &a) in amounts.iter().enumerate() {
        let t = Candidate { amount: m(a), credit: false };
        let w = Windows { merchant_month: used, ..Windows::default() };
        if let Err(e) = check_transaction(l, t).and_then(|()| check_windows(l, &Limits::default(), &w, t)) {
            return (i, Some(e));
        }
        used = used.plus(Usage::one(m(a)));
    }
    (amounts.len(), None)
}

/// Velocities: `checks` a year, an average of $1 to $10,000, a lowest amount of
/// at most a quarter of the average (or none), a highest of `highest` (in
/// quarters of the average) times the average.
fn velocities(
    checks: std::ops::RangeInclusive<u64>,
    highest: std::ops::RangeInclusive<i64>,
) -> impl Strategy<Value = Velocities> {
    (checks, 100i64..=1_000_000, highest, 0u32..=100, any::<bool>()).prop_map(
        |(checks, average, quarters, low, has_low)| Velocities {
            expected_checks_per_year: checks,
            expected_average_check_amount: m(average),
            expected_sales_per_year: m(0),
            lowest_amount_allowed: has_low.then(|| m((average / 4) * i64::from(low) / 100)),
            highest_amount_allowed: m(average * quarters / 4),
            decline_duplicates: false,
        },
    )
}

/// The smallest amount the defaults accept (one cent when there is no minimum).
fn lowest(l: &Limits) -> i64 {
    l.min_transaction_amount.map_or(1, Money::cents)
}

/// Amounts between `lo` and `hi` from weights (0 to 999, skewed towards `lo`),
/// then moved one by one (in order) towards `hi` or `lo` until they total
/// `total` exactly. `total` must lie within `len × lo ..= len × hi`.
fn amounts_totalling(weights: &[u32], lo: i64, hi: i64, total: i64) -> Vec<i64> {
    let mut a: Vec<i64> = weights.iter().map(|&w| lo + (hi - lo) * i64::from(w * w) / 998_001).collect();
    let mut diff = total - a.iter().sum::<i64>();
    for x in &mut a {
        let step = if diff > 0 { diff.min(hi - *x) } else { diff.max(lo - *x) };
        *x += step;
        diff -= step;
    }
    assert_eq!(diff, 0, "{total} is out of reach");
    a
}

/// How a month's debits are ordered.
#[derive(Debug, Clone, Copy)]
enum Order {
    /// As a permutation puts them.
    Shuffled,
    /// The biggest first: the running average is as high as it gets.
    BiggestFirst,
    /// The smallest first.
    SmallestFirst,
}

fn order() -> impl Strategy<Value = Order> {
    prop_oneof![Just(Order::Shuffled), Just(Order::BiggestFirst), Just(Order::SmallestFirst)]
}

/// `amounts` in `order` (`perm` a permutation of their indices).
fn ordered(mut amounts: Vec<i64>, order: Order, perm: &[usize]) -> Vec<i64> {
    match order {
        Order::Shuffled => return perm.iter().map(|&i| amounts[i]).collect(),
        Order::BiggestFirst => amounts.sort_unstable_by(|a, b| b.cmp(a)),
        Order::SmallestFirst => amounts.sort_unstable(),
    }
    amounts
}

/// A realistic month of a merchant with these velocities: between half and 6/5
/// of the expected count of debits, each between the lowest allowed and 3.6 times
/// the expected average (at most the highest allowed), their mean 0.9 to 1.1
/// times the expected average, in any order, and maybe a first debit as large as
/// the highest allowed.
#[derive(Debug, Clone)]
struct Month {
    v: Velocities,
    amounts: Vec<i64>,
}

fn realistic_month() -> impl Strategy<Value = Month> {
    velocities(0..=24_000, 8..=160)
        .prop_flat_map(|v| {
            let (n, _) = expected_month(&v);
            let count = n.div_ceil(2).max(1)..=(n * 6 / 5).max(1);
            (Just(v), count)
        })
        .prop_flat_map(|(v, count)| {
            let len = usize::try_from(count).unwrap();
            (
                Just(v),
                prop::collection::vec(0u32..1000, len),
                90i64..=110,
                prop::option::of(0i64..=1000),
                order(),
                Just((0..len).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
        .prop_map(|(v, weights, percent, first, order, perm)| {
            let l = Limits::from_velocities(&v);
            let average = v.expected_average_check_amount.cents();
            let highest = v.highest_amount_allowed.cents();
            let (lo, hi) = (lowest(&l), (average * 36 / 10).min(highest));
            let n = i64::try_from(weights.len()).unwrap();
            let total = n * average * percent / 100;
            let amounts = match first {
                None => ordered(amounts_totalling(&weights, lo, hi, total), order, &perm),
                Some(w) => {
                    // A big first debit (3.6 times the average to the highest
                    // allowed, no more than the month's total leaves room for),
                    // the rest making up the total.
                    let room = total - (n - 1) * lo;
                    let big = (hi + (highest - hi) * w / 1000).min(room);
                    let rest = amounts_totalling(&weights[1..], lo, hi, total - big);
                    let mut month = vec![big];
                    let perm: Vec<usize> = perm.iter().filter(|&&i| i + 1 < weights.len()).copied().collect();
                    month.extend(ordered(rest, order, &perm));
                    month
                }
            };
            Month { v, amounts }
        })
}

proptest! {
    /// (a) An ordinary month is accepted in full, whatever its order, and the
    /// average is never judged above 2.64 times the expected one (6/5 of the
    /// count at 11/10 of the average, over at least half the count).
    #[test]
    fn an_ordinary_month_is_accepted_in_full(month in realistic_month()) {
        let l = Limits::from_velocities(&month.v);
        let (n, _) = expected_month(&month.v);
        let average = month.v.expected_average_check_amount.cents();
        let a = &month.amounts;
        let total: i64 = a.iter().sum();
        let len = i64::try_from(a.len()).unwrap();
        prop_assert!(total * 100 >= len * average * 90 - 100 && total * 100 <= len * average * 110);
        prop_assert!(a.len() as u64 <= (n * 6 / 5).max(1));
        prop_assert_eq!(month_of(&l, a), (a.len(), None));
        let min = usize::try_from(l.monthly_average_min_count.unwrap()).unwrap();
        let mut sum = 0i64;
        for (i, x) in a.iter().enumerate() {
            sum += x;
            let count = i64::try_from(i + 1).unwrap();
            if i + 1 >= min {
                prop_assert!(sum * 100 <= 264 * average * count, "prefix {} averages {}", i + 1, sum / count);
            }
        }
    }

    /// (b) Three times the expected count is the most: the next debit is message
    /// 30 (the debits small enough for the dollars and the average to stay within
    /// their caps).
    #[test]
    fn three_times_the_count_is_message_30(
        (v, weights, percent, last, order, perm) in velocities(0..=24_000, 8..=160).prop_flat_map(|v| {
            let len = usize::try_from(3 * expected_month(&v).0).unwrap();
            (
                Just(v),
                prop::collection::vec(0u32..1000, len),
                50i64..=100,
                0u32..1000,
                order(),
                Just((0..len).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
    ) {
        let l = Limits::from_velocities(&v);
        let average = v.expected_average_check_amount.cents();
        let lo = lowest(&l);
        let hi = (2 * average).min(v.highest_amount_allowed.cents());
        let cap = i64::try_from(weights.len()).unwrap();
        let mut a = ordered(amounts_totalling(&weights, lo, hi, cap * average * percent / 100), order, &perm);
        a.push(lo + (hi - lo) * i64::from(last) / 1000);
        prop_assert_eq!(month_of(&l, &a), (weights.len(), Some(AchError::MonthlyVolume)));
    }

    /// (b) Three times the expected dollars is the most: the debit that would go
    /// beyond it is message 31 (debits of 1.5 to 2.5 times the average: fewer than
    /// three times the count, the average within its cap).
    #[test]
    fn three_times_the_dollars_is_message_31(
        (v, weights) in velocities(0..=24_000, 8..=160).prop_flat_map(|v| {
            let len = usize::try_from(3 * expected_month(&v).0 + 1).unwrap();
            (Just(v), prop::collection::vec(0i64..=1000, len))
        })
    ) {
        let l = Limits::from_velocities(&v);
        let (_, dollars) = expected_month(&v);
        let average = v.expected_average_check_amount.cents();
        let lo = 3 * average / 2;
        let hi = (5 * average / 2).min(v.highest_amount_allowed.cents());
        let a: Vec<i64> = weights.iter().map(|w| lo + (hi - lo) * w / 1000).collect();
        let cap = 3 * dollars.cents();
        let mut sum = 0;
        let beyond = a.iter().position(|x| { sum += x; sum > cap }).unwrap();
        prop_assert!((beyond as u64) < 3 * expected_month(&v).0);
        prop_assert_eq!(month_of(&l, &a), (beyond, Some(AchError::MonthlyAmount)));
    }

    /// (b) A month whose average runs at 3.5 to 4 times the expected one (debits
    /// of 1 to 6 times the average, in any order) is refused no later than the
    /// transaction its average is first judged at: with that one, message 32,
    /// when the merchant expects at least 14 a month (fewer, and the count or
    /// dollar cap may come first).
    #[test]
    fn a_month_averaging_3_5_times_is_message_32_at_the_threshold(
        (v, weights, percent, perm) in velocities(0..=24_000, 24..=160).prop_flat_map(|v| {
            let l = Limits::from_velocities(&v);
            let len = usize::try_from(l.monthly_average_min_count.unwrap()).unwrap();
            (
                Just(v),
                prop::collection::vec(0u32..1000, len),
                350i64..=400,
                Just((0..len).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
    ) {
        let l = Limits::from_velocities(&v);
        let average = v.expected_average_check_amount.cents();
        let len = i64::try_from(weights.len()).unwrap();
        let a = ordered(
            amounts_totalling(&weights, average, 6 * average, len * average * percent / 100),
            Order::Shuffled,
            &perm,
        );
        let (accepted, refusal) = month_of(&l, &a);
        prop_assert!(refusal.is_some() && accepted < a.len(), "{accepted} accepted, {refusal:?}");
        if expected_month(&v).0 >= 14 {
            prop_assert_eq!((accepted, refusal), (a.len() - 1, Some(AchError::MonthlyAverage)));
        } else {
            let e = refusal.unwrap();
            prop_assert!(
                [AchError::MonthlyVolume, AchError::MonthlyAmount, AchError::MonthlyAverage].contains(&e),
                "{e:?}"
            );
        }
    }
}

/// The threshold against the arithmetic it rests on: for every expected count
/// from 1 to 5,000, a month of 6/5 the count at 11/10 the average, its biggest
/// debits first (1.1 × 6/5 × N × A over ⌈N/2⌉ at most), is judged under the cap.
#[test]
fn the_threshold_covers_six_fifths_of_the_count_at_eleven_tenths_of_the_average() {
    for n in 1u64..=5_000 {
        let v = Velocities {
            expected_checks_per_year: 12 * n,
            expected_average_check_amount: m(10_000),
            expected_sales_per_year: m(0),
            lowest_amount_allowed: None,
            highest_amount_allowed: m(36_000),
            decline_duplicates: false,
        };
        let l = Limits::from_velocities(&v);
        let threshold = l.monthly_average_min_count.unwrap();
        let worst = i128::from(n * 6 / 5) * 11_000;
        assert!(threshold >= n.div_ceil(2), "{n}");
        // From 4 a month on, the month's count cap lets the average be judged.
        assert!(n < 4 || threshold <= 3 * n, "{n}");
        assert!(
            worst * 100 <= 264 * 10_000 * i128::from(threshold),
            "{n}: {worst} over {threshold} transactions"
        );
        assert_eq!(l.monthly_average_amount, Some(m(30_000)));
    }
}
