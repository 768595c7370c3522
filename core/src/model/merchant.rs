//! The merchant application (`POST /merchants`): a merchant submitted for
//! underwriting and setup. Domain types with serde names exactly as in the spec.
//!
//! Requests are *validated* from raw JSON by [`crate::validation::merchant`], which
//! produces these types; they also (de)serialize directly for hosts that build them
//! in code. The spec's garbled "the service" member of `business_data` (industry
//! classification code) is carried as `merchant_category_code`, an ISO 18245 MCC
//! (see [`crate::categories`]).

use std::fmt;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::{AccountType, EntryClass};
use crate::money::Money;

/// The whole merchant application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MerchantApplication {
    /// Legal entity, website and headquarters.
    pub company_info: CompanyInfo,
    /// Requested transaction velocities and limits.
    pub velocities: Velocities,
    /// Underwriting data about the business.
    pub business_data: BusinessData,
    /// Where funds are deposited.
    pub custodial_bank_account: MerchantBankAccount,
    /// Where monthly billing is drafted (may be null).
    #[serde(default)]
    pub billing_bank_account: Option<MerchantBankAccount>,
    /// Who answers the merchant's customers.
    pub support_contact: SupportContact,
    /// The owners (at least one).
    pub principal: Vec<Principal>,
    /// The standard entry classes the merchant will originate (at least one, no
    /// repeats).
    pub standard_entry_classes: Vec<EntryClass>,
    /// Trade or bank references (may be null).
    #[serde(default)]
    pub references: Option<Vec<Reference>>,
}

/// `company_info`: the legal entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompanyInfo {
    /// Whether the merchant applies for check guarantee.
    pub check_guarantee: bool,
    /// Legal business entity name.
    pub name: String,
    /// Operating ("doing business as") name.
    #[serde(default)]
    pub dba: Option<String>,
    /// Business website (required when the merchant originates `WEB` entries).
    #[serde(default)]
    pub website: Option<String>,
    /// Physical headquarters address (no PO box).
    pub address: Address,
}

/// A US postal address, as nested in every group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    /// Street address.
    pub address1: String,
    /// Location detail (suite, floor).
    #[serde(default)]
    pub address2: Option<String>,
    /// City.
    pub city: String,
    /// Postal state code (`NY`, `PR`, `AE`).
    pub state: String,
    /// ZIP code: `12345` or `12345-6789`.
    pub zip: String,
}

/// `velocities`: the merchant's requested volumes and per-transaction limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Velocities {
    /// Expected number of transactions per year.
    pub expected_checks_per_year: u64,
    /// Expected average amount (more than zero).
    pub expected_average_check_amount: Money,
    /// Expected total yearly sales, all payment methods (zero or more).
    pub expected_sales_per_year: Money,
    /// Lowest amount allowed per transaction (at most the highest).
    #[serde(default)]
    pub lowest_amount_allowed: Option<Money>,
    /// Highest amount allowed per transaction (more than zero).
    pub highest_amount_allowed: Money,
    /// Whether similar (duplicate) transactions are declined.
    pub decline_duplicates: bool,
}

/// `business_data`: underwriting facts about the business.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusinessData {
    /// How authorizations are obtained before payments.
    pub authorization_method: String,
    /// Claimed establishment date (`yyyy-mm-dd`, not in the future).
    pub business_start_date: NaiveDate,
    /// Industry classification: an ISO 18245 merchant category code (the spec's
    /// "the service" member). Accepted as a JSON number or a four-digit string.
    #[serde(default, with = "mcc_serde")]
    pub merchant_category_code: Option<u16>,
    /// General business type; when absent, derived from the category code's group.
    #[serde(default)]
    pub business_type: Option<String>,
    /// Description of the goods or services billed.
    #[serde(default)]
    pub goods_or_service: Option<String>,
    /// Federal tax (employer identification) number: nine digits, no dash.
    #[serde(with = "nine_digit_serde")]
    pub federal_tax_id: String,
    /// Business structure (LLC, partnership, sole proprietor, non-profit...).
    pub corporate_structure: String,
}

/// A merchant's bank account: `custodial_bank_account` or `billing_bank_account`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MerchantBankAccount {
    /// Bank name.
    pub name: String,
    /// Bank contact person.
    #[serde(default)]
    pub contact_name: Option<String>,
    /// Contact's title.
    #[serde(default)]
    pub contact_title: Option<String>,
    /// Nine-digit ABA routing number (check digit verified).
    pub routing: String,
    /// Account number.
    pub account: String,
    /// `checking` or `savings`.
    #[serde(rename = "type")]
    pub account_type: AccountType,
    /// Base64 front image of a check on the account.
    pub check_image_front: String,
    /// Base64 back image of a check on the account.
    pub check_image_back: String,
    /// The bank's address.
    pub address: Address,
}

/// `support_contact`: who answers the merchant's customers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportContact {
    /// Contact name.
    pub name: String,
    /// Email address.
    pub email: String,
    /// US phone number.
    pub phone: String,
    /// US fax number.
    #[serde(default)]
    pub fax: Option<String>,
}

/// One owner of the business (`principal[i]`). Its `Debug` output hides the SSN.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    /// Full name.
    pub name: String,
    /// Title (Owner, CEO...).
    pub title: String,
    /// Social Security number: nine digits, no dashes.
    #[serde(with = "nine_digit_serde")]
    pub ssn: String,
    /// Driver license number.
    pub driver_license: String,
    /// State that issued the driver license (postal code).
    pub driver_license_state: String,
    /// US phone number.
    pub phone: String,
    /// US fax number.
    #[serde(default)]
    pub fax: Option<String>,
    /// Email address.
    pub email: String,
    /// Home address.
    pub address: Address,
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("name", &self.name)
            .field("title", &self.title)
            .field("ssn", &"*********")
            .field("driver_license", &self.driver_license)
            .field("driver_license_state", &self.driver_license_state)
            .field("phone", &self.phone)
            .field("fax", &self.fax)
            .field("email", &self.email)
            .field("address", &self.address)
            .finish()
    }
}

/// One trade or bank reference (`references[i]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// Name of the referring business.
    pub name: String,
    /// Contact person there.
    pub contact_name: String,
    /// US phone number.
    pub phone: String,
    /// Postal state code.
    pub state: String,
    /// Account number held with the reference.
    #[serde(default)]
    pub account_number: Option<String>,
}

/// A JSON number or string, as its text.
fn number_or_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<(String, bool), D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Number(n) => Ok((n.to_string(), true)),
        serde_json::Value::String(s) => Ok((s, false)),
        _ => Err(serde::de::Error::custom("expected a number or a string")),
    }
}

/// An optional MCC: a JSON number or four-digit string in; a number out.
mod mcc_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::categories;

    pub(super) fn serialize<S: Serializer>(code: &Option<u16>, s: S) -> Result<S::Ok, S::Error> {
        code.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u16>, D::Error> {
        let Some(value) = Option::<serde_json::Value>::deserialize(d)? else {
            return Ok(None);
        };
        let (text, is_number) = super::number_or_string(value).map_err(serde::de::Error::custom)?;
        categories::parse(&text, is_number)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("'{text}' is not a merchant category code")))
    }
}

/// Nine-digit identifiers (SSN, EIN): a JSON number or a string with the usual
/// dashes in; nine digits out.
mod nine_digit_serde {
    use serde::{Deserializer, Serializer};

    use crate::validation::formats::nine_digit_text;

    pub(super) fn serialize<S: Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(text)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        let (text, _) = super::number_or_string(d)?;
        nine_digit_text(&text).ok_or_else(|| serde::de::Error::custom("expected nine digits"))
    }
}
