//! The records the engine stores (serde_json values in the storage tables; the
//! transactions in postcard, see `storage::Table::binary`).
//! Account numbers and merchant applications are stored only sealed (AEAD).

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::lifecycle::State;
use crate::limits::Limits;
use crate::model::{AccountType, Direction, EntryClass};
use crate::money::Money;

/// The holder id the operator's keys are indexed under (no partner or merchant
/// id can be this text).
pub(crate) const OPERATOR_HOLDER: &str = "operator";

/// A partner: the tenant every merchant, customer and transaction belongs to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PartnerRecord {
    pub id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// Overall limits across the partner's merchants.
    #[serde(default)]
    pub limits: Limits,
}

/// Where a merchant is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MerchantStatus {
    /// Submitted, waiting for the operator's approval.
    Underwriting,
    /// Approved: may transact.
    Approved,
}

/// A merchant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MerchantRecord {
    pub id: String,
    pub partner_id: String,
    pub status: MerchantStatus,
    /// The whole application as JSON, sealed (it holds account numbers and SSNs).
    pub application_sealed: String,
    pub classes: Vec<EntryClass>,
    pub decline_duplicates: bool,
    pub limits: Limits,
    pub submitted_at: DateTime<Utc>,
    pub approved_at: Option<DateTime<Utc>>,
    /// The operator's company entry description for the merchant's batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_entry_description: Option<String>,
}

/// Who an API key authenticates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum KeyOwner {
    /// A partner's key: every operation of the partner.
    Partner { partner_id: String },
    /// A merchant's key: the merchant's events feed.
    Merchant { partner_id: String, merchant_id: String },
    /// An operator key issued by a rotation, or the host's configured operator
    /// key once a rotation retired it.
    Operator,
}

impl KeyOwner {
    /// The id its keys are indexed under (`Table::HolderKeys`).
    pub(crate) fn holder_id(&self) -> &str {
        match self {
            KeyOwner::Partner { partner_id } => partner_id,
            KeyOwner::Merchant { merchant_id, .. } => merchant_id,
            KeyOwner::Operator => OPERATOR_HOLDER,
        }
    }
}

/// A stored API key (`Table::Keys`, by the key's hash): its owner and, once a
/// rotation or a revocation retired it, until when it still works.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KeyRecord {
    #[serde(flatten)]
    pub owner: KeyOwner,
    /// Refused from this instant on (a rotation's grace window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// Refused whatever the clock says (revoked, or rotated with no grace).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub revoked: bool,
}

impl KeyRecord {
    /// A new key's record: valid until retired.
    pub(crate) fn live(owner: KeyOwner) -> KeyRecord {
        KeyRecord { owner, expires_at: None, revoked: false }
    }

    /// Whether the key still authenticates at `now`.
    pub(crate) fn valid_at(&self, now: DateTime<Utc>) -> bool {
        !self.revoked && self.expires_at.is_none_or(|t| now < t)
    }
}

/// A suspended partner or merchant (`Table::Suspensions`, by id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SuspensionRecord {
    /// When it was suspended.
    pub since: DateTime<Utc>,
}

/// A receiver's bank account, with the account number sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SealedAccount {
    pub name: String,
    pub routing_number: String,
    /// Base64 of the AEAD output (nonce ‖ ciphertext ‖ tag).
    pub account_sealed: String,
    /// The id the seal is bound to (associated data).
    pub sealed_for: String,
    pub account_last4: String,
    pub account_type: AccountType,
    /// Keyed fingerprint (hex) of routing + account number, for duplicate detection.
    #[serde(default)]
    pub fingerprint: String,
}

/// A stored customer (token). A deleted customer keeps a tombstone without the
/// account so that its token is refused clearly.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CustomerRecord {
    pub id: String,
    pub partner_id: String,
    /// `global` or a merchant id.
    pub scope: String,
    pub account: Option<SealedAccount>,
    pub created_at: DateTime<Utc>,
    pub deleted_at: Option<DateTime<Utc>>,
}

