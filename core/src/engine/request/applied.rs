//! What applying one operation inside the write transaction gives: done (and
//! perhaps a new routing directory), or stopped by a refusal or a storage failure.

use crate::engine::{Outcome, Refusal};
use crate::routing::RoutingDirectory;
use crate::storage::StorageError;

/// What applying an operation did.
pub(crate) enum Applied {
    /// Finished with this outcome.
    Done(Outcome),
    /// Finished, and the engine must switch to this directory after the commit.
    Directory(RoutingDirectory, Outcome),
}

/// Why applying an operation stopped: a refusal (nothing was written; the
/// batch goes on), or a storage failure (the whole transaction is abandoned).
pub(crate) enum Stop {
    /// The operation was turned down.
    Refused(Refusal),
    /// Storage failed: every operation of the batch answers message 7.
    Storage(StorageError),
}

impl From<StorageError> for Stop {
    fn from(e: StorageError) -> Self {
        Stop::Storage(e)
    }
}

impl From<Refusal> for Stop {
    fn from(r: Refusal) -> Self {
        Stop::Refused(r)
    }
}
