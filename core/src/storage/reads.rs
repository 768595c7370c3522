//! The reads both transaction kinds have: a [`Write`] sees its own writes, a
//! [`Snapshot`] a consistent state of the database. Each is built on the
//! backend's [`KvRead`](super::kv::KvRead) (`kv.rs`).

use serde::de::DeserializeOwned;

use super::codec::decode;
use super::error::StorageError;
use super::kv::Span;
use super::snapshot::Snapshot;
use super::table::Table;
use super::write::Write;

/// One entry of a range scan.
pub(crate) type RawEntry = (Vec<u8>, Vec<u8>);

macro_rules! readable {
    ($t:ty) => {
        // Both transaction kinds get every read; each uses only some of them.
        #[allow(dead_code)]
        impl $t {
            /// The raw value at `key`.
            pub(crate) fn get_raw(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
                let mut out = None;
                self.kv().get_with(table, key, &mut |v| {
                    out = Some(v.to_vec());
                    Ok(())
                })?;
                Ok(out)
            }

            /// The record at `key`.
            pub(crate) fn get<T: DeserializeOwned>(
                &self,
                table: Table,
                key: &[u8],
            ) -> Result<Option<T>, StorageError> {
                let mut out = None;
                self.kv().get_with(table, key, &mut |v| {
                    out = Some(decode(table, v)?);
                    Ok(())
                })?;
                Ok(out)
            }

            /// Up to `limit` entries with keys in `[from, to)`, in key order.
            pub(crate) fn range(
                &self,
                table: Table,
                from: &[u8],
                to: &[u8],
                limit: usize,
            ) -> Result<Vec<RawEntry>, StorageError> {
                let mut out = Vec::new();
                if limit > 0 {
                    self.kv().scan(table, Span::up(from, Some(to), limit), &mut |k, v| {
                        out.push((k.to_vec(), v.to_vec()));
                        Ok(out.len() < limit)
                    })?;
                }
                Ok(out)
            }

            /// Up to `limit` entries with keys at or after `from`, in key order.
            pub(crate) fn range_from(
                &self,
                table: Table,
                from: &[u8],
                limit: usize,
            ) -> Result<Vec<RawEntry>, StorageError> {
                let mut out = Vec::new();
                if limit > 0 {
                    self.kv().scan(table, Span::up(from, None, limit), &mut |k, v| {
                        out.push((k.to_vec(), v.to_vec()));
                        Ok(out.len() < limit)
                    })?;
                }
                Ok(out)
            }

            /// How many entries `table` holds (every one, read one at a time).
            pub(crate) fn count(&self, table: Table) -> Result<u64, StorageError> {
                let mut count = 0u64;
                self.kv().scan(table, Span::up(&[], None, usize::MAX), &mut |_, _| {
                    count += 1;
                    Ok(true)
                })?;
                Ok(count)
            }

            /// Call `visit` with every value whose key is in `[from, to)`, in key
            /// order, one at a time (a long range is never held in memory whole).
            pub(crate) fn for_each_value(
                &self,
                table: Table,
                from: &[u8],
                to: &[u8],
                visit: &mut dyn FnMut(&[u8]) -> Result<(), StorageError>,
            ) -> Result<(), StorageError> {
                self.kv()
                    .scan(table, Span::up(from, Some(to), usize::MAX), &mut |_, v| visit(v).map(|()| true))
            }

            /// Call `visit` with every entry whose key is in `[from, to)`, in key
            /// order, one at a time, until it answers `false`.
            pub(crate) fn scan(
                &self,
                table: Table,
                from: &[u8],
                to: &[u8],
                visit: &mut dyn FnMut(&[u8], &[u8]) -> Result<bool, StorageError>,
            ) -> Result<(), StorageError> {
                self.kv().scan(table, Span::up(from, Some(to), usize::MAX), visit)
            }

            /// Call `visit` with every entry whose key is in `[from, to)`, in
            /// descending key order, one at a time, until it answers `false`
            /// (`expected`: about how many it will take, what a backend that
            /// reads pages fetches at once).
            pub(crate) fn scan_down(
                &self,
                table: Table,
                (from, to): (&[u8], &[u8]),
                expected: usize,
                visit: &mut dyn FnMut(&[u8], &[u8]) -> Result<bool, StorageError>,
            ) -> Result<(), StorageError> {
                self.kv().scan(table, Span::down(from, Some(to), expected), visit)
            }

            /// The last key in `[from, to)`, if any.
            pub(crate) fn last_key(
                &self,
                table: Table,
                from: &[u8],
                to: &[u8],
            ) -> Result<Option<Vec<u8>>, StorageError> {
                let mut out = None;
                self.kv().scan(table, Span::down(from, Some(to), 1), &mut |k, _| {
                    out = Some(k.to_vec());
                    Ok(false)
                })?;
                Ok(out)
            }

            /// The first key of the table, if any.
            pub(crate) fn first_key(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError> {
                let mut out = None;
                self.kv().scan(table, Span::up(&[], None, 1), &mut |k, _| {
                    out = Some(k.to_vec());
                    Ok(false)
                })?;
                Ok(out)
            }
        }
    };
}

readable!(Write<'_>);
readable!(Snapshot);
