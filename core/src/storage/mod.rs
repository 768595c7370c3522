//! Storage: the only module that names redb.
//!
//! Every table maps byte keys to byte values; values are serde_json records (small,
//! inspectable, versioned by the stored format version), except the transactions'
//! and the feeds' (postcard: see [`Table::binary`]). Composite keys are built
//! by [`row_keys`] with big-endian integers so that byte order is time or sequence order.
//! Tables, keys and which operation writes what are listed in `docs/design.md`.

mod backup;
mod codec;
mod commit;
#[cfg(feature = "simulation")]
pub mod crash;
mod decoded;
mod durability;
mod error;
mod health;
mod kv;
mod log;
mod migrate;
mod open;
mod pending_commit;
#[cfg(test)]
mod pending_commit_tests;
#[cfg(feature = "postgres")]
mod postgres;
mod reads;
mod redb_kv;
pub(crate) mod row_keys;
mod snapshot;
mod store;
mod table;
#[cfg(test)]
mod tests;
mod write;
mod write_cache;
#[cfg(test)]
mod write_cache_tests;

pub use backup::BackupFigures;
pub(crate) use backup::{inspect, restore};
pub(crate) use codec::{decode, encode, key_after};
use error::fail;
pub use error::StorageError;
pub use health::{StorageEvent, StorageHook};
pub use log::log_file_for;
#[cfg(feature = "simulation")]
pub use log::LogSettings;
pub(crate) use open::{panic_text, FileProblem};
pub(crate) use reads::RawEntry;
/// redb's storage backend trait, for the simulation hooks (feature `simulation`).
#[cfg(feature = "simulation")]
pub use redb::StorageBackend;
pub(crate) use snapshot::Snapshot;
pub(crate) use store::Store;
pub(crate) use table::Table;
pub(crate) use write::Write;
