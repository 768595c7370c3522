//! The pending index of a batch of creates, packed: one row per cut-off
//! instant per write transaction instead of one per transaction (on
//! PostgreSQL a row is a heap tuple, two index entries and their WAL; a
//! create writes one row fewer). A single create still writes its own row,
//! `(instant, id)` with an empty value.
//!
//! A packed row's key is the instant, a zero byte and its first id (ids start
//! with `t`, so a single row's key never has the zero byte there); its value is
//! an [`id_list`]. A transaction voided before its cut-off stays in its packed
//! row (its single row, if it has one, is removed); the cut-off skips every
//! transaction no longer Pending, as it always did.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::id_list;
use crate::storage::{row_keys, StorageError, Table, Write};

/// A batch's pending entries, by cut-off instant: the row being filled (its
/// key, its ids, how many), and rows already full.
#[derive(Default)]
pub(crate) struct PendingRows {
    open: BTreeMap<DateTime<Utc>, (Vec<u8>, Vec<u8>, u64)>,
    full: Vec<(Vec<u8>, Vec<u8>)>,
}

impl PendingRows {
    /// Index `id` for its cut-off at `at`. A row holds at most
    /// [`super::schedule::CHUNK`] ids: a cut-off reads whole rows, and its
    /// chunks stay that short.
    pub(crate) fn add(&mut self, at: DateTime<Utc>, id: &str) -> Result<(), StorageError> {
        let row =
            self.open.entry(at).or_insert_with(|| (row_keys::packed(at, id), id_list::with_capacity(16), 0));
        id_list::push(&mut row.1, id)?;
        row.2 += 1;
        if row.2 >= super::schedule::CHUNK {
            if let Some((key, list, _)) = self.open.remove(&at) {
                self.full.push((key, list));
            }
        }
        Ok(())
    }

    /// Write every row gathered (and gather none any more).
    pub(crate) fn write(&mut self, w: &mut Write<'_>) -> Result<(), StorageError> {
        let open = std::mem::take(&mut self.open).into_values().map(|(key, list, _)| (key, list));
        for (key, list) in std::mem::take(&mut self.full).into_iter().chain(open) {
            w.put_raw(Table::Pending, &key, &list)?;
        }
        Ok(())
    }
}

/// The ids a pending index row holds: a packed row's list, or a single
/// row's id (from its key).
pub(crate) fn ids<'a>(key: &'a [u8], value: &'a [u8]) -> Result<Vec<&'a str>, StorageError> {
    if key.get(8) == Some(&0) {
        return id_list::ids(value);
    }
    row_keys::at_id(key).map(|id| vec![id]).ok_or_else(|| StorageError("an index key is unreadable".into()))
}
