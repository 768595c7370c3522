//! Key encodings: composite keys whose byte order is the order we scan in.

use chrono::{DateTime, Utc};

/// Meta key: the stored format version.
pub(crate) const META_FORMAT: &[u8] = b"format_version";
/// Meta key: the secret that MACs feed pointers.
pub(crate) const META_POINTER_SECRET: &[u8] = b"pointer_secret";
/// Meta key: a check value of the encryption key (an HMAC under it, never the key).
pub(crate) const META_KEY_CHECK: &[u8] = b"key_check";
/// Meta key: the sandbox clock's position, so a reopened sandbox never goes back.
pub(crate) const META_CLOCK: &[u8] = b"sandbox_clock";
/// Blob key: the loaded FedACH directory file.
pub(crate) const BLOB_DIRECTORY: &[u8] = b"fedach_directory";

/// An instant as 8 bytes that sort in time order (microseconds since the epoch,
/// sign bit flipped).
pub(crate) fn instant(t: DateTime<Utc>) -> [u8; 8] {
    ((t.timestamp_micros() as u64) ^ (1 << 63)).to_be_bytes()
}

/// The instant back from [`instant`] bytes.
pub(crate) fn decode_instant(bytes: &[u8]) -> Option<DateTime<Utc>> {
    let raw: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    DateTime::from_timestamp_micros((u64::from_be_bytes(raw) ^ (1 << 63)) as i64)
}

/// `(instant, id)`: an index entry ordered by time, then id.
pub(crate) fn at(t: DateTime<Utc>, id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(8 + id.len());
    k.extend_from_slice(&instant(t));
    k.extend_from_slice(id.as_bytes());
    k
}

/// The id part of an [`at`] key.
pub(crate) fn at_id(key: &[u8]) -> Option<&str> {
    std::str::from_utf8(key.get(8..)?).ok()
}

/// `(scope, seq)`: a feed entry; all of one scope's entries sort together, by seq.
pub(crate) fn seq(scope: &str, seq: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(scope.len() + 9);
    k.extend_from_slice(scope.as_bytes());
    k.push(0);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The sequence number of a [`seq`] key.
pub(crate) fn seq_of(key: &[u8]) -> Option<u64> {
    let tail: [u8; 8] = key.get(key.len().checked_sub(8)?..)?.try_into().ok()?;
    Some(u64::from_be_bytes(tail))
}

/// The key range `[from, to)` holding every entry of `scope` after `after`.
pub(crate) fn seq_range_after(scope: &str, after: u64) -> (Vec<u8>, Vec<u8>) {
    let from = seq(scope, after.saturating_add(1));
    let mut to = scope.as_bytes().to_vec();
    to.push(1);
    (from, to)
}

/// An image key: transaction id and side (`front`, `back`).
pub(crate) fn image(id: &str, side: &str) -> Vec<u8> {
    format!("{id}/{side}").into_bytes()
}

/// A usage counter of `scope` (a merchant or partner id) for one Eastern day.
pub(crate) fn usage_day(scope: &str, day: chrono::NaiveDate) -> Vec<u8> {
    use chrono::Datelike;
    let mut k = Vec::with_capacity(scope.len() + 6);
    k.extend_from_slice(scope.as_bytes());
    k.extend_from_slice(&[0, b'd']);
    k.extend_from_slice(&((day.num_days_from_ce() as u32) ^ (1 << 31)).to_be_bytes());
    k
}

/// A usage counter of `scope` for one Eastern calendar month.
pub(crate) fn usage_month(scope: &str, year: i32, month: u32) -> Vec<u8> {
    let mut k = Vec::with_capacity(scope.len() + 7);
    k.extend_from_slice(scope.as_bytes());
    k.extend_from_slice(&[0, b'm']);
    k.extend_from_slice(&((year as u32) ^ (1 << 31)).to_be_bytes());
    k.push(month as u8);
    k
}

/// Bytes of a duplicate-window fingerprint kept in a [`similar`] key (96 bits: a
/// false match among the entries a lookup can meet needs a 2^-96 collision).
pub(crate) const SIMILAR_PRINT: usize = 12;

/// Length of a [`similar`] key: the day bucket and the fingerprint.
pub(crate) const SIMILAR_KEY: usize = 4 + SIMILAR_PRINT;

/// The UTC day (days since 1970-01-01) an instant falls in: the bucket of the
/// duplicate index.
pub(crate) fn day_bucket(t: DateTime<Utc>) -> i64 {
    t.timestamp().div_euclid(86_400)
}

/// The 4 bytes of a day bucket, in time order (sign bit flipped). Buckets of the
/// engine's calendar (years 0000–9999) fit in an `i32`.
pub(crate) fn bucket_bytes(day: i64) -> [u8; 4] {
    ((day as i32 as u32) ^ (1 << 31)).to_be_bytes()
}

/// The day bucket of [`bucket_bytes`] (or of a key that begins with them).
#[cfg(any(test, feature = "simulation"))]
pub(crate) fn decode_bucket(bytes: &[u8]) -> Option<i64> {
    let raw: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    Some(i64::from((u32::from_be_bytes(raw) ^ (1 << 31)) as i32))
}

/// `(day bucket, fingerprint)`: a duplicate-index entry. The bucket first, so that
/// one day's entries share pages and the expired days sort before the live ones.
pub(crate) fn similar(day: i64, print: &[u8; 32]) -> [u8; SIMILAR_KEY] {
    let mut k = [0u8; SIMILAR_KEY];
    k[..4].copy_from_slice(&bucket_bytes(day));
    k[4..].copy_from_slice(&print[..SIMILAR_PRINT]);
    k
}

/// An idempotency key of a partner.
pub(crate) fn idempotency(partner_id: &str, key: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(partner_id.len() + key.len() + 1);
    k.extend_from_slice(partner_id.as_bytes());
    k.push(0);
    k.extend_from_slice(key.as_bytes());
    k
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn instants_sort_in_time_order_and_round_trip() {
        let a = DateTime::from_timestamp(-5, 0).unwrap();
        let b = DateTime::from_timestamp(0, 0).unwrap();
        let c = DateTime::from_timestamp(1_800_000_000, 123_000).unwrap();
        assert!(instant(a) < instant(b) && instant(b) < instant(c));
        assert_eq!(decode_instant(&instant(c)), Some(c));
        assert_eq!(at_id(&at(c, "txn_x")), Some("txn_x"));
        let (d1, d2) = (day_bucket(a), day_bucket(c));
        assert_eq!(d1, -1, "a second before the epoch is the day before it");
        assert!(similar(d1, &[0xff; 32]) < similar(d2, &[0; 32]), "buckets sort before prints");
        assert_eq!(decode_bucket(&similar(d1, &[7; 32])), Some(d1));
        assert_eq!(decode_bucket(&bucket_bytes(d2)), Some(d2));
    }

    #[test]
    fn sequences_sort_within_a_scope_only() {
        assert!(seq("par_a", 2) < seq("par_a", 10));
        assert!(seq("par_a", u64::MAX) < seq("par_b", 0));
        assert_eq!(seq_of(&seq("par_a", 77)), Some(77));
        let (from, to) = seq_range_after("par_a", 5);
        assert!(from.as_slice() > seq("par_a", 5).as_slice() && from == seq("par_a", 6));
        assert!(seq("par_a", u64::MAX).as_slice() < to.as_slice());
        assert!(seq("par_ab", 0).as_slice() >= to.as_slice());
    }
}
