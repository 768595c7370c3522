//! The seam's redb side: a redb write transaction (its tables opened once
//! each) and a redb read transaction as [`KvWrite`] and [`KvRead`].

use std::cell::RefCell;
use std::ops::Bound;

use redb::{ReadableTable, WriteTransaction};

use super::kv::{Found, KvRead, KvWrite, Span, Visit};
use super::{fail, StorageError, Table};

/// An open table of a write transaction.
type WriteTable<'tx> = redb::Table<'tx, &'static [u8], &'static [u8]>;

/// A redb write transaction's tables.
///
/// Each table is opened the first time the transaction uses it and stays open
/// until the transaction ends (opening a redb table costs a lookup in its table
/// tree and closing it a write there: once per transaction, not once per call).
/// Drop it before committing `tx`.
pub(crate) struct RedbWrite<'tx> {
    tx: &'tx WriteTransaction,
    open: RefCell<[Option<WriteTable<'tx>>; Table::ALL.len()]>,
}

impl<'tx> RedbWrite<'tx> {
    /// The tables of `tx`, none opened yet.
    pub(crate) fn new(tx: &'tx WriteTransaction) -> RedbWrite<'tx> {
        RedbWrite { tx, open: RefCell::new(std::array::from_fn(|_| None)) }
    }

    /// How many tables are open.
    #[cfg(test)]
    pub(crate) fn opened(&self) -> usize {
        self.open.borrow().iter().filter(|t| t.is_some()).count()
    }

    /// Run `f` on `table`, opening it if this transaction has not yet.
    fn with<R>(
        &self,
        table: Table,
        f: impl FnOnce(&mut WriteTable<'tx>) -> Result<R, StorageError>,
    ) -> Result<R, StorageError> {
        let mut open = self.open.borrow_mut();
        let slot = &mut open[table as usize];
        let t = match slot {
            Some(t) => t,
            None => slot.insert(self.tx.open_table(table.def()).map_err(fail)?),
        };
        f(t)
    }
}

/// One entry of a redb range.
type Entry<'a> =
    Result<(redb::AccessGuard<'a, &'static [u8]>, redb::AccessGuard<'a, &'static [u8]>), redb::StorageError>;

/// `[from, to)`, or `[from, ..)`.
fn bounds<'a>(span: &Span<'a>) -> (Bound<&'a [u8]>, Bound<&'a [u8]>) {
    (Bound::Included(span.from), span.to.map_or(Bound::Unbounded, Bound::Excluded))
}

/// Call `f` with the value at `key` of a redb table; whether there was one.
fn get_in<T: ReadableTable<&'static [u8], &'static [u8]>>(
    t: &T,
    key: &[u8],
    f: &mut Found<'_>,
) -> Result<bool, StorageError> {
    match t.get(key).map_err(fail)? {
        Some(v) => f(v.value()).map(|()| true),
        None => Ok(false),
    }
}

/// Visit a span of a redb table, forwards or backwards.
fn scan_table<T: ReadableTable<&'static [u8], &'static [u8]>>(
    t: &T,
    span: Span<'_>,
    visit: &mut Visit<'_>,
) -> Result<(), StorageError> {
    if span.is_empty() {
        // redb panics on a range whose end is before its start.
        return Ok(());
    }
    let range = t.range::<&[u8]>(bounds(&span)).map_err(fail)?;
    let entries: Box<dyn Iterator<Item = Entry<'_>>> =
        if span.reverse { Box::new(range.rev()) } else { Box::new(range) };
    for item in entries {
        let (k, v) = item.map_err(fail)?;
        if !visit(k.value(), v.value())? {
            break;
        }
    }
    Ok(())
}

impl KvRead for RedbWrite<'_> {
    fn get_with(&self, table: Table, key: &[u8], f: &mut Found<'_>) -> Result<bool, StorageError> {
        self.with(table, |t| get_in(t, key, f))
    }

    fn scan(&self, table: Table, span: Span<'_>, visit: &mut Visit<'_>) -> Result<(), StorageError> {
        self.with(table, |t| scan_table(t, span, visit))
    }
}

impl KvWrite for RedbWrite<'_> {
    fn create(&self, table: Table) -> Result<(), StorageError> {
        self.with(table, |_| Ok(()))
    }

    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StorageError> {
        self.with(table, |t| t.insert(key, value).map(drop).map_err(fail))
    }

    fn remove(&self, table: Table, key: &[u8]) -> Result<bool, StorageError> {
        self.with(table, |t| Ok(t.remove(key).map_err(fail)?.is_some()))
    }

    fn remove_range(&self, table: Table, from: &[u8], to: &[u8]) -> Result<(), StorageError> {
        if to <= from {
            return Ok(());
        }
        self.with(table, |t| t.retain_in::<&[u8], _>(from..to, |_, _| false).map_err(fail))
    }
}

/// A redb read transaction (a snapshot).
pub(crate) struct RedbRead(pub(crate) redb::ReadTransaction);

impl KvRead for RedbRead {
    fn get_with(&self, table: Table, key: &[u8], f: &mut Found<'_>) -> Result<bool, StorageError> {
        get_in(&self.0.open_table(table.def()).map_err(fail)?, key, f)
    }

    fn scan(&self, table: Table, span: Span<'_>, visit: &mut Visit<'_>) -> Result<(), StorageError> {
        scan_table(&self.0.open_table(table.def()).map_err(fail)?, span, visit)
    }
}

self_cell::self_cell!(
    /// A redb write transaction and its tables, each opened the first time
    /// it is used and kept open until the transaction commits: across all
    /// the writes that continue a pending commit (`pending_commit.rs`), instead of
    /// opened and closed again by each (a fifth of a single create's
    /// instructions).
    pub(crate) struct OpenTx {
        owner: WriteTransaction,
        #[not_covariant]
        dependent: RedbWrite,
    }
);

impl OpenTx {
    /// `tx`, no table opened yet.
    pub(crate) fn begin(tx: WriteTransaction) -> OpenTx {
        OpenTx::new(tx, |tx| RedbWrite::new(tx))
    }

    /// Close its tables and hand back the transaction, to commit or drop.
    pub(crate) fn close(self) -> WriteTransaction {
        self.into_owner()
    }
}
