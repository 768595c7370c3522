//! The store: the database opened (in memory, over a file, a simulated disk
//! or PostgreSQL), its tables created and its format checked, reopened after
//! a failure, and read in snapshots. Its write transactions are in
//! `commit.rs`; the transaction held across synced records in `pending_commit.rs`.

use std::fmt;
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use redb::backends::InMemoryBackend;
use redb::{Database, ReadableDatabase};

use super::codec::FORMAT_VERSION;
#[cfg(feature = "simulation")]
use super::crash;
use super::durability::Durability;
use super::error::{fail, StorageError};
use super::health::{self, StorageEvent, StorageHook};
#[cfg(feature = "simulation")]
use super::log::LogSettings;
use super::migrate::{self, other_format};
#[cfg(feature = "postgres")]
use super::postgres;
use super::snapshot::Snapshot;
use super::table::Table;
use super::{decoded, log, open, pending_commit, redb_kv, row_keys, write_cache};

/// Opens the database again after a failure (`None`: in memory, never reopened).
type Reopen = Box<dyn Fn() -> Result<Database, StorageError> + Send + Sync>;

/// The database.
///
/// Every transaction holds a read lock on the database handle for its whole
/// life; after a failed transaction, [`Store::recover`] takes the write lock (so
/// no transaction is in flight), and if redb refuses to begin a write (it does
/// after any I/O error, until reopened), closes the database and opens it again.
/// A reopen that fails leaves no database; the next transaction tries again.
///
/// A store over a file keeps a redo log beside it ([`log`]): each write
/// transaction's effects are appended to it (and synced, unless deferred)
/// while redb commits without a sync; a checkpoint (a durable redb commit)
/// now and then, and when the store closes, lets the log start afresh. A store
/// in memory has none.
pub(crate) struct Store {
    pub(super) db: RwLock<Option<Database>>,
    reopen: Option<Reopen>,
    pub(super) health: health::Health,
    pub(super) durability: Durability,
    pub(super) journal: Option<log::Journal>,
    /// The write transaction held open after its records were synced
    /// (`pending_commit.rs`); `may_be_pending` is set while there may be one.
    pub(super) pending_commit: std::sync::Mutex<Option<pending_commit::PendingCommit>>,
    pub(super) may_be_pending: std::sync::atomic::AtomicBool,
    /// Write transactions committed here that changed a key or a
    /// suspension (the credentials epoch of a store no other process
    /// writes: [`Store::credentials_epoch`]).
    pub(super) credentials_moved: std::sync::atomic::AtomicU64,
    /// Records decoded by earlier write transactions (`decoded.rs`).
    pub(super) decoded: decoded::DecodedRecords,
    /// What earlier write transactions learned of a few keys and ranges
    /// (`write_cache.rs`): kept on redb only, which this process alone writes.
    pub(super) write_cache: write_cache::WriteCache,
    /// A store over PostgreSQL (feature `postgres`): every transaction goes
    /// there; `db` and `journal` are empty.
    #[cfg(feature = "postgres")]
    pub(super) pg: Option<postgres::PgStore>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Store")
    }
}

impl Store {
    /// A database held in memory (redb's in-memory backend; the browser's engine).
    pub(crate) fn in_memory() -> Result<Store, StorageError> {
        let db = Database::builder().create_with_backend(InMemoryBackend::new()).map_err(fail)?;
        Store::init(db, None, None)
    }

    /// A database over one storage backend (feature `simulation`), never
    /// reopened. redb repairs an image left by a crash while opening it.
    #[cfg(feature = "simulation")]
    pub(crate) fn with_backend(backend: impl redb::StorageBackend) -> Result<Store, StorageError> {
        let db = open::catching(|| Database::builder().create_with_backend(backend).map_err(fail))?;
        Store::init(db, None, None)
    }

    /// A database over storage backends (feature `simulation`: the crash tests'
    /// simulated disk): `backend` gives the one to open and, after a failure,
    /// the one to reopen. redb repairs an image left by a crash while opening it.
    #[cfg(feature = "simulation")]
    pub(crate) fn with_backends<B: redb::StorageBackend>(
        backend: impl Fn() -> B + Send + Sync + 'static,
    ) -> Result<Store, StorageError> {
        let open =
            move || open::catching(|| Database::builder().create_with_backend(backend()).map_err(fail));
        let db = open()?;
        Store::init(db, Some(Box::new(open)), None)
    }

