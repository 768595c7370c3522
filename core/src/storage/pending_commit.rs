//! A pending commit: a write transaction whose records are synced, its
//! redb commit put off and continued by the next write transaction.
//!
//! With a redo log, a write transaction is durable once its record is synced;
//! redb's own commit only makes its effects visible to read transactions,
//! and costs more than the rest of a single create's storage work (the
//! table roots, page checksums and allocator state of every table it
//! touched). So after its record is synced, a transaction is not committed:
//! it is held, and the next write transaction continues it. Up to
//! [`LogSettings::hold`] records share one redb commit (without a sync), made
//! by whichever comes first: the next read ([`Store::commit_pending`]: a read
//! sees every transaction answered before it began), a commit that is not a
//! plain logged one (a checkpoint, a deferred or unlogged commit), the limit,
//! the store's recovery or its close.
//!
//! A write transaction that fails (`Err`: nothing of it may remain) cannot be
//! rolled back alone inside redb's transaction: the pending commit is
//! dropped with it, and the records it held, all synced, are applied again
//! from memory into a fresh one. A crash loses the pending commit like any
//! commit without a sync; recovery replays the records from the log.
//! The argument: `docs/design.md`, "The redo log".
//!
//! [`LogSettings::hold`]: super::LogSettings::hold

use std::sync::atomic::Ordering;
use std::sync::{MutexGuard, PoisonError, RwLockReadGuard};

use redb::Database;

use super::{fail, log, redb_kv, row_keys, StorageError, Store, Table, Write};

/// The pending commit's slot and the open database, both locked.
pub(super) type SlotAndDatabase<'a> =
    (MutexGuard<'a, Option<PendingCommit>>, RwLockReadGuard<'a, Option<Database>>);

/// A redb write transaction whose records are synced but which redb has not
/// committed yet.
pub(super) struct PendingCommit {
    /// The transaction, with the tables its writes opened still open.
    pub(super) tx: redb_kv::OpenTx,
    /// The payloads of its records, in order (to apply them again if a later
    /// transaction in it fails).
    pub(super) payloads: Vec<Vec<u8>>,
    /// The sequence number of its last record.
    pub(super) last_seq: u64,
}

impl Store {
    /// The pending commit's slot, locked: writers take it for their whole
    /// transaction, readers to commit what it holds.
    pub(super) fn pending_slot(&self) -> MutexGuard<'_, Option<PendingCommit>> {
        self.pending_commit.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pending commit's slot and the open database, locked in that
    /// order (as [`Store::recover`] locks them), the database reopened first
    /// if a failure left none.
    pub(super) fn slot_and_database(&self) -> Result<SlotAndDatabase<'_>, StorageError> {
        for _ in 0..2 {
            let slot = self.pending_slot();
            let db = self.db.read().unwrap_or_else(PoisonError::into_inner);
            if db.is_some() {
                return Ok((slot, db));
            }
            drop(db);
            drop(slot);
            self.recover();
        }
        Err(StorageError("the database is closed after a failure and could not be reopened".into()))
    }

    /// Commit the pending commit (without a sync: its records are), so
    /// that a read transaction begun after this sees it. Nothing to do, and
    /// no lock taken, when none is held.
    pub(super) fn commit_pending(&self) -> Result<(), StorageError> {
        if self.journal.as_ref().is_some_and(log::Journal::broken) {
            // PendingCommit records a failed commit took out of redb's memory are
            // replayed from the log before anyone reads.
            self.recover();
        }
        if !self.may_be_pending.load(Ordering::SeqCst) {
            return Ok(());
        }
        let mut slot = self.pending_slot();
        self.commit_pending_in(&mut slot)
    }

    /// [`Store::commit_pending`] with the slot locked.
    pub(super) fn commit_pending_in(&self, slot: &mut Option<PendingCommit>) -> Result<(), StorageError> {
        let Some(held) = slot.take() else { return Ok(()) };
        let count = held.payloads.len();
        let committed = commit_at(held.tx.close(), redb::Durability::None);
        // Only now, the slot still locked: a reader that finds the flag
        // down begins its read after this commit.
        self.may_be_pending.store(false, Ordering::SeqCst);
        if committed.is_err() {
            // Its records are synced: reopening the store replays them.
            self.lost_pending(count);
        }
        committed
    }

    /// A write transaction that continued the held one failed (`kept`: the
    /// records that one held): hold them again in a fresh transaction. If
    /// that fails too, the log is in doubt and the store's reopening
    /// replays them.
    pub(super) fn restore_pending(
        &self,
        slot: &mut Option<PendingCommit>,
        db: &Database,
        kept: Option<(Vec<Vec<u8>>, u64)>,
    ) {
        let Some((payloads, last_seq)) = kept else {
            return;
        };
        let count = payloads.len();
        match rebuild(db, payloads, last_seq) {
            Ok(held) => self.keep_pending(slot, held),
            Err(_) => self.lost_pending(count),
        }
    }

    /// A commit failed with `count` held records in its transaction: redb
    /// no longer has them in memory, the log has them synced. The log is
    /// marked in doubt, so that the store is reopened and they are replayed
    /// before the next write or read.
    pub(super) fn lost_pending(&self, count: usize) {
        self.may_be_pending.store(false, Ordering::SeqCst);
        if count == 0 {
            return;
        }
        if let Some(journal) = &self.journal {
            if let Ok(mut log) = journal.lock() {
                log.in_doubt();
            }
        }
    }

    /// Park `held` in the slot for the next transaction.
    pub(super) fn keep_pending(&self, slot: &mut Option<PendingCommit>, held: PendingCommit) {
        *slot = Some(held);
        self.may_be_pending.store(true, Ordering::SeqCst);
    }
}

/// A fresh write transaction holding again what `payloads` (records up to
/// `last_seq`, all synced) did: after a later transaction in the held one
/// failed and took it down with it.
pub(super) fn rebuild(
    db: &Database,
    payloads: Vec<Vec<u8>>,
    last_seq: u64,
) -> Result<PendingCommit, StorageError> {
    let tx = redb_kv::OpenTx::begin(db.begin_write().map_err(fail)?);
    tx.with_dependent(|_, kv| -> Result<(), StorageError> {
        let mut w = Write::new(kv, None);
        for payload in &payloads {
            log::apply_payload(&mut w, payload)?;
        }
        w.put_raw(Table::Meta, row_keys::META_LOG_SEQUENCE, &last_seq.to_be_bytes())
    })?;
    Ok(PendingCommit { tx, payloads, last_seq })
}

/// The bytes of held payloads.
pub(super) fn bytes_of(payloads: &[Vec<u8>]) -> usize {
    payloads.iter().map(Vec::len).sum()
}

/// Commit `tx` at durability `level`.
pub(super) fn commit_at(mut tx: redb::WriteTransaction, level: redb::Durability) -> Result<(), StorageError> {
    tx.set_durability(level).map_err(|e| StorageError(e.to_string()))?;
    tx.commit().map_err(fail)
}
