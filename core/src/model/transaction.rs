//! The new-transaction request.

use serde::{Deserialize, Serialize};

use super::{BankAccount, OutsideValidation, Purpose};
use crate::ids::{CustomerId, MerchantId};
use crate::money::Money;

/// Direction of the draft (`debit` or `credit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Withdraw from the receiver's account into the merchant's.
    Debit,
    /// Deposit into the receiver's account from the merchant's.
    Credit,
}

impl Direction {
    /// The spec's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Direction::Debit => "debit",
            Direction::Credit => "credit",
        }
    }

    /// Parse the spec's name (exact, lowercase).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "debit" => Some(Direction::Debit),
            "credit" => Some(Direction::Credit),
            _ => None,
        }
    }

    /// The other direction (a reversal's).
    pub const fn opposite(self) -> Self {
        match self {
            Direction::Debit => Direction::Credit,
            Direction::Credit => Direction::Debit,
        }
    }
}

/// The standard entry classes the service accepts (closed list; see
/// `docs/decisions.md` for the NACHA rules each carries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EntryClass {
    /// Prearranged payment and deposit (consumer).
    PPD,
    /// Internet-initiated entry (consumer).
    WEB,
    /// Corporate credit or debit.
    CCD,
    /// Telephone-initiated entry (debit only).
    TEL,
    /// Back-office conversion of a check (debit only, check number, images, $25,000 cap).
    BOC,
    /// Point-of-purchase check conversion (debit only, check number, terminal state,
    /// images, $25,000 cap).
    POP,
    /// Image cash letter: a check presented as an image, not a NACHA class (debit
    /// only, images).
    ICL,
}

impl EntryClass {
    /// Every class, in the order listed by the spec.
    pub const ALL: [EntryClass; 7] = [
        EntryClass::PPD,
        EntryClass::WEB,
        EntryClass::CCD,
        EntryClass::TEL,
        EntryClass::BOC,
        EntryClass::POP,
        EntryClass::ICL,
    ];

    /// The three-letter code.
    pub const fn as_str(self) -> &'static str {
        match self {
            EntryClass::PPD => "PPD",
            EntryClass::WEB => "WEB",
            EntryClass::CCD => "CCD",
            EntryClass::TEL => "TEL",
            EntryClass::BOC => "BOC",
            EntryClass::POP => "POP",
            EntryClass::ICL => "ICL",
        }
    }

    /// Parse the three-letter code (exact, uppercase).
    pub fn parse(text: &str) -> Option<Self> {
        EntryClass::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// Whether the class carries debits only (TEL, BOC, POP, ICL).
    pub const fn debit_only(self) -> bool {
        matches!(self, EntryClass::TEL | EntryClass::BOC | EntryClass::POP | EntryClass::ICL)
    }

    /// Whether a check number is required (BOC, POP: error 8).
    pub const fn requires_check_number(self) -> bool {
        matches!(self, EntryClass::BOC | EntryClass::POP)
    }

    /// Whether the class reads `check_number` at all: required for BOC and POP,
    /// optional for ICL (a check item too, so a number given is checked for
    /// duplicates). Other classes carry no check: their `check_number` is ignored.
    pub const fn uses_check_number(self) -> bool {
        matches!(self, EntryClass::BOC | EntryClass::POP | EntryClass::ICL)
    }

    /// Whether front and back check images are required (POP, ICL, BOC).
    pub const fn requires_images(self) -> bool {
        matches!(self, EntryClass::BOC | EntryClass::POP | EntryClass::ICL)
    }

    /// Whether a terminal state is required (POP: error 9).
    pub const fn requires_state(self) -> bool {
        matches!(self, EntryClass::POP)
    }

    /// NACHA's per-entry cap for check conversion (BOC, POP: $25,000), if any.
    pub const fn entry_cap(self) -> Option<Money> {
        match self {
            EntryClass::BOC | EntryClass::POP => Some(Money::from_cents(2_500_000)),
            _ => None,
        }
    }
}

/// The customer of a transaction: a stored token, or the account inline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CustomerRef {
    /// `{ "id": "cus_..." }`
    Token {
        /// The customer token.
        id: CustomerId,
    },
    /// `{ name, routing_number, account_number, account_type }`
    Inline(BankAccount),
}

/// `POST /transactions` request, validated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewTransaction {
    /// The merchant.
    pub merchant_id: MerchantId,
    /// Amount in cents (serialized as an exact decimal number).
    pub amount: Money,
    /// Description of the transaction.
    pub description: String,
    /// `debit` or `credit`.
    #[serde(rename = "type")]
    pub direction: Direction,
    /// The ACH standard entry class.
    pub standard_entry_class: EntryClass,
    /// Check number: BOC and POP (required), ICL (optional); `None` for the other
    /// classes, which ignore the member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_number: Option<String>,
    /// Base64 front image of the check (BOC, POP, ICL; `None` for the other
    /// classes, which ignore the member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_image_front: Option<String>,
    /// Base64 back image of the check (BOC, POP, ICL; `None` for the other
    /// classes, which ignore the member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_image_back: Option<String>,
    /// Terminal state for POP (US state or territory code, upper case; `None` for
    /// the other classes, which ignore the member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The receiver.
    pub customer: CustomerRef,
    /// What it pays for, when Nacha names it (`payroll`: PPD credits;
    /// `purchase`: WEB debits); `None`: the merchant's own description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<Purpose>,
    /// An outside validation of the account, for a WEB debit to an account
    /// not validated yet (recorded, and good for later debits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_validation: Option<OutsideValidation>,
    /// Same Day ACH: originated at the next same-day cut-off, effective and
    /// settled that day (at most $1,000,000.00; not ICL).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub same_day: bool,
}