    /// A database over a simulated disk (feature `simulation`) with its redo
    /// log in the disk's second file, so that a power loss takes the log's
    /// unsynced tail too; reopened after a failure, as a file database is.
    #[cfg(feature = "simulation")]
    pub(crate) fn on_disk(disk: &crash::SimDisk, settings: LogSettings) -> Result<Store, StorageError> {
        let backends = disk.clone();
        let open = move || {
            open::catching(|| Database::builder().create_with_backend(backends.backend()).map_err(fail))
        };
        let db = open()?;
        open::check_format(&db)?;
        let journal = log::Journal::new(Box::new(disk.log_file()), settings);
        open::catching(|| journal.recover(&db))?;
        Store::init(db, Some(Box::new(open)), Some(journal))
    }

    pub(super) fn init(
        db: Database,
        reopen: Option<Reopen>,
        journal: Option<log::Journal>,
    ) -> Result<Store, StorageError> {
        let store = Store {
            db: RwLock::new(Some(db)),
            reopen,
            health: health::Health::default(),
            durability: Durability::default(),
            journal,
            pending_commit: std::sync::Mutex::new(None),
            may_be_pending: std::sync::atomic::AtomicBool::new(false),
            credentials_moved: std::sync::atomic::AtomicU64::new(0),
            decoded: decoded::DecodedRecords::default(),
            write_cache: write_cache::WriteCache::default(),
            #[cfg(feature = "postgres")]
            pg: None,
        };
        store.prepare()?;
        // The tables just created are in no log record: made durable here.
        store.checkpoint()?;
        Ok(store)
    }

    /// A database on PostgreSQL (feature `postgres`), reached with `url`; its
    /// schema created or migrated.
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres(url: &str) -> Result<Store, StorageError> {
        let store = Store {
            db: RwLock::new(None),
            reopen: None,
            health: health::Health::default(),
            durability: Durability::default(),
            journal: None,
            pending_commit: std::sync::Mutex::new(None),
            may_be_pending: std::sync::atomic::AtomicBool::new(false),
            credentials_moved: std::sync::atomic::AtomicU64::new(0),
            decoded: decoded::DecodedRecords::default(),
            write_cache: write_cache::WriteCache::default(),
            pg: Some(postgres::PgStore::open(url)?),
        };
        store.prepare()?;
        Ok(store)
    }

    /// Check the stored format version (a new database gets this build's; an
    /// older one is migrated) and create every table.
    fn prepare(&self) -> Result<(), StorageError> {
        self.write(|w| {
            let version: Option<u32> = w.get(Table::Meta, row_keys::META_FORMAT)?;
            if let Some(v) = version.filter(|&v| !migrate::opens(v)) {
                return Err(other_format(v));
            }
            // Create every table now (tables added within a format version too),
            // so that readers never meet a missing one.
            for table in Table::ALL {
                w.kv.create(table)?;
            }
            match version {
                Some(FORMAT_VERSION) => Ok(()),
                Some(older) => {
                    migrate::upgrade(w, older, FORMAT_VERSION, migrate::MIGRATIONS)?;
                    w.put(Table::Meta, row_keys::META_FORMAT, &FORMAT_VERSION)
                }
                None => w.put(Table::Meta, row_keys::META_FORMAT, &FORMAT_VERSION),
            }
        })
    }

    /// Whether other processes may write the same database (PostgreSQL):
    /// state an engine keeps in memory must then follow their changes.
    pub(crate) fn multiprocess(&self) -> bool {
        #[cfg(feature = "postgres")]
        if self.pg.is_some() {
            return true;
        }
        false
    }

    /// Tests on PostgreSQL: the store itself.
    #[cfg(all(test, feature = "postgres"))]
    pub(crate) fn postgres_store(&self) -> Option<&postgres::PgStore> {
        self.pg.as_ref()
    }

    /// Tell `hook` about every storage fault and recovery from now on.
    pub(crate) fn set_hook(&self, hook: StorageHook) {
        self.health.set_hook(hook);
    }

    /// Whether the last write transaction failed (none has committed since).
    pub(crate) fn failing(&self) -> bool {
        self.health.failing()
    }

