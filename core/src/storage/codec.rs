//! Records as stored bytes: their encoding by table (JSON, or postcard for
//! [`Table::binary`] tables), the version of the stored format, and the key
//! that ends a range at a key.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::StorageError;
use super::table::Table;

/// Version of the stored format; checked on open. Version 7 stores an absent
/// settlement date or instant at a present one's size; version 8 packs a
/// batch's pending index entries into one row per cut-off. Each reads the
/// versions before it as they are, so a version 6 or 7 database opens and is
/// marked 8 (an older build then refuses it, rather than meeting rows it
/// cannot read). Any other version is refused.
pub const FORMAT_VERSION: u32 = 8;

/// The oldest format version this build reads (and marks [`FORMAT_VERSION`]).
pub const READS_FROM_VERSION: u32 = 6;

/// The refusal of a database of format version `v`.
pub(super) fn other_format(v: u32) -> StorageError {
    let reads = if READS_FROM_VERSION == FORMAT_VERSION {
        FORMAT_VERSION.to_string()
    } else {
        format!("{READS_FROM_VERSION} to {FORMAT_VERSION}")
    };
    StorageError(format!("the database has format version {v}; this build reads version {reads}"))
}

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
