//! Identifiers: `txn_`, `cus_`, `mer_` ids and secret keys.
//!
//! An id is its prefix followed by [`ID_BODY_LEN`] characters drawn uniformly from
//! `[0-9A-Za-z]` (62 symbols, so 22 characters carry 130 bits of randomness): URL-safe
//! without escaping and unguessable. Transaction ids are the exception: their first
//! 8 characters encode the creation time ([`generate_transaction`]), the other 14
//! are random (83 bits). Ids are checked by exact format: anything else
//! (other lengths, other characters, Unicode look-alikes) is not an id.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Characters after the prefix in every generated id.
pub const ID_BODY_LEN: usize = 22;

const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The kinds of id the service issues, with their prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// `txn_`: a transaction.
    Transaction,
    /// `cus_`: a stored customer (bank account token).
    Customer,
    /// `mer_`: a merchant.
    Merchant,
    /// `par_`: a partner.
    Partner,
    /// `val_`: an account validation.
    Validation,
    /// `whe_`: a webhook endpoint.
    WebhookEndpoint,
}

impl IdKind {
    /// The prefix, with its underscore.
    pub const fn prefix(self) -> &'static str {
        match self {
            IdKind::Transaction => "txn_",
            IdKind::Customer => "cus_",
            IdKind::Merchant => "mer_",
            IdKind::Partner => "par_",
            IdKind::Validation => "val_",
            IdKind::WebhookEndpoint => "whe_",
        }
    }
}

/// Fill `buf` with random bytes from the operating system (or the browser's crypto).
///
/// # Panics
/// Never in practice: the OS random source failing is unrecoverable for a payment
/// system and is reported as a panic the hosts turn into an error.
pub fn random_bytes(buf: &mut [u8]) {
    #[allow(clippy::expect_used)]
    getrandom::fill(buf).expect("the system random source is unavailable");
}

/// A random string of `len` characters from `[0-9A-Za-z]`, uniformly (rejection
/// sampling: bytes >= 248 are redrawn so no symbol is favoured).
pub fn random_alphanumeric(len: usize) -> String {
    let mut out = String::with_capacity(len);
    let mut buf = [0u8; 64];
    while out.len() < len {
        random_bytes(&mut buf);
        for &b in &buf {
            if b < 248 && out.len() < len {
                out.push(char::from(ALPHABET[usize::from(b % 62)]));
            }
        }
    }
    out
}

/// A new id of the given kind.
pub fn generate(kind: IdKind) -> String {
    let mut id = String::with_capacity(4 + ID_BODY_LEN);
    id.push_str(kind.prefix());
    id.push_str(&random_alphanumeric(ID_BODY_LEN));
    id
}

/// Characters of a transaction id that encode its creation time.
pub const TIME_PREFIX_LEN: usize = 8;

/// Characters after the time that order the transaction ids of one millisecond.
pub const SEQUENCE_LEN: usize = 3;

/// Sequence numbers per millisecond: 62³.
const SEQUENCES: u32 = 62 * 62 * 62;

/// Where a transaction id stands in creation order: its millisecond and its
/// sequence number within that millisecond (the id's first 8 + 3 characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TxnStamp {
    ms: u64,
    seq: u32,
}

impl TxnStamp {
    /// The stamp before every id's (the epoch's millisecond, sequence 0).
    pub const ZERO: TxnStamp = TxnStamp { ms: 0, seq: 0 };

    /// The last stamp of this stamp's millisecond: the next id after it takes a
    /// later millisecond with sequence 0, whatever count this one carried.
    pub const fn end_of_millisecond(self) -> TxnStamp {
        TxnStamp { ms: self.ms, seq: SEQUENCES - 1 }
    }

    /// The stamp of a transaction id (`None` if `id` is not one).
    pub fn of(id: &str) -> Option<TxnStamp> {
        if !is_valid(IdKind::Transaction, id) {
            return None;
        }
        let body = id.as_bytes().get(4..4 + TIME_PREFIX_LEN + SEQUENCE_LEN)?;
        let (time, seq) = body.split_at(TIME_PREFIX_LEN);
        Some(TxnStamp { ms: base62_value(time), seq: u32::try_from(base62_value(seq)).ok()? })
    }

    /// The first stamp after `prev` for an id created at `at`: `at`'s millisecond
    /// with sequence 0, or, if `prev` is not older (several ids in one
    /// millisecond, or a clock set back), `prev`'s next sequence number.
    pub fn next(prev: Option<TxnStamp>, at: chrono::DateTime<chrono::Utc>) -> TxnStamp {
        let ms = u64::try_from(at.timestamp_millis()).unwrap_or(0);
        match prev {
            Some(p) if p.ms >= ms && p.seq + 1 < SEQUENCES => TxnStamp { ms: p.ms, seq: p.seq + 1 },
            Some(p) if p.ms >= ms => TxnStamp { ms: p.ms + 1, seq: 0 },
            _ => TxnStamp { ms, seq: 0 },
        }
    }
}

