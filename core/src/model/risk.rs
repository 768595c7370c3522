//! Fraud monitoring as the operator sees it: the screening rules, held
//! entries under review, the risk report and a merchant's exposure.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::money::Money;

/// One screening rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// A merchant's first credit to an account, at or above an amount.
    NewAccountCredit,
    /// A credit to an account that lately replaced another of a payee with
    /// the same name.
    ChangedAccountCredit,
    /// An amount far above the merchant's recent average for its type.
    AmountOutlier,
    /// Too many entries from one merchant to one account in 24 hours.
    Velocity,
    /// An entry that would take the merchant over its exposure limit.
    ExposureLimit,
}

impl Rule {
    /// Every rule, in the order reports list them.
    pub const ALL: [Rule; 5] = [
        Rule::NewAccountCredit,
        Rule::ChangedAccountCredit,
        Rule::AmountOutlier,
        Rule::Velocity,
        Rule::ExposureLimit,
    ];

    /// Its name in the API.
    pub const fn as_str(self) -> &'static str {
        match self {
            Rule::NewAccountCredit => "new_account_credit",
            Rule::ChangedAccountCredit => "changed_account_credit",
            Rule::AmountOutlier => "amount_outlier",
            Rule::Velocity => "velocity",
            Rule::ExposureLimit => "exposure_limit",
        }
    }
}

/// Declares a rule's settings: `enabled` (on by default) and its parameters,
/// each with its default; a member not given takes its default, an unknown
/// one is refused.
macro_rules! rule_settings {
    ($(#[$doc:meta])* $name:ident { $($(#[$field_doc:meta])* $field:ident: $ty:ty = $default:expr),* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            /// Whether the rule holds entries.
            pub enabled: bool,
            $($(#[$field_doc])* pub $field: $ty,)*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { enabled: true, $($field: $default,)* }
            }
        }
    };
}

rule_settings! {
    /// `new_account_credit`: hold a merchant's first credit to an account when
    /// it is at least `min_amount`.
    NewAccountCredit {
        /// The smallest first credit held (default 1000.00).
        min_amount: Money = Money::from_cents(100_000)
    }
}

rule_settings! {
    /// `changed_account_credit`: hold a credit to an account that, within
    /// `days` days, replaced another account of a payee of the same merchant
    /// with the same name (case and spaces ignored).
    ChangedAccountCredit {
        /// How long a replacing account stays suspect (default 30 days).
        days: u32 = 30
    }
}

rule_settings! {
    /// `amount_outlier`: hold an entry above `factor` times the merchant's
    /// average over 60 days for the same type, once it has `min_history` of them.
    AmountOutlier {
        /// How many times the average is an outlier (default 5).
        factor: u32 = 5,
        /// The fewest entries of the type in 60 days before the rule judges (default 10).
        min_history: u32 = 10
    }
}

rule_settings! {
    /// `velocity`: hold an entry beyond `max_per_day` entries from one
    /// merchant to one account in 24 hours.
    Velocity {
        /// Entries allowed in 24 hours (default 10).
        max_per_day: u32 = 10
    }
}

rule_settings! {
    /// `exposure_limit`: hold an entry that would take its merchant over the
    /// `exposure_limit` of its limits.
    ExposureRule {}
}

/// The screening rules in force (`GET /admin/risk-rules`); every rule is on
/// by default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskRules {
    /// See [`NewAccountCredit`].
    pub new_account_credit: NewAccountCredit,
    /// See [`ChangedAccountCredit`].
    pub changed_account_credit: ChangedAccountCredit,
    /// See [`AmountOutlier`].
    pub amount_outlier: AmountOutlier,
    /// See [`Velocity`].
    pub velocity: Velocity,
    /// See [`ExposureRule`].
    pub exposure_limit: ExposureRule,
}

/// `PUT /admin/risk-rules`: each rule named replaces that rule whole (its
/// parameters not given take their defaults); rules not named stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskRulesUpdate {
    /// See [`NewAccountCredit`].
    #[serde(default)]
    pub new_account_credit: Option<NewAccountCredit>,
    /// See [`ChangedAccountCredit`].
    #[serde(default)]
    pub changed_account_credit: Option<ChangedAccountCredit>,
    /// See [`AmountOutlier`].
    #[serde(default)]
    pub amount_outlier: Option<AmountOutlier>,
    /// See [`Velocity`].
    #[serde(default)]
    pub velocity: Option<Velocity>,
    /// See [`ExposureRule`].
    #[serde(default)]
    pub exposure_limit: Option<ExposureRule>,
}

impl From<RiskRules> for RiskRulesUpdate {
    /// An update that sets every rule as `rules` has it.
    fn from(rules: RiskRules) -> RiskRulesUpdate {
        RiskRulesUpdate {
            new_account_credit: Some(rules.new_account_credit),
            changed_account_credit: Some(rules.changed_account_credit),
            amount_outlier: Some(rules.amount_outlier),
            velocity: Some(rules.velocity),
            exposure_limit: Some(rules.exposure_limit),
        }
    }
}

