//! The records the engine stores (serde_json values in the storage tables; the
//! transactions in postcard, see `storage::Table::binary`).
//! Account numbers and merchant applications are stored only sealed (AEAD).

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::lifecycle::State;
use crate::limits::Limits;
use crate::model::{AccountType, Direction, EntryClass, Purpose};
use crate::money::Money;

/// Declares a stored record and the borrowed views of its consecutive parts
/// from one field list: the record (`pub(crate) struct $record`) has every
/// field, in order; each part (`pub(crate) struct $part<'a>`) has its own, a
/// `String` borrowed as `&'a str`, an `Option<String>` as `Option<&'a str>`, a
/// [`SealedAccount`] as [`AccountPart`], any other type as it is. Postcard
/// writes a struct as its fields one after the other, so a record's bytes are
/// its parts' bytes, one part after the other.
macro_rules! record_with_parts {
    (
        $(#[$record_meta:meta])*
        struct $record:ident;
        $(
            $(#[$part_meta:meta])*
            struct $part:ident<'a> { $($fields:tt)* }
        )+
    ) => {
        $(#[$record_meta])*
        pub(crate) struct $record { $($($fields)*)+ }
        $(record_with_parts!(@part [$(#[$part_meta])* $part] [] $($fields)*);)+
    };
    (@part $part:tt [$($done:tt)*] $(#[$m:meta])* pub $field:ident: String, $($rest:tt)*) => {
        record_with_parts!(@part $part [$($done)* $(#[$m])* pub $field: &'a str,] $($rest)*);
    };
    (@part $part:tt [$($done:tt)*] $(#[$m:meta])* pub $field:ident: Option<String>, $($rest:tt)*) => {
        record_with_parts!(
            @part $part [$($done)* $(#[$m])* #[serde(borrow)] pub $field: Option<&'a str>,] $($rest)*
        );
    };
    (@part $part:tt [$($done:tt)*] $(#[$m:meta])* pub $field:ident: SealedAccount, $($rest:tt)*) => {
        record_with_parts!(
            @part $part [$($done)* $(#[$m])* #[serde(borrow)] pub $field: AccountPart<'a>,] $($rest)*
        );
    };
    (@part $part:tt [$($done:tt)*] $(#[$m:meta])* pub $field:ident: $type:ty, $($rest:tt)*) => {
        record_with_parts!(@part $part [$($done)* $(#[$m])* pub $field: $type,] $($rest)*);
    };
    (@part [$(#[$m:meta])* $part:ident] [$($done:tt)*]) => {
        $(#[$m])*
        pub(crate) struct $part<'a> { $($done)* }
    };
}

/// The holder id the operator's keys are indexed under (no partner or merchant
/// id can be this text).
pub(crate) const OPERATOR_HOLDER: &str = "operator";

/// A partner: the tenant every merchant, customer and transaction belongs to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PartnerRecord {
    pub id: String,
    /// The partner's name, sealed for it ([`crate::engine::tenancy::sealed_text`]).
    pub name_sealed: String,
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
    /// Who validates the accounts of its WEB debits.
    #[serde(default)]
    pub web_debit_validation: WebDebitValidation,
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

record_with_parts! {
    /// A receiver's bank account, with the holder's name and the account
    /// number sealed.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    struct SealedAccount;

    /// A record's [`SealedAccount`], borrowed.
    #[derive(Debug, Serialize, Deserialize)]
    struct AccountPart<'a> {
        /// Keyed fingerprint (hex) of the holder's name, case and spaces
        /// ignored: what a rule comparing names compares.
        pub name_print: String,
        pub routing_number: String,
        /// Base64 of the AEAD output (nonce ‖ ciphertext ‖ tag) of the account
        /// number, a line feed and the holder's name.
        pub account_sealed: String,
        /// The id the seal is bound to (associated data).
        pub sealed_for: String,
        pub account_last4: String,
        pub account_type: AccountType,
        /// Keyed fingerprint (hex) of routing + account number, for duplicate detection.
        #[serde(default)]
        pub fingerprint: String,
    }
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

record_with_parts! {
    /// A transaction.
    #[derive(Debug, Clone, Serialize, Deserialize)]
    struct TransactionRecord;

    /// The fields of a [`TransactionRecord`] before its state, borrowed.
    #[derive(Debug, Serialize, Deserialize)]
    struct Head<'a> {
        pub id: String,
        pub partner_id: String,
        pub merchant_id: String,
        #[serde(with = "crate::money::cents")]
        pub amount: Money,
        pub direction: Direction,
        pub class: EntryClass,
        /// The description, sealed for the record ([`crate::engine::tenancy::sealed_text`]).
        pub description_sealed: String,
        pub check_number: Option<String>,
        pub terminal_state: Option<String>,
        pub customer_id: Option<String>,
        pub account: SealedAccount,
        pub has_images: bool,
        /// What it pays for, when Nacha names it (its batch's description).
        pub purpose: Option<Purpose>,
        /// For a re-initiation: the returned entry it retries.
        pub reinitiation_of: Option<String>,
        /// For a prenote or a micro-entry: the account validation it makes.
        pub validation_of: Option<String>,
        /// For a WEB debit: what validated its account (a validation's id, or
        /// `merchant` when the merchant validates its accounts itself).
        pub validated_by: Option<String>,
    }

    /// The fields of a [`TransactionRecord`] from its state on, borrowed.
    #[derive(Debug, Serialize, Deserialize)]
    struct Tail<'a> {
        pub state: State,
        #[serde(with = "instant")]
        pub created_at: DateTime<Utc>,
        /// The cut-off this transaction waits for while Pending.
        #[serde(with = "instant")]
        pub cutoff_at: DateTime<Utc>,
        #[serde(with = "day")]
        pub origination_date: Option<NaiveDate>,
        #[serde(with = "day")]
        pub effective_date: Option<NaiveDate>,
        #[serde(with = "day")]
        pub settlement_date: Option<NaiveDate>,
        /// When it settles (08:30 ET on the settlement date), once originated.
        #[serde(with = "instant::option")]
        pub settles_at: Option<DateTime<Utc>>,
        #[serde(with = "day")]
        pub return_date: Option<NaiveDate>,
        pub return_code: Option<String>,
        pub return_reason: Option<String>,
        /// For a reversal: the transaction it reverses.
        pub reversal_of: Option<String>,
        /// For a reversed transaction: its reversal.
        pub reversed_by: Option<String>,
        /// For an entry returned and re-initiated: its re-initiation.
        pub reinitiated_by: Option<String>,
    }
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
        self.reinitiated_by = None;
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
pub(in crate::engine) mod instant {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    fn parts(t: &DateTime<Utc>) -> (i64, u32) {
        (t.timestamp(), t.timestamp_subsec_nanos())
    }

    fn join<E: serde::de::Error>((secs, nanos): (i64, u32)) -> Result<DateTime<Utc>, E> {
        DateTime::from_timestamp(secs, nanos).ok_or_else(|| E::custom("an instant out of range"))
    }

    pub(crate) fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        parts(t).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        join(<(i64, u32)>::deserialize(d)?)
    }

    /// The same for an optional instant of today's era (a settlement): in a
    /// stored record, none is written as [`BLANK`], the same size as an
    /// instant between 1974 and 2514, so that setting it (a cut-off) leaves
    /// the record's size, and its B-tree leaf, as they were. `None` as serde
    /// writes it (records stored before) still reads.
    pub(crate) mod option {
        use super::*;

        /// The stored stand-in for none: 1901-12-13T20:45:52Z, long before any
        /// transaction, whose seconds take five bytes as today's do.
        pub(crate) const BLANK: (i64, u32) = (-(1 << 31), 0);

        pub(crate) fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
            match t {
                None if !s.is_human_readable() => Some(BLANK).serialize(s),
                t => t.as_ref().map(parts).serialize(s),
            }
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<DateTime<Utc>>, D::Error> {
            <Option<(i64, u32)>>::deserialize(d)?.filter(|p| *p != BLANK).map(join).transpose()
        }
    }
}

/// An optional date stored as the text chrono's serde writes (`YYYY-MM-DD`,
/// the same bytes), written and read digit by digit: a cut-off writes and
/// reads four of them per transaction, and chrono's formatter and parser cost
/// more than the rest of the record. In a stored record none is written as
/// [`day::BLANK`] (ten spaces), the same size as a date, so that a cut-off
/// setting three dates leaves the record's size, and its B-tree leaf, as they
/// were (a record that grows splits its packed leaf). `None` as serde writes
/// it (records stored before) still reads.
pub(in crate::engine) mod day {
    use std::fmt;

    use chrono::NaiveDate;
    use serde::de::{Error, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// One date, through the fast text.
    struct Day(NaiveDate);

    impl Serialize for Day {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match crate::calendar::date_text(self.0) {
                Some(text) => s.serialize_str(std::str::from_utf8(&text).unwrap_or_default()),
                None => self.0.serialize(s),
            }
        }
    }

    /// `YYYY-MM-DD` exactly, or `None` (then chrono's parser decides).
    fn parse(text: &str) -> Option<NaiveDate> {
        let b = text.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let number = |digits: &[u8]| {
            digits.iter().try_fold(0u32, |n, &c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))
        };
        let year = i32::try_from(number(&b[0..4])?).ok()?;
        NaiveDate::from_ymd_opt(year, number(&b[5..7])?, number(&b[8..10])?)
    }

    /// The stored stand-in for no date.
    pub(in crate::engine) const BLANK: &str = "          ";

    pub(crate) fn serialize<S: Serializer>(d: &Option<NaiveDate>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            None if !s.is_human_readable() => Some(BLANK).serialize(s),
            d => d.map(Day).serialize(s),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<NaiveDate>, D::Error> {
        Ok(<Option<Slot>>::deserialize(d)?.and_then(|slot| slot.0))
    }

    /// A stored date or [`BLANK`].
    struct Slot(Option<NaiveDate>);

    impl<'de> Deserialize<'de> for Slot {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Slot, D::Error> {
            d.deserialize_str(SlotVisitor)
        }
    }

    struct SlotVisitor;

    impl Visitor<'_> for SlotVisitor {
        type Value = Slot;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a date YYYY-MM-DD or none")
        }

        fn visit_str<E: Error>(self, text: &str) -> Result<Slot, E> {
            if text == BLANK {
                return Ok(Slot(None));
            }
            let day = parse(text).or_else(|| text.parse().ok());
            day.map(|day| Slot(Some(day))).ok_or_else(|| E::custom("an unreadable date"))
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Datelike, Utc};
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Times {
        #[serde(with = "super::instant")]
        at: DateTime<Utc>,
        #[serde(with = "super::instant::option")]
        maybe: Option<DateTime<Utc>>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Chrono {
        date: Option<chrono::NaiveDate>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Fast {
        #[serde(with = "super::day")]
        date: Option<chrono::NaiveDate>,
    }

    #[test]
    fn dates_are_stored_as_the_same_bytes_chrono_writes_and_read_back() {
        let mut dates = vec![None, Some(chrono::NaiveDate::MIN), Some(chrono::NaiveDate::MAX)];
        let mut d = chrono::NaiveDate::from_ymd_opt(0, 1, 1).unwrap_or_default();
        while d.year() <= 10_000 {
            dates.push(Some(d));
            d = d + chrono::Days::new(if (2020..2040).contains(&d.year()) { 1 } else { 61 });
        }
        for date in dates {
            let theirs = postcard::to_allocvec(&Chrono { date }).unwrap_or_default();
            let ours = postcard::to_allocvec(&Fast { date }).unwrap_or_default();
            if date.is_some() {
                assert_eq!(ours, theirs, "{date:?}");
            } else {
                // None is stored as ten spaces, a date's size.
                assert_eq!(ours, postcard::to_allocvec(&(Some(super::day::BLANK),)).unwrap_or_default());
            }
            assert_eq!(postcard::from_bytes::<Fast>(&theirs).ok(), Some(Fast { date }));
            assert_eq!(postcard::from_bytes::<Fast>(&ours).ok(), Some(Fast { date }));
            let json = serde_json::to_string(&Chrono { date }).unwrap_or_default();
            assert_eq!(serde_json::from_str::<Fast>(&json).ok(), Some(Fast { date }));
        }
        // Any other text reads as chrono reads it (an error where it is not a
        // date), never a panic.
        for text in ["2026-13-01", "2026-02-30", "20x6-01-01", "", "2026-1-01", "+12345-01-01", "2026-01-01x"]
        {
            let bytes = postcard::to_allocvec(&(Some(text),)).unwrap_or_default();
            let theirs = postcard::from_bytes::<Chrono>(&bytes).ok().map(|c| c.date);
            assert_eq!(postcard::from_bytes::<Fast>(&bytes).ok().map(|f| f.date), theirs, "{text}");
        }
        assert!(postcard::from_bytes::<Fast>(
            &postcard::to_allocvec(&(Some("2026-02-30"),)).unwrap_or_default()
        )
        .is_err());
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
        assert_eq!(postcard::from_bytes::<Times>(&bad), Err(postcard::Error::SerdeDeCustom));
    }

    /// A record's settlement fields, as a cut-off sets them.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Settling {
        #[serde(with = "super::day")]
        date: Option<chrono::NaiveDate>,
        #[serde(with = "super::instant::option")]
        at: Option<DateTime<Utc>>,
    }

    #[test]
    fn setting_a_settlement_leaves_a_stored_record_the_same_size() {
        let none = Settling { date: None, at: None };
        let blank = postcard::to_allocvec(&none).unwrap_or_default();
        assert_eq!(postcard::from_bytes::<Settling>(&blank).ok().as_ref(), Some(&none));
        let mut d = chrono::NaiveDate::from_ymd_opt(1975, 1, 1).unwrap_or_default();
        while d.year() < 2500 {
            let at = d.and_hms_opt(13, 30, 0).map(|t| t.and_utc());
            let set = Settling { date: Some(d), at };
            let bytes = postcard::to_allocvec(&set).unwrap_or_default();
            assert_eq!(bytes.len(), blank.len(), "{d}");
            assert_eq!(postcard::from_bytes::<Settling>(&bytes).ok(), Some(set));
            d = d + chrono::Days::new(97);
        }
        // Records stored before (none as serde writes it) read the same.
        let before = postcard::to_allocvec(&(None::<&str>, None::<(i64, u32)>)).unwrap_or_default();
        assert!(before.len() < blank.len());
        assert_eq!(postcard::from_bytes::<Settling>(&before).ok(), Some(none));
        // JSON still says null.
        let json = serde_json::to_string(&Settling { date: None, at: None }).unwrap_or_default();
        assert_eq!(json, r#"{"date":null,"at":null}"#);
        assert_eq!(serde_json::from_str::<Settling>(&json).ok(), Some(Settling { date: None, at: None }));
    }
}

/// Who validates the account of a WEB debit before its first debit (Nacha
/// Rules 2.5.17.4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WebDebitValidation {
    /// The engine: a WEB debit to an account not validated for its partner
    /// is refused.
    #[default]
    Engine,
    /// The merchant, under its agreement with its bank: its WEB debits skip
    /// the engine's check, and each records that it did.
    Merchant,
}