/// The value of base-62 digits (most significant first).
fn base62_value(digits: &[u8]) -> u64 {
    digits.iter().fold(0u64, |acc, &d| {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'A'..=b'Z' => d - b'A' + 10,
            _ => d.wrapping_sub(b'a').wrapping_add(36),
        };
        acc.saturating_mul(62).saturating_add(u64::from(v))
    })
}

/// `value` as `out.len()` base-62 digits (most significant first).
fn base62_digits(mut value: u64, out: &mut [u8]) {
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(value % 62) as usize];
        value /= 62;
    }
}

/// A new transaction id with the stamp after `prev` ([`TxnStamp::next`]): `txn_`,
/// the milliseconds since the Unix epoch in [`TIME_PREFIX_LEN`] base-62 digits
/// (most significant first, so ids sort by creation time until the year 8888), a
/// sequence number in [`SEQUENCE_LEN`] digits, then 11 random characters (65
/// bits: still unguessable). Each id sorts after `prev`, so ids made one after
/// another land at the end of the transactions table's B-tree instead of on a
/// random page of it, and a create's storage cost does not grow with the history
/// (even under a stopped sandbox clock).
pub fn generate_transaction_after(
    prev: Option<TxnStamp>,
    at: chrono::DateTime<chrono::Utc>,
) -> (String, TxnStamp) {
    let stamp = TxnStamp::next(prev, at);
    let mut head = [b'0'; TIME_PREFIX_LEN + SEQUENCE_LEN];
    let (time, seq) = head.split_at_mut(TIME_PREFIX_LEN);
    base62_digits(stamp.ms, time);
    base62_digits(u64::from(stamp.seq), seq);
    let mut id = String::with_capacity(4 + ID_BODY_LEN);
    id.push_str(IdKind::Transaction.prefix());
    id.extend(head.iter().map(|&b| char::from(b)));
    id.push_str(&random_alphanumeric(ID_BODY_LEN - TIME_PREFIX_LEN - SEQUENCE_LEN));
    (id, stamp)
}

/// `txn_` and the time digits of `at`: every transaction id made at `at` or later
/// sorts at or after this text (an id's time is its creation time, or later).
pub fn transaction_floor(at: chrono::DateTime<chrono::Utc>) -> String {
    let mut time = [b'0'; TIME_PREFIX_LEN];
    base62_digits(u64::try_from(at.timestamp_millis()).unwrap_or(0), &mut time);
    let mut floor = String::with_capacity(4 + TIME_PREFIX_LEN);
    floor.push_str(IdKind::Transaction.prefix());
    floor.extend(time.iter().map(|&b| char::from(b)));
    floor
}

/// A new transaction id created at `at`, first in its millisecond
/// ([`generate_transaction_after`] with no previous id).
pub fn generate_transaction(at: chrono::DateTime<chrono::Utc>) -> String {
    generate_transaction_after(None, at).0
}

