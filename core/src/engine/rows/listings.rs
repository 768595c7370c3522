//! What lists walk, newest first (`Table::Listings`): every transaction under
//! its partner and under its merchant, by id (ids sort by creation time, and
//! each partner's ids one after another), and every merchant under its
//! partner, by when it was submitted. Rows are written with the records they
//! list, in the same write transaction.
//!
//! A write transaction's new transactions of one owner are one run of
//! consecutive ids (a partner's ids only grow, and a later transaction's are
//! all greater), packed into rows of at most [`id_list::PER_ROW`] ids, each
//! keyed by its LAST id: a group commit of 64 creates writes two rows per
//! owner, not 128. Rows never overlap, so the ids before a position are in
//! the first row keyed at or after it, and in the rows keyed before it.
//!
//! A walk is a descending range read from just before a position, so a page
//! costs what it reads, whatever the history, and a transaction created
//! during a walk sorts before the walk's start: walking on never repeats or
//! skips one that existed when it began.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::engine::rows::id_list;
use crate::engine::rows::records::{MerchantRecord, TransactionRecord};
use crate::engine::WriteContext;
use crate::storage::{row_keys, Snapshot, StorageError, Table, Write};

/// The kind byte of transaction rows.
pub(crate) const TRANSACTIONS: u8 = b't';

/// The kind byte of merchant rows.
pub(crate) const MERCHANTS: u8 = b'm';

/// A write transaction's new transactions by owner (partner or merchant),
/// in id order, written as packed rows when it finishes.
#[derive(Default)]
pub(crate) struct NewListings(BTreeMap<String, Vec<String>>);

impl NewListings {
    /// Write every owner's run as rows of at most [`id_list::PER_ROW`] ids.
    pub(crate) fn write(&mut self, w: &mut Write<'_>) -> Result<(), StorageError> {
        for (owner, ids) in std::mem::take(&mut self.0) {
            for chunk in ids.chunks(id_list::PER_ROW as usize) {
                let Some(last) = chunk.last() else { continue };
                let mut list = id_list::with_capacity(chunk.len());
                for id in chunk {
                    id_list::push(&mut list, id)?;
                }
                w.put_raw(Table::Listings, &row_keys::listing(&owner, TRANSACTIONS, last.as_bytes()), &list)?;
            }
        }
        Ok(())
    }
}

/// List a new transaction under its partner and its merchant.
pub(crate) fn add_transaction(cx: &mut WriteContext<'_, '_>, t: &TransactionRecord) {
    for owner in [&t.partner_id, &t.merchant_id] {
        cx.listings.0.entry(owner.clone()).or_default().push(t.id.clone());
    }
}

/// A merchant's position in its partner's list: when it was submitted, then its id.
pub(crate) fn merchant_position(submitted_at: DateTime<Utc>, id: &str) -> Vec<u8> {
    row_keys::at(submitted_at, id)
}

/// List a new merchant under its partner (one row each: merchants are few).
pub(crate) fn add_merchant(cx: &mut WriteContext<'_, '_>, m: &MerchantRecord) -> Result<(), StorageError> {
    let position = merchant_position(m.submitted_at, &m.id);
    cx.write.put_raw(Table::Listings, &row_keys::listing(&m.partner_id, MERCHANTS, &position), &[])
}

/// The ids of `partner_id`'s merchants, oldest first (from its list).
pub(crate) fn merchants(w: &Write<'_>, partner_id: &str) -> Result<Vec<String>, StorageError> {
    let prefix = row_keys::listing(partner_id, MERCHANTS, &[]);
    let end = row_keys::listing(partner_id, MERCHANTS + 1, &[]);
    let mut out = Vec::new();
    w.scan(Table::Listings, &prefix, &end, &mut |k, _| {
        if let Some(id) = k.get(prefix.len()..).and_then(row_keys::at_id) {
            out.push(id.to_owned());
        }
        Ok(true)
    })?;
    Ok(out)
}

/// Call `visit` with the positions of `owner`'s entries of `kind` in
/// `[floor, before)` (absent: from the first; to the last), newest first,
/// until it answers `false`. `expected`: about how many the walk takes.
pub(crate) fn walk(
    r: &Snapshot,
    (owner, kind): (&str, u8),
    (floor, before): (Option<&[u8]>, Option<&[u8]>),
    expected: usize,
    visit: &mut dyn FnMut(&[u8]) -> Result<bool, StorageError>,
) -> Result<(), StorageError> {
    let prefix = row_keys::listing(owner, kind, &[]);
    let from = row_keys::listing(owner, kind, floor.unwrap_or_default());
    let end = row_keys::listing(owner, kind + 1, &[]);
    let in_range = |p: &[u8]| floor.is_none_or(|f| p >= f) && before.is_none_or(|b| p < b);
    // Visit a row's entries newest first; whether to go on.
    let mut row = |key: &[u8], value: &[u8]| -> Result<bool, StorageError> {
        if !id_list::is_packed(value) {
            let position = key.get(prefix.len()..).unwrap_or_default();
            return if in_range(position) { visit(position) } else { Ok(true) };
        }
        for id in id_list::ids(value)?.into_iter().rev() {
            if in_range(id.as_bytes()) && !visit(id.as_bytes())? {
                return Ok(false);
            }
        }
        Ok(true)
    };
    // The row holding the entries just before `before` is the first keyed at
    // or after it; every row keyed before it holds only earlier entries.
    let mut top = end.clone();
    if let Some(before) = before {
        let at = row_keys::listing(owner, kind, before);
        let mut go_on = true;
        let mut first = None;
        r.scan(Table::Listings, &at, &end, &mut |key, value| {
            first = Some(key.to_vec());
            go_on = row(key, value)?;
            Ok(false)
        })?;
        if !go_on {
            return Ok(());
        }
        top = first.unwrap_or(at);
    }
    r.scan_down(Table::Listings, (&from, &top), expected, &mut |key, value| row(key, value))
}
