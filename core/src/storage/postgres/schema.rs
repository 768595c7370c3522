//! The PostgreSQL schema, created and migrated by the engine itself: numbered
//! migrations, each applied once, in order, under an advisory lock (several
//! processes may start at once); a database migrated by a newer build (a
//! version this build does not know) is refused.

use futures_executor::block_on;
use tokio_postgres::Client;

use super::conn::pg_error;
use crate::storage::StorageError;

/// The advisory lock migrations hold, with the schema's name hashed
/// (PostgreSQL's own: see `docs/design.md`).
pub(crate) const LOCK_SCHEMA: i32 = 0x4143_4801;

/// The migrations, version 1 first (the first release's schema).
const MIGRATIONS: &[&str] = &[
    // 1: every engine table as rows of one table, keyed by partner first
    // (`owner.rs`): the partner's id, or '' for a row of the whole service;
    // the table's name, the key, the value (bytes as redb stores them); every
    // read still by (t, k), unique.
    "CREATE TABLE ach_kv (p text COLLATE \"C\" NOT NULL DEFAULT '', t text NOT NULL, \
     k bytea NOT NULL, v bytea NOT NULL, PRIMARY KEY (p, t, k), CONSTRAINT ach_kv_t_k UNIQUE (t, k))",
];

/// The schema version this build writes.
pub(crate) fn latest() -> i32 {
    i32::try_from(MIGRATIONS.len()).unwrap_or(i32::MAX)
}

/// Bring the schema to [`latest`]; its version before.
pub(crate) fn migrate(client: &Client) -> Result<i32, StorageError> {
    let run = |sql: &str| block_on(client.batch_execute(sql)).map_err(|e| pg_error(&e));
    create_named_schema(client)?;
    run(&format!("BEGIN; SELECT pg_advisory_xact_lock({LOCK_SCHEMA}, hashtext(current_schema()))"))?;
    let migrated = (|| {
        run("CREATE TABLE IF NOT EXISTS ach_schema (version integer PRIMARY KEY, \
             applied_at timestamptz NOT NULL DEFAULT now())")?;
        let row = block_on(client.query_one("SELECT coalesce(max(version), 0) FROM ach_schema", &[]))
            .map_err(|e| pg_error(&e))?;
        let before: i32 = row.try_get(0).map_err(|e| pg_error(&e))?;
        if before > latest() {
            return Err(StorageError(format!(
                "the PostgreSQL schema has version {before}; this build knows versions up to {}",
                latest()
            )));
        }
        for (version, sql) in (1..).zip(MIGRATIONS).skip(usize::try_from(before).unwrap_or(0)) {
            run(sql)?;
            block_on(client.execute("INSERT INTO ach_schema (version) VALUES ($1)", &[&version]))
                .map_err(|e| pg_error(&e))?;
        }
        Ok(before)
    })();
    match migrated {
        Ok(before) => run("COMMIT").map(|()| before),
        Err(e) => {
            let _ = run("ROLLBACK");
            Err(e)
        }
    }
}

/// A `search_path` of one schema that does not exist yet (`options=-c
/// search_path=NAME` in the connection string: a database shared by several
/// services, or a test's own) is created.
fn create_named_schema(client: &Client) -> Result<(), StorageError> {
    let row = block_on(client.query_one("SELECT current_schema(), current_setting('search_path')", &[]))
        .map_err(|e| pg_error(&e))?;
    let current: Option<String> = row.try_get(0).map_err(|e| pg_error(&e))?;
    let path: String = row.try_get(1).map_err(|e| pg_error(&e))?;
    let name = path.trim();
    let plain = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if current.is_none() && plain {
        block_on(client.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS \"{name}\"")))
            .map_err(|e| pg_error(&e))?;
    }
    Ok(())
}
