//! Whether the engine can take writes: the answer to a load balancer's
//! readiness check.

use crate::engine::Engine;
use crate::storage::{row_keys, Table};

/// The room a readiness check asks for after a failed write: a value this
/// large is written, committed, then removed. A one-byte write would fit in a
/// page freed inside a full disk's file and answer "ready" while creates that
/// need the file to grow still fail.
pub const PROBE_BYTES: usize = 256 * 1024;

impl Engine {
    /// Whether writes commit. While the last write transaction committed (or
    /// none failed since the engine opened), `true` without touching the disk.
    /// After a failed one, the database is reopened if a failure left it closed,
    /// and [`PROBE_BYTES`] are written and committed in one write transaction,
    /// then removed in another: `true` when both commit. So a host taken out of
    /// service after a failure comes back by itself once there is room again.
    pub fn ready(&self) -> bool {
        if !self.store.failing() {
            return true;
        }
        let room = vec![0u8; PROBE_BYTES];
        self.store.write(|w| w.put_raw(Table::Meta, row_keys::META_WRITE_PROBE, &room)).is_ok()
            && self.store.write(|w| w.remove(Table::Meta, row_keys::META_WRITE_PROBE)).is_ok()
    }
}
