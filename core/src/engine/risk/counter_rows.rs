//! Screening's counter rows and the risk report's day rows, kept in memory
//! for the write transaction that reads or changes them and written back
//! once, by [`WriteContext::finish`]: a batch of a merchant's creates moves
//! its per-merchant rows (daily amounts, exposure, a payee name, the day's
//! report) a thousand times but decodes and stores each once.
//!
//! Every read and write of these rows inside a write transaction goes
//! through here, so none sees a stale copy; snapshots read them after the
//! commit, which follows the write-back.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::engine::request::fast_map::FastMap;
use crate::engine::WriteContext;
use crate::storage::{StorageError, Table, Write};

/// A row as this transaction has it: decoded, whether the transaction
/// changed it, and how to encode it for its table.
struct Row {
    value: Box<dyn Any + Send>,
    dirty: bool,
    encode: fn(&dyn Any, Table) -> Result<Vec<u8>, StorageError>,
}

/// Rows read or changed in this transaction, by table and key.
#[derive(Default)]
pub(crate) struct CounterRows(FastMap<(Table, Vec<u8>), Row>);

/// Encode a row held as `T`.
fn encode_as<T: Serialize + 'static>(value: &dyn Any, table: Table) -> Result<Vec<u8>, StorageError> {
    let value = value.downcast_ref::<T>().ok_or_else(|| mixed(table))?;
    crate::storage::encode(table, value)
}

/// One key read as two types: a mistake of the code, not of the data.
fn mixed(table: Table) -> StorageError {
    StorageError(format!("a {} row was read as two types in one transaction", table.name()))
}

impl CounterRows {
    /// Store every changed row.
    pub(crate) fn write_back(&mut self, write: &mut Write<'_>) -> Result<(), StorageError> {
        for ((table, key), row) in self.0.drain() {
            if row.dirty {
                write.put_raw(table, &key, &(row.encode)(row.value.as_ref(), table)?)?;
            }
        }
        Ok(())
    }
}

impl WriteContext<'_, '_> {
    /// The row `key` of `table` as this transaction has it (its default when
    /// absent), to change: it is stored when the transaction finishes.
    pub(crate) fn counter_row_mut<T>(&mut self, table: Table, key: &[u8]) -> Result<&mut T, StorageError>
    where
        T: Serialize + DeserializeOwned + Default + Send + 'static,
    {
        let row = self.counter_row_entry::<T>(table, key)?;
        row.dirty = true;
        row.value.downcast_mut::<T>().ok_or_else(|| mixed(table))
    }

    /// The row `key` of `table` as this transaction has it (its default when absent).
    pub(crate) fn counter_row<T>(&mut self, table: Table, key: &[u8]) -> Result<T, StorageError>
    where
        T: Serialize + DeserializeOwned + Default + Clone + Send + 'static,
    {
        let row = self.counter_row_entry::<T>(table, key)?;
        row.value.downcast_ref::<T>().cloned().ok_or_else(|| mixed(table))
    }

    /// The cached row, read from the store the first time.
    fn counter_row_entry<T>(&mut self, table: Table, key: &[u8]) -> Result<&mut Row, StorageError>
    where
        T: Serialize + DeserializeOwned + Default + Send + 'static,
    {
        let id = (table, key.to_vec());
        if !self.counter_rows.0.contains_key(&id) {
            let value: T = match self.write.get_raw(table, key)? {
                Some(bytes) => crate::storage::decode(table, &bytes)?,
                None => T::default(),
            };
            let row = Row { value: Box::new(value), dirty: false, encode: encode_as::<T> };
            self.counter_rows.0.insert(id.clone(), row);
        }
        self.counter_rows.0.get_mut(&id).ok_or_else(|| mixed(table))
    }
}
