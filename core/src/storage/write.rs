//! The write transaction handle: its records read and written, the records
//! it decoded (and those earlier transactions decoded: `decoded.rs`), what it
//! carries to the next one (`write_cache.rs`), its redo-log payload, and whether
//! it changed credentials. Its reads, shared with [`Snapshot`](super::Snapshot),
//! are in `reads.rs`.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::codec::{decode, encode};
use super::durability::{self, Commit};
use super::error::StorageError;
use super::kv::{KvRead, KvWrite};
use super::table::Table;
use super::{decoded, log, row_keys, write_cache};

/// A key [`Write::get_decoded`] found absent.
struct Absent;

/// Records decoded during a write transaction, by table, then key.
type Decoded = [HashMap<Vec<u8>, Arc<dyn Any + Send + Sync>>; Table::ALL.len()];

/// A write transaction, over any backend's [`KvWrite`].
///
/// Records read with [`Write::get_decoded`] are decoded once per transaction; a
/// write to their key forgets the decoded copy.
pub(crate) struct Write<'tx> {
    pub(super) kv: &'tx dyn KvWrite,
    /// A key or a suspension was written: the credentials epoch moves on.
    pub(super) credentials: std::cell::Cell<bool>,
    cache: RefCell<Decoded>,
    /// Records decoded by earlier transactions, by their bytes (`decoded.rs`).
    pub(super) records: Option<&'tx decoded::DecodedRecords>,
    /// What this and earlier transactions learned of some keys and ranges
    /// (`write_cache.rs`), kept up to date by every put and remove.
    pub(super) write_cache: Option<RefCell<std::sync::MutexGuard<'tx, write_cache::Known>>>,
    pub(super) sync: std::cell::Cell<Commit>,
    /// The transaction's operations, for its redo-log record (`None`: no log).
    pub(super) log: Option<log::Payload>,
}

impl<'tx> Write<'tx> {
    /// A write transaction over `kv`, recording its operations in `log`.
    pub(super) fn new(kv: &'tx dyn KvWrite, log: Option<log::Payload>) -> Write<'tx> {
        Write {
            kv,
            credentials: std::cell::Cell::new(false),
            cache: RefCell::new(std::array::from_fn(|_| Default::default())),
            records: None,
            write_cache: None,
            sync: durability::new_commit(),
            log,
        }
    }

    pub(super) fn kv(&self) -> &dyn KvRead {
        self.kv
    }

    /// The record at `key`, decoded once per transaction and shared: for records
    /// that many operations of a batch read (merchants, partners). On a store
    /// that keeps decoded records (`decoded.rs`), bytes decoded by an earlier
    /// transaction are not decoded again.
    pub(crate) fn get_decoded<T: DeserializeOwned + Send + Sync + 'static>(
        &self,
        table: Table,
        key: &[u8],
    ) -> Result<Option<Arc<T>>, StorageError> {
        if let Some(hit) = self.cache.borrow()[table as usize].get(key) {
            if hit.is::<Absent>() {
                return Ok(None);
            }
            if let Ok(record) = Arc::clone(hit).downcast::<T>() {
                return Ok(Some(record));
            }
        }
        let mut found = None;
        self.kv().get_with(table, key, &mut |bytes| {
            found = Some(match self.records {
                Some(records) => records.decode::<T>(table, key, bytes)?,
                None => Arc::new(decode::<T>(table, bytes)?),
            });
            Ok(())
        })?;
        let Some(record) = found else {
            // Absence is remembered too (a suspension, normally absent, is
            // asked once per batch).
            self.cache.borrow_mut()[table as usize].insert(key.to_vec(), Arc::new(Absent));
            return Ok(None);
        };
        let shared = Arc::clone(&record) as Arc<dyn Any + Send + Sync>;
        self.cache.borrow_mut()[table as usize].insert(key.to_vec(), shared);
        Ok(Some(record))
    }

    /// Whether this transaction changed a key, a suspension or a partner
    /// (its request rate) so far.
    pub(crate) fn changed_credentials(&self) -> bool {
        self.credentials.get()
    }

    /// Before a change of `table`: note a change of credentials.
    fn changing(&self, table: Table) {
        // A partner's record carries its request rate, which admissions remember.
        if matches!(table, Table::Keys | Table::Suspensions | Table::Partners) {
            self.credentials.set(true);
        }
    }

    /// Move the credentials epoch on if this transaction changed a key or a
    /// suspension (called once, as it ends).
    pub(super) fn bump_credentials_epoch(&mut self) -> Result<(), StorageError> {
        if !self.credentials.get() {
            return Ok(());
        }
        let epoch = self.get_raw(Table::Meta, row_keys::META_CREDENTIALS_EPOCH)?;
        let epoch = epoch.and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok()).map_or(0, u64::from_be_bytes);
        self.put_raw(Table::Meta, row_keys::META_CREDENTIALS_EPOCH, &(epoch.wrapping_add(1)).to_be_bytes())
    }

    /// Drop the decoded copy of `key` (no allocation: most tables cache nothing).
    fn forget(&self, table: Table, key: &[u8]) {
        let mut cache = self.cache.borrow_mut();
        let decoded = &mut cache[table as usize];
        if !decoded.is_empty() {
            decoded.remove(key);
        }
    }
}

impl Write<'_> {
    /// Store a record at `key` (replacing any).
    pub(crate) fn put<T: Serialize + ?Sized>(
        &mut self,
        table: Table,
        key: &[u8],
        value: &T,
    ) -> Result<(), StorageError> {
        let bytes = encode(table, value)?;
        self.put_raw(table, key, &bytes)
    }

    /// Store raw bytes at `key`.
    pub(crate) fn put_raw(&mut self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StorageError> {
        self.changing(table);
        self.forget(table, key);
        if let Some(known) = &self.write_cache {
            known.borrow_mut().put(table, key, value);
        }
        self.kv.put(table, key, value)?;
        if let Some(log) = &mut self.log {
            log.put(table, key, value);
        }
        Ok(())
    }

    /// Remove `key`; whether it was present (`true` where the backend cannot
    /// tell without a read: see [`KvWrite::remove`]).
    pub(crate) fn remove(&mut self, table: Table, key: &[u8]) -> Result<bool, StorageError> {
        self.changing(table);
        self.forget(table, key);
        if let Some(known) = &self.write_cache {
            known.borrow_mut().removed(table, key);
        }
        let present = self.kv.remove(table, key)?;
        if let (Some(log), true) = (&mut self.log, present) {
            log.remove(table, key);
        }
        Ok(present)
    }

    /// Remove every key in `[from, to)` in one pass over the tree (for a run
    /// of index entries just processed: far cheaper than one removal each).
    pub(crate) fn remove_range(&mut self, table: Table, from: &[u8], to: &[u8]) -> Result<(), StorageError> {
        self.changing(table);
        self.cache.borrow_mut()[table as usize].clear();
        if let Some(known) = &self.write_cache {
            known.borrow_mut().removed_range(table);
        }
        self.kv.remove_range(table, from, to)?;
        if let Some(log) = &mut self.log {
            log.remove_range(table, from, to);
        }
        Ok(())
    }
}
