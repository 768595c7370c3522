//! The routing directory when several processes write one database
//! (PostgreSQL): a directory the operator loads through one process is
//! stored, and `meta/directory_epoch` moves on in the same transaction. Every
//! write transaction on a shared store reads the epoch (read ahead with the
//! rest: no round trip of its own) and, when another process moved it on,
//! takes the stored directory before its operations run; the operations are
//! then validated against it, as they would be in the process that loaded it.
//! A read that consults the directory ([`Engine::directory_now`]: a bank's
//! lookup) reads the epoch in one statement, and the stored directory only
//! when it moved. On redb (one process) the epoch is written but never
//! followed.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::engine::{Engine, WriteContext};
use crate::routing::RoutingDirectory;
use crate::storage::{row_keys, StorageError, Table, Write};

/// The stored epoch (0 before any load).
pub(crate) fn stored(w: &Write<'_>) -> Result<u64, StorageError> {
    Ok(epoch_of(w.get_raw(Table::Meta, row_keys::META_DIRECTORY_EPOCH)?))
}

fn epoch_of(bytes: Option<Vec<u8>>) -> u64 {
    bytes.and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok()).map_or(0, u64::from_be_bytes)
}

impl Engine {
    /// The routing directory in force now: on a shared store, the stored one
    /// when another process loaded one since this engine took its own (kept
    /// for the next write transaction to take, not here: a read does not
    /// move the engine's state).
    pub fn directory_now(&self) -> Result<Arc<RoutingDirectory>, StorageError> {
        if !self.store.multiprocess() {
            return Ok(self.directory());
        }
        let epoch = epoch_of(self.store.get_now(Table::Meta, row_keys::META_DIRECTORY_EPOCH)?);
        if epoch == self.directory_epoch.load(Ordering::SeqCst) {
            return Ok(self.directory());
        }
        let text = self.store.read_durable(|r| r.get_raw(Table::Blobs, row_keys::BLOB_DIRECTORY))?;
        crate::engine::stored_directory(text).map(Arc::new).map_err(|e| StorageError(e.to_string()))
    }
}

/// A directory was loaded in this transaction: move the epoch on (the
/// engine takes the new one once the transaction commits).
pub(crate) fn loaded(cx: &mut WriteContext<'_, '_>) -> Result<(), StorageError> {
    let epoch = stored(cx.write)?.wrapping_add(1);
    cx.write.put_raw(Table::Meta, row_keys::META_DIRECTORY_EPOCH, &epoch.to_be_bytes())?;
    cx.directory_epoch = Some(epoch);
    Ok(())
}

/// On a shared store, the stored directory if another process loaded one
/// since this engine took its own (its epoch noted in `cx`, taken by the
/// engine once the transaction commits).
pub(crate) fn follow(cx: &mut WriteContext<'_, '_>) -> Result<Option<Arc<RoutingDirectory>>, StorageError> {
    if !cx.engine.store.multiprocess() {
        return Ok(None);
    }
    let epoch = stored(cx.write)?;
    if epoch == cx.engine.directory_epoch.load(Ordering::SeqCst) {
        return Ok(None);
    }
    let text = cx.write.get_raw(Table::Blobs, row_keys::BLOB_DIRECTORY)?;
    let directory = crate::engine::stored_directory(text).map_err(|e| StorageError(e.to_string()))?;
    cx.directory_epoch = Some(epoch);
    Ok(Some(Arc::new(directory)))
}
