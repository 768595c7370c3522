//! Opening a database file: a new one is created whole or not at all, and an
//! existing one is never initialised. A file that is empty, is not a redb
//! database, or is damaged is refused with a clear error (redb panics on some
//! damaged files: the panic is caught here).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase};

use super::log::{log_file_for, FsLog, Journal, LogSettings};
use super::migrate::{self, other_format};
use super::{fail, row_keys, StorageError, Store, Table};

/// The first bytes of every redb file (redb's `MAGICNUMBER`).
const REDB_MAGIC: [u8; 9] = [b'r', b'e', b'd', b'b', 0x1A, 0x0A, 0xA9, 0x0D, 0x0A];

/// Why a database file could not be opened.
#[derive(Debug)]
pub(crate) enum FileProblem {
    /// The file exists but holds no byte.
    Empty,
    /// The file does not begin as a redb database does.
    NotADatabase,
    /// redb panicked while reading the file: it is damaged.
    Damaged(String),
    /// redb's own error (damage it detects, the file open elsewhere, I/O).
    Storage(StorageError),
}

impl From<StorageError> for FileProblem {
    fn from(e: StorageError) -> Self {
        FileProblem::Storage(e)
    }
}

/// Run `f`, turning a panic inside redb into [`FileProblem::Damaged`].
pub(super) fn guarded<T>(f: impl FnOnce() -> Result<T, StorageError>) -> Result<T, FileProblem> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => Ok(result?),
        Err(panic) => Err(FileProblem::Damaged(panic_text(panic.as_ref()))),
    }
}

/// The message of a caught panic.
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic")
        .to_owned()
}

/// Run `f`, turning a panic inside redb into a [`StorageError`] (a reopen).
pub(super) fn catching<T>(f: impl FnOnce() -> Result<T, StorageError>) -> Result<T, StorageError> {
    guarded(f).map_err(|problem| match problem {
        FileProblem::Storage(e) => e,
        FileProblem::Damaged(why) => StorageError(format!("the database file is damaged: redb: {why}")),
        FileProblem::Empty | FileProblem::NotADatabase => {
            StorageError("the database file is unreadable".into())
        }
    })
}

/// Check that an existing file is a redb database before redb opens it.
pub(super) fn check_header(path: &Path) -> Result<(), FileProblem> {
    use std::io::Read as _;
    let io = |e: std::io::Error| StorageError(format!("cannot read {}: {e}", path.display()));
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut head = Vec::with_capacity(REDB_MAGIC.len());
    file.by_ref().take(REDB_MAGIC.len() as u64).read_to_end(&mut head).map_err(io)?;
    match head.len() {
        0 => Err(FileProblem::Empty),
        _ if head != REDB_MAGIC => Err(FileProblem::NotADatabase),
        _ => Ok(()),
    }
}

impl Store {
    /// Open the database file at `path`, creating it first if it does not
    /// exist.
    ///
    /// A new database is created under `<path>.creating` and renamed into place
    /// only once its first commit is durable: a crash while redb creates the file
    /// (before its header is complete) never leaves an unopenable file at `path`.
    /// An existing file is opened, never created over: an empty or foreign file
    /// is refused.
    ///
    /// The redo log `<path>.log` is created beside it (owner only) if it does
    /// not exist, and otherwise replayed: the records the database does not
    /// hold are applied, then the log is emptied. A log without its database
    /// is refused (it would be replayed into the wrong one).
    pub(crate) fn open(path: &Path) -> Result<Store, FileProblem> {
        let log_path = log_file_for(path);
        if !path.exists() {
            if log_path.exists() {
                return Err(FileProblem::Storage(StorageError(format!(
                    "the redo log {} exists but its database {} does not: restore the database, \
                     or remove the log to start a new one",
                    log_path.display(),
                    path.display()
                ))));
            }
            create(path)?;
        }
        check_header(path)?;
        let file = path.to_owned();
        let reopen = move || catching(|| Database::builder().open(&file).map_err(fail));
        let db = guarded(|| Database::builder().open(path).map_err(fail))?;
        // A database of another format is refused before its log is touched.
        guarded(|| check_format(&db))?;
        let io = |e: std::io::Error| StorageError(format!("cannot open {}: {e}", log_path.display()));
        let journal = Journal::new(Box::new(FsLog::open(&log_path).map_err(io)?), LogSettings::default());
        guarded(|| journal.recover(&db))?;
        guarded(|| Store::init(db, Some(Box::new(reopen)), Some(journal)))
    }
}

/// `Err` if `db` holds a format version this build does not open.
pub(super) fn check_format(db: &impl ReadableDatabase) -> Result<(), StorageError> {
    let tx = db.begin_read().map_err(fail)?;
    let table = match tx.open_table(Table::Meta.def()) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
        Err(e) => return Err(fail(e)),
    };
    let Some(stored) = table.get(row_keys::META_FORMAT).map_err(fail)? else { return Ok(()) };
    match serde_json::from_slice::<u32>(stored.value()) {
        Ok(v) if migrate::opens(v) => Ok(()),
        Ok(v) => Err(other_format(v)),
        Err(e) => Err(StorageError(format!("the stored format version is unreadable: {e}"))),
    }
}

/// Create a new database at `path` (which does not exist).
fn create(path: &Path) -> Result<(), StorageError> {
    let io = |e: std::io::Error| StorageError(format!("cannot create {}: {e}", path.display()));
    // A leftover from a crash during an earlier creation holds nothing.
    let creating = fresh_sibling(path, ".creating").map_err(io)?;
    drop(Store::init(Database::create(&creating).map_err(fail)?, None, None)?);
    rename_durably(&creating, path).map_err(io)
}

/// `path` with `suffix` appended, any file left there by a crash removed.
pub(super) fn fresh_sibling(path: &Path, suffix: &str) -> std::io::Result<PathBuf> {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    let sibling = PathBuf::from(name);
    if sibling.exists() {
        std::fs::remove_file(&sibling)?;
    }
    Ok(sibling)
}

/// Rename `from` over `to`, and make the rename itself durable (its directory
/// synced).
pub(super) fn rename_durably(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::rename(from, to)?;
    if let Some(dir) = to.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}
