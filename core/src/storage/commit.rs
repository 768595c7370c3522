//! The store's write transactions: run, then committed with their redo-log
//! record (held open after it is synced: `pending_commit.rs`), without one, or
//! deferred; checkpoints, and making deferred commits durable. The order's
//! argument: `docs/design.md`, "The redo log".

use std::cell::RefCell;

use super::durability::Commit;
use super::error::{fail, StorageError};
use super::health::StorageEvent;
use super::pending_commit::{self, bytes_of, commit_at};
use super::store::Store;
use super::table::Table;
use super::write::Write;
use super::{log, redb_kv, row_keys};

impl Store {
    /// Run `f` in one write transaction: committed durably when it returns `Ok`
    /// (unless it called [`Write::defer_sync`]: committed, durable with the next
    /// durable commit), rolled back entirely when it returns `Err`. With a
    /// redo log, durable means its log record is synced; the commit itself is
    /// redb's without a sync. A failure is told to the hook and followed by
    /// [`Store::recover`].
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&mut Write<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        self.write_as(log::Payload::default, f)
    }

    /// [`Store::write`] for a transaction that is never logged: a chunk of a
    /// catch-up, which nobody is answered about. A deferred one is redb's
    /// commit without a sync; a durable one is redb's durable commit (a
    /// checkpoint). Its operations are not encoded for a record it would not get.
    pub(crate) fn write_unrecorded<T>(
        &self,
        f: impl FnOnce(&mut Write<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        self.write_as(log::Payload::unrecorded, f)
    }

    fn write_as<T>(
        &self,
        payload: fn() -> log::Payload,
        f: impl FnOnce(&mut Write<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        crate::nonblocking::assert_may_block("a storage write");
        let f = |w: &mut Write<'_>| {
            let out = f(w)?;
            w.bump_credentials_epoch()?;
            Ok((out, w.credentials.get()))
        };
        #[cfg(feature = "postgres")]
        if let Some(pg) = &self.pg {
            let written = pg.write(f).map(|(out, _)| out);
            match &written {
                Ok(_) => self.health.committed(),
                Err(e) => {
                    self.health.write_failed();
                    self.health.tell(&StorageEvent::WriteFailed(e.0.clone()));
                }
            }
            return written;
        }
        if self.journal.as_ref().is_some_and(log::Journal::broken) {
            self.recover();
        }
        let attempt = || -> Result<(T, bool), StorageError> {
            // Writers take the pending commit's slot for their whole
            // transaction (and continue the one held, if any).
            let (mut slot, db) = self.slot_and_database()?;
            let db = db.as_ref().ok_or_else(|| StorageError("the database is closed".into()))?;
            let (open, kept) = match slot.take() {
                Some(held) => (held.tx, Some((held.payloads, held.last_seq))),
                None => (redb_kv::OpenTx::begin(db.begin_write().map_err(fail)?), None),
            };
            let journal = self.journal.as_ref();
            let run = |_: &redb::WriteTransaction, kv: &redb_kv::RedbWrite<'_>| {
                let mut w = Write::new(kv, journal.map(|_| payload()));
                w.records = Some(&self.decoded);
                w.write_cache = Some(RefCell::new(self.write_cache.begin()));
                // On `Err`, `open` (its tables, then the transaction) drops: nothing is written.
                let out = f(&mut w)?;
                let sync = w.sync.get();
                let logged = match (journal, w.log.take()) {
                    (Some(journal), Some(payload)) => {
                        let appender = journal.lock()?;
                        if !payload.is_empty() {
                            // The record's number, in the same commit as its
                            // effects: replay starts after it.
                            let seq = appender.next_seq().to_be_bytes();
                            w.kv.put(Table::Meta, row_keys::META_LOG_SEQUENCE, &seq)?;
                        }
                        Some((appender, payload))
                    }
                    _ => None,
                };
                Ok((out, sync, logged))
            };
            let (out, sync, logged) = match open.with_dependent(run) {
                Ok(done) => done,
                Err(e) => {
                    drop(open);
                    self.restore_pending(&mut slot, db, kept);
                    return Err(e);
                }
            };
            let held_count = kept.as_ref().map_or(0, |(p, _)| p.len());
            match logged {
                Some((appender, payload)) => {
                    let hold = appender.may_hold(held_count, kept.as_ref().map_or(0, |(p, _)| bytes_of(p)));
                    let seq = appender.next_seq();
                    match self.commit_logged(open, sync, hold, appender, &payload) {
                        Ok(Some(tx)) => {
                            let mut payloads = kept.map(|(p, _)| p).unwrap_or_default();
                            payloads.push(payload.as_bytes().to_vec());
                            self.keep_pending(
                                &mut slot,
                                pending_commit::PendingCommit { tx, payloads, last_seq: seq },
                            );
                        }
                        Ok(None) => self.may_be_pending.store(false, std::sync::atomic::Ordering::SeqCst),
                        Err(e) => {
                            self.lost_pending(held_count);
                            return Err(e);
                        }
                    }
                }
                None => {
                    let committed = self.commit(open.close(), sync);
                    self.may_be_pending.store(false, std::sync::atomic::Ordering::SeqCst);
                    if committed.is_err() {
                        self.lost_pending(held_count);
                    }
                    committed?;
                }
            }
            Ok(out)
        };
        let attempted = attempt();
        self.write_cache.ended(attempted.is_ok());
        match attempted {
            Ok((out, credentials)) => {
                if credentials {
                    // Before anyone is answered: a key changed here is
                    // looked up afresh by the next authentication.
                    self.credentials_moved.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                self.health.committed();
                Ok(out)
            }
            Err(e) => {
                self.health.write_failed();
                self.health.tell(&StorageEvent::WriteFailed(e.0.clone()));
                self.recover();
                Err(e)
            }
        }
    }

    /// Commit `tx` without a log: durable unless deferred.
    fn commit(&self, mut tx: redb::WriteTransaction, sync: Commit) -> Result<(), StorageError> {
        if sync == Commit::Deferred {
            tx.set_durability(redb::Durability::None).map_err(|e| StorageError(e.to_string()))?;
        }
        let n = self.durability.before_commit(sync);
        tx.commit().map_err(fail)?;
        if sync != Commit::Deferred {
            self.durability.durable(n);
        }
        Ok(())
    }

    /// Commit `tx` with its log record: the record is appended first (synced
    /// unless deferred), then redb commits without a sync, or durably when a
    /// checkpoint is due (the log then starts afresh). A record whose commit
    /// fails is cut off again. The order's argument: `docs/design.md`, "The
    /// redo log".
    /// `hold`: a durable record that is not a checkpoint leaves the
    /// transaction uncommitted, its tables open, and returned, to be held
    /// (`pending_commit.rs`).
    fn commit_logged(
        &self,
        open: redb_kv::OpenTx,
        sync: Commit,
        hold: bool,
        mut log: log::Appender<'_>,
        payload: &log::Payload,
    ) -> Result<Option<redb_kv::OpenTx>, StorageError> {
        let n = self.durability.before_commit(sync);
        let durable = sync != Commit::Deferred;
        let by_redb =
            log.unlogged() || (durable && (!payload.is_recorded() || log.checkpoints(payload.len())));
        if hold && durable && !payload.is_empty() && !by_redb && !log.checkpoint_due(payload.len()) {
            log.append(payload, true)?;
            // Durable now; redb's commit waits for the next read (`pending_commit.rs`).
            self.durability.durable(n);
            return Ok(Some(open));
        }
        let tx = open.close();
        if !durable && !payload.is_empty() {
            // A deferred commit (a step of a catch-up: nobody is answered about
            // it) is not logged: redb commits it without a sync, and it becomes
            // durable with the next checkpoint. A crash before that loses it
            // whole, and the catch-up does it again. Logging it would write
            // every chunk of a cut-off twice.
            commit_at(tx, redb::Durability::None)?;
            log.committed_unlogged();
            return Ok(None);
        }
        if payload.is_empty() && !log.unlogged() {
            // Nothing changed: nothing to log. Durable means every record
            // before it is synced.
            commit_at(tx, redb::Durability::None)?;
            if durable {
                log.sync()?;
                self.durability.durable(n);
            }
            return Ok(None);
        }
        // A commit without a record waits in redb: a record replayed later
        // over a database that lost it would build on state that is gone, so
        // until the next checkpoint every commit is redb's own, and a durable
        // one is the checkpoint. A large durable transaction (a batch of
        // hundreds), or one not encoded, is a checkpoint without a record too:
        // redb's durable commit of it costs less than writing it to the log as
        // well. The log holds nothing after it.
        let unlogged = log.unlogged();
        if unlogged || (durable && (!payload.is_recorded() || log.checkpoints(payload.len()))) {
            let level = if durable { redb::Durability::Immediate } else { redb::Durability::None };
            if let Err(e) = commit_at(tx, level) {
                log.in_doubt();
                return Err(e);
            }
            if durable {
                self.durability.durable(n);
                let _ = if unlogged { log.reset() } else { log.checkpointed_without_record() };
            }
            return Ok(None);
        }
        let checkpoint = log.checkpoint_due(payload.len());
        log.append(payload, durable && !checkpoint)?;
        let level = if checkpoint { redb::Durability::Immediate } else { redb::Durability::None };
        if let Err(e) = commit_at(tx, level) {
            log.undo_last(payload.len());
            return Err(e);
        }
        if durable || checkpoint {
            self.durability.durable(n);
        }
        if checkpoint {
            // The transaction is durable in redb whatever becomes of the log; a
            // log that cannot be emptied is in doubt, and the store is reopened
            // before the next write.
            let _ = log.reset();
        }
        Ok(None)
    }

    /// A durable redb commit of everything committed so far, after which the
    /// log starts afresh (at open and at close). Nothing without a log.
    pub(super) fn checkpoint(&self) -> Result<(), StorageError> {
        let Some(journal) = &self.journal else { return Ok(()) };
        let (mut slot, db) = self.slot_and_database()?;
        let db = db.as_ref().ok_or_else(|| StorageError("the database is closed".into()))?;
        let tx = match slot.take() {
            Some(held) => held.tx.close(),
            None => db.begin_write().map_err(fail)?,
        };
        let mut log = journal.lock()?;
        let n = self.durability.before_commit(Commit::Immediate);
        let committed = tx.commit();
        // After the commit, the slot still locked (`pending_commit.rs`).
        self.may_be_pending.store(false, std::sync::atomic::Ordering::SeqCst);
        if let Err(e) = committed {
            log.in_doubt();
            return Err(fail(e));
        }
        self.durability.durable(n);
        log.reset()
    }

    /// Make every commit so far durable: sync the log, or (without one) make
    /// one empty durable commit, which redb orders after everything it can see.
    pub(super) fn make_durable(&self) -> Result<(), StorageError> {
        let Some(journal) = &self.journal else { return self.write(|_| Ok(())) };
        let mut log = journal.lock()?;
        if log.unlogged() {
            // A commit without a record waits: only redb's durable commit
            // (a checkpoint) makes it durable.
            drop(log);
            return self.write(|_| Ok(()));
        }
        // Numbered under the log's lock: every commit numbered so far has
        // appended its record.
        let n = self.durability.latest();
        log.sync()?;
        self.durability.durable(n);
        Ok(())
    }
}
