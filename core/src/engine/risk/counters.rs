//! The keys of screening's counter rows in `Table::RiskCounters`: each
//! begins with its merchant's id and a 0 (so a merchant's rows are one
//! range, and a PostgreSQL row's owner is read from its key), then a kind.

/// An account's history (`a` + its keyed fingerprint).
pub(super) const ACCOUNT: u8 = b'a';
/// A payee name's accounts (`n` + the name's keyed fingerprint).
pub(super) const NAME: u8 = b'n';
/// The daily amounts of one type (`v` + 0 credits, 1 debits).
pub(super) const AVERAGE: u8 = b'v';
/// The exposure (`x`).
pub(super) const EXPOSURE: u8 = b'x';

/// The key of a counter row: `merchant`, 0, `kind`, `rest`.
pub(super) fn counter_key(merchant_id: &str, kind: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(merchant_id.len() + 2 + rest.len());
    k.extend_from_slice(merchant_id.as_bytes());
    k.push(0);
    k.push(kind);
    k.extend_from_slice(rest);
    k
}