/// A transaction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TransactionRecord {
    pub id: String,
    pub partner_id: String,
    pub merchant_id: String,
    #[serde(with = "crate::money::cents")]
    pub amount: Money,
    pub direction: Direction,
    pub class: EntryClass,
    pub description: String,
    pub check_number: Option<String>,
    pub terminal_state: Option<String>,
    pub customer_id: Option<String>,
    pub account: SealedAccount,
    pub has_images: bool,
    pub state: State,
    #[serde(with = "instant")]
    pub created_at: DateTime<Utc>,
    /// The cut-off this transaction waits for while Pending.
    #[serde(with = "instant")]
    pub cutoff_at: DateTime<Utc>,
    pub origination_date: Option<NaiveDate>,
    pub effective_date: Option<NaiveDate>,
    pub settlement_date: Option<NaiveDate>,
    /// When it settles (08:30 ET on the settlement date), once originated.
    #[serde(with = "instant::option")]
    pub settles_at: Option<DateTime<Utc>>,
    pub return_date: Option<NaiveDate>,
    pub return_code: Option<String>,
    pub return_reason: Option<String>,
    /// For a reversal: the transaction it reverses.
    pub reversal_of: Option<String>,
    /// For a reversed transaction: its reversal.
    pub reversed_by: Option<String>,
}

impl TransactionRecord {
    /// Start this record's lifecycle afresh: Pending since `now`, waiting for the
    /// cut-off `cutoff_at`, with no dates, return or reversal yet.
    pub(crate) fn begin_pending(&mut self, now: DateTime<Utc>, cutoff_at: DateTime<Utc>) {
        self.state = State::Pending;
        self.created_at = now;
        self.cutoff_at = cutoff_at;
        self.origination_date = None;
        self.effective_date = None;
        self.settlement_date = None;
        self.settles_at = None;
        self.return_date = None;
        self.return_code = None;
        self.return_reason = None;
        self.reversed_by = None;
    }
}

/// A stored notification of change (the events table's extended record): the
/// account number sealed, bound to the transaction and the notice's trace.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct NoticeRecord {
    pub change_code: String,
    pub routing_number: Option<String>,
    pub account_sealed: Option<Vec<u8>>,
    pub account_type: Option<AccountType>,
    /// The corrected data as sent, sealed, for a change the engine does not read.
    pub text_sealed: Option<Vec<u8>>,
    pub customer_id: Option<String>,
    pub customer_updated: bool,
    /// What the seal is bound to.
    pub sealed_for: String,
}

/// An instant as its Unix seconds and nanoseconds, for the binary transaction
/// records: exact, and without formatting and parsing RFC 3339 text.
mod instant {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    fn parts(t: &DateTime<Utc>) -> (i64, u32) {
        (t.timestamp(), t.timestamp_subsec_nanos())
    }

    fn join<E: serde::de::Error>((secs, nanos): (i64, u32)) -> Result<DateTime<Utc>, E> {
        DateTime::from_timestamp(secs, nanos).ok_or_else(|| E::custom("an instant out of range"))
    }

    pub(super) fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        parts(t).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        join(<(i64, u32)>::deserialize(d)?)
    }

    /// The same for an optional instant.
    pub(super) mod option {
        use super::*;

        pub(crate) fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
            t.as_ref().map(parts).serialize(s)
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<DateTime<Utc>>, D::Error> {
            <Option<(i64, u32)>>::deserialize(d)?.map(join).transpose()
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Times {
        #[serde(with = "super::instant")]
        at: DateTime<Utc>,
        #[serde(with = "super::instant::option")]
        maybe: Option<DateTime<Utc>>,
    }

    #[test]
    fn instants_round_trip_exactly_in_binary_records() {
        let instants = [
            DateTime::from_timestamp(1_795_446_000, 123_456_789),
            DateTime::from_timestamp(-1, 999_999_999),
            DateTime::from_timestamp(0, 0),
            DateTime::from_timestamp(253_402_300_799, 1),
        ];
        for at in instants.into_iter().flatten() {
            for maybe in [None, Some(at)] {
                let t = Times { at, maybe };
                let bytes = postcard::to_allocvec(&t).unwrap_or_default();
                assert!(bytes.len() <= 2 * 15, "{} bytes", bytes.len());
                assert_eq!(postcard::from_bytes::<Times>(&bytes).ok(), Some(t));
            }
        }
        // Nanoseconds beyond a second are refused, not a panic.
        let bad = postcard::to_allocvec(&(1i64, 2_000_000_000u32, None::<(i64, u32)>)).unwrap_or_default();
        assert!(postcard::from_bytes::<Times>(&bad).is_err());
    }
}
