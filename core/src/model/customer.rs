//! Customers: bank account details stored under a `cus_` token.

use serde::{Deserialize, Serialize};

use crate::ids::MerchantId;

/// Kind of bank account (`checking` or `savings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccountType {
    /// A checking (demand deposit) account.
    Checking,
    /// A savings account.
    Savings,
}

impl AccountType {
    /// The spec's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            AccountType::Checking => "checking",
            AccountType::Savings => "savings",
        }
    }

    /// Parse the spec's name (exact, lowercase).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "checking" => Some(AccountType::Checking),
            "savings" => Some(AccountType::Savings),
            _ => None,
        }
    }
}

/// A receiver's bank account as sent inline in a transaction or stored as a customer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BankAccount {
    /// Account holder's name.
    pub name: String,
    /// Nine-digit ABA routing number (check digit verified).
    pub routing_number: String,
    /// Account number (4 to 17 characters, see `docs/decisions.md`).
    pub account_number: String,
    /// `checking` or `savings`.
    pub account_type: AccountType,
}

/// Who may use a stored customer: one merchant, or every merchant of the partner.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CustomerScope {
    /// The literal `global`: usable by every merchant of the partner.
    Global,
    /// Usable by this merchant only.
    Merchant(MerchantId),
}

impl CustomerScope {
    /// The spec's representation: `global` or the merchant id.
    pub fn as_str(&self) -> &str {
        match self {
            CustomerScope::Global => "global",
            CustomerScope::Merchant(m) => m.as_str(),
        }
    }
}

impl Serialize for CustomerScope {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CustomerScope {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "global" {
            return Ok(CustomerScope::Global);
        }
        MerchantId::parse(&text)
            .map(CustomerScope::Merchant)
            .ok_or_else(|| serde::de::Error::custom(format!("'{text}' is an invalid Merchant ID")))
    }
}

/// `POST /customers` request: `{merchant_id, name, routing_number, account_number,
/// account_type}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewCustomer {
    /// `global` or the owning merchant.
    pub merchant_id: CustomerScope,
    /// The bank account.
    #[serde(flatten)]
    pub account: BankAccount,
}
