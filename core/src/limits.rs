//! Merchant and overall limits: the settings (set at approval, defaulting from the
//! application's velocities, changeable by the operator). The checks themselves
//! come with the limits issue.

use serde::{Deserialize, Serialize};

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
