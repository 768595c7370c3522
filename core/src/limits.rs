//! Merchant and overall limits: the settings (set at approval, defaulting from the
//! application's velocities, changeable by the operator). The checks themselves
//! come with the limits issue.

use serde::{Deserialize, Serialize};

use crate::error::AchError;
use crate::model::Velocities;
use crate::money::Money;

/// Headroom of the defaults derived from velocities: a merchant may run at this
/// multiple of what it declared before a volume limit refuses it.
pub const VELOCITY_HEADROOM: i64 = 2;

/// Default rolling period, in days.
pub const DEFAULT_PERIOD_DAYS: u32 = 7;

/// Limits of one merchant (or, for the overall limits, of all a partner's
/// merchants together). `None` is "no limit". Amounts are cents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Largest amount of one transaction (message 21).
    pub max_transaction_amount: Option<Money>,
    /// Smallest amount of one transaction.
    pub min_transaction_amount: Option<Money>,
    /// Largest amount of one credit (message 19).
    pub max_credit_amount: Option<Money>,
    /// Transactions per Eastern day (messages 22, 24).
    pub daily_count: Option<u64>,
    /// Dollars per Eastern day (messages 23, 25).
    pub daily_amount: Option<Money>,
    /// Length of the rolling period in days (default 7).
    pub period_days: Option<u32>,
    /// Transactions per period (messages 26, 28).
    pub period_count: Option<u64>,
    /// Dollars per period (messages 27, 29).
    pub period_amount: Option<Money>,
    /// Transactions per Eastern calendar month (message 30).
    pub monthly_count: Option<u64>,
    /// Dollars per Eastern calendar month (message 31).
    pub monthly_amount: Option<Money>,
    /// Largest average amount over the month (message 32).
    pub monthly_average_amount: Option<Money>,
}

impl Limits {
    /// The defaults for a merchant from its application's velocities: the declared
    /// per-transaction bounds, and monthly volume, dollars and average at
    /// [`VELOCITY_HEADROOM`] times the declared yearly figures / 12.
    pub fn from_velocities(v: &Velocities) -> Limits {
        let monthly_checks = (v.expected_checks_per_year.div_ceil(12)).max(1);
        let average = v.expected_average_check_amount.cents();
        let monthly_dollars = (monthly_checks as i64).saturating_mul(average);
        Limits {
            max_transaction_amount: Some(v.highest_amount_allowed),
            min_transaction_amount: v.lowest_amount_allowed.filter(|m| m.cents() > 0),
            max_credit_amount: None,
            daily_count: None,
            daily_amount: None,
            period_days: Some(DEFAULT_PERIOD_DAYS),
            period_count: None,
            period_amount: None,
            monthly_count: Some(monthly_checks.saturating_mul(VELOCITY_HEADROOM as u64)),
            monthly_amount: Some(Money::from_cents(monthly_dollars.saturating_mul(VELOCITY_HEADROOM))),
            monthly_average_amount: Some(Money::from_cents(average.saturating_mul(VELOCITY_HEADROOM))),
        }
    }

    /// The first amount above what an ACH entry can carry (99,999,999.99), as
    /// `(field, value)`: limits are dollars of entries, so a larger one is a mistake.
    pub fn amount_out_of_range(&self) -> Option<(&'static str, Money)> {
        [
            ("max_transaction_amount", self.max_transaction_amount),
            ("min_transaction_amount", self.min_transaction_amount),
            ("max_credit_amount", self.max_credit_amount),
            ("daily_amount", self.daily_amount),
            ("period_amount", self.period_amount),
            ("monthly_amount", self.monthly_amount),
            ("monthly_average_amount", self.monthly_average_amount),
        ]
        .into_iter()
        .find_map(|(field, m)| m.filter(|m| *m > crate::money::NACHA_MAX).map(|m| (field, m)))
    }

    /// These limits with every field `update` sets replacing ours.
    pub fn updated(&self, update: &Limits) -> Limits {
        Limits {
            max_transaction_amount: update.max_transaction_amount.or(self.max_transaction_amount),
            min_transaction_amount: update.min_transaction_amount.or(self.min_transaction_amount),
            max_credit_amount: update.max_credit_amount.or(self.max_credit_amount),
            daily_count: update.daily_count.or(self.daily_count),
            daily_amount: update.daily_amount.or(self.daily_amount),
            period_days: update.period_days.or(self.period_days),
            period_count: update.period_count.or(self.period_count),
            period_amount: update.period_amount.or(self.period_amount),
            monthly_count: update.monthly_count.or(self.monthly_count),
            monthly_amount: update.monthly_amount.or(self.monthly_amount),
            monthly_average_amount: update.monthly_average_amount.or(self.monthly_average_amount),
        }
    }
}

