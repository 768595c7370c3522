//! Account validation (Nacha Rules 2.5.17.4): before the first WEB debit to
//! an account, and the first after any change of it, the account is shown to
//! be open and able to take ACH entries: by a prenote, by micro-entries the
//! receiver confirms, or by an outside service the originator used.

use serde::{Deserialize, Serialize};

use crate::ids::MerchantId;
use crate::money::Money;

/// How an account is validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationMethod {
    /// A zero-dollar entry that passes without a return or a notification
    /// of change.
    Prenote,
    /// Two small credits and a debit of their sum, whose amounts the
    /// receiver confirms.
    MicroEntries,
    /// A commercially reasonable outside service (`provider`, `reference`).
    Outside,
}

impl ValidationMethod {
    /// Every method.
    pub const ALL: [ValidationMethod; 3] =
        [ValidationMethod::Prenote, ValidationMethod::MicroEntries, ValidationMethod::Outside];

    /// Its name in requests (`micro_entries`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ValidationMethod::Prenote => "prenote",
            ValidationMethod::MicroEntries => "micro_entries",
            ValidationMethod::Outside => "outside",
        }
    }

    /// The method named `text`.
    pub fn parse(text: &str) -> Option<ValidationMethod> {
        ValidationMethod::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// Where a validation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationStatus {
    /// Its entries are on their way, or its micro-entries wait to be confirmed.
    Pending,
    /// The account may take WEB debits (from `usable_from`, for a prenote).
    Validated,
    /// An entry of it was returned or corrected, or a later return showed the
    /// account closed or unusable.
    Failed,
    /// Three wrong confirmations.
    Locked,
    /// Micro-entries not confirmed in time.
    Expired,
}

impl ValidationStatus {
    /// Its name in answers.
    pub const fn as_str(self) -> &'static str {
        match self {
            ValidationStatus::Pending => "pending",
            ValidationStatus::Validated => "validated",
            ValidationStatus::Failed => "failed",
            ValidationStatus::Locked => "locked",
            ValidationStatus::Expired => "expired",
        }
    }
}

/// `POST /customers/{customer_token}/validations`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewValidation {
    /// The merchant whose company name and id the entries carry.
    pub merchant_id: MerchantId,
    /// How.
    pub method: ValidationMethod,
    /// The outside service (method `outside`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The outside service's reference for its check (method `outside`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// An outside validation a WEB debit carries (`account_validation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutsideValidation {
    /// The service.
    pub provider: String,
    /// Its reference for the check.
    pub reference: String,
}

/// `POST /customers/{customer_token}/validations/{id}/confirm`: the two
/// micro-entry credits the receiver saw, in either order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The two amounts.
    pub amounts: [Money; 2],
}

/// An account validation as its partner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationView {
    /// Its id (`val_…`).
    pub id: String,
    /// The customer whose account it validates.
    pub customer_id: Option<String>,
    /// The merchant its entries were sent for.
    pub merchant_id: String,
    /// How.
    pub method: ValidationMethod,
    /// Where it stands now.
    pub status: ValidationStatus,
    /// A prenote's account takes WEB debits from this Eastern date on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable_from: Option<chrono::NaiveDate>,
    /// Why it failed: the return or change code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The entries it sent (a prenote; two micro-entry credits, then their debit).
    pub transaction_ids: Vec<String>,
}
