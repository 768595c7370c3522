//! What a step asks for: the parts of requests the workload chooses and the
//! model judges.

use super::Ix;

/// A reference to something that may exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One of the model's (possibly another partner's).
    Known(Ix),
    /// A well-formed id the engine never issued.
    Unknown(String),
}

/// A receiver's bank account as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Holder.
    pub name: String,
    /// Routing number.
    pub routing: String,
    /// Account number.
    pub number: String,
    /// `checking` or `savings`.
    pub kind: &'static str,
}

/// The `merchant_id` of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MerchantRef {
    /// One of the model's merchants.
    Known(Ix),
    /// A well-formed unknown id.
    Unknown(String),
    /// Not a merchant id at all.
    Malformed(String),
}

/// The `amount` of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AmountSpec {
    /// A valid amount, sent as a JSON string or number.
    Cents {
        /// Cents.
        cents: i64,
        /// Sent as a JSON number.
        number: bool,
    },
    /// An invalid amount text (message 14).
    Bad(String),
}

/// The customer of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomerSpec {
    /// A stored token.
    Token(Target),
    /// The account inline.
    Inline(Account),
}

/// A transaction request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnSpec {
    /// Merchant.
    pub merchant: MerchantRef,
    /// Amount.
    pub amount: AmountSpec,
    /// Credit (else debit).
    pub credit: bool,
    /// `standard_entry_class` as sent.
    pub class: String,
    /// Check number as sent.
    pub check: Option<String>,
    /// POP terminal state.
    pub state: Option<String>,
    /// Both check images.
    pub images: bool,
    /// Customer.
    pub customer: CustomerSpec,
    /// Description.
    pub description: String,
}

/// A merchant application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSpec {
    /// `standard_entry_classes`.
    pub classes: Vec<String>,
    /// `expected_checks_per_year`.
    pub checks_per_year: u64,
    /// `expected_average_check_amount`, cents.
    pub average: i64,
    /// `highest_amount_allowed`, cents.
    pub highest: i64,
    /// `lowest_amount_allowed`, cents.
    pub lowest: Option<i64>,
    /// `decline_duplicates`.
    pub decline_duplicates: bool,
    /// Leave out `company_info.website`.
    pub no_website: bool,
}
