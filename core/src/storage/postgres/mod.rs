//! The PostgreSQL backend (feature `postgres`): the same tables as rows of one
//! PostgreSQL table (`kv.rs`), over connections kept in a small pool
//! (`conn.rs`), the schema migrated at open (`schema.rs`).
//!
//! A write transaction takes a transaction-scoped advisory lock first, so the
//! write transactions of every process over the database run one at a time,
//! as redb's do in one process; each commits with the server's
//! `synchronous_commit` (on: durable on the synchronous standby before the
//! answer). A read is a `REPEATABLE READ READ ONLY` transaction: a snapshot.

mod ahead;
mod conn;
mod kv;
mod overlay;
mod owner;
mod schema;

use std::sync::{Arc, Mutex, PoisonError};

use conn::Conn;
use kv::PgTx;
use tokio_postgres::Config;

use super::{Snapshot, StorageError, Write};

/// The advisory lock every write transaction holds until it ends, with the
/// schema's name hashed (one lock per engine database).
const LOCK_WRITES: i32 = 0x4143_4802;

/// Connections kept open between transactions.
const IDLE: usize = 16;

/// A PostgreSQL database reached with one connection string.
pub(crate) struct PgStore {
    /// Drives the connections (`None` only while dropping).
    rt: Option<tokio::runtime::Runtime>,
    config: Config,
    idle: Mutex<Vec<Conn>>,
    /// What the last write transaction asked the database for: the next
    /// one reads it ahead.
    learned: Mutex<Vec<ahead::Ask>>,
    /// Scans the engine said the next write transaction makes first.
    next: Mutex<Vec<ahead::Ask>>,
    /// Merchants' partners, for the rows' partner column (`owner.rs`).
    owners: owner::Owners,
}

impl PgStore {
    /// Connect with `url` (a libpq connection string or URL; several hosts with
    /// `target_session_attrs=read-write` find the primary) and migrate the
    /// schema.
    pub(crate) fn open(url: &str) -> Result<PgStore, StorageError> {
        let config: Config = url
            .parse()
            .map_err(|e| StorageError(format!("the PostgreSQL connection string is invalid: {e}")))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ach-postgres")
            .enable_all()
            .build()
            .map_err(|e| StorageError(format!("cannot start the PostgreSQL client: {e}")))?;
        let client = Conn::connect(&rt, &config)?;
        schema::migrate(&client)?;
        drop(client);
        Ok(PgStore {
            rt: Some(rt),
            config,
            idle: Mutex::new(Vec::new()),
            learned: Mutex::new(Vec::new()),
            next: Mutex::new(Vec::new()),
            owners: owner::Owners::default(),
        })
    }

    /// An idle connection, or a new one (after a failover, a new connection
    /// finds the new primary).
    fn take(&self) -> Result<Conn, StorageError> {
        let idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
        match idle {
            Some(conn) if !conn.is_closed() => Ok(conn),
            _ => match &self.rt {
                Some(rt) => Conn::open(rt, &self.config),
                None => Err(StorageError("the PostgreSQL store is closing".into())),
            },
        }
    }

    /// Keep `conn` for the next transaction, unless it is gone (or still
    /// shared: a snapshot kept past its read).
    fn give(&self, conn: Arc<Conn>) {
        let Ok(conn) = Arc::try_unwrap(conn) else { return };
        if conn.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE {
            idle.push(conn);
        }
    }

