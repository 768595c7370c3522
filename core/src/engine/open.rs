//! Opening an engine over a database file: which files must exist together,
//! and what a refused open leaves behind (nothing new).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use super::{key_file_for, Engine, EngineOptions, OpenError};
use crate::secrets::EncryptionKey;
use crate::storage::{panic_text, FileProblem, StorageError, Store};

/// [`Engine::open`].
pub(super) fn file(path: &Path, options: EngineOptions) -> Result<Engine, OpenError> {
    // A path that cannot even be looked at (a NUL byte in it, a directory that
    // may not be searched) is the database's problem, said before any key file
    // is touched.
    let exists = path
        .try_exists()
        .map_err(|e| OpenError::Storage(StorageError(format!("cannot open {}: {e}", path.display()))))?;
    let (key, made_key) = match &options.encryption_key {
        Some(key) => (key.clone(), None),
        None => {
            let key_file = key_file_for(path);
            match (exists, key_file.try_exists().unwrap_or(true)) {
                (true, false) => {
                    return Err(OpenError::MissingKey { database: path.to_owned(), key: key_file });
                }
                (false, true) => {
                    return Err(OpenError::KeyWithoutDatabase { database: path.to_owned(), key: key_file });
                }
                // The key is made before the database: the database's creation
                // (a rename) is the last step of a new one.
                (false, false) => (EncryptionKey::load_or_create(&key_file)?, Some(key_file)),
                (true, true) => (EncryptionKey::load_or_create(&key_file)?, None),
            }
        }
    };
    let opened = open_store(path, exists).and_then(|store| {
        catch_unwind(AssertUnwindSafe(|| Engine::start(store, key, options, Some(path)))).unwrap_or_else(
            |panic| Err(OpenError::Damaged { path: path.to_owned(), detail: panic_text(panic.as_ref()) }),
        )
    });
    if opened.is_err() {
        // Nothing of a new database may stay behind a refusal.
        if !exists {
            let _ = std::fs::remove_file(path);
        }
        if let Some(key_file) = made_key {
            let _ = std::fs::remove_file(key_file);
        }
    }
    opened
}

fn open_store(path: &Path, existed: bool) -> Result<Store, OpenError> {
    let store = Store::open(path).map_err(|problem| match problem {
        FileProblem::Empty => OpenError::Empty(path.to_owned()),
        FileProblem::NotADatabase => OpenError::NotADatabase(path.to_owned()),
        FileProblem::Damaged(detail) => OpenError::Damaged { path: path.to_owned(), detail },
        FileProblem::Storage(e) => OpenError::Storage(e),
    })?;
    #[cfg(unix)]
    if !existed {
        use std::os::unix::fs::PermissionsExt;
        // The database holds sealed account numbers and key hashes: owner only.
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = existed;
    Ok(store)
}