/// How much has been used in a window: a number of transactions and their dollars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Transactions counted.
    pub count: u64,
    /// Their amounts, in cents.
    pub amount: i64,
}

impl Usage {
    /// Usage of one transaction of `amount`.
    pub const fn one(amount: Money) -> Usage {
        Usage { count: 1, amount: amount.cents() }
    }

    /// The sum of two usages.
    pub const fn plus(self, other: Usage) -> Usage {
        Usage {
            count: self.count.saturating_add(other.count),
            amount: self.amount.saturating_add(other.amount),
        }
    }

    /// This usage less `other` (never below zero).
    pub fn minus(self, other: Usage) -> Usage {
        Usage { count: self.count.saturating_sub(other.count), amount: (self.amount - other.amount).max(0) }
    }
}

/// What a new transaction is measured against: the usage so far of its merchant
/// and of its partner (overall) in each window that contains it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Windows {
    /// The merchant, this Eastern day.
    pub merchant_day: Usage,
    /// The merchant, the rolling period ending today.
    pub merchant_period: Usage,
    /// The merchant, this Eastern calendar month.
    pub merchant_month: Usage,
    /// All the partner's merchants, this Eastern day.
    pub overall_day: Usage,
    /// All the partner's merchants, the rolling period ending today.
    pub overall_period: Usage,
}

/// The transaction a limit check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// Its amount.
    pub amount: Money,
    /// Whether it is a credit.
    pub credit: bool,
}

fn over_count(used: u64, limit: Option<u64>) -> bool {
    limit.is_some_and(|l| used.saturating_add(1) > l)
}

fn over_amount(used: i64, amount: Money, limit: Option<Money>) -> bool {
    limit.is_some_and(|l| used.saturating_add(amount.cents()) > l.cents())
}

/// The per-transaction limits, checked first (they need no history): in order,
/// credits for a debit-only merchant (message 20: `max_credit_amount` of zero),
/// the minimum amount (message 14), the maximum amount (message 21), the credit
/// maximum (message 19).
pub fn check_transaction(merchant: &Limits, t: Candidate) -> Result<(), AchError> {
    if t.credit && merchant.max_credit_amount.is_some_and(|m| m.cents() == 0) {
        return Err(AchError::NotAccepted { transaction_type: "credit".into() });
    }
    if merchant.min_transaction_amount.is_some_and(|min| t.amount < min) {
        return Err(AchError::InvalidAmount { value: t.amount.decimal() });
    }
    if let Some(max) = merchant.max_transaction_amount.filter(|max| t.amount > *max) {
        return Err(AchError::MaxAmountExceeded { limit: max });
    }
    if t.credit && merchant.max_credit_amount.is_some_and(|max| t.amount > max) {
        return Err(AchError::CreditOverMaximum);
    }
    Ok(())
}

/// The history-wide limits, checked last, in order: daily merchant count (22) and
/// dollars (23), daily overall count (24) and dollars (25), period merchant count
/// (26) and dollars (27), period overall count (28) and dollars (29), monthly
/// volume (30), monthly dollars (31), monthly average (32: the month's dollars
/// including this transaction divided by its count must not exceed the maximum).
pub fn check_windows(merchant: &Limits, overall: &Limits, w: &Windows, t: Candidate) -> Result<(), AchError> {
    let a = t.amount;
    if over_count(w.merchant_day.count, merchant.daily_count) {
        return Err(AchError::DailyCountMerchant);
    }
    if let Some(l) =
        merchant.daily_amount.filter(|_| over_amount(w.merchant_day.amount, a, merchant.daily_amount))
    {
        return Err(AchError::DailyAmountMerchant { limit: l });
    }
    if over_count(w.overall_day.count, overall.daily_count) {
        return Err(AchError::DailyCountOverall);
    }
    if let Some(l) =
        overall.daily_amount.filter(|_| over_amount(w.overall_day.amount, a, overall.daily_amount))
    {
        return Err(AchError::DailyAmountOverall { limit: l });
    }
    if over_count(w.merchant_period.count, merchant.period_count) {
        return Err(AchError::PeriodCountMerchant);
    }
    if over_amount(w.merchant_period.amount, a, merchant.period_amount) {
        return Err(AchError::PeriodAmountMerchant);
    }
    if over_count(w.overall_period.count, overall.period_count) {
        return Err(AchError::PeriodCountOverall);
    }
    if over_amount(w.overall_period.amount, a, overall.period_amount) {
        return Err(AchError::PeriodAmountOverall);
    }
    if over_count(w.merchant_month.count, merchant.monthly_count) {
        return Err(AchError::MonthlyVolume);
    }
    if over_amount(w.merchant_month.amount, a, merchant.monthly_amount) {
        return Err(AchError::MonthlyAmount);
    }
    if let Some(avg) = merchant.monthly_average_amount {
        let dollars = i128::from(w.merchant_month.amount) + i128::from(a.cents());
        let count = i128::from(w.merchant_month.count) + 1;
        if dollars > i128::from(avg.cents()) * count {
            return Err(AchError::MonthlyAverage);
        }
    }
    Ok(())
}

