//! Merchant and overall limits: the settings (set at approval, defaulting from the
//! application's velocities, changeable by the operator) and the checks a new
//! transaction must pass: the per-transaction ones ([`check_transaction`],
//! messages 14, 19 to 21) and the ones over the day, the rolling period and the
//! Eastern calendar month ([`check_windows`], messages 22 to 32).
//!
//! The defaults ([`Limits::from_velocities`]) let a merchant run an ordinary month
//! in any order and refuse one far beyond what it declared: the month's count and
//! dollars at [`VELOCITY_HEADROOM`] times the expected monthly figures, and its
//! average at [`VELOCITY_HEADROOM`] times the expected average, judged only once
//! the month has enough transactions for an average to mean something
//! ([`Limits::monthly_average_min_count`]).

use serde::{Deserialize, Serialize};

use crate::error::AchError;
use crate::model::Velocities;
use crate::money::Money;

/// Headroom of the defaults derived from velocities: a merchant may run its
/// month at up to this multiple of the monthly count, dollars and average it
/// declared (reaching the multiple is allowed, going beyond it is refused).
pub const VELOCITY_HEADROOM: u64 = 3;

/// The fewest transactions of a month, by default, before its average is judged
/// (message 32): a handful of checks says nothing about a month's average.
pub const AVERAGE_MIN_COUNT_FLOOR: u64 = 10;

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
    /// The month's average is judged (message 32) only for a transaction that
    /// brings the month's count, itself included, to at least this many; `None`
    /// (or 0 or 1): from the month's first transaction. Missing from limits
    /// stored before it existed, which read as `None`.
    pub monthly_average_min_count: Option<u64>,
    /// The merchant's exposure limit: its credits not yet settled plus its
    /// debits not yet settled or settled within the last two banking days. An
    /// entry that would take it over is held for review, not refused. Merchants
    /// only (a partner's limits refuse it).
    pub exposure_limit: Option<Money>,
    /// Requests per second each of the partner's keys may make over HTTPS
    /// (bursts of twice as many); `None`: the server's default. Partners only
    /// (a merchant's limits refuse it).
    pub requests_per_second: Option<u32>,
}

/// The month a merchant's velocities announce: `(count, dollars)`, the count
/// being ⌈`expected_checks_per_year` / 12⌉ (at least 1) and the dollars that
/// count times `expected_average_check_amount`.
pub fn expected_month(v: &Velocities) -> (u64, Money) {
    let count = v.expected_checks_per_year.div_ceil(12).max(1);
    let average = v.expected_average_check_amount.cents();
    (count, Money::from_cents(i64::try_from(count).unwrap_or(i64::MAX).saturating_mul(average)))
}

impl Limits {
    /// The defaults for a merchant from its application's velocities: the declared
    /// per-transaction bounds; for the month ([`expected_month`]) [`VELOCITY_HEADROOM`]
    /// times its expected count and dollars and [`VELOCITY_HEADROOM`] times the
    /// expected average, that average judged once the month has
    /// max([`AVERAGE_MIN_COUNT_FLOOR`], ⌈expected count / 2⌉) transactions.
    pub fn from_velocities(v: &Velocities) -> Limits {
        let (count, dollars) = expected_month(v);
        let headroom = i64::try_from(VELOCITY_HEADROOM).unwrap_or(i64::MAX);
        let average = v.expected_average_check_amount.cents();
        Limits {
            max_transaction_amount: Some(v.highest_amount_allowed),
            min_transaction_amount: v.lowest_amount_allowed.filter(|m| m.cents() > 0),
            max_credit_amount: None,
            daily_count: None,
            daily_amount: None,
            period_days: Some(DEFAULT_PERIOD_DAYS),
            period_count: None,
            period_amount: None,
            monthly_count: Some(count.saturating_mul(VELOCITY_HEADROOM)),
            monthly_amount: Some(Money::from_cents(dollars.cents().saturating_mul(headroom))),
            monthly_average_amount: Some(Money::from_cents(average.saturating_mul(headroom))),
            monthly_average_min_count: Some(count.div_ceil(2).max(AVERAGE_MIN_COUNT_FLOOR)),
            exposure_limit: None,
            requests_per_second: None,
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
            ("exposure_limit", self.exposure_limit),
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
            monthly_average_min_count: update.monthly_average_min_count.or(self.monthly_average_min_count),
            exposure_limit: update.exposure_limit.or(self.exposure_limit),
            requests_per_second: update.requests_per_second.or(self.requests_per_second),
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
/// including this transaction divided by its count must not exceed the maximum,
/// judged once that count reaches `monthly_average_min_count`). Every cap is the
/// most allowed: reaching it is accepted, the first transaction beyond it refused.
/// Only the merchant's monthly limits apply to the month; the monthly fields of
/// `overall` are not used.
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
        let count = w.merchant_month.count.saturating_add(1);
        let judged = merchant.monthly_average_min_count.is_none_or(|min| count >= min);
        let dollars = i128::from(w.merchant_month.amount) + i128::from(a.cents());
        if judged && dollars > i128::from(avg.cents()) * i128::from(count) {
            return Err(AchError::MonthlyAverage);
        }
    }
    Ok(())
}

/// Longest rolling period, in days.
pub const MAX_PERIOD_DAYS: u32 = 366;

#[cfg(test)]
#[path = "limits_props.rs"]
mod props;

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
