//! Status changes and events: what the two feeds carry.

use serde::{Deserialize, Serialize};

/// Transaction status as the feeds show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Status {
    /// A: Pending, accepted for processing.
    A,
    /// B: Originated, sent through the central bank network.
    B,
    /// S: Settled, funded to the merchant's bank.
    S,
    /// R: Returned by the customer's bank.
    R,
}

impl Status {
    /// The one-letter code.
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::A => "A",
            Status::B => "B",
            Status::S => "S",
            Status::R => "R",
        }
    }

    /// The spec's name of the status.
    pub const fn name(self) -> &'static str {
        match self {
            Status::A => "Pending",
            Status::B => "Originated",
            Status::S => "Settled",
            Status::R => "Returned",
        }
    }
}

/// One status change, exactly as the spec shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusChange {
    /// The transaction.
    pub transaction_id: String,
    /// `YYYY-MM-DD HH:MM:SS`, US Eastern Time.
    pub change_timestamp: String,
    /// `YYYY-MM-DD` or null.
    pub origination_date: Option<String>,
    /// `YYYY-MM-DD` or null.
    pub effective_date: Option<String>,
    /// `YYYY-MM-DD` or null.
    pub settlement_date: Option<String>,
    /// `YYYY-MM-DD` or null.
    pub return_date: Option<String>,
    /// `R` + two digits, or null.
    pub return_code: Option<String>,
    /// The new status.
    pub status: Status,
    /// Human-readable reason (returns), or null.
    pub reason: Option<String>,
}

/// One event of the per-merchant events feed (`GET /events`); defined in
/// `docs/decisions.md`: an id, a type, when it occurred, and the status change it
/// reports (`transaction_id`, `status` and the dates, flattened).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// `evt_` + a number: unique and ordered within the merchant's feed.
    pub id: String,
    /// `transaction.status_changed` (the only type today).
    #[serde(rename = "type")]
    pub kind: String,
    /// `YYYY-MM-DD HH:MM:SS`, US Eastern Time (same as `change_timestamp`).
    pub occurred_at: String,
    /// The status change the event reports.
    #[serde(flatten)]
    pub change: StatusChange,
    /// For `transaction.notice_of_change`: what the receiving bank says must
    /// change (the status change is then the transaction's current one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice_of_change: Option<NoticeOfChange>,
    /// For `transaction.held_for_review` and
    /// `transaction.released_from_review`: the screening rules the entry tripped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewNotice>,
}

/// What a review event tells of the review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewNotice {
    /// The rules the entry tripped.
    pub rules: Vec<crate::model::Rule>,
}

/// A notification of change as the events feed shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoticeOfChange {
    /// `C01` account number, `C02` routing number, `C03` both, `C05` account
    /// type, `C06` account number and type, `C07` all three; others as sent.
    pub change_code: String,
    /// The corrected routing number, if this change gives one.
    pub routing_number: Option<String>,
    /// The corrected account number, if this change gives one.
    pub account_number: Option<String>,
    /// The corrected account type (`checking`, `savings`), if this change gives one.
    pub account_type: Option<String>,
    /// The corrected data as the bank sent it, for a change the engine does not
    /// read (a code other than C01–C03, C05–C07, or data off its layout).
    pub corrected_data: Option<String>,
    /// The stored customer the transaction was made with, if any.
    pub customer_id: Option<String>,
    /// Whether that customer's account was updated (later transactions with the
    /// token carry the corrected data). `false` for an inline account: the
    /// partner acts on the event.
    pub customer_updated: bool,
}
