//! The PostgreSQL backend (feature `postgres`): the same tables as rows of one
//! PostgreSQL table (`kv.rs`), over connections kept in a small pool
//! (`conn.rs`), the schema migrated at open (`schema.rs`).
//!
//! A write transaction takes a transaction-scoped advisory lock first, so the
//! write transactions of every process over the database run one at a time,
//! as redb's do in one process. It commits without waiting for the disk
//! (which would hold the lock through the primary's flush and the
//! standby's), then waits for [`DURABLE`] on the same connection before it
//! returns; a read waits for it too before it answers, so nothing is answered
//! that the standby may not have. A read is a `REPEATABLE READ READ ONLY`
//! transaction: a snapshot.

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

/// Connections kept open between transactions.
const IDLE: usize = 16;

/// A write transaction's first statements: it commits without waiting for
/// the disk, and takes the write lock (0x4143_4802, with the schema's name
/// hashed: one lock per engine database).
const BEGIN_WRITE: &str = "BEGIN; SET LOCAL synchronous_commit = off; \
     SELECT pg_advisory_xact_lock(1094928386, hashtext(current_schema()))";

macro_rules! durable {
    () => {
        "SELECT pg_logical_emit_message(true, 'ach', '')"
    };
}

/// Waits until everything committed before it is as durable as the
/// server's `synchronous_commit` makes a commit (on: flushed on the primary
/// and on the synchronous standby). A transaction of its own that writes
/// one WAL record (a logical message no one decodes): one that only took a
/// transaction id would commit without waiting. WAL is replayed in order,
/// so every earlier commit, this process's or another's, is then durable.
/// Sent on the connection that committed or read, so that it asks the same
/// server: after a failover a new connection's would prove nothing.
pub(crate) const DURABLE: &str = durable!();

/// COMMIT, then [`DURABLE`].
pub(crate) const COMMIT_DURABLE: &str = concat!("COMMIT; ", durable!());

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
    /// Records decoded by earlier write transactions, by their bytes
    /// (`storage/decoded.rs`: right whoever wrote them).
    decoded: super::decoded::DecodedRecords,
    /// Tests: the next write transaction's answer is lost after its commit.
    #[cfg(test)]
    lose_answer: std::sync::atomic::AtomicBool,
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
            decoded: super::decoded::DecodedRecords::default(),
            #[cfg(test)]
            lose_answer: std::sync::atomic::AtomicBool::new(false),
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
    /// `synchronous_commit` says: [`DURABLE`]) when it returns `Ok`, rolled
    /// back when it returns `Err`. Three round trips whatever `f` reads that
    /// the previous write transaction read too (`ahead.rs`): BEGIN with the
    /// write lock and the reads ahead; the reads not read ahead, one each;
    /// the changes with COMMIT and [`DURABLE`] (the lock is free from the
    /// COMMIT on, while this process waits for the disks). An `Err` after
    /// the COMMIT was sent leaves the outcome unknown: committed or not.
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
        let params = ahead::Params::of(asks);
        let rows = params.with(|p| {
            conn.batch_then_query(BEGIN_WRITE, (!asks.is_empty()).then_some((&conn.sql.ahead, p)))
        })?;
        let tx = PgTx::writing(Arc::clone(conn), params.answers(&rows)?);
        let mut w = Write::new(&tx, None);
        w.records = Some(&self.decoded);
        let out = f(&mut w)?;
        drop(w);
        tx.flush_and_commit(&self.owners)?;
        #[cfg(test)]
        if self.lose_answer.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return Err(StorageError("test: the commit's answer was lost".into()));
        }
        *self.learned.lock().unwrap_or_else(PoisonError::into_inner) = tx.asks();
        Ok(out)
    }

    /// Read ahead, with the next write transaction's BEGIN, the page of
    /// `table` in `[from, to)` its first scan of that range asks for.
    pub(crate) fn scan_next(&self, table: super::Table, from: Vec<u8>, to: Vec<u8>) {
        let ask = ahead::Ask { table: table.name(), from, to: Some(to), reverse: false, rows: kv::PAGE };
        self.next.lock().unwrap_or_else(PoisonError::into_inner).push(ask);
    }

    /// The value at `key` now: one statement, its own snapshot, answered
    /// once what it saw is durable ([`DURABLE`], in the same round trip).
    pub(crate) fn get_now(&self, table: super::Table, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        let conn = Arc::new(self.take()?);
        let rows = conn.query_then_batch(&conn.sql.get, &[&table.name(), &key], DURABLE);
        self.give(conn);
        match rows?.first() {
            Some(row) => Ok(Some(
                row.try_get::<_, Vec<u8>>(0)
                    .map_err(|e| StorageError(format!("a PostgreSQL row is unreadable: {e}")))?,
            )),
            None => Ok(None),
        }
    }

    /// Run `f` on a snapshot, answered once what it saw is durable (another
    /// process's commit may be visible before it is: [`DURABLE`]).
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

    /// Lose the next write transaction's answer: committed, yet an error,
    /// as when the connection breaks while [`DURABLE`] waits.
    pub(crate) fn lose_next_answer(&self) {
        self.lose_answer.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Put back exactly `rows` (from [`PgStore::rows_with_partner`]), as a
    /// promoted standby that had everything up to then and nothing after.
    pub(crate) fn replace_rows(&self, rows: &[PartnerRow]) -> Result<(), StorageError> {
        let conn = self.take()?;
        let tables: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        let keys: Vec<&[u8]> = rows.iter().map(|r| r.1.as_slice()).collect();
        let values: Vec<&[u8]> = rows.iter().map(|r| r.2.as_slice()).collect();
        let partners: Vec<&str> = rows.iter().map(|r| r.3.as_str()).collect();
        let out = conn.batch("BEGIN; DELETE FROM ach_kv").and_then(|()| {
            futures_executor::block_on(conn.client().execute(
                "INSERT INTO ach_kv (t, k, v, p) \
                 SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::text[])",
                &[&tables, &keys, &values, &partners],
            ))
            .map_err(|e| conn::pg_error(&e))?;
            conn.batch("COMMIT")
        });
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

/// `begin`, then `f`, then COMMIT and [`DURABLE`]; ROLLBACK when `f` fails.
fn transact<T>(
    conn: &Conn,
    begin: &str,
    f: impl FnOnce() -> Result<T, StorageError>,
) -> Result<T, StorageError> {
    conn.batch(begin)?;
    match f() {
        Ok(out) => conn.batch(COMMIT_DURABLE).map(|()| out),
        Err(e) => {
            let _ = conn.batch("ROLLBACK");
            Err(e)
        }
    }
}
