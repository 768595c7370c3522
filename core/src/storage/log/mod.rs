//! The redo log: each write transaction's effects as one checksummed record,
//! appended to a file beside the database and synced before anyone is
//! answered, while redb commits without a sync; a durable redb commit now and
//! then (a checkpoint) lets the log start afresh. Format, recovery and the
//! argument for the order of the steps: `docs/design.md`, "The redo log".

mod block;
#[cfg(target_os = "linux")]
mod direct;
mod file;
mod record;
mod replay;
#[cfg(test)]
mod tests;

use std::sync::{Mutex, MutexGuard, PoisonError};

use redb::Database;

#[cfg(feature = "simulation")]
pub(crate) use block::BLOCK;
pub use file::log_file_for;
pub(crate) use file::{FsLog, LogFile};
pub(crate) use record::Payload;
pub(crate) use replay::apply_payload;

use super::StorageError;

/// How the redo log grows and when a commit is a checkpoint (a durable redb
/// commit after which the log starts afresh).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSettings {
    /// A checkpoint after this many records.
    pub records: u64,
    /// Or once the log holds this many bytes.
    pub bytes: u64,
    /// The file grows by zeros written this many bytes ahead, so that most
    /// appends change no file size and their sync writes only data, not the
    /// file system's journal.
    pub grow_by: u64,
    /// A durable transaction of at least this many bytes of effects is
    /// committed durably by redb instead of logged (a checkpoint without a
    /// record): written once, not twice.
    pub checkpoint_above: u64,
    /// At most this many durable records share one redb commit (made
    /// without a sync when a read, a checkpoint or this limit comes:
    /// `storage/pending_commit.rs`), while their payloads together stay under
    /// `checkpoint_above`. 1: each record's transaction is committed at once.
    pub hold: u64,
}

impl Default for LogSettings {
    /// A checkpoint every 1,024 records or 64 MiB (its durable commit then
    /// costs a few percent of the records' syncs: BENCHMARKS.md; recovery
    /// reads at most about that much); the file grows 1 MiB at a time; a
    /// durable transaction of 512 KiB or more (about 400 creates) is not
    /// logged; up to 64 records share a redb commit.
    fn default() -> Self {
        LogSettings {
            records: 1_024,
            bytes: 64 << 20,
            grow_by: 1 << 20,
            checkpoint_above: 512 << 10,
            hold: 64,
        }
    }
}

/// The redo log of one database.
pub(crate) struct Journal {
    state: Mutex<State>,
    limits: LogSettings,
}

struct State {
    file: Box<dyn LogFile>,
    /// Where the next record goes: the end of the last whole record appended.
    /// `None` until the file has been read once (at open).
    end: Option<u64>,
    /// The file's length: zeros, or records from before the log last started
    /// afresh, past `end`.
    allocated: u64,
    /// Bytes a completed sync covered.
    synced: u64,
    /// The next record's sequence number.
    next_seq: u64,
    /// Where the records' checksums start (the database's, from `meta`).
    salt: u32,
    /// Records since the log started afresh.
    records: u64,
    /// A failure left the file or the database in doubt: the store must be
    /// reopened (database closed, opened, the log replayed) before the next write.
    broken: bool,
    /// redb holds, not yet durably, a commit that has no record (a deferred
    /// one, or a large one committed directly) made with `next_seq` as its
    /// sequence number: until the next checkpoint every commit is redb's own.
    unlogged: bool,
}

fn io(what: &str) -> impl Fn(std::io::Error) -> StorageError + '_ {
    move |e| StorageError(format!("the redo log: {what}: {e}"))
}

