//! What applying one operation inside the write transaction gives: done (and
//! perhaps a new routing directory), or stopped by a refusal or a storage failure.

use super::{Failure, Outcome};
use crate::routing::RoutingDirectory;
use crate::storage::StorageError;

/// What applying an operation did.
pub(crate) enum Applied {
    /// Finished with this outcome.
    Done(Outcome),
    /// Finished, and the engine must switch to this directory after the commit.
    Directory(RoutingDirectory, Outcome),
}

/// Why applying an operation stopped: a refusal (nothing was written), or a
/// storage failure (the whole transaction is abandoned).
pub(crate) enum Fail {
    Refused(Failure),
    Storage(StorageError),
}

impl From<StorageError> for Fail {
    fn from(e: StorageError) -> Self {
        Fail::Storage(e)
    }
}

impl From<Failure> for Fail {
    fn from(f: Failure) -> Self {
        Fail::Refused(f)
    }
}
