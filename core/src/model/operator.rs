//! What the operator's lists answer: a page of partners, and the volume
//! sent to the bank per day. No key, account number or tax id is part of
//! either.

use chrono::NaiveDate;
use serde::Serialize;

use crate::limits::Limits;
use crate::money::Money;

/// A partner as the operator's list shows it (`GET /admin/partners`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartnerView {
    /// `par_…`.
    pub id: String,
    /// The name it was created with.
    pub name: String,
    /// `YYYY-MM-DD HH:MM:SS`, US Eastern Time.
    pub created_at: String,
    /// Its overall limits (across its merchants).
    pub limits: Limits,
    /// Whether the operator suspended it (its keys are refused).
    pub suspended: bool,
}

/// `GET /admin/partners`: a page, in id order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartnerPage {
    /// Up to the page's limit.
    pub partners: Vec<PartnerView>,
    /// Pass as `after` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// The longest period `GET /admin/volume` answers, in days (both ends
/// included): one line per day, so the answer is bounded.
pub const MAX_VOLUME_DAYS: i64 = 366;

/// What the cut-offs of one Eastern day sent to the bank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DailyVolume {
    /// The Eastern date of the cut-offs.
    pub date: NaiveDate,
    /// Origination files written.
    pub files: u64,
    /// Their entry detail records.
    pub entries: u64,
    /// The sum of their debit entries.
    pub total_debit: Money,
    /// The sum of their credit entries.
    pub total_credit: Money,
    /// Image cash letters written.
    pub cash_letters: u64,
    /// Their check items.
    pub check_items: u64,
    /// The sum of their check items.
    pub check_total: Money,
}

/// `GET /admin/volume`: one line per Eastern day from `from` to `to`, days
/// without a file included (all zero).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Volume {
    /// First day.
    pub from: NaiveDate,
    /// Last day.
    pub to: NaiveDate,
    /// One per day, oldest first.
    pub days: Vec<DailyVolume>,
}
