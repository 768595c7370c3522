//! The storage seam: what one transaction of any backend does. Every table
//! maps byte keys to byte values in byte order; [`super::Write`] and
//! [`super::Snapshot`] build the engine's reads and writes (records, ranges,
//! the first and last key) on these few operations, so a backend implements
//! only them. redb's are in [`super::redb_kv`].

use super::{StorageError, Table};

/// A visitor of one entry (key, value): `false` stops the scan.
pub(crate) type Visit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool, StorageError> + 'a;

/// A reader of the one value a get finds.
pub(crate) type Found<'a> = dyn FnMut(&[u8]) -> Result<(), StorageError> + 'a;

/// The entries a scan visits: those whose key is in `[from, to)` (`to`
/// `None`: to the table's end), in key order or, if `reverse`, from the last.
/// `limit` is how many entries the caller takes at most (a hint: a backend
/// reading pages asks for no more).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span<'a> {
    pub(crate) from: &'a [u8],
    pub(crate) to: Option<&'a [u8]>,
    pub(crate) reverse: bool,
    /// Read by the PostgreSQL backend only: redb reads no pages.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) limit: usize,
}

impl<'a> Span<'a> {
    /// `[from, to)` in key order, `limit` entries at most.
    pub(crate) fn up(from: &'a [u8], to: Option<&'a [u8]>, limit: usize) -> Span<'a> {
        Span { from, to, reverse: false, limit }
    }

    /// `[from, to)` from the last key, `limit` entries at most.
    pub(crate) fn down(from: &'a [u8], to: Option<&'a [u8]>, limit: usize) -> Span<'a> {
        Span { from, to, reverse: true, limit }
    }

    /// Whether the span holds no key at all (its end at or before its start).
    pub(crate) fn is_empty(&self) -> bool {
        self.to.is_some_and(|to| to <= self.from)
    }
}

/// The reads of a transaction (a snapshot, or a write transaction seeing its
/// own writes).
pub(crate) trait KvRead {
    /// Call `f` with the value at `key`; whether there was one.
    fn get_with(&self, table: Table, key: &[u8], f: &mut Found<'_>) -> Result<bool, StorageError>;

    /// Call `visit` with every entry of `span`, in its order, until it
    /// answers `false`.
    fn scan(&self, table: Table, span: Span<'_>, visit: &mut Visit<'_>) -> Result<(), StorageError>;
}

/// The writes of a write transaction. Nothing is visible to others, or
/// durable, before the backend commits the transaction.
pub(crate) trait KvWrite: KvRead {
    /// Make sure `table` exists (a new database creates every table at once).
    fn create(&self, table: Table) -> Result<(), StorageError>;

    /// Store `value` at `key`, replacing any.
    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StorageError>;

    /// Remove `key`; whether it was present, or `true` where the backend
    /// cannot tell without a read (PostgreSQL: the removal waits for the
    /// commit, and no caller needs the answer there).
    fn remove(&self, table: Table, key: &[u8]) -> Result<bool, StorageError>;

    /// Remove every key in `[from, to)`.
    fn remove_range(&self, table: Table, from: &[u8], to: &[u8]) -> Result<(), StorageError>;
}
