//! A backup: every table of one snapshot copied into a new database file.
//!
//! The snapshot is taken as an answer's read is ([`Store::read_durable`]): it
//! holds every transaction answered before the backup began, whether redb or
//! the redo log held it, and nothing half-written. The copy is a complete redb
//! database with an empty log: it opens by itself, and sealed values stay
//! sealed (bytes are copied, never opened). It is written under
//! `<dest>.partial` and renamed into place only once durable, so `dest` is
//! either absent or whole; an existing `dest` is never written over.

use std::path::Path;

use redb::{Database, Durability, ReadableDatabase};

use super::kv::{KvRead, Span};
use super::log::log_file_for;
use super::open::{check_format, check_header, fresh_sibling, guarded, rename_durably, FileProblem};
use super::redb_kv::RedbRead;
use super::{fail, key_after, StorageError, Store, Table};

/// Bytes copied between two commits of the copy (its own commits are not
/// synced until the last: only the rename publishes the file).
const CHUNK_BYTES: usize = 16 << 20;

/// What a backup copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BackupFigures {
    /// Entries, all tables together.
    pub entries: u64,
    /// Bytes of keys and values.
    pub bytes: u64,
}

impl Store {
    /// Copy one snapshot of every table into a new database at `dest`.
    pub(crate) fn backup_to(&self, dest: &Path) -> Result<BackupFigures, StorageError> {
        let io = |e: std::io::Error| StorageError(format!("cannot write the backup {}: {e}", dest.display()));
        if dest.try_exists().map_err(io)? {
            return Err(StorageError(format!(
                "{} exists: a backup never writes over a file",
                dest.display()
            )));
        }
        let partial = fresh_sibling(dest, ".partial").map_err(io)?;
        let copied = self.read_durable(|snapshot| copy_into(snapshot.kv(), &partial, CHUNK_BYTES));
        let figures = match copied {
            Ok(figures) => figures,
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                return Err(e);
            }
        };
        rename_durably(&partial, dest).map_err(io)?;
        Ok(figures)
    }
}

/// Write every table of `from` into a new database at `path`, committing
/// (unsynced) after about `chunk` bytes.
fn copy_into(from: &dyn KvRead, path: &Path, chunk: usize) -> Result<BackupFigures, StorageError> {
    let db = Database::create(path).map_err(fail)?;
    restrict(path);
    let mut figures = BackupFigures::default();
    let mut tx = db.begin_write().map_err(fail)?;
    tx.set_durability(Durability::None).map_err(fail)?;
    let mut since_commit = 0usize;
    for table in Table::ALL {
        // Every table exists in the copy, empty or not (as in any database).
        tx.open_table(table.def()).map_err(fail)?;
        let mut from_key: Vec<u8> = Vec::new();
        // A chunk at a time: the write transaction is committed (unsynced)
        // and a new one begun between chunks, the scan resuming after the
        // last key copied.
        loop {
            let mut last: Option<Vec<u8>> = None;
            {
                let mut t = tx.open_table(table.def()).map_err(fail)?;
                from.scan(table, Span::up(&from_key, None, usize::MAX), &mut |k, v| {
                    t.insert(k, v).map_err(fail)?;
                    figures.entries += 1;
                    figures.bytes += (k.len() + v.len()) as u64;
                    since_commit += k.len() + v.len();
                    last = Some(k.to_vec());
                    Ok(since_commit < chunk)
                })?;
            }
            if since_commit < chunk {
                break;
            }
            tx.commit().map_err(fail)?;
            tx = db.begin_write().map_err(fail)?;
            tx.set_durability(Durability::None).map_err(fail)?;
            since_commit = 0;
            match last {
                Some(key) => from_key = key_after(&key),
                None => break,
            }
        }
    }
    tx.set_durability(Durability::Immediate).map_err(fail)?;
    tx.commit().map_err(fail)?;
    Ok(figures)
}

/// The copy holds what the database holds: readable by its owner only.
fn restrict(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    let _ = path;
}