impl Journal {
    /// The log in `file`, to be read by [`Journal::recover`] before use.
    pub(crate) fn new(file: Box<dyn LogFile>, limits: LogSettings) -> Journal {
        let state = State {
            file,
            end: None,
            allocated: 0,
            synced: 0,
            next_seq: 1,
            salt: 0,
            records: 0,
            broken: true,
            unlogged: false,
        };
        Journal { state: Mutex::new(state), limits }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the store must be reopened before the next write.
    pub(crate) fn broken(&self) -> bool {
        self.state().broken
    }

    /// Bring `db` up to date with the log and start the log afresh: the records
    /// `db` does not hold yet are applied in one durable commit, then the next
    /// record goes to the start of the file again. Reads the whole file the
    /// first time; after a failure, only what this process appended whole. A
    /// torn tail is ignored; damage is an error that names it.
    pub(crate) fn recover(&self, db: &Database) -> Result<(), StorageError> {
        let mut s = self.state();
        let mut file_len = s.file.len().map_err(io("cannot read its length"))?;
        if let Some(end) = s.end.filter(|end| *end < file_len) {
            // After a failure: past `end` may lie a record whose commit
            // failed and whose cut failed too; it must never be replayed.
            s.file.set_len(end).and_then(|()| s.file.sync_data()).map_err(io("cannot cut it back"))?;
            file_len = end;
        }
        let len = s.end.unwrap_or(file_len);
        let len = usize::try_from(len).map_err(|_| StorageError("the redo log is too large".into()))?;
        let mut bytes = vec![0u8; len];
        s.file.read_at(0, &mut bytes).map_err(io("cannot read it"))?;
        let (last, salt) = replay::replay(db, &bytes)?;
        s.salt = salt;
        s.allocated = file_len;
        s.end = Some(0);
        s.synced = 0;
        s.next_seq = last + 1;
        s.records = 0;
        s.unlogged = false;
        s.shrink(&self.limits)?;
        s.broken = false;
        Ok(())
    }

    /// The log, for one write transaction: `Err` if it is in doubt.
    pub(crate) fn lock(&self) -> Result<Appender<'_>, StorageError> {
        let s = self.state();
        if s.broken || s.end.is_none() {
            return Err(StorageError("the redo log failed earlier; the database is being reopened".into()));
        }
        Ok(Appender { s, limits: self.limits })
    }
}

impl State {
    /// A file grown far past what a checkpoint interval needs (a very large
    /// transaction) is cut back once the log starts afresh.
    fn shrink(&mut self, limits: &LogSettings) -> Result<(), StorageError> {
        if self.allocated > limits.bytes.saturating_add(limits.grow_by) {
            self.file.set_len(0).and_then(|()| self.file.sync_data()).map_err(io("cannot cut it short"))?;
            self.allocated = 0;
        }
        Ok(())
    }
}

/// The log locked for one write transaction (appends come in commit order).
pub(crate) struct Appender<'a> {
    s: MutexGuard<'a, State>,
    limits: LogSettings,
}

