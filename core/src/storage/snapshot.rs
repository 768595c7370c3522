//! The read transaction. Its reads, shared with the write transaction, are
//! in `reads.rs`.

use super::kv::KvRead;

/// A read transaction: a snapshot of the database, over any backend's [`KvRead`].
pub(crate) struct Snapshot {
    pub(super) kv: Box<dyn KvRead>,
}

impl Snapshot {
    pub(super) fn kv(&self) -> &dyn KvRead {
        &*self.kv
    }
}