    /// The open database, reopening it first if a failure left none.
    pub(super) fn database(&self) -> Result<RwLockReadGuard<'_, Option<Database>>, StorageError> {
        let guard = self.db.read().unwrap_or_else(PoisonError::into_inner);
        if guard.is_some() {
            return Ok(guard);
        }
        drop(guard);
        self.recover();
        let guard = self.db.read().unwrap_or_else(PoisonError::into_inner);
        if guard.is_some() {
            return Ok(guard);
        }
        Err(StorageError("the database is closed after a failure and could not be reopened".into()))
    }

    /// After a failed transaction: if redb now refuses to begin a write (it
    /// does after an I/O error), close the database and open it again.
    pub(super) fn recover(&self) {
        let Some(reopen) = &self.reopen else { return };
        // Writers are kept out (they take the slot first); what a held
        // transaction holds is committed, or (if that fails) replayed from
        // the log by the reopening below.
        let mut slot = self.pending_slot();
        let _ = self.commit_pending_in(&mut slot);
        let event = {
            let mut db = self.db.write().unwrap_or_else(PoisonError::into_inner);
            // No transaction is in flight: each holds the read lock.
            // A log in doubt (a failed append or sync) is replayed into a
            // freshly opened database, then started afresh.
            let broken = self.journal.as_ref().is_some_and(log::Journal::broken);
            let refusing = broken || db.as_ref().is_none_or(|d| d.begin_write().is_err());
            if !refusing {
                return;
            }
            // Closed (and its file lock released) before it is opened again.
            *db = None;
            self.write_cache.forget();
            let reopened = reopen().and_then(|fresh| match &self.journal {
                Some(journal) => open::catching(|| journal.recover(&fresh)).map(|()| fresh),
                None => Ok(fresh),
            });
            match reopened {
                Ok(fresh) => {
                    *db = Some(fresh);
                    StorageEvent::Reopened
                }
                Err(e) => StorageEvent::ReopenFailed(e.0),
            }
        };
        self.health.tell(&event);
    }

    /// Run `f` in one read transaction (a consistent snapshot) of durable
    /// data only: if a commit it may see was made without a sync, one durable
    /// commit first makes it durable. For anything answered to someone. A
    /// failure is told to the hook and followed by [`Store::recover`].
    pub(crate) fn read_durable<T>(
        &self,
        f: impl FnOnce(&Snapshot) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        self.read_with(true, f)
    }

    /// On PostgreSQL, read ahead with the next write transaction's BEGIN
    /// the first page of `table` in `[from, to)`, which that transaction's
    /// first scan of the range asks for (the window log's new changes).
    /// Nothing on redb.
    pub(crate) fn scan_next(&self, table: Table, from: &[u8], to: &[u8]) {
        #[cfg(feature = "postgres")]
        if let Some(pg) = &self.pg {
            pg.scan_next(table, from.to_vec(), to.to_vec());
        }
        let _ = (table, from, to);
    }

    /// The value at `key` as of now, in one statement (no transaction
    /// around it on PostgreSQL): for a value read on every request whose
    /// change is all that matters (the credentials epoch).
    pub(crate) fn get_now(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        crate::nonblocking::assert_may_block("a storage read");
        #[cfg(feature = "postgres")]
        if let Some(pg) = &self.pg {
            return pg.get_now(table, key);
        }
        self.read_latest(|r| r.get_raw(table, key))
    }

    /// Where the credentials stand: bytes that change whenever a committed
    /// write transaction changed a key or a suspension. On PostgreSQL the
    /// stored epoch, read in one statement (other processes write too); on
    /// redb the count of such commits this store made, from memory.
    pub(crate) fn credentials_epoch(&self) -> Result<Vec<u8>, StorageError> {
        if self.multiprocess() {
            return Ok(self.get_now(Table::Meta, row_keys::META_CREDENTIALS_EPOCH)?.unwrap_or_default());
        }
        Ok(self.credentials_moved.load(std::sync::atomic::Ordering::SeqCst).to_be_bytes().to_vec())
    }

    /// [`Store::read_durable`] that may also see commits not yet durable: for the
    /// engine's own decisions (whether work is due, who a key belongs to),
    /// never for an answer that shows stored data.
    pub(crate) fn read_latest<T>(
        &self,
        f: impl FnOnce(&Snapshot) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        self.read_with(false, f)
    }

    fn read_with<T>(
        &self,
        durable: bool,
        f: impl FnOnce(&Snapshot) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        crate::nonblocking::assert_may_block("a storage read");
        #[cfg(feature = "postgres")]
        if let Some(pg) = &self.pg {
            // Every commit there is durable when it returns: any snapshot is.
            return pg.read(f).inspect_err(|e| self.health.tell(&StorageEvent::ReadFailed(e.0.clone())));
        }
        let attempt = || -> Result<T, StorageError> {
            // Every transaction answered before this read began is in it.
            self.commit_pending()?;
            let tx = {
                let db = self.database()?;
                let db = db.as_ref().ok_or_else(|| StorageError("the database is closed".into()))?;
                db.begin_read().map_err(fail)?
            };
            // The snapshot is taken first: the durable commit comes after
            // everything it holds.
            if durable && self.durability.pending() {
                self.make_durable()?;
            }
            f(&Snapshot { kv: Box::new(redb_kv::RedbRead(tx)) })
        };
        attempt().inspect_err(|e| {
            self.health.tell(&StorageEvent::ReadFailed(e.0.clone()));
            self.recover();
        })
    }
}

impl Drop for Store {
    /// A store with a log closes with a checkpoint, leaving the log empty
    /// (a failure leaves it to the next open's replay).
    fn drop(&mut self) {
        let _ = self.checkpoint();
    }
}
