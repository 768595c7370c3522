//! The seam's PostgreSQL side: one open transaction of one connection as
//! [`KvWrite`] and [`KvRead`]. Every engine table is a range of rows of one
//! PostgreSQL table, `ach_kv (t, k, v)`, keyed by `(t, k)`; `bytea` compares
//! byte by byte, shorter first on a tie, as redb orders `&[u8]` keys, so
//! every range and scan visits rows in the order redb's does. Changes wait
//! in an [`Overlay`] until the commit.

use std::cell::RefCell;
use std::sync::Arc;

use tokio_postgres::Row;

use super::conn::Conn;
use super::overlay::{Overlay, Seen};
use crate::storage::kv::{KvRead, KvWrite, Visit};
use crate::storage::{key_after, StorageError, Table};

/// Rows a scan reads per query: a page of a feed or a run of index rows in
/// one round trip; a long scan (a cut-off) in pages, never whole.
const PAGE: i64 = 256;

/// A transaction in progress on `conn` (begun and ended by the store), its
/// changes held in `overlay` until the store commits them.
pub(crate) struct PgTx {
    pub(crate) conn: Arc<Conn>,
    pub(crate) overlay: RefCell<Overlay>,
}

impl PgTx {
    /// A transaction on `conn` with no change yet.
    pub(crate) fn new(conn: Arc<Conn>) -> PgTx {
        PgTx { conn, overlay: RefCell::default() }
    }

    /// Send the changes: removed ranges, removed keys, then values put, each
    /// kind in one statement (the arrays unnested server-side).
    pub(crate) fn flush(&self) -> Result<(), StorageError> {
        let overlay = std::mem::take(&mut *self.overlay.borrow_mut());
        if overlay.is_empty() {
            return Ok(());
        }
        let sql = &self.conn.sql;
        let (ranges, (rt, rk), (pt, pk, pv)) = overlay.into_changes();
        for (t, from, to) in &ranges {
            self.conn.execute(&sql.remove_range, &[t, from, to])?;
        }
        if !rk.is_empty() {
            self.conn.execute(&sql.remove_many, &[&rt, &rk])?;
        }
        if !pk.is_empty() {
            self.conn.execute(&sql.put_many, &[&pt, &pk, &pv])?;
        }
        Ok(())
    }

    /// A page of (at most `rows`) database rows of `table` in `[from, to)`.
    fn page(
        &self,
        table: &str,
        from: &[u8],
        to: Option<&[u8]>,
        (reverse, rows): (bool, i64),
    ) -> Result<Vec<Row>, StorageError> {
        let sql = &self.conn.sql;
        match (to, reverse) {
            (Some(to), false) => self.conn.query(&sql.scan_up_to, &[&table, &from, &to, &rows]),
            (None, false) => self.conn.query(&sql.scan_up, &[&table, &from, &rows]),
            (Some(to), true) => self.conn.query(&sql.scan_down_to, &[&table, &from, &to, &rows]),
            (None, true) => self.conn.query(&sql.scan_down, &[&table, &from, &rows]),
        }
    }
}

fn bytes(row: &Row, i: usize) -> Result<&[u8], StorageError> {
    row.try_get::<_, &[u8]>(i).map_err(|e| StorageError(format!("a PostgreSQL row is unreadable: {e}")))
}

impl KvRead for PgTx {
    fn get_with(
        &self,
        table: Table,
        key: &[u8],
        f: &mut dyn FnMut(&[u8]) -> Result<(), StorageError>,
    ) -> Result<bool, StorageError> {
        match self.overlay.borrow().seen(table.name(), key) {
            Seen::Put(v) => return f(v).map(|()| true),
            Seen::Gone => return Ok(false),
            Seen::Untouched => {}
        }
        let rows = self.conn.query(&self.conn.sql.get, &[&table.name(), &key])?;
        match rows.first() {
            Some(row) => f(bytes(row, 0)?).map(|()| true),
            None => Ok(false),
        }
    }

    fn scan(
        &self,
        table: Table,
        from: &[u8],
        to: Option<&[u8]>,
        (reverse, want): (bool, usize),
        visit: &mut Visit<'_>,
    ) -> Result<(), StorageError> {
        if to.is_some_and(|to| to <= from) {
            return Ok(());
        }
        let name = table.name();
        let overlay = self.overlay.borrow();
        // This transaction's own values in the range, merged into the
        // database's rows (which it hides where it changed them).
        let mut mine = overlay.puts_in(name, from, to);
        if reverse {
            mine.reverse();
        }
        let mut mine = mine.into_iter().peekable();
        let before = |a: &[u8], b: &[u8]| if reverse { a > b } else { a < b };
        let mut from = from.to_vec();
        let mut to = to.map(<[u8]>::to_vec);
        // The first page as long as the caller wants (one row for a first or
        // last key), the next ones full.
        let mut page = i64::try_from(want).unwrap_or(PAGE).clamp(1, PAGE);
        loop {
            let rows = if to.as_deref().is_some_and(|to| to <= from.as_slice()) {
                Vec::new()
            } else {
                self.page(name, &from, to.as_deref(), (reverse, page))?
            };
            for row in &rows {
                let key = bytes(row, 0)?;
                while let Some((k, v)) = mine.next_if(|(k, _)| before(k, key)) {
                    if !visit(k, v)? {
                        return Ok(());
                    }
                }
                if !overlay.hides(name, key) && !visit(key, bytes(row, 1)?)? {
                    return Ok(());
                }
            }
            let last = match rows.last() {
                Some(last) if (rows.len() as i64) == page => bytes(last, 0)?,
                _ => break,
            };
            page = PAGE;
            if reverse {
                to = Some(last.to_vec());
            } else {
                from = key_after(last);
            }
        }
        for (k, v) in mine {
            if !visit(k, v)? {
                return Ok(());
            }
        }
        Ok(())
    }
}

impl KvWrite for PgTx {
    fn create(&self, _table: Table) -> Result<(), StorageError> {
        // Every engine table is rows of `ach_kv`: nothing to create.
        Ok(())
    }

    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StorageError> {
        self.overlay.borrow_mut().put(table.name(), key, value);
        Ok(())
    }

    fn remove(&self, table: Table, key: &[u8]) -> Result<bool, StorageError> {
        // Whether it is there would cost a round trip; the answer only
        // decides what a redo log records, and this backend keeps none.
        self.overlay.borrow_mut().remove(table.name(), key);
        Ok(true)
    }

    fn remove_range(&self, table: Table, from: &[u8], to: &[u8]) -> Result<(), StorageError> {
        if to > from {
            self.overlay.borrow_mut().remove_range(table.name(), from, to);
        }
        Ok(())
    }
}
