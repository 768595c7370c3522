//! What the host learns about storage faults, and whether writes work.
//!
//! redb refuses every transaction after an I/O error (a full disk, a failed
//! fsync) until the database is opened again. The store therefore reopens its
//! database after a failed transaction when redb refuses to begin a write
//! (see `Store::recover`), and tells the host what happened through a
//! [`StorageHook`]: the core has no logging of its own, so the host logs.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Something that happened to the database that the host should know about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StorageEvent {
    /// A write transaction failed (its start, a read or write inside it, or its
    /// commit): nothing of it was stored and its operations answered message 7.
    /// The text is the storage error (never a key or an account number).
    WriteFailed(String),
    /// A read transaction failed.
    ReadFailed(String),
    /// After a failure the database refused to begin a write, so it was closed
    /// and opened again (redb checks and repairs the file while opening it).
    Reopened,
    /// Reopening failed; the next transaction tries again.
    ReopenFailed(String),
    /// A write transaction committed after failures: writes work again.
    Resumed,
}

impl StorageEvent {
    /// Whether this is a fault (a failed transaction or reopen), as opposed to
    /// a recovery step.
    pub fn is_fault(&self) -> bool {
        matches!(self, Self::WriteFailed(_) | Self::ReadFailed(_) | Self::ReopenFailed(_))
    }
}

impl fmt::Display for StorageEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WriteFailed(e) => write!(f, "a write transaction failed: {e}"),
            Self::ReadFailed(e) => write!(f, "a read transaction failed: {e}"),
            Self::Reopened => f.write_str("the database was reopened after a failure"),
            Self::ReopenFailed(e) => write!(f, "the database could not be reopened: {e}"),
            Self::Resumed => f.write_str("a write committed again after failures"),
        }
    }
}

/// The host's callback for [`StorageEvent`]s (the server logs them). It runs on
/// the thread that met the event, after the database lock is released, and must
/// not call back into the engine.
#[derive(Clone)]
pub struct StorageHook(Arc<dyn Fn(&StorageEvent) + Send + Sync>);

impl StorageHook {
    /// A hook calling `f`.
    pub fn new(f: impl Fn(&StorageEvent) + Send + Sync + 'static) -> Self {
        StorageHook(Arc::new(f))
    }
}

impl fmt::Debug for StorageHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StorageHook")
    }
}

/// The store's view of its own health.
#[derive(Default)]
pub(crate) struct Health {
    /// The last write transaction failed (none has committed since).
    failing: AtomicBool,
    hook: OnceLock<StorageHook>,
}

impl Health {
    pub(crate) fn set_hook(&self, hook: StorageHook) {
        let _ = self.hook.set(hook);
    }

    pub(crate) fn tell(&self, event: &StorageEvent) {
        if let Some(hook) = self.hook.get() {
            (hook.0)(event);
        }
    }

    /// A write transaction committed.
    pub(crate) fn committed(&self) {
        if self.failing.swap(false, Ordering::AcqRel) {
            self.tell(&StorageEvent::Resumed);
        }
    }

    /// A write transaction failed.
    pub(crate) fn write_failed(&self) {
        self.failing.store(true, Ordering::Release);
    }

    /// Whether the last write transaction failed.
    pub(crate) fn failing(&self) -> bool {
        self.failing.load(Ordering::Acquire)
    }
}