impl Appender<'_> {
    /// The sequence number the next record gets.
    pub(crate) fn next_seq(&self) -> u64 {
        self.s.next_seq
    }

    /// Whether a durable transaction of `len` payload bytes should be
    /// committed by redb durably instead of logged.
    pub(crate) fn checkpoints(&self, len: usize) -> bool {
        len as u64 >= self.limits.checkpoint_above
    }

    /// The database committed the next sequence number durably without a
    /// record (a checkpoint): the log starts afresh after it.
    pub(crate) fn checkpointed_without_record(&mut self) -> Result<(), StorageError> {
        self.s.unlogged = true;
        self.reset()
    }

    /// Whether redb holds a commit without a record that is not durable yet
    /// (then a durable commit must be redb's own: a checkpoint).
    pub(crate) fn unlogged(&self) -> bool {
        self.s.unlogged
    }

    /// redb committed, without a sync, a transaction that has no record (it
    /// numbered it with the next sequence number, which a later record must
    /// not reuse once the commit is durable).
    pub(crate) fn committed_unlogged(&mut self) {
        self.s.unlogged = true;
    }

    /// Whether the record about to be appended may be held uncommitted in
    /// redb with `count` others of `bytes` payload bytes (`storage/pending_commit.rs`).
    pub(crate) fn may_hold(&self, count: usize, bytes: usize) -> bool {
        (count as u64) + 1 < self.limits.hold && (bytes as u64) < self.limits.checkpoint_above
    }

    /// Whether a record of `len` payload bytes should be a checkpoint.
    pub(crate) fn checkpoint_due(&self, len: usize) -> bool {
        let end = self.s.end.unwrap_or(0);
        self.s.records + 1 >= self.limits.records || end.saturating_add(len as u64) >= self.limits.bytes
    }

    /// Append the record of `payload` (the next sequence number), synced if
    /// `sync`. On failure the tail is cut back to where it was and the log is
    /// in doubt.
    pub(crate) fn append(&mut self, payload: &Payload, sync: bool) -> Result<(), StorageError> {
        let Some(end) = self.s.end else { return Err(StorageError("the redo log is not open".into())) };
        let bytes = record::encode(self.s.salt, self.s.next_seq, self.s.synced, payload.as_bytes())
            .map_err(StorageError)?;
        let new_end = end + bytes.len() as u64;
        // Grown first: a synced append may be one direct write of whole
        // blocks, which must not reach past the file's end.
        let written = self.grow(new_end).and_then(|()| match sync {
            true => self.s.file.write_synced(end, &bytes).map_err(io("cannot append and sync")),
            false => self.s.file.write_at(end, &bytes).map_err(io("cannot append")),
        });
        if let Err(e) = written {
            self.cut_back();
            return Err(e);
        }
        self.s.end = Some(new_end);
        if sync {
            self.s.synced = new_end;
        }
        self.s.next_seq += 1;
        self.s.records += 1;
        Ok(())
    }

    /// Before a record that will end at `len`, less than [`file::SPARE`]
    /// bytes short of the file's length: zeros written from `len` up to
    /// `grow_by` (at least `SPARE`) bytes further (the next sync makes the
    /// new length durable once; the syncs after it write data only).
    fn grow(&mut self, len: u64) -> Result<(), StorageError> {
        if len.saturating_add(file::SPARE) <= self.s.allocated {
            return Ok(());
        }
        let by = self.limits.grow_by.max(file::SPARE);
        let zeros =
            usize::try_from(by).map_err(|_| StorageError("the redo log's growth is too large".into()))?;
        self.s.file.write_at(len, &vec![0u8; zeros]).map_err(io("cannot grow"))?;
        self.s.allocated = len + by;
        Ok(())
    }

    /// The database did not commit the record just appended: cut it off (and
    /// sync the cut, so that a crash cannot bring it back). The log is in doubt
    /// either way: the database is reopened before the next write.
    pub(crate) fn undo_last(&mut self, len: usize) {
        if let Some(end) = self.s.end {
            let start = end.saturating_sub((record::HEADER + len) as u64);
            self.s.end = Some(start);
            self.s.synced = self.s.synced.min(start);
            self.s.next_seq -= 1;
            self.s.records = self.s.records.saturating_sub(1);
        }
        self.cut_back();
    }

    /// Cut the file back to the end of the last whole record, synced; the log
    /// is in doubt (after a failed write or sync, the file's cached pages are).
    fn cut_back(&mut self) {
        self.s.broken = true;
        if let Some(end) = self.s.end {
            if self.s.file.set_len(end).and_then(|()| self.s.file.sync_data()).is_ok() {
                self.s.allocated = end;
            }
        }
    }

    /// Mark the log in doubt: the database failed to commit durably.
    pub(crate) fn in_doubt(&mut self) {
        self.s.broken = true;
    }

    /// Make every record appended so far durable.
    pub(crate) fn sync(&mut self) -> Result<(), StorageError> {
        let end = self.s.end.unwrap_or(0);
        if self.s.synced >= end {
            return Ok(());
        }
        if let Err(e) = self.s.file.sync_data() {
            self.s.broken = true;
            return Err(io("cannot sync")(e));
        }
        self.s.synced = end;
        Ok(())
    }

    /// The database just committed durably everything the log holds: the next
    /// record goes to the start of the file again (what lies past it is
    /// older than the database: `replay::scan` stops at it). On failure the
    /// log is in doubt, and the store is reopened before the next write.
    pub(crate) fn reset(&mut self) -> Result<(), StorageError> {
        if self.s.unlogged {
            // The commits without a record are durable now, with their number.
            self.s.next_seq += 1;
            self.s.unlogged = false;
        }
        self.s.end = Some(0);
        self.s.synced = 0;
        self.s.records = 0;
        let limits = self.limits;
        self.s.shrink(&limits).inspect_err(|_| self.s.broken = true)
    }
}
