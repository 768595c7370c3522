//! Screening's counter rows and the risk report's day rows, kept in memory
//! for the write transaction that reads or changes them and written back
//! once, by [`WriteContext::finish`]: a batch of a merchant's creates moves
//! its per-merchant rows (daily amounts, exposure, a payee name, the day's
//! report) a thousand times but stores each once.
//!
//! Every read and write of these rows inside a write transaction goes
//! through here, so none sees a stale copy; snapshots read them after the
//! commit, which follows the write-back.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::engine::request::fast_map::FastMap;
use crate::engine::WriteContext;
use crate::storage::{StorageError, Table, Write};

/// A row as this transaction has it: its stored bytes (`None`: absent) and
/// whether the transaction changed it.
type Row = (Option<Vec<u8>>, bool);

/// Rows read or changed in this transaction, by table and key, encoded as
/// their table stores them.
#[derive(Default)]
pub(crate) struct CounterRows(FastMap<(Table, Vec<u8>), Row>);

impl CounterRows {
    /// Store every changed row.
    pub(crate) fn write_back(&mut self, write: &mut Write<'_>) -> Result<(), StorageError> {
        for ((table, key), (bytes, dirty)) in self.0.drain() {
            if let (Some(bytes), true) = (bytes, dirty) {
                write.put_raw(table, &key, &bytes)?;
            }
        }
        Ok(())
    }
}

impl WriteContext<'_, '_> {
    /// The row `key` of `table` as this transaction has it (its default when absent).
    pub(crate) fn counter_row<T: DeserializeOwned + Default>(
        &mut self,
        table: Table,
        key: &[u8],
    ) -> Result<T, StorageError> {
        let slot = match self.counter_rows.0.get(&(table, key.to_vec())) {
            Some((bytes, _)) => bytes.clone(),
            None => {
                let bytes = self.write.get_raw(table, key)?;
                self.counter_rows.0.insert((table, key.to_vec()), (bytes.clone(), false));
                bytes
            }
        };
        slot.map_or_else(|| Ok(T::default()), |b| crate::storage::decode(table, &b))
    }

    /// Change the row `key` of `table` (stored when the transaction finishes).
    pub(crate) fn set_counter_row<T: Serialize>(
        &mut self,
        table: Table,
        key: Vec<u8>,
        value: &T,
    ) -> Result<(), StorageError> {
        let bytes = crate::storage::encode(table, value)?;
        self.counter_rows.0.insert((table, key), (Some(bytes), true));
        Ok(())
    }
}
