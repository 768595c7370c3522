//! Opening an engine over a database file: which files must exist together,
//! what a refused open leaves behind (nothing new), and why an open is refused.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use crate::engine::{Engine, EngineOptions};
use crate::secrets::{EncryptionKey, SecretError};
use crate::storage::{panic_text, FileProblem, StorageError, Store};

/// Why the engine could not open.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The database could not be opened or has another format version.
    #[error("{0}")]
    Storage(#[from] StorageError),
    /// The encryption key file could not be read or created.
    #[error("{0}")]
    Secret(#[from] SecretError),
    /// The stored routing directory could not be parsed.
    #[error("the stored routing directory is unreadable: {0}")]
    Directory(String),
    /// The encryption key is not the one this database was created with: account
    /// numbers would not decrypt and duplicate detection would silently reset.
    #[error("the encryption key is not this database's key")]
    WrongKey,
    /// A manual clock set outside the years 0000 to 9999 (what an RFC 3339 instant
    /// can name; near chrono's own limits the calendar arithmetic would overflow).
    #[error("the clock must stand within the years 0000 to 9999, not at {0}")]
    Clock(String),
    /// The database file exists but is empty: an existing file is never
    /// initialised (it was truncated, or never written).
    #[error(
        "the database file {} is empty (0 bytes); an existing file is never initialised: \
         restore it from a backup, or remove it to start a new database",
        .0.display()
    )]
    Empty(PathBuf),
    /// The file is not a database (it does not begin as a redb file does).
    #[error("{} is not a database file (it does not begin as a redb database does)", .0.display())]
    NotADatabase(PathBuf),
    /// The database file is damaged (redb failed on it).
    #[error("the database file {} is damaged ({detail}): restore it from a backup", .path.display())]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// What redb met.
        detail: String,
    },
    /// The database exists but its key file does not: a new key could not
    /// unseal its data, so none is made.
    #[error(
        "the database {} exists but its key file {} does not: restore the key file \
         (a new key could not read this database's data)",
        .database.display(), .key.display()
    )]
    MissingKey {
        /// The database file.
        database: PathBuf,
        /// The missing key file.
        key: PathBuf,
    },
    /// A key file exists but its database does not: the database was moved or
    /// lost, or this is the wrong directory.
    #[error(
        "the key file {} exists but its database {} does not: restore the database, \
         or remove the key file to start a new one",
        .key.display(), .database.display()
    )]
    KeyWithoutDatabase {
        /// The missing database file.
        database: PathBuf,
        /// The key file.
        key: PathBuf,
    },
}

/// The key file used when the host supplies no encryption key: `<database>.key`.
pub fn key_file_for(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// [`Engine::open`].
pub(in crate::engine) fn file(path: &Path, options: EngineOptions) -> Result<Engine, OpenError> {
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
    // The redo log is made beside the database when it has none.
    let log = crate::storage::log_file_for(path);
    let made_log = !log.try_exists().unwrap_or(true);
    let opened = open_store(path, exists).and_then(|store| {
        catch_unwind(AssertUnwindSafe(|| Engine::start(store, key, options))).unwrap_or_else(|panic| {
            Err(OpenError::Damaged { path: path.to_owned(), detail: panic_text(panic.as_ref()) })
        })
    });
    if opened.is_err() {
        // Nothing of a new database may stay behind a refusal.
        if !exists {
            let _ = std::fs::remove_file(path);
        }
        if let Some(key_file) = made_key {
            let _ = std::fs::remove_file(key_file);
        }
        if made_log {
            let _ = std::fs::remove_file(log);
        }
    }
    opened
}

/// The store of an existing database file (never created here).
pub(super) fn open_existing(path: &Path) -> Result<Store, OpenError> {
    let exists = path
        .try_exists()
        .map_err(|e| OpenError::Storage(StorageError(format!("cannot open {}: {e}", path.display()))))?;
    if !exists {
        return Err(OpenError::Storage(StorageError(format!("{} does not exist", path.display()))));
    }
    open_store(path, true)
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
