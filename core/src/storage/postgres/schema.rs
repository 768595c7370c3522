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

/// The migrations, version 1 first.
const MIGRATIONS: &[&str] = &[
    // 1: every engine table as rows of one table: the table's name, the key,
    // the value (bytes as redb stores them), in key order per table.
    "CREATE TABLE ach_kv (t text NOT NULL, k bytea NOT NULL, v bytea NOT NULL, PRIMARY KEY (t, k))",
    // 2: keyed by partner first (`owner.rs`): the partner's id, or '' for a
    // row of the whole service; every read still by (t, k), unique. The
    // rows already there get their partner from [`fill_owners`].
    "ALTER TABLE ach_kv ADD COLUMN p text COLLATE \"C\" NOT NULL DEFAULT ''; \
     ALTER TABLE ach_kv DROP CONSTRAINT ach_kv_pkey; \
     ALTER TABLE ach_kv ADD CONSTRAINT ach_kv_t_k UNIQUE (t, k); \
     ALTER TABLE ach_kv ADD PRIMARY KEY (p, t, k)",
];

/// Set the partner of every row written before migration 2, as `owner.rs`
/// works it out for a new row: in SQL where the key or a JSON record says
/// it, a transaction record's second field read here (in runs of 10,000),
/// then what follows a transaction or a merchant.
pub(crate) fn fill_owners(client: &Client) -> Result<(), StorageError> {
    let run = |sql: &str| block_on(client.batch_execute(sql)).map_err(|e| pg_error(&e));
    run("UPDATE ach_kv SET p = convert_from(k, 'UTF8') WHERE t = 'partners'; \
         UPDATE ach_kv SET p = convert_from(v, 'UTF8')::jsonb ->> 'partner_id' \
           WHERE t IN ('merchants', 'customers'); \
         UPDATE ach_kv SET p = convert_from(substring(k FROM 1 FOR position('\\x00'::bytea IN k) - 1), 'UTF8') \
           WHERE t IN ('changes', 'idempotency') AND position('\\x00'::bytea IN k) > 0")?;
    let mut after: Vec<u8> = Vec::new();
    loop {
        let rows = block_on(client.query(
            "SELECT k, v FROM ach_kv WHERE t = 'transactions' AND k > $1 ORDER BY k LIMIT 10000",
            &[&after],
        ))
        .map_err(|e| pg_error(&e))?;
        let Some(last) = rows.last() else { break };
        after = last.try_get::<_, Vec<u8>>(0).map_err(|e| pg_error(&e))?;
        let mut keys = Vec::with_capacity(rows.len());
        let mut owners = Vec::with_capacity(rows.len());
        for row in &rows {
            let v: &[u8] = row.try_get(1).map_err(|e| pg_error(&e))?;
            owners.push(super::owner::transaction_partner(v)?.to_owned());
            keys.push(row.try_get::<_, Vec<u8>>(0).map_err(|e| pg_error(&e))?);
        }
        block_on(client.execute(
            "UPDATE ach_kv a SET p = u.p FROM unnest($1::bytea[], $2::text[]) AS u(k, p) \
             WHERE a.t = 'transactions' AND a.k = u.k",
            &[&keys, &owners],
        ))
        .map_err(|e| pg_error(&e))?;
    }
    run("UPDATE ach_kv a SET p = x.p FROM ach_kv x \
           WHERE a.t = 'images' AND x.t = 'transactions' \
             AND x.k = substring(a.k FROM 1 FOR position('\\x2f'::bytea IN a.k) - 1); \
         UPDATE ach_kv a SET p = x.p FROM ach_kv x \
           WHERE a.t = 'checks' AND x.t = 'transactions' AND x.k = a.v; \
         UPDATE ach_kv a SET p = CASE \
             WHEN h.id LIKE 'par\\_%' THEN h.id \
             ELSE coalesce((SELECT m.p FROM ach_kv m WHERE m.t = 'merchants' AND m.k = convert_to(h.id, 'UTF8')), '') \
           END \
           FROM (SELECT t, k, CASE WHEN t = 'suspensions' THEN convert_from(k, 'UTF8') \
                   ELSE convert_from(substring(k FROM 1 FOR position('\\x00'::bytea IN k) - 1), 'UTF8') END AS id \
                 FROM ach_kv WHERE t IN ('events', 'usage', 'holder_keys', 'suspensions')) h \
           WHERE a.t = h.t AND a.k = h.k")
}

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
            if version == 2 {
                fill_owners(client)?;
            }
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
