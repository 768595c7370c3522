//! Records as stored bytes: their encoding by table (JSON, or postcard for
//! [`Table::binary`] tables), the version of the stored format, and the key
//! that ends a range at a key.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::StorageError;
use super::table::Table;

/// Version of the stored format; checked on open, an older one migrated
/// (`migrate.rs`).
pub const FORMAT_VERSION: u32 = 1;

/// Decode a record of `table` from its stored bytes.
pub(crate) fn decode<T: DeserializeOwned>(table: Table, bytes: &[u8]) -> Result<T, StorageError> {
    let unreadable =
        |e: &dyn fmt::Display| StorageError(format!("a {} record is unreadable: {e}", table.name()));
    if table.binary() {
        postcard::from_bytes(bytes).map_err(|e| unreadable(&e))
    } else {
        serde_json::from_slice(bytes).map_err(|e| unreadable(&e))
    }
}

/// Encode a record for `table`.
pub(crate) fn encode<T: Serialize + ?Sized>(table: Table, value: &T) -> Result<Vec<u8>, StorageError> {
    let cannot =
        |e: &dyn fmt::Display| StorageError(format!("a {} record cannot be encoded: {e}", table.name()));
    if table.binary() {
        // Room for a whole transaction record at once (postcard's own vector
        // starts empty and grows a field at a time).
        postcard::to_extend(value, Vec::with_capacity(256)).map_err(|e| cannot(&e))
    } else {
        serde_json::to_vec(value).map_err(|e| cannot(&e))
    }
}

/// The smallest key after `key` (`key` followed by a zero byte): the exclusive
/// end of a range that ends with `key` itself.
pub(crate) fn key_after(key: &[u8]) -> Vec<u8> {
    let mut end = Vec::with_capacity(key.len() + 1);
    end.extend_from_slice(key);
    end.push(0);
    end
}
