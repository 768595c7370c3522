//! Index rows of packed ids: the settlement index (one row per cut-off run,
//! settlement instant and [`id_list::PER_ROW`] transactions) and the pending index of
//! a request batch (one row per cut-off and [`id_list::PER_ROW`] creates, instead of one
//! per create: on PostgreSQL a row is a heap tuple, two index entries and
//! their WAL). A single create writes its own pending row, `(instant, id)`
//! with an empty value.
//!
//! A packed row's key is the instant, a zero byte and its first id
//! ([`row_keys::packed`]; ids start with `t`, so a single row's key never has
//! the zero byte there); its value is an [`id_list`]. A transaction that
//! leaves an index before its instant (voided before its cut-off, returned
//! before it settles) stays in its packed row (its single row, if it has
//! one, is removed); the run over the index skips what is no longer in the
//! state it indexes.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::engine::rows::id_list;
use crate::storage::{row_keys, StorageError, Table, Write};

/// Ids gathered into packed rows of `table`, by instant: the row being
/// filled (its key, its ids, how many), and rows already full.
pub(crate) struct PackedIndex {
    table: Table,
    open: BTreeMap<DateTime<Utc>, (Vec<u8>, Vec<u8>, u64)>,
    full: Vec<(Vec<u8>, Vec<u8>)>,
}

impl PackedIndex {
    /// Nothing gathered yet for `table`.
    pub(crate) fn new(table: Table) -> PackedIndex {
        PackedIndex { table, open: BTreeMap::new(), full: Vec::new() }
    }

    /// Index `id` at `at`. A row holds at most [`id_list::PER_ROW`] ids: a run over the
    /// index reads whole rows, and its chunks stay that short.
    pub(crate) fn add(&mut self, at: DateTime<Utc>, id: &str) -> Result<(), StorageError> {
        let row = self.open.entry(at).or_insert_with(|| {
            (row_keys::packed(at, id), id_list::with_capacity(id_list::PER_ROW as usize), 0)
        });
        id_list::push(&mut row.1, id)?;
        row.2 += 1;
        if row.2 >= id_list::PER_ROW {
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
            w.put_raw(self.table, &key, &list)?;
        }
        Ok(())
    }
}

/// The ids an index row holds: a packed row's list, or a single row's id
/// (from its key).
pub(crate) fn row_ids<'a>(key: &'a [u8], value: &'a [u8]) -> Result<Vec<&'a str>, StorageError> {
    if key.get(8) == Some(&0) {
        return id_list::ids(value);
    }
    row_keys::at_id(key).map(|id| vec![id]).ok_or_else(|| StorageError("an index key is unreadable".into()))
}