/// The backup at `path`, opened without changing it: a redb database (one
/// needing repair is refused, not repaired) of a format this build opens.
fn open_backup(path: &Path) -> Result<redb::ReadOnlyDatabase, FileProblem> {
    check_header(path)?;
    let source = guarded(|| redb::Builder::new().open_read_only(path).map_err(fail))?;
    guarded(|| check_format(&source))?;
    Ok(source)
}

/// What the backup at `path` holds, read without changing it: `Err` unless it
/// is a whole database of a format this build opens.
pub(crate) fn inspect(path: &Path) -> Result<BackupFigures, FileProblem> {
    let source = open_backup(path)?;
    guarded(|| {
        let read = RedbRead(source.begin_read().map_err(fail)?);
        let mut figures = BackupFigures::default();
        for table in Table::ALL {
            read.scan(table, Span::up(&[], None, usize::MAX), &mut |k, v| {
                figures.entries += 1;
                figures.bytes += (k.len() + v.len()) as u64;
                Ok(true)
            })?;
        }
        Ok(figures)
    })
}

/// Restore the backup at `backup` as the database at `database`: a copy of
/// it, checked on the way (a redb database of a format this build opens),
/// written whole or not at all. Neither the database nor its redo log may
/// exist; the backup itself is only read.
pub(crate) fn restore(backup: &Path, database: &Path) -> Result<BackupFigures, FileProblem> {
    let io = |e: std::io::Error| StorageError(format!("cannot restore into {}: {e}", database.display()));
    for present in [database.to_owned(), log_file_for(database)] {
        if present.try_exists().map_err(io)? {
            return Err(FileProblem::Storage(StorageError(format!(
                "{} exists: a restore never writes over a database",
                present.display()
            ))));
        }
    }
    let source = open_backup(backup)?;
    let partial = fresh_sibling(database, ".partial").map_err(io)?;
    let copied = guarded(|| {
        let tx = source.begin_read().map_err(fail)?;
        copy_into(&RedbRead(tx), &partial, CHUNK_BYTES)
    });
    match copied {
        Ok(figures) => {
            rename_durably(&partial, database).map_err(io)?;
            Ok(figures)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_copy_in_many_chunks_holds_every_entry_of_every_table() {
        let store = Store::in_memory().unwrap();
        let mut written = Vec::new();
        store
            .write(|w| {
                for (n, table) in [Table::Customers, Table::Blobs, Table::Events].into_iter().enumerate() {
                    for i in 0..50u32 {
                        let key = [&[n as u8][..], &i.to_be_bytes()].concat();
                        let value = vec![i as u8; 10 + i as usize];
                        w.put_raw(table, &key, &value)?;
                        written.push((table, key, value));
                    }
                }
                Ok(())
            })
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("copy.redb");
        // A chunk smaller than one entry: a commit after every entry.
        let figures = store.read_durable(|s| copy_into(s.kv(), &path, 16)).unwrap();
        let copy = Database::open(&path).unwrap();
        let tx = copy.begin_read().unwrap();
        let read = RedbRead(tx);
        let mut found = 0u64;
        for (table, key, value) in &written {
            let mut got = None;
            read.get_with(*table, key, &mut |v| {
                got = Some(v.to_vec());
                Ok(())
            })
            .unwrap();
            assert_eq!(got.as_ref(), Some(value), "{table:?} {key:?}");
            found += 1;
        }
        let total =
            store.read_durable(|s| Table::ALL.iter().map(|t| s.count(*t)).sum::<Result<u64, _>>()).unwrap();
        assert_eq!(figures.entries, total, "every table, the meta entries included");
        assert!(found < total);
        // Every table exists in the copy, with as many entries as the source's.
        let copied = RedbRead(copy.begin_read().unwrap());
        for table in Table::ALL {
            let source = store.read_durable(|s| s.count(table)).unwrap();
            let mut count = 0u64;
            copied
                .scan(table, Span::up(&[], None, usize::MAX), &mut |_, _| {
                    count += 1;
                    Ok(true)
                })
                .unwrap();
            assert_eq!(count, source, "{table:?}");
        }
    }
}
