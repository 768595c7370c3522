//! Which commits have reached the disk.
//!
//! A write transaction commits durably by default. A step of a longer piece of
//! work that nobody has been answered about yet (a chunk of the clock's
//! catch-up) may commit without a sync ([`Write::defer_sync`]): a crash rolls
//! it back, with everything after the last durable commit, and the work is
//! done again. Readers that answer someone must never see such a commit before
//! it is durable: [`Store::read_durable`] makes it durable first. With a redo log a
//! deferred commit is a record appended without a sync, and making it durable
//! is one sync of the log; without one, it is a redb commit without a sync,
//! and making it durable is one empty durable commit, which redb orders after
//! everything it can see.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Write;

/// When a write transaction's commit reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Commit {
    /// At its commit (the default): durable before anyone is answered.
    Immediate,
    /// With the next durable commit.
    Deferred,
    /// At its commit, whatever [`Write::defer_sync`] asks: the transaction
    /// made something that leaves the engine (a listed file).
    Required,
}

impl Write<'_> {
    /// Let this transaction's commit wait for the next durable one: for a
    /// chunk of a catch-up that is not its last.
    pub(crate) fn defer_sync(&self) {
        if self.sync.get() == Commit::Immediate {
            self.sync.set(Commit::Deferred);
        }
    }

    /// Make this transaction's commit durable whatever [`Write::defer_sync`] asked.
    pub(crate) fn require_sync(&self) {
        self.sync.set(Commit::Required);
    }
}

/// The commit mode a new write transaction starts with.
pub(super) fn new_commit() -> Cell<Commit> {
    Cell::new(Commit::Immediate)
}

/// Commit numbers: the newest commit made without a sync, the newest known
/// durable.
#[derive(Debug, Default)]
pub(super) struct Durability {
    commits: AtomicU64,
    deferred: AtomicU64,
    durable: AtomicU64,
}

impl Durability {
    /// Number a commit about to be made (inside its write transaction, so
    /// numbers follow redb's commit order), and record a deferred one before
    /// it becomes visible: a reader never sees it unrecorded.
    pub(super) fn before_commit(&self, commit: Commit) -> u64 {
        let n = self.commits.fetch_add(1, Ordering::SeqCst) + 1;
        if commit == Commit::Deferred {
            self.deferred.fetch_max(n, Ordering::SeqCst);
        }
        n
    }

    /// The number of the newest commit so far.
    pub(super) fn latest(&self) -> u64 {
        self.commits.load(Ordering::SeqCst)
    }

    /// A durable commit numbered `n` completed: it made every earlier one durable.
    pub(super) fn durable(&self, n: u64) {
        self.durable.fetch_max(n, Ordering::SeqCst);
    }

    /// Whether some commit a reader may see has not reached the disk.
    pub(super) fn pending(&self) -> bool {
        self.deferred.load(Ordering::SeqCst) > self.durable.load(Ordering::SeqCst)
    }
}