/// Whether `text` is exactly an id of this kind: prefix + 22 ASCII alphanumerics.
pub fn is_valid(kind: IdKind, text: &str) -> bool {
    let Some(body) = text.strip_prefix(kind.prefix()) else {
        return false;
    };
    body.len() == ID_BODY_LEN && body.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A validated merchant id (`mer_...`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MerchantId(pub String);

/// A validated customer token (`cus_...`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CustomerId(pub String);

/// A validated transaction id (`txn_...`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TransactionId(pub String);

macro_rules! id_impls {
    ($t:ident, $kind:expr) => {
        impl $t {
            /// A new random id.
            pub fn generate() -> Self {
                $t(generate($kind))
            }
            /// Parse an id, checking its exact format.
            pub fn parse(text: &str) -> Option<Self> {
                is_valid($kind, text).then(|| $t(text.to_owned()))
            }
            /// The id's text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_impls!(MerchantId, IdKind::Merchant);
id_impls!(CustomerId, IdKind::Customer);
id_impls!(TransactionId, IdKind::Transaction);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn transaction_ids_sort_by_creation_time_and_stay_random() {
        let t0 = chrono::DateTime::from_timestamp(1_795_446_000, 0).unwrap_or_default();
        let later = [
            t0,
            t0 + chrono::Duration::milliseconds(1),
            t0 + chrono::Duration::seconds(61),
            t0 + chrono::Duration::days(400),
        ];
        let ids: Vec<String> = later.iter().map(|&t| generate_transaction(t)).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
        for id in &ids {
            assert!(is_valid(IdKind::Transaction, id), "{id}");
        }
        // The same instant, no previous id: same time digits, different random tails.
        let (a, b) = (generate_transaction(t0), generate_transaction(t0));
        assert_eq!(a[..4 + TIME_PREFIX_LEN], b[..4 + TIME_PREFIX_LEN]);
        assert_eq!(a[..4 + TIME_PREFIX_LEN], transaction_floor(t0));
        assert_ne!(a, b);
        // Before the epoch (a misset clock) is still a valid id.
        assert!(is_valid(IdKind::Transaction, &generate_transaction(chrono::DateTime::UNIX_EPOCH)));
    }

    #[test]
    fn ids_made_one_after_another_sort_in_that_order_even_on_a_stopped_or_backward_clock() {
        let t0 = chrono::DateTime::from_timestamp(1_795_446_000, 0).unwrap_or_default();
        let mut prev = None;
        let mut ids = Vec::new();
        // A stopped clock, then a clock set back an hour, then forward again.
        let times = std::iter::repeat_n(t0, 300)
            .chain(std::iter::repeat_n(t0 - chrono::Duration::hours(1), 50))
            .chain([t0 + chrono::Duration::seconds(1)]);
        for at in times {
            let (id, stamp) = generate_transaction_after(prev, at);
            assert_eq!(TxnStamp::of(&id), Some(stamp), "{id}");
            assert!(prev < Some(stamp));
            prev = Some(stamp);
            ids.push(id);
        }
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
        // The time digits are the creation time's while the clock runs forward.
        assert_eq!(ids[0][..4 + TIME_PREFIX_LEN], generate_transaction(t0)[..4 + TIME_PREFIX_LEN]);
        assert_eq!(ids[350][..4 + TIME_PREFIX_LEN], generate_transaction(later(t0))[..4 + TIME_PREFIX_LEN]);
        // A millisecond's sequence numbers run out: the next id takes the next millisecond.
        let last = TxnStamp { ms: 7, seq: SEQUENCES - 1 };
        assert_eq!(TxnStamp::next(Some(last), chrono::DateTime::UNIX_EPOCH), TxnStamp { ms: 8, seq: 0 });
        // Ids made before sequence numbers existed (random characters there) still
        // give a stamp, and the next id sorts after them.
        let old = "txn_0Ab3xYz9QQQrandomtail1";
        let (next, _) = generate_transaction_after(TxnStamp::of(old), chrono::DateTime::UNIX_EPOCH);
        assert!(next.as_str() > old, "{next}");
        assert_eq!(TxnStamp::of("cus_0Ab3xYz9QQQrandomtail1"), None);
    }

    #[test]
    fn the_end_of_a_millisecond_carries_no_count() {
        let t0 = chrono::DateTime::from_timestamp(1_795_446_000, 0).unwrap_or_default();
        let ms = 1_795_446_000_000;
        for seq in [0, 517, SEQUENCES - 1] {
            let newest = TxnStamp { ms, seq };
            // The clock stands at the newest id's millisecond: the next one, sequence 0.
            assert_eq!(
                TxnStamp::next(Some(newest.end_of_millisecond()), t0),
                TxnStamp { ms: ms + 1, seq: 0 }
            );
            // The clock is ahead: its own millisecond, sequence 0.
            let later = t0 + chrono::Duration::seconds(1);
            assert_eq!(
                TxnStamp::next(Some(newest.end_of_millisecond()), later),
                TxnStamp { ms: ms + 1000, seq: 0 }
            );
        }
        assert_eq!(TxnStamp::next(Some(TxnStamp::ZERO), t0), TxnStamp { ms, seq: 0 });
    }

    fn later(t0: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
        t0 + chrono::Duration::seconds(1)
    }

    #[test]
    fn generated_ids_have_the_prefix_and_validate() {
        for kind in [IdKind::Transaction, IdKind::Customer, IdKind::Merchant, IdKind::Partner] {
            let id = generate(kind);
            assert!(id.starts_with(kind.prefix()));
            assert_eq!(id.len(), 4 + ID_BODY_LEN);
            assert!(is_valid(kind, &id));
        }
    }

    #[test]
    fn ids_are_distinct() {
        let ids: HashSet<String> = (0..10_000).map(|_| generate(IdKind::Transaction)).collect();
        assert_eq!(ids.len(), 10_000);
    }

    #[test]
    fn alphabet_is_used_roughly_uniformly() {
        let sample = random_alphanumeric(62_000);
        let mut counts = [0u32; 128];
        for b in sample.bytes() {
            counts[usize::from(b)] += 1;
        }
        for &c in ALPHABET {
            let n = counts[usize::from(c)];
            assert!((700..1300).contains(&n), "{} appeared {n} times", char::from(c));
        }
    }

    #[test]
    fn format_is_exact() {
        let good = "mer_0123456789abcdefghijKL";
        assert!(is_valid(IdKind::Merchant, good));
        assert!(!is_valid(IdKind::Customer, good));
        assert!(!is_valid(IdKind::Merchant, "mer_123"));
        assert!(!is_valid(IdKind::Merchant, "mer_0123456789abcdefghijK-"));
        assert!(!is_valid(IdKind::Merchant, "MER_0123456789abcdefghijKL"));
        // Cyrillic 'е' look-alike.
        assert!(!is_valid(IdKind::Merchant, "mer_0123456789abcdеfghijKL"));
        assert!(!is_valid(IdKind::Merchant, ""));
        assert_eq!(MerchantId::parse(good).map(|m| m.0), Some(good.to_owned()));
    }
}
