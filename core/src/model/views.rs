//! What the reads answer: a transaction, a merchant, a customer, and pages
//! of the first two. No full account number, tax id, bank account or image
//! is ever part of one.

use serde::Serialize;

use crate::limits::Limits;
use crate::model::{AccountType, Direction, EntryClass, Status, StatusChange};
use crate::money::Money;

/// `GET /transactions/{id}`: a transaction as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransactionView {
    /// `txn_…`.
    pub id: String,
    /// The merchant it was made for.
    pub merchant_id: String,
    /// Dollars, exact (two decimals).
    pub amount: Money,
    /// `debit` or `credit`.
    #[serde(rename = "type")]
    pub kind: Direction,
    /// The SEC code.
    pub standard_entry_class: EntryClass,
    /// As it was submitted (NFKC).
    pub description: String,
    /// `A`, `B`, `S` or `R`, as the feeds show it.
    pub status: Status,
    /// The receiver's account, its number cut to the last four digits.
    pub customer: CustomerPart,
    /// The check number (BOC, POP, ICL, ARC, BOC), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_number: Option<String>,
    /// `YYYY-MM-DD HH:MM:SS`, US Eastern Time.
    pub created_at: String,
    /// `YYYY-MM-DD` once originated, else null.
    pub origination_date: Option<String>,
    /// `YYYY-MM-DD` once originated, else null.
    pub effective_date: Option<String>,
    /// `YYYY-MM-DD` once originated, else null.
    pub settlement_date: Option<String>,
    /// Same Day ACH: originated at a same-day cut-off, effective and settled
    /// that day.
    pub same_day: bool,
    /// The return, once the receiving bank returned it; null otherwise (a
    /// void shows in `history` as status `R` with reason `Voided`).
    #[serde(rename = "return")]
    pub returned: Option<ReturnPart>,
    /// Links to the transactions made from or for this one.
    #[serde(flatten)]
    pub links: Links,
    /// Its status changes, as the status-changes feed showed them, oldest first.
    pub history: Vec<StatusChange>,
}

/// The receiver's account as a read shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CustomerPart {
    /// The stored customer it was made with, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The holder's name.
    pub name: String,
    /// Nine digits.
    pub routing_number: String,
    /// The account number's last four digits.
    pub account_number_last4: String,
    /// `checking` or `savings`.
    pub account_type: AccountType,
}

/// A return as a read shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReturnPart {
    /// `R` and two digits.
    pub code: String,
    /// `YYYY-MM-DD`.
    pub date: Option<String>,
    /// The code's meaning.
    pub reason: Option<String>,
}

/// A transaction's links to others; each absent when there is none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Links {
    /// For a reversal: what it reverses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reversal_of: Option<String>,
    /// For a reversed transaction: its reversal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reversed_by: Option<String>,
    /// For a re-initiation: the returned entry it retries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reinitiation_of: Option<String>,
    /// For a returned entry retried: its re-initiation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reinitiated_by: Option<String>,
    /// For a prenote or a micro-entry: the account validation it makes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation_of: Option<String>,
    /// For a WEB debit: what validated its account.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validated_by: Option<String>,
}

/// `GET /transactions`: a page, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransactionPage {
    /// Up to the page's limit.
    pub transactions: Vec<TransactionView>,
    /// Pass as `after` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// Where a merchant is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MerchantState {
    /// Submitted, waiting for the operator's approval.
    Submitted,
    /// Approved: may transact.
    Approved,
    /// Suspended by the operator: its keys are refused.
    Suspended,
}

/// `GET /merchants/{id}`: a merchant as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MerchantView {
    /// `mer_…`.
    pub id: String,
    /// The partner that submitted it.
    pub partner_id: String,
    /// `submitted`, `approved` or `suspended`.
    pub status: MerchantState,
    /// The company's name, as submitted.
    pub company_name: String,
    /// Its doing-business-as name, if one was given.
    pub dba: Option<String>,
    /// The SEC codes it may use.
    pub standard_entry_classes: Vec<EntryClass>,
    /// The limits in force.
    pub limits: Limits,
    /// `YYYY-MM-DD HH:MM:SS`, US Eastern Time.
    pub created_at: String,
    /// When the operator approved it, or null.
    pub approved_at: Option<String>,
}

/// `GET /merchants`: a page, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MerchantPage {
    /// Up to the page's limit.
    pub merchants: Vec<MerchantView>,
    /// Pass as `after` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// `GET /customers/{token}`: a stored account, its number cut to its last four digits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CustomerView {
    /// `cus_…`.
    pub id: String,
    /// The merchant that may use it, or `global` (every merchant of the partner).
    pub merchant_id: String,
    /// The holder's name.
    pub name: String,
    /// Nine digits.
    pub routing_number: String,
    /// The account number's last four digits.
    pub account_number_last4: String,
    /// `checking` or `savings`.
    pub account_type: AccountType,
    /// `YYYY-MM-DD HH:MM:SS`, US Eastern Time.
    pub created_at: String,
}

/// Most items on one page of a list.
pub const MAX_PAGE: usize = 100;

/// Items on a page when the request names no `limit`.
pub const DEFAULT_PAGE: usize = 25;

/// Which transactions `GET /transactions` lists, and where its page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionFilter {
    /// Only this merchant's.
    pub merchant_id: Option<String>,
    /// Only those whose status is this.
    pub status: Option<Status>,
    /// Only those created on this US Eastern date or later.
    pub created_from: Option<chrono::NaiveDate>,
    /// Only those created on this US Eastern date or earlier.
    pub created_to: Option<chrono::NaiveDate>,
    /// Where the page starts.
    pub page: PageRequest,
}

/// One page of a list: how many, and after which cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    /// 1 to [`MAX_PAGE`].
    pub limit: usize,
    /// A previous page's `next_cursor`; `None` for the first page.
    pub after: Option<String>,
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest { limit: DEFAULT_PAGE, after: None }
    }
}
