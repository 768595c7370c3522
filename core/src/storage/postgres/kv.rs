//! The seam's PostgreSQL side: one open transaction of one connection as
//! [`KvWrite`] and [`KvRead`]. Every engine table is a range of rows of one
//! PostgreSQL table, `ach_kv (t, k, v)`, keyed by `(t, k)`; `bytea` compares
//! byte by byte, shorter first on a tie, as redb orders `&[u8]` keys, so
//! every range and scan visits rows in the order redb's does. Changes wait
//! in an [`Overlay`] until the commit.

use std::cell::RefCell;
use std::sync::Arc;

use tokio_postgres::Row;

use super::ahead::{self, Answers, Ask, Rows};
use super::conn::Conn;
use super::overlay::{Overlay, Seen};
use super::owner::Owners;
use crate::storage::kv::{Found, KvRead, KvWrite, Span, Visit};
use crate::storage::{key_after, StorageError, Table};

/// Rows a scan reads per query: a page of a feed or a run of index rows in
/// one round trip; a long scan (a cut-off) in pages, never whole.
pub(crate) const PAGE: i64 = 256;

/// A transaction in progress on `conn` (begun and ended by the store), its
/// changes held in `overlay` until the store commits them.
pub(crate) struct PgTx {
    pub(crate) conn: Arc<Conn>,
    pub(crate) overlay: RefCell<Overlay>,
    /// Rows read ahead (`ahead.rs`): the database as this transaction began.
    ahead: RefCell<Answers>,
    /// A write transaction's short asks that went to the database, for the
    /// next one to read ahead (`None`: a snapshot's, not kept).
    asked: Option<RefCell<Vec<Ask>>>,
}

impl PgTx {
    /// A snapshot's transaction on `conn`.
    pub(crate) fn new(conn: Arc<Conn>) -> PgTx {
        PgTx { conn, overlay: RefCell::default(), ahead: RefCell::default(), asked: None }
    }

    /// A write transaction's on `conn`, with `ahead` read ahead.
    pub(crate) fn writing(conn: Arc<Conn>, ahead: Answers) -> PgTx {
        PgTx {
            conn,
            overlay: RefCell::default(),
            ahead: RefCell::new(ahead),
            asked: Some(RefCell::default()),
        }
    }

    /// The short asks this write transaction sent the database, and those it
    /// found read ahead: what the next one reads ahead.
    pub(crate) fn asks(&self) -> Vec<Ask> {
        let mut out: Vec<Ask> = self.asked.as_ref().map(|a| a.borrow().clone()).unwrap_or_default();
        let mut ahead = self.ahead.borrow_mut();
        out.extend(
            ahead.drain().filter(|(ask, (_, used))| *used && ask.rows <= ahead::SHORT).map(|(ask, _)| ask),
        );
        out.truncate(ahead::MOST);
        out
    }

    /// The rows read ahead for `ask`, if it was (marked used).
    fn read_ahead(&self, ask: &Ask) -> Option<Rows> {
        let mut ahead = self.ahead.borrow_mut();
        let (rows, used) = ahead.get_mut(ask)?;
        *used = true;
        Some(rows.clone())
    }

    /// Note a short ask sent to the database.
    fn note(&self, ask: Ask) {
        if let Some(asked) = &self.asked {
            if ask.rows <= ahead::SHORT {
                asked.borrow_mut().push(ask);
            }
        }
    }

    /// Send the changes (removed ranges, removed keys, then values put, each
    /// kind in one statement: the arrays unnested server-side, each value
    /// with its row's partner from `owners`), COMMIT and wait for
    /// [`super::DURABLE`], all in one round trip.
    pub(crate) fn flush_and_commit(&self, owners: &Owners) -> Result<(), StorageError> {
        // Worked out while every row written is still readable here.
        let po: Vec<String> = {
            let overlay = self.overlay.borrow();
            overlay.puts().map(|(t, k, v)| owners.of(self, t, k, v)).collect::<Result<_, _>>()?
        };
        let overlay = std::mem::take(&mut *self.overlay.borrow_mut());
        let sql = &self.conn.sql;
        let (ranges, (rt, rk), (pt, pk, pv)) = overlay.into_changes();
        let mut statements: Vec<(
            &tokio_postgres::Statement,
            Vec<&(dyn tokio_postgres::types::ToSql + Sync)>,
        )> = Vec::new();
        for (t, from, to) in &ranges {
            statements.push((&sql.remove_range, vec![t, from, to]));
        }
        if !rk.is_empty() {
            statements.push((&sql.remove_many, vec![&rt, &rk]));
        }
        if !pk.is_empty() {
            statements.push((&sql.put_many, vec![&po, &pt, &pk, &pv]));
        }
        let statements: Vec<_> = statements.iter().map(|(st, p)| (*st, p.as_slice())).collect();
        self.conn.execute_then_batch(&statements, super::COMMIT_DURABLE)
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
    fn get_with(&self, table: Table, key: &[u8], f: &mut Found<'_>) -> Result<bool, StorageError> {
        match self.overlay.borrow().seen(table.name(), key) {
            Seen::Put(v) => return f(v).map(|()| true),
            Seen::Gone => return Ok(false),
            Seen::Untouched => {}
        }
        let ask = Ask::get(table.name(), key);
        if let Some(rows) = self.read_ahead(&ask) {
            return match rows.first() {
                Some((k, v)) if k.as_slice() == key => f(v).map(|()| true),
                _ => Ok(false),
            };
        }
        self.note(ask);
        let rows = self.conn.query(&self.conn.sql.get, &[&table.name(), &key])?;
        match rows.first() {
            Some(row) => f(bytes(row, 0)?).map(|()| true),
            None => Ok(false),
        }
    }

    fn scan(&self, table: Table, span: Span<'_>, visit: &mut Visit<'_>) -> Result<(), StorageError> {
        if span.is_empty() {
            return Ok(());
        }
        let Span { from, to, reverse, limit: want } = span;
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
        let mut first = true;
        loop {
            let rows = if to.as_deref().is_some_and(|to| to <= from.as_slice()) {
                Vec::new()
            } else {
                let ask = Ask { table: name, from: from.clone(), to: to.clone(), reverse, rows: page };
                match if first { self.read_ahead(&ask) } else { None } {
                    Some(rows) => rows,
                    None => {
                        self.note(ask);
                        let rows = self.page(name, &from, to.as_deref(), (reverse, page))?;
                        rows.iter()
                            .map(|r| Ok((bytes(r, 0)?.to_vec(), bytes(r, 1)?.to_vec())))
                            .collect::<Result<_, StorageError>>()?
                    }
                }
            };
            first = false;
            for (key, value) in &rows {
                let key = key.as_slice();
                while let Some((k, v)) = mine.next_if(|(k, _)| before(k, key)) {
                    if !visit(k, v)? {
                        return Ok(());
                    }
                }
                if !overlay.hides(name, key) && !visit(key, value)? {
                    return Ok(());
                }
            }
            let last = match rows.last() {
                Some((last, _)) if (rows.len() as i64) == page => last.clone(),
                _ => break,
            };
            page = PAGE;
            if reverse {
                to = Some(last);
            } else {
                from = key_after(&last);
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
