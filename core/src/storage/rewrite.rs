//! Rewriting a database file: every table copied into a fresh file that then
//! replaces the old one. redb writes copy-on-write and never clears a freed
//! page, so a value replaced in place (an image stored in clear, then sealed)
//! stays readable in the file's free pages; a fresh file holds only live data.
//! The redo log is emptied with it (it keeps records of earlier rounds).

use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable};

use super::{fail, open, StorageError, Store, Table};

impl Store {
    /// Copy every table into `<path>.rewrite`, durably, and rename it over
    /// `path` (this store's file); the store reopened on the new file. A crash
    /// leaves either file whole at `path`; a leftover `.rewrite` is removed by
    /// the next rewrite.
    pub(crate) fn rewrite(self, path: &Path) -> Result<Store, StorageError> {
        let io = |e: std::io::Error| StorageError(format!("cannot rewrite {}: {e}", path.display()));
        let fresh = open::fresh_sibling(path, ".rewrite").map_err(io)?;
        {
            let target = Database::create(&fresh).map_err(fail)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
            }
            // The held transaction (`held.rs`) committed first: the copy
            // holds everything answered.
            self.settle_held()?;
            let db = self.database()?;
            let read = db.as_ref().ok_or_else(|| StorageError("the database is closed".into()))?;
            let read = read.begin_read().map_err(fail)?;
            let write = target.begin_write().map_err(fail)?;
            for table in Table::ALL {
                let from = read.open_table(table.def()).map_err(fail)?;
                let mut to = write.open_table(table.def()).map_err(fail)?;
                for item in from.iter().map_err(fail)? {
                    let (k, v) = item.map_err(fail)?;
                    to.insert(k.value(), v.value()).map_err(fail)?;
                }
            }
            write.commit().map_err(fail)?;
        }
        // Everything is in redb durably; the log's records of earlier rounds
        // (copies of replaced values too) go with the old file.
        self.checkpoint()?;
        if let Some(journal) = &self.journal {
            journal.clear()?;
        }
        drop(self);
        open::rename_durably(&fresh, path).map_err(io)?;
        Store::open(path).map_err(|problem| match problem {
            super::FileProblem::Storage(e) => e,
            other => StorageError(format!("the rewritten {} does not open: {other:?}", path.display())),
        })
    }
}