/// Longest rolling period, in days.
pub const MAX_PERIOD_DAYS: u32 = 366;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
            check_transaction(&debit_only, Candidate { amount: m(1), credit: true })
                .map_err(|e| e.to_string()),
            Err("Unable to accept credit transactions for this merchant".into())
        );
    }

    #[test]
    fn window_limits_each_reached_exactly_at_the_boundary() {
        let usage = |count, amount| Usage { count, amount };
        let cases: Vec<(Limits, Limits, Windows, AchError)> = vec![
            (
                Limits { daily_count: Some(2), ..Limits::default() },
                Limits::default(),
                Windows { merchant_day: usage(2, 0), ..Windows::default() },
                AchError::DailyCountMerchant,
            ),
            (
                Limits { daily_amount: Some(m(1000)), ..Limits::default() },
                Limits::default(),
                Windows { merchant_day: usage(1, 901), ..Windows::default() },
                AchError::DailyAmountMerchant { limit: m(1000) },
            ),
            (
                Limits::default(),
                Limits { daily_count: Some(5), ..Limits::default() },
                Windows { overall_day: usage(5, 0), ..Windows::default() },
                AchError::DailyCountOverall,
            ),
            (
                Limits::default(),
                Limits { daily_amount: Some(m(1000)), ..Limits::default() },
                Windows { overall_day: usage(1, 901), ..Windows::default() },
                AchError::DailyAmountOverall { limit: m(1000) },
            ),
            (
                Limits { period_count: Some(3), ..Limits::default() },
                Limits::default(),
                Windows { merchant_period: usage(3, 0), ..Windows::default() },
                AchError::PeriodCountMerchant,
            ),
            (
                Limits { period_amount: Some(m(1000)), ..Limits::default() },
                Limits::default(),
                Windows { merchant_period: usage(1, 901), ..Windows::default() },
                AchError::PeriodAmountMerchant,
            ),
            (
                Limits::default(),
                Limits { period_count: Some(3), ..Limits::default() },
                Windows { overall_period: usage(3, 0), ..Windows::default() },
                AchError::PeriodCountOverall,
            ),
            (
                Limits::default(),
                Limits { period_amount: Some(m(1000)), ..Limits::default() },
                Windows { overall_period: usage(1, 901), ..Windows::default() },
                AchError::PeriodAmountOverall,
            ),
            (
                Limits { monthly_count: Some(4), ..Limits::default() },
                Limits::default(),
                Windows { merchant_month: usage(4, 0), ..Windows::default() },
                AchError::MonthlyVolume,
            ),
            (
                Limits { monthly_amount: Some(m(1000)), ..Limits::default() },
                Limits::default(),
                Windows { merchant_month: usage(1, 901), ..Windows::default() },
                AchError::MonthlyAmount,
            ),
        ];
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
    fn the_first_failure_wins() {
        let merchant = Limits { daily_count: Some(1), monthly_count: Some(1), ..Limits::default() };
        let w = Windows {
            merchant_day: Usage { count: 1, amount: 0 },
            merchant_month: Usage { count: 1, amount: 0 },
            ..Windows::default()
        };
        assert_eq!(
            check_windows(&merchant, &Limits::default(), &w, debit(1)),
            Err(AchError::DailyCountMerchant)
        );
    }

    #[test]
    fn usage_arithmetic() {
        let u = Usage::one(m(250)).plus(Usage::one(m(100)));
        assert_eq!(u, Usage { count: 2, amount: 350 });
        assert_eq!(u.minus(Usage::one(m(250))), Usage { count: 1, amount: 100 });
        assert_eq!(Usage::default().minus(u), Usage::default());
    }
}
