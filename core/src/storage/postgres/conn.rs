//! One PostgreSQL connection and its prepared statements. The async client
//! is driven by the store's runtime (its connection task runs there); each
//! call is waited for with `futures_executor::block_on`, which needs no
//! runtime of the caller's, so the engine's synchronous API works from any
//! thread.

use futures_executor::block_on;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

use crate::storage::StorageError;

/// A PostgreSQL failure as the engine's storage error.
pub(crate) fn pg_error(e: &tokio_postgres::Error) -> StorageError {
    match e.as_db_error() {
        Some(db) => StorageError(format!("PostgreSQL: {} ({})", db.message(), db.code().code())),
        None => StorageError(format!("PostgreSQL: {e}")),
    }
}

/// The statements every transaction uses, prepared once per connection.
pub(crate) struct Statements {
    pub(crate) get: Statement,
    pub(crate) remove_range: Statement,
    pub(crate) remove_many: Statement,
    pub(crate) put_many: Statement,
    pub(crate) scan_up_to: Statement,
    pub(crate) scan_up: Statement,
    pub(crate) scan_down_to: Statement,
    pub(crate) scan_down: Statement,
    pub(crate) ahead: Statement,
}

/// An open connection.
pub(crate) struct Conn {
    client: Client,
    pub(crate) sql: Statements,
}

impl Conn {
    /// Connect with `config` (its connection task spawned on `rt`) and prepare
    /// the statements. The schema must exist (see `schema.rs`).
    pub(crate) fn open(rt: &tokio::runtime::Runtime, config: &Config) -> Result<Conn, StorageError> {
        let client = Conn::connect(rt, config)?;
        let prepare = |sql: &str| block_on(client.prepare(sql)).map_err(|e| pg_error(&e));
        let sql = Statements {
            get: prepare("SELECT v FROM ach_kv WHERE t = $1 AND k = $2")?,
            remove_range: prepare("DELETE FROM ach_kv WHERE t = $1 AND k >= $2 AND k < $3")?,
            remove_many: prepare(
                "DELETE FROM ach_kv WHERE (t, k) IN (SELECT * FROM unnest($1::text[], $2::bytea[]))",
            )?,
            put_many: prepare(
                "INSERT INTO ach_kv (p, t, k, v) \
                 SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bytea[]) \
                 ON CONFLICT (t, k) DO UPDATE SET v = EXCLUDED.v, p = EXCLUDED.p",
            )?,
            scan_up_to: prepare(
                "SELECT k, v FROM ach_kv WHERE t = $1 AND k >= $2 AND k < $3 ORDER BY k LIMIT $4",
            )?,
            scan_up: prepare("SELECT k, v FROM ach_kv WHERE t = $1 AND k >= $2 ORDER BY k LIMIT $3")?,
            scan_down_to: prepare(
                "SELECT k, v FROM ach_kv WHERE t = $1 AND k >= $2 AND k < $3 ORDER BY k DESC LIMIT $4",
            )?,
            scan_down: prepare("SELECT k, v FROM ach_kv WHERE t = $1 AND k >= $2 ORDER BY k DESC LIMIT $3")?,
            ahead: prepare(super::ahead::SQL)?,
        };
        Ok(Conn { client, sql })
    }

    /// A bare connection (for the schema's migration, before statements exist).
    pub(crate) fn connect(rt: &tokio::runtime::Runtime, config: &Config) -> Result<Client, StorageError> {
        let config = config.clone();
        let connecting = rt.spawn(async move {
            let (client, connection) = config.connect(NoTls).await?;
            tokio::spawn(async move {
                // Ends when the client is dropped or the server goes away; a
                // call on the client then fails, and the store drops it.
                let _ = connection.await;
            });
            Ok::<_, tokio_postgres::Error>(client)
        });
        match block_on(connecting) {
            Ok(Ok(client)) => Ok(client),
            Ok(Err(e)) => Err(pg_error(&e)),
            Err(e) => Err(StorageError(format!("PostgreSQL: the connection task failed: {e}"))),
        }
    }

    /// Rows of a prepared statement.
    pub(crate) fn query(
        &self,
        st: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StorageError> {
        block_on(self.client.query(st, params)).map_err(|e| pg_error(&e))
    }

    /// Run `sql` (statements without parameters: BEGIN, COMMIT, ...).
    /// The client itself (tests: statements of their own).
    #[cfg(test)]
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn batch(&self, sql: &str) -> Result<(), StorageError> {
        block_on(self.client.batch_execute(sql)).map_err(|e| pg_error(&e))
    }

    /// Rows of a prepared statement, then `sql`, in one round trip.
    pub(crate) fn query_then_batch(
        &self,
        st: &Statement,
        params: &[&(dyn ToSql + Sync)],
        sql: &str,
    ) -> Result<Vec<Row>, StorageError> {
        let (rows, done) = block_on(futures_util::future::join(
            self.client.query(st, params),
            self.client.batch_execute(sql),
        ));
        let rows = rows.map_err(|e| pg_error(&e))?;
        done.map_err(|e| pg_error(&e)).map(|()| rows)
    }

    /// Run `sql` (BEGIN and the write lock), and in the same round trip,
    /// if `st` is given, its rows: tokio-postgres pipelines requests polled
    /// together, and the server runs them in order.
    pub(crate) fn batch_then_query(
        &self,
        sql: &str,
        st: Option<(&Statement, &[&(dyn ToSql + Sync)])>,
    ) -> Result<Vec<Row>, StorageError> {
        let Some((st, params)) = st else { return self.batch(sql).map(|()| Vec::new()) };
        let (begun, rows) = block_on(futures_util::future::join(
            self.client.batch_execute(sql),
            self.client.query(st, params),
        ));
        begun.map_err(|e| pg_error(&e))?;
        rows.map_err(|e| pg_error(&e))
    }

    /// Run the prepared `statements`, then `sql` (COMMIT), in one round
    /// trip. Any failure is the answer: a statement's (after which the
    /// server's COMMIT only rolls back) or the commit's.
    pub(crate) fn execute_then_batch(
        &self,
        statements: &[(&Statement, &[&(dyn ToSql + Sync)])],
        sql: &str,
    ) -> Result<(), StorageError> {
        let executed =
            futures_util::future::join_all(statements.iter().map(|(st, p)| self.client.execute(*st, p)));
        let (executed, done) = block_on(futures_util::future::join(executed, self.client.batch_execute(sql)));
        for result in executed {
            result.map_err(|e| pg_error(&e))?;
        }
        done.map_err(|e| pg_error(&e))
    }

    /// Whether the connection is gone (the server closed it or failed).
    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}
