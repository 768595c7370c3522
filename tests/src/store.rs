//! Which storage the engine tests run on: redb in memory, or PostgreSQL when
//! `ACH_TEST_POSTGRES` holds a connection string (and the crate is built with
//! its `postgres` feature; `scripts/test-all` does both). Each engine then
//! gets a schema of its own in that database, so tests stay apart.

use ach_core::engine::{Engine, EngineOptions, OpenError};

/// A new, empty engine with `options` on the store under test.
pub fn engine(options: EngineOptions) -> Result<Engine, OpenError> {
    #[cfg(feature = "postgres")]
    if let Some(url) = std::env::var("ACH_TEST_POSTGRES").ok().filter(|u| !u.is_empty()) {
        let options = match options.encryption_key {
            Some(_) => options,
            None => options.with_encryption_key(ach_core::secrets::EncryptionKey::generate()),
        };
        let schema = format!("ach_t_{}", ach_core::ids::random_alphanumeric(16).to_lowercase());
        let join = if url.contains('?') { '&' } else { '?' };
        return Engine::open_postgres(&format!("{url}{join}options=-csearch_path%3D{schema}"), options);
    }
    Engine::in_memory(options)
}

/// Whether the tests run on PostgreSQL.
pub fn on_postgres() -> bool {
    cfg!(feature = "postgres") && std::env::var("ACH_TEST_POSTGRES").is_ok_and(|u| !u.is_empty())
}
