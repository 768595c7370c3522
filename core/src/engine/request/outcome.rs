//! What a successful operation answers.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::engine::settlement::schedule::Progress;
use crate::limits::Limits;

/// What a successful operation answers. (Hosts render it in the spec's shapes;
/// the serde form, tagged by `outcome`, is how idempotent answers are stored.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// A partner was created.
    PartnerCreated {
        /// Its id.
        partner_id: String,
        /// Its API key (shown once; only its hash is stored).
        api_key: String,
    },
    /// Limits were set.
    LimitsSet {
        /// The partner or merchant.
        id: String,
        /// The limits now in force.
        limits: Limits,
    },
    /// A merchant application was stored and waits in underwriting.
    MerchantSubmitted {
        /// Its id.
        merchant_id: String,
    },
    /// A merchant was approved.
    MerchantApproved {
        /// Its id.
        merchant_id: String,
        /// Its API key for the events feed (shown once).
        api_key: String,
        /// Its limits.
        limits: Limits,
    },
    /// A customer was stored.
    CustomerCreated {
        /// Its token.
        customer_id: String,
    },
    /// A customer was deleted.
    CustomerDeleted {
        /// Its token.
        customer_id: String,
    },
    /// A transaction was accepted (Pending).
    TransactionCreated {
        /// Its id.
        transaction_id: String,
    },
    /// A transaction was voided.
    TransactionVoided {
        /// Its id.
        transaction_id: String,
    },
    /// A reversal was created.
    TransactionReversed {
        /// The original transaction.
        transaction_id: String,
        /// The new reversal transaction.
        reversal_id: String,
    },
    /// A returned debit was re-initiated.
    TransactionReinitiated {
        /// The returned transaction it retries.
        transaction_id: String,
        /// The new transaction.
        reinitiation_id: String,
    },
    /// An account validation was started (or, outside, recorded).
    ValidationCreated {
        /// It, as its partner sees it.
        validation: crate::model::ValidationView,
    },
    /// Micro-entries were confirmed.
    ValidationConfirmed {
        /// The validation, as its partner sees it.
        validation: crate::model::ValidationView,
    },
    /// A return was recorded.
    ReturnRecorded {
        /// The transaction.
        transaction_id: String,
        /// The return-rate thresholds this return put its merchant over
        /// ([`crate::engine::Engine::return_rates`]); hosts log them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        crossings: Vec<crate::engine::ThresholdCrossing>,
    },
    /// A routing directory was loaded.
    DirectoryLoaded {
        /// Records in it.
        records: usize,
    },
    /// A merchant's origination settings were set.
    MerchantSettingsSet {
        /// The merchant.
        merchant_id: String,
        /// The settings now in force (description in upper case).
        settings: crate::engine::MerchantSettings,
    },
    /// The originator was set.
    OriginatorSet {
        /// The originator now in force (names in upper case).
        originator: crate::nacha::Originator,
    },
    /// A file of returns and notifications of change was applied.
    ReturnFileIngested {
        /// What each entry did.
        ingested: crate::engine::Ingested,
        /// Return-rate thresholds the file's returns put a merchant over.
        crossings: Vec<crate::engine::risk::return_rates::ThresholdCrossing>,
    },
    /// A holder's keys were rotated.
    KeysRotated {
        /// The partner, the merchant, or `operator`.
        id: String,
        /// The new key (shown once; only its hash is stored).
        api_key: String,
        /// How many working keys the rotation retired.
        previous_keys: u32,
        /// Until when they work (`None`: refused already).
        previous_keys_valid_until: Option<DateTime<Utc>>,
    },
    /// A holder's keys were revoked.
    KeysRevoked {
        /// The partner or the merchant.
        id: String,
        /// How many working keys were revoked.
        revoked: u32,
    },
    /// A partner or a merchant was suspended or resumed.
    SuspensionSet {
        /// The partner or the merchant.
        id: String,
        /// Whether it is suspended now.
        suspended: bool,
        /// Since when (`None` once resumed).
        since: Option<DateTime<Utc>>,
    },
    /// The screening rules were set.
    RiskRulesSet {
        /// The rules now in force.
        rules: crate::model::RiskRules,
    },
    /// A held entry was released or rejected.
    ReviewDecided {
        /// Its review, decided.
        review: crate::model::Review,
    },
    /// The sandbox clock was set.
    ClockSet {
        /// The new instant.
        now: DateTime<Utc>,
        /// What ran.
        progress: Progress,
    },
    /// A notification of change was applied (a sandbox simulation).
    NoticeApplied {
        /// The transaction it corrects.
        transaction_id: String,
        /// Whether the transaction's stored customer was updated.
        customer_updated: bool,
    },
    /// A webhook endpoint was made (with its secret).
    WebhookEndpointCreated {
        /// The endpoint, its secret shown once.
        endpoint: crate::engine::EndpointView,
    },
    /// A webhook endpoint's secret was rotated.
    WebhookSecretRotated {
        /// The endpoint, its new secret shown once.
        endpoint: crate::engine::EndpointView,
    },
    /// A webhook endpoint was deleted.
    WebhookEndpointDeleted {
        /// Its id.
        id: String,
    },
    /// A delivery is due again now.
    WebhookRetryScheduled {
        /// The delivery.
        delivery: crate::engine::Delivery,
    },
    /// Webhook deliveries taken, for the host to send.
    WebhookAttempts {
        /// Each try, signed.
        attempts: Vec<crate::engine::WebhookAttempt>,
    },
    /// Webhook tries recorded.
    WebhooksRecorded {
        /// How many.
        count: usize,
    },
    /// An idempotent request made again: what it answered the first time
    /// (hosts add `Idempotent-Replayed: true`). Never stored.
    #[serde(skip)]
    Replayed(Box<Outcome>),
}

impl Outcome {
    /// What the operation answered the first time it ran (itself, but for a
    /// [`Outcome::Replayed`]).
    pub fn first(&self) -> &Outcome {
        match self {
            Outcome::Replayed(first) => first.first(),
            other => other,
        }
    }
}
