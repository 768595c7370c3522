//! Backups and restores of a database file (redb; a PostgreSQL database is
//! backed up by PostgreSQL's own tools).
//!
//! A backup is one consistent snapshot of every table, written as a new,
//! complete database file: every transaction answered before it began is in
//! it, sealed values stay sealed (the key is never copied), and the file
//! appears whole or not at all. A restore copies a backup into a new database
//! path the same way; neither ever writes over an existing file.

use std::path::Path;

use super::open::{open_existing, OpenError};
use crate::engine::Engine;
use crate::storage::{self, BackupFigures, FileProblem};

impl Engine {
    /// Back up the engine's database, while it serves, into a new file at
    /// `dest` (which must not exist).
    pub fn backup(&self, dest: &Path) -> Result<BackupFigures, OpenError> {
        Ok(self.store.backup_to(dest)?)
    }
}

/// Back up the database file at `database`, which no process has open
/// (its redo log replayed first, as any open does), into a new file at
/// `dest`. No key is needed: nothing sealed is opened.
pub fn backup_file(database: &Path, dest: &Path) -> Result<BackupFigures, OpenError> {
    let store = open_existing(database)?;
    Ok(store.backup_to(dest)?)
}

/// What the backup file `backup` holds (it is only read): an error unless it
/// is a whole database of a format this build opens.
pub fn check_backup_file(backup: &Path) -> Result<BackupFigures, OpenError> {
    storage::inspect(backup).map_err(|problem| as_open_error(problem, backup))
}

/// Restore the backup file `backup` as a new database at `database`: it must
/// be a database of a format this build opens; neither `database` nor its
/// redo log may exist. The backup is only read.
pub fn restore_file(backup: &Path, database: &Path) -> Result<BackupFigures, OpenError> {
    storage::restore(backup, database).map_err(|problem| as_open_error(problem, backup))
}

/// Why the backup file `backup` was refused.
fn as_open_error(problem: FileProblem, backup: &Path) -> OpenError {
    match problem {
        FileProblem::Empty => OpenError::Empty(backup.to_owned()),
        FileProblem::NotADatabase => OpenError::NotADatabase(backup.to_owned()),
        FileProblem::Damaged(detail) => OpenError::Damaged { path: backup.to_owned(), detail },
        FileProblem::Storage(e) => OpenError::Storage(e),
    }
}