    /// Run `f` in one write transaction: committed (durably, as the server's
    /// `synchronous_commit` says) when it returns `Ok`, rolled back when it
    /// returns `Err`. Three round trips whatever `f` reads that the previous
    /// write transaction read too (`ahead.rs`): BEGIN with the write lock and
    /// the reads ahead; the reads not read ahead, one each; the changes with
    /// COMMIT.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&mut Write<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let conn = Arc::new(self.take()?);
        let mut asks = self.learned.lock().unwrap_or_else(PoisonError::into_inner).clone();
        asks.append(&mut self.next.lock().unwrap_or_else(PoisonError::into_inner));
        let out = self.write_on(&conn, &asks, f);
        if out.is_err() {
            // Nothing to undo if BEGIN never ran or COMMIT failed: harmless.
            let _ = conn.batch("ROLLBACK");
        }
        self.give(conn);
        out
    }

    fn write_on<T>(
        &self,
        conn: &Arc<Conn>,
        asks: &[ahead::Ask],
        f: impl FnOnce(&mut Write<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let begin = format!("BEGIN; SELECT pg_advisory_xact_lock({LOCK_WRITES}, hashtext(current_schema()))");
        let params = ahead::Params::of(asks);
        let rows = params
            .with(|p| conn.batch_then_query(&begin, (!asks.is_empty()).then_some((&conn.sql.ahead, p))))?;
        let tx = PgTx::writing(Arc::clone(conn), params.answers(&rows)?);
        let mut w = Write::new(&tx, None);
        let out = f(&mut w)?;
        drop(w);
        tx.flush_and_commit(&self.owners)?;
        *self.learned.lock().unwrap_or_else(PoisonError::into_inner) = tx.asks();
        Ok(out)
    }

    /// Read ahead, with the next write transaction's BEGIN, the page of
    /// `table` in `[from, to)` its first scan of that range asks for.
    pub(crate) fn scan_next(&self, table: super::Table, from: Vec<u8>, to: Vec<u8>) {
        let ask = ahead::Ask { table: table.name(), from, to: Some(to), reverse: false, rows: kv::PAGE };
        self.next.lock().unwrap_or_else(PoisonError::into_inner).push(ask);
    }

    /// The value at `key` now: one statement, its own snapshot.
    pub(crate) fn get_now(&self, table: super::Table, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        let conn = Arc::new(self.take()?);
        let rows = conn.query(&conn.sql.get, &[&table.name(), &key]);
        self.give(conn);
        match rows?.first() {
            Some(row) => Ok(Some(
                row.try_get::<_, Vec<u8>>(0)
                    .map_err(|e| StorageError(format!("a PostgreSQL row is unreadable: {e}")))?,
            )),
            None => Ok(None),
        }
    }

    /// Run `f` on a snapshot.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&Snapshot) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let conn = Arc::new(self.take()?);
        let snapshot = Snapshot { kv: Box::new(PgTx::new(Arc::clone(&conn))) };
        let out = transact(&conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", || f(&snapshot));
        drop(snapshot);
        self.give(conn);
        out
    }
}

/// A row as a test sees it: table, key, value, partner.
#[cfg(test)]
pub(crate) type PartnerRow = (String, Vec<u8>, Vec<u8>, String);

/// Tests: every row with its partner; every partner forgotten; filled again.
#[cfg(test)]
impl PgStore {
    /// Every row of `ach_kv`: (table, key, value, partner).
    pub(crate) fn rows_with_partner(&self) -> Result<Vec<PartnerRow>, StorageError> {
        let conn = self.take()?;
        let rows = futures_executor::block_on(
            conn.client().query("SELECT t, k, v, p FROM ach_kv ORDER BY t, k", &[]),
        )
        .map_err(|e| conn::pg_error(&e));
        self.give(Arc::new(conn));
        rows?
            .iter()
            .map(|r| {
                let get = |e: tokio_postgres::Error| conn::pg_error(&e);
                Ok((
                    r.try_get(0).map_err(get)?,
                    r.try_get(1).map_err(get)?,
                    r.try_get(2).map_err(get)?,
                    r.try_get(3).map_err(get)?,
                ))
            })
            .collect()
    }

    /// Set every row's partner to '' (as migration 2 finds them), then fill
    /// them again as migration 2 does.
    pub(crate) fn forget_and_fill_partners(&self) -> Result<(), StorageError> {
        let conn = self.take()?;
        let out = conn.batch("UPDATE ach_kv SET p = ''").and_then(|()| schema::fill_owners(conn.client()));
        self.give(Arc::new(conn));
        out
    }
}

impl Drop for PgStore {
    /// Close the connections and let the runtime's thread go without waiting
    /// for it: dropping a runtime from inside another (a host's async code
    /// dropping the engine) would otherwise panic.
    fn drop(&mut self) {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).clear();
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// `begin`, then `f`, then COMMIT; ROLLBACK when `f` fails.
fn transact<T>(
    conn: &Conn,
    begin: &str,
    f: impl FnOnce() -> Result<T, StorageError>,
) -> Result<T, StorageError> {
    conn.batch(begin)?;
    match f() {
        Ok(out) => conn.batch("COMMIT").map(|()| out),
        Err(e) => {
            let _ = conn.batch("ROLLBACK");
            Err(e)
        }
    }
}
