//! The storage failure every storage operation answers with.

use std::fmt;

/// A storage failure: the database could not be read or written (message 7), or a
/// stored record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageError(pub String);

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "storage: {}", self.0)
    }
}

impl std::error::Error for StorageError {}

pub(super) fn fail(e: impl Into<redb::Error>) -> StorageError {
    StorageError(e.into().to_string())
}
