//! Which storage the engine tests run on: redb in memory, or PostgreSQL when
//! `ACH_TEST_POSTGRES` holds a connection string (and the crate is built with
//! its `postgres` feature; `scripts/test-all` does both). Each engine then
//! gets a schema of its own in that database, so tests stay apart.

use ach_core::engine::{Engine, EngineOptions, OpenError};

/// A new, empty engine with `options` on the store under test.
pub fn engine(options: EngineOptions) -> Result<Engine, OpenError> {
    #[cfg(feature = "postgres")]
    if let Some(url) = postgres_url() {
        let options = match options.encryption_key {
            Some(_) => options,
            None => options.with_encryption_key(ach_core::secrets::EncryptionKey::generate()),
        };
        return Engine::open_postgres(&fresh_schema(&url), options);
    }
    Engine::in_memory(options)
}

/// Two engines over one new database, as two processes over one PostgreSQL
/// database are (each with its own memory: its duplicate window, its caches),
/// with the same key: `None` unless the tests run on PostgreSQL.
pub fn two_engines(make_options: impl Fn() -> EngineOptions) -> Option<(Engine, Engine)> {
    #[cfg(feature = "postgres")]
    if let Some(url) = postgres_url() {
        let key = ach_core::secrets::EncryptionKey::generate();
        let url = fresh_schema(&url);
        let open = || {
            Engine::open_postgres(&url, make_options().with_encryption_key(key.clone()))
                .unwrap_or_else(|e| panic!("{e}"))
        };
        return Some((open(), open()));
    }
    let _ = make_options;
    None
}

#[cfg(feature = "postgres")]
fn postgres_url() -> Option<String> {
    std::env::var("ACH_TEST_POSTGRES").ok().filter(|u| !u.is_empty())
}

/// `url` with a search path of a new schema of its own.
#[cfg(feature = "postgres")]
fn fresh_schema(url: &str) -> String {
    let schema = format!("ach_t_{}", ach_core::ids::random_alphanumeric(16).to_lowercase());
    let join = if url.contains('?') { '&' } else { '?' };
    format!("{url}{join}options=-csearch_path%3D{schema}")
}

/// Whether the tests run on PostgreSQL.
pub fn on_postgres() -> bool {
    cfg!(feature = "postgres") && std::env::var("ACH_TEST_POSTGRES").is_ok_and(|u| !u.is_empty())
}
