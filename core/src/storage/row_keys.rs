//! Row keys: the byte keys of the tables' rows (meta names, composite keys whose
//! byte order is the order we scan in).

use chrono::{DateTime, Utc};

/// Meta key: the stored format version.
pub(crate) const META_FORMAT: &[u8] = b"format_version";
/// Meta key: the secret that MACs feed pointers.
pub(crate) const META_POINTER_SECRET: &[u8] = b"pointer_secret";
/// Meta key: a check value of the encryption key (an HMAC under it, never the key).
pub(crate) const META_KEY_CHECK: &[u8] = b"key_check";
/// Meta key: the data key that seals everything at rest, sealed by the
/// key-encryption key (the key the host gives). Absent in a database made
/// before envelope sealing: its data key is the given key itself.
pub(crate) const META_DATA_KEY: &[u8] = b"data_key";
/// Meta key: the key of the fingerprints and the key check, sealed like the
/// data key; stored once a re-seal replaced the data key it was.
pub(crate) const META_INDEX_KEY: &[u8] = b"index_key";
/// Meta key: data keys a re-seal replaced (JSON list of base64, each sealed
/// like the data key), kept so that what they sealed still opens.
pub(crate) const META_RETIRED_KEYS: &[u8] = b"retired_keys";
/// Meta key: how far a re-seal under a new data key has gone (absent when
/// none is under way).
pub(crate) const META_RESEAL_CURSOR: &[u8] = b"reseal_cursor";
/// Meta key: the sandbox clock's position, so a reopened sandbox never goes back.
pub(crate) const META_CLOCK: &[u8] = b"sandbox_clock";
/// Meta key: the originator (ODFI, immediate destination and origin).
pub(crate) const META_ORIGINATOR: &[u8] = b"originator";
/// Meta key: the last trace sequence number used (never restarts per file).
pub(crate) const META_TRACE_SEQUENCE: &[u8] = b"trace_sequence";
/// Meta key: the origination file being assembled (its writer's state).
pub(crate) const META_FILE_IN_PROGRESS: &[u8] = b"file_in_progress";
/// Meta key of a partner's newest transaction id (its ids' sequence numbers
/// continue from it).
pub(crate) fn last_transaction(partner_id: &str) -> Vec<u8> {
    format!("last_transaction/{partner_id}").into_bytes()
}
/// Meta key: written and removed again by a readiness check after a failed
/// write, to see that there is room to commit again (its value means nothing).
pub(crate) const META_WRITE_PROBE: &[u8] = b"write_probe";
/// Meta key: the sequence number of the last redo-log record this database
/// holds (8 bytes, big-endian), written by every logged write transaction.
pub(crate) const META_LOG_SEQUENCE: &[u8] = b"log_sequence";
/// Meta key: the redo log's salt (4 random bytes), where its records'
/// checksums start: another database's log never checks out.
pub(crate) const META_LOG_SALT: &[u8] = b"log_salt";
/// Bumped (8 bytes, big-endian) by every write transaction that changes a key
/// or a suspension: an engine over a shared store caches authentications
/// while it stands still (`engine/credentials/cache.rs`).
pub(crate) const META_CREDENTIALS_EPOCH: &[u8] = b"credentials_epoch";
/// Blob key: the loaded FedACH directory file.
pub(crate) const BLOB_DIRECTORY: &[u8] = b"fedach_directory";

/// Moved on by every directory load (big-endian u64): processes sharing a
/// store take the stored directory when it moved (`directory_epoch.rs`).
pub(crate) const META_DIRECTORY_EPOCH: &[u8] = b"directory_epoch";

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

/// A packed index row's key (`engine/rows/id_list.rs`): the instant, a zero byte
/// (a row of one transaction has its id there, which starts with `t`), and
/// the first id (unique: a transaction is indexed once per index).
pub(crate) fn packed(t: DateTime<Utc>, first_id: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(9 + first_id.len());
    k.extend_from_slice(&instant(t));
    k.push(0);
    k.extend_from_slice(first_id.as_bytes());
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
    let mut k = Vec::with_capacity(scope.len() + 6);
    usage_day_into(&mut k, scope, day_number(day));
    k
}

/// A day's number in [`usage_day`] keys (consecutive days, consecutive numbers).
pub(crate) fn day_number(day: chrono::NaiveDate) -> u32 {
    use chrono::Datelike;
    day.num_days_from_ce() as u32
}

/// Append [`usage_day`]'s key of the day numbered `day` ([`day_number`]).
pub(crate) fn usage_day_into(k: &mut Vec<u8>, scope: &str, day: u32) {
    k.extend_from_slice(scope.as_bytes());
    k.extend_from_slice(&[0, b'd']);
    k.extend_from_slice(&(day ^ (1 << 31)).to_be_bytes());
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

/// An idempotency key of a partner.
pub(crate) fn idempotency(partner_id: &str, key: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(partner_id.len() + key.len() + 1);
    k.extend_from_slice(partner_id.as_bytes());
    k.push(0);
    k.extend_from_slice(key.as_bytes());
    k
}

/// A [`super::Table::HolderKeys`] entry: the holder's id, a 0 byte, the key's hash.
pub(crate) fn holder_key(holder: &str, hash: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(holder.len() + 1 + hash.len());
    k.extend_from_slice(holder.as_bytes());
    k.push(0);
    k.extend_from_slice(hash);
    k
}

/// The key range `[from, to)` of every [`holder_key`] entry of `holder`.
pub(crate) fn holder_range(holder: &str) -> (Vec<u8>, Vec<u8>) {
    let mut from = holder.as_bytes().to_vec();
    let mut to = from.clone();
    from.push(0);
    to.push(1);
    (from, to)
}

/// The `Listings` rows of `owner` (a partner or merchant id) of one kind (`t`
/// transactions, `m` merchants): `owner ‖ 0 ‖ kind`, then the row's position.
pub(crate) fn listing(owner: &str, kind: u8, position: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(owner.len() + 2 + position.len());
    k.extend_from_slice(owner.as_bytes());
    k.push(0);
    k.push(kind);
    k.extend_from_slice(position);
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
