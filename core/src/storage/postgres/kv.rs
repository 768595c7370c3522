//! The seam's PostgreSQL side: one open transaction of one connection as
//! [`KvWrite`] and [`KvRead`]. Every engine table is a range of rows of one
//! PostgreSQL table, `ach_kv (t, k, v)`, keyed by `(t, k)`; `bytea` compares
//! byte by byte, shorter first on a tie, as redb orders `&[u8]` keys, so
//! every range and scan visits rows in the order redb's does.

use std::sync::Arc;

use tokio_postgres::Row;

use super::conn::Conn;
use crate::storage::kv::{KvRead, KvWrite, Visit};
use crate::storage::{key_after, StorageError, Table};

/// Rows a scan reads per query: a page of a feed or a run of index rows in
/// one round trip; a long scan (a cut-off) in pages, never whole.
const PAGE: i64 = 256;

/// A transaction in progress on `conn` (begun and ended by the store).
pub(crate) struct PgTx {
    pub(crate) conn: Arc<Conn>,
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
        reverse: bool,
        visit: &mut Visit<'_>,
    ) -> Result<(), StorageError> {
        let name = table.name();
        let mut from = from.to_vec();
        let mut to = to.map(<[u8]>::to_vec);
        loop {
            if to.as_deref().is_some_and(|to| to <= from.as_slice()) {
                return Ok(());
            }
            let sql = &self.conn.sql;
            let rows = match (&to, reverse) {
                (Some(to), false) => self.conn.query(&sql.scan_up_to, &[&name, &from, to, &PAGE])?,
                (None, false) => self.conn.query(&sql.scan_up, &[&name, &from, &PAGE])?,
                (Some(to), true) => self.conn.query(&sql.scan_down_to, &[&name, &from, to, &PAGE])?,
                (None, true) => self.conn.query(&sql.scan_down, &[&name, &from, &PAGE])?,
            };
            for row in &rows {
                if !visit(bytes(row, 0)?, bytes(row, 1)?)? {
                    return Ok(());
                }
            }
            let Some(last) = rows.last() else { return Ok(()) };
            if (rows.len() as i64) < PAGE {
                return Ok(());
            }
            let last = bytes(last, 0)?;
            if reverse {
                to = Some(last.to_vec());
            } else {
                from = key_after(last);
            }
        }
    }
}

impl KvWrite for PgTx {
    fn create(&self, _table: Table) -> Result<(), StorageError> {
        // Every engine table is rows of `ach_kv`: nothing to create.
        Ok(())
    }

    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StorageError> {
        self.conn.execute(&self.conn.sql.put, &[&table.name(), &key, &value]).map(drop)
    }

    fn remove(&self, table: Table, key: &[u8]) -> Result<bool, StorageError> {
        Ok(self.conn.execute(&self.conn.sql.remove, &[&table.name(), &key])? > 0)
    }

    fn remove_range(&self, table: Table, from: &[u8], to: &[u8]) -> Result<(), StorageError> {
        if to <= from {
            return Ok(());
        }
        self.conn.execute(&self.conn.sql.remove_range, &[&table.name(), &from, &to]).map(drop)
    }
}
