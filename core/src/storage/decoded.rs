//! Records decoded once for many transactions: a merchant or partner read by
//! every single create is decoded again only when its stored bytes change.
//!
//! An entry is the stored bytes a record was decoded from and the record;
//! it is used only for exactly those bytes, so it never needs to be told of
//! a change (another process's write included): a write gives new bytes,
//! and the next read decodes them. Comparing the bytes costs a fraction of
//! decoding them (a merchant's JSON with its limits and sealed application
//! was a sixth of a single create's instructions).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::de::DeserializeOwned;

use super::{decode, StorageError, Table};

/// Most records kept per table; past it the table's entries are dropped
/// and decoded again as they are read.
const MOST: usize = 1024;

/// A decoded record and the bytes it was decoded from.
struct Entry {
    bytes: Vec<u8>,
    record: Arc<dyn Any + Send + Sync>,
}

/// Decoded records of every table, by key.
pub(crate) struct DecodedRecords {
    tables: Mutex<[HashMap<Vec<u8>, Entry>; Table::ALL.len()]>,
}

impl Default for DecodedRecords {
    fn default() -> Self {
        DecodedRecords { tables: Mutex::new(std::array::from_fn(|_| HashMap::new())) }
    }
}

impl DecodedRecords {
    /// The record of `table` at `key` whose stored bytes are `bytes`:
    /// remembered if these bytes were decoded before as a `T`.
    pub(crate) fn decode<T: DeserializeOwned + Send + Sync + 'static>(
        &self,
        table: Table,
        key: &[u8],
        bytes: &[u8],
    ) -> Result<Arc<T>, StorageError> {
        {
            let tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(entry) = tables[table as usize].get(key).filter(|e| e.bytes == bytes) {
                if let Ok(record) = Arc::clone(&entry.record).downcast::<T>() {
                    return Ok(record);
                }
            }
        }
        let record = Arc::new(decode::<T>(table, bytes)?);
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        let entries = &mut tables[table as usize];
        if entries.len() >= MOST && !entries.contains_key(key) {
            entries.clear();
        }
        let shared = Arc::clone(&record) as Arc<dyn Any + Send + Sync>;
        entries.insert(key.to_vec(), Entry { bytes: bytes.to_vec(), record: shared });
        Ok(record)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_decoded_again_only_when_its_bytes_change() {
        let records = DecodedRecords::default();
        let first: Arc<Vec<u32>> = records.decode(Table::Usage, b"k", b"[1,2]").unwrap();
        let again: Arc<Vec<u32>> = records.decode(Table::Usage, b"k", b"[1,2]").unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the same bytes: the same decoded record");
        let changed: Arc<Vec<u32>> = records.decode(Table::Usage, b"k", b"[3]").unwrap();
        assert_eq!(*changed, vec![3]);
        let other: Arc<Vec<u32>> = records.decode(Table::Usage, b"j", b"[1,2]").unwrap();
        assert!(!Arc::ptr_eq(&first, &other), "another key decodes its own");
        // The same bytes asked as another type decode as that type.
        let text: Arc<Vec<u64>> = records.decode(Table::Usage, b"k", b"[3]").unwrap();
        assert_eq!(*text, vec![3u64]);
        assert_eq!(
            records.decode::<Vec<u32>>(Table::Usage, b"k", b"not json").map(drop),
            Err(StorageError("a usage record is unreadable: expected ident at line 1 column 2".into()))
        );
    }

    #[test]
    fn the_cache_stays_bounded() {
        let records = DecodedRecords::default();
        for n in 0..(MOST + 10) {
            let key = n.to_be_bytes();
            let _: Arc<u64> = records.decode(Table::Usage, &key, n.to_string().as_bytes()).unwrap();
        }
        let tables = records.tables.lock().unwrap();
        assert!(tables[Table::Usage as usize].len() <= MOST);
    }
}