impl RiskRules {
    /// Every rule off: nothing is screened or counted (but exposure).
    pub fn off() -> RiskRules {
        RiskRules {
            new_account_credit: NewAccountCredit { enabled: false, ..Default::default() },
            changed_account_credit: ChangedAccountCredit { enabled: false, ..Default::default() },
            amount_outlier: AmountOutlier { enabled: false, ..Default::default() },
            velocity: Velocity { enabled: false, ..Default::default() },
            exposure_limit: ExposureRule { enabled: false },
        }
    }

    /// These rules with the ones `update` names replaced.
    pub fn updated(&self, update: RiskRulesUpdate) -> RiskRules {
        RiskRules {
            new_account_credit: update.new_account_credit.unwrap_or_else(|| self.new_account_credit.clone()),
            changed_account_credit: update
                .changed_account_credit
                .unwrap_or_else(|| self.changed_account_credit.clone()),
            amount_outlier: update.amount_outlier.unwrap_or_else(|| self.amount_outlier.clone()),
            velocity: update.velocity.unwrap_or_else(|| self.velocity.clone()),
            exposure_limit: update.exposure_limit.unwrap_or_else(|| self.exposure_limit.clone()),
        }
    }

    /// Whether `rule` is on.
    pub fn enabled(&self, rule: Rule) -> bool {
        match rule {
            Rule::NewAccountCredit => self.new_account_credit.enabled,
            Rule::ChangedAccountCredit => self.changed_account_credit.enabled,
            Rule::AmountOutlier => self.amount_outlier.enabled,
            Rule::Velocity => self.velocity.enabled,
            Rule::ExposureLimit => self.exposure_limit.enabled,
        }
    }

    /// The first parameter out of its range, as `(JSON path, why)`.
    pub fn out_of_range(&self) -> Option<(&'static str, String)> {
        let min = self.new_account_credit.min_amount;
        let checks: [(&'static str, bool, String); 5] = [
            (
                "new_account_credit.min_amount",
                min.cents() >= 1 && min <= crate::money::NACHA_MAX,
                "min_amount must be from 0.01 to 99999999.99".into(),
            ),
            (
                "changed_account_credit.days",
                (1..=365).contains(&self.changed_account_credit.days),
                "days must be from 1 to 365".into(),
            ),
            (
                "amount_outlier.factor",
                (2..=1000).contains(&self.amount_outlier.factor),
                "factor must be a whole number from 2 to 1000".into(),
            ),
            (
                "amount_outlier.min_history",
                (1..=10_000).contains(&self.amount_outlier.min_history),
                "min_history must be from 1 to 10000".into(),
            ),
            (
                "velocity.max_per_day",
                (1..=MAX_VELOCITY).contains(&self.velocity.max_per_day),
                format!("max_per_day must be from 1 to {MAX_VELOCITY}"),
            ),
        ];
        checks.into_iter().find(|(_, ok, _)| !ok).map(|(path, _, why)| (path, why))
    }
}

/// The largest `velocity.max_per_day`.
pub const MAX_VELOCITY: u32 = 1000;

/// Where a review stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// Held: not originated until released.
    Held,
    /// Released by the operator: originated at the next cut-off.
    Released,
    /// Rejected by the operator: it never originates (status R).
    Rejected,
    /// Voided by its partner while held.
    Voided,
}

/// A held entry as the operator sees it (`GET /admin/reviews`, and the
/// answer of a release or a rejection).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// The transaction.
    pub transaction_id: String,
    /// Its partner.
    pub partner_id: String,
    /// Its merchant.
    pub merchant_id: String,
    /// Its amount.
    pub amount: Money,
    /// `credit` or `debit`.
    #[serde(rename = "type")]
    pub direction: String,
    /// Its Standard Entry Class.
    pub standard_entry_class: String,
    /// The rules it tripped.
    pub rules: Vec<Rule>,
    /// When it was held.
    pub held_at: DateTime<Utc>,
    /// Where the review stands.
    pub status: ReviewStatus,
    /// Who decided (`operator`), once decided.
    pub decided_by: Option<String>,
    /// When it was decided.
    pub decided_at: Option<DateTime<Utc>>,
    /// The reviewer's note.
    pub note: Option<String>,
}

/// One rule's line of the risk report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleReport {
    /// The rule.
    pub rule: Rule,
    /// Entries screened while it was on.
    pub screened: u64,
    /// Entries it held.
    pub held: u64,
    /// Of those, released.
    pub released: u64,
    /// Of those, rejected.
    pub rejected: u64,
    /// Released entries later returned unauthorized (R05, R07, R10, R11,
    /// R29, and R17 marked `QUESTIONABLE`).
    pub returned_unauthorized: u64,
}

/// `GET /admin/risk-report`: per rule, what screening did to the entries
/// created from `from` to `to` (Eastern dates, both included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskReport {
    /// First day.
    pub from: NaiveDate,
    /// Last day.
    pub to: NaiveDate,
    /// One line per rule.
    pub rules: Vec<RuleReport>,
}

/// `GET /admin/merchants/{id}/exposure`: the figure and its parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exposure {
    /// The merchant.
    pub merchant_id: String,
    /// Its limit (`null`: none).
    pub exposure_limit: Option<Money>,
    /// The sum of the three parts.
    pub exposure: Money,
    /// Credits not yet settled.
    pub unsettled_credits: Money,
    /// Debits not yet settled.
    pub unsettled_debits: Money,
    /// Debits settled within the last two banking days.
    pub recently_settled_debits: Money,
}
