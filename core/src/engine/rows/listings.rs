//! What lists walk, newest first (`Table::Listings`): every transaction under
//! its partner and under its merchant, by id (ids sort by creation time, and
//! each partner's ids one after another), and every merchant under its
//! partner, by when it was submitted. A row is written with the record it
//! lists, in the same write transaction; its value is empty.
//!
//! A walk is a descending range read from just before a position, so a page
//! costs what it reads, whatever the history, and a transaction created
//! during a walk sorts before the walk's start (a partner's ids only grow):
//! walking on never repeats or skips one that existed when it began.

use chrono::{DateTime, Utc};

use crate::engine::rows::records::{MerchantRecord, TransactionRecord};
use crate::engine::WriteContext;
use crate::storage::{row_keys, Snapshot, StorageError, Table};

/// The kind byte of transaction rows.
pub(crate) const TRANSACTIONS: u8 = b't';

/// The kind byte of merchant rows.
pub(crate) const MERCHANTS: u8 = b'm';

/// List a new transaction under its partner and its merchant.
pub(crate) fn add_transaction(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
) -> Result<(), StorageError> {
    for owner in [&t.partner_id, &t.merchant_id] {
        cx.write.put_raw(Table::Listings, &row_keys::listing(owner, TRANSACTIONS, t.id.as_bytes()), &[])?;
    }
    Ok(())
}

/// A merchant's position in its partner's list: when it was submitted, then its id.
pub(crate) fn merchant_position(submitted_at: DateTime<Utc>, id: &str) -> Vec<u8> {
    row_keys::at(submitted_at, id)
}

/// List a new merchant under its partner.
pub(crate) fn add_merchant(cx: &mut WriteContext<'_, '_>, m: &MerchantRecord) -> Result<(), StorageError> {
    let position = merchant_position(m.submitted_at, &m.id);
    cx.write.put_raw(Table::Listings, &row_keys::listing(&m.partner_id, MERCHANTS, &position), &[])
}

/// Call `visit` with the positions of `owner`'s rows of `kind` in
/// `[floor, before)` (absent: from the first; to the last), newest first,
/// until it answers `false`. `expected`: about how many the walk takes.
pub(crate) fn walk(
    r: &Snapshot,
    (owner, kind): (&str, u8),
    (floor, before): (Option<&[u8]>, Option<&[u8]>),
    expected: usize,
    visit: &mut dyn FnMut(&[u8]) -> Result<bool, StorageError>,
) -> Result<(), StorageError> {
    let from = row_keys::listing(owner, kind, floor.unwrap_or_default());
    let to = match before {
        Some(position) => row_keys::listing(owner, kind, position),
        None => row_keys::listing(owner, kind + 1, &[]),
    };
    let prefix = row_keys::listing(owner, kind, &[]).len();
    r.scan_down(Table::Listings, (&from, &to), expected, &mut |key, _| visit(&key[prefix..]))
}
