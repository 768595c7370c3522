//! Storage: the only module that names redb.
//!
//! Every table maps byte keys to byte values; values are serde_json records (small,
//! inspectable, versioned by the stored format version), except the transactions'
//! and the feeds' (postcard: see [`Table::binary`]). Composite keys are built
//! by [`row_keys`] with big-endian integers so that byte order is time or sequence order.
//! Tables, keys and which operation writes what are listed in `docs/design.md`.

mod carried;
#[cfg(test)]
mod carried_tests;
#[cfg(feature = "simulation")]
pub mod crash;
mod decoded;
mod durability;
mod health;
mod held;
#[cfg(test)]
mod held_tests;
mod kv;
mod log;
mod open;
#[cfg(feature = "postgres")]
mod postgres;
mod redb_kv;
mod rewrite;
pub(crate) mod row_keys;
#[cfg(test)]
mod tests;

use durability::{Commit, Durability};
pub use health::{StorageEvent, StorageHook};
use held::bytes_of;
use kv::{KvRead, KvWrite};
pub use log::log_file_for;
#[cfg(feature = "simulation")]
pub use log::LogSettings;
pub(crate) use open::{panic_text, FileProblem};
/// redb's storage backend trait, for the simulation hooks (feature `simulation`).
#[cfg(feature = "simulation")]
pub use redb::StorageBackend;

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};

use redb::backends::InMemoryBackend;
use redb::{Database, ReadableDatabase, TableDefinition};
use serde::de::DeserializeOwned;
use serde::Serialize;

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
fn other_format(v: u32) -> StorageError {
    let reads = if READS_FROM_VERSION == FORMAT_VERSION {
        FORMAT_VERSION.to_string()
    } else {
        format!("{READS_FROM_VERSION} to {FORMAT_VERSION}")
    };
    StorageError(format!("the database has format version {v}; this build reads version {reads}"))
}

/// Every table of the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Table {
    /// Engine metadata: format version, pointer secret, clock position.
    Meta,
    /// Partners by id.
    Partners,
    /// Merchants by id.
    Merchants,
    /// API keys by SHA-256 hash → who they authenticate.
    Keys,
    /// Customers (bank account tokens) by id.
    Customers,
    /// Transactions by id.
    Transactions,
    /// Check images by transaction id + side, sealed.
    Images,
    /// Check images' retention: (instant they are deleted, transaction id).
    ImageExpiry,
    /// Pending transactions by (cut-off instant, id).
    Pending,
    /// Originated transactions by (settlement instant, id).
    Settlements,
    /// Status changes by (partner, sequence).
    Changes,
    /// Events by (merchant, sequence).
    Events,
    /// Large values: the loaded routing directory file.
    Blobs,
    /// Usage counters: (merchant or partner, day or month) → count and cents.
    Usage,
    /// Spent check numbers: keyed fingerprint of (merchant, account, check
    /// number) → the transaction that used it.
    Checks,
    /// Idempotency keys: (partner, key) → the request's hash and its answer.
    Idempotency,
    /// The origination file in progress: (cut-off instant, batch, transaction id)
    /// of each transaction originated at a cut-off whose file is not yet written.
    Outgoing,
    /// Written origination files by id → their summary (the text is a sealed blob).
    Files,
    /// Trace numbers (15 digits) → the transaction that carried them.
    Traces,
    /// Entries of bank files already applied (returns, notifications of change).
    Inbound,
    /// The keys of each holder: (holder id, key hash) → nothing (an index of
    /// [`Table::Keys`], to rotate or revoke a holder's keys).
    HolderKeys,
    /// Suspended partners and merchants by id → since when.
    Suspensions,
    /// The duplicate window's changes, for the other processes over a shared
    /// database (PostgreSQL): sequence (8 bytes) → change. Empty on redb.
    WindowLog,
}

impl Table {
    /// Whether the table's records are postcard (compact binary) rather than JSON:
    /// the transactions and the two feeds, the records every create and every
    /// lifecycle step writes (a status change is ~60 bytes instead of ~230, and a
    /// feed page decodes 10,000 of them). Their types must not need a
    /// self-describing format (no untagged enums, no flatten, no skipped fields).
    pub(crate) const fn binary(self) -> bool {
        matches!(self, Table::Transactions | Table::Changes | Table::Events)
    }

    pub(crate) const fn name(self) -> &'static str {
        match self {
            Table::Meta => "meta",
            Table::Partners => "partners",
            Table::Merchants => "merchants",
            Table::Keys => "keys",
            Table::Customers => "customers",
            Table::Transactions => "transactions",
            Table::Images => "images",
            Table::ImageExpiry => "image_expiry",
            Table::Pending => "pending",
            Table::Settlements => "settlements",
            Table::Changes => "changes",
            Table::Events => "events",
            Table::Blobs => "blobs",
            Table::Usage => "usage",
            Table::Checks => "checks",
            Table::Idempotency => "idempotency",
            Table::Outgoing => "outgoing",
            Table::Files => "files",
            Table::Traces => "traces",
            Table::Inbound => "inbound",
            Table::HolderKeys => "holder_keys",
            Table::Suspensions => "suspensions",
            Table::WindowLog => "window_log",
        }
    }

    const fn def(self) -> TableDefinition<'static, &'static [u8], &'static [u8]> {
        TableDefinition::new(self.name())
    }

    const ALL: [Table; 23] = [
        Table::Meta,
        Table::Partners,
        Table::Merchants,
        Table::Keys,
        Table::Customers,
        Table::Transactions,
        Table::Images,
        Table::ImageExpiry,
        Table::Pending,
        Table::Settlements,
        Table::Changes,
        Table::Events,
        Table::Blobs,
        Table::Usage,
        Table::Checks,
        Table::Idempotency,
        Table::Outgoing,
        Table::Files,
        Table::Traces,
        Table::Inbound,
        Table::HolderKeys,
        Table::Suspensions,
        Table::WindowLog,
    ];
}

/// A storage failure: the database could not be read or written (message 7), or a
/// stored record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageError(pub String);

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "storage: {}", self.0)
    }
}

impl std::error::Error for StorageError {}

fn fail(e: impl Into<redb::Error>) -> StorageError {
    StorageError(e.into().to_string())
}

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
    db: RwLock<Option<Database>>,
    reopen: Option<Reopen>,
    health: health::Health,
    durability: Durability,
    journal: Option<log::Journal>,
    /// The write transaction held open after its records were synced
    /// (`held.rs`); `holding` is set while there may be one.
    held: std::sync::Mutex<Option<held::Held>>,
    holding: std::sync::atomic::AtomicBool,
    /// Write transactions committed here that changed a key or a
    /// suspension (the credentials epoch of a store no other process
    /// writes: [`Store::credentials_epoch`]).
    credentials_moved: std::sync::atomic::AtomicU64,
    /// Records decoded by earlier write transactions (`decoded.rs`).
    decoded: decoded::DecodedRecords,
    /// What earlier write transactions learned of a few keys and ranges
    /// (`carried.rs`): kept on redb only, which this process alone writes.
    carried: carried::Carried,
    /// A store over PostgreSQL (feature `postgres`): every transaction goes
    /// there; `db` and `journal` are empty.
    #[cfg(feature = "postgres")]
    pg: Option<postgres::PgStore>,
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

    fn init(
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
            held: std::sync::Mutex::new(None),
            holding: std::sync::atomic::AtomicBool::new(false),
            credentials_moved: std::sync::atomic::AtomicU64::new(0),
            decoded: decoded::DecodedRecords::default(),
            carried: carried::Carried::default(),
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
            held: std::sync::Mutex::new(None),
            holding: std::sync::atomic::AtomicBool::new(false),
            credentials_moved: std::sync::atomic::AtomicU64::new(0),
            decoded: decoded::DecodedRecords::default(),
            carried: carried::Carried::default(),
            pg: Some(postgres::PgStore::open(url)?),
        };
        store.prepare()?;
        Ok(store)
    }

    /// Check the stored format version (a new database gets this build's) and
    /// create every table.
    fn prepare(&self) -> Result<(), StorageError> {
        self.write(|w| {
            let version: Option<u32> = w.get(Table::Meta, row_keys::META_FORMAT)?;
            if let Some(v) = version.filter(|v| !(READS_FROM_VERSION..=FORMAT_VERSION).contains(v)) {
                return Err(other_format(v));
            }
            // Create every table now (tables added within a format version too),
            // so that readers never meet a missing one.
            for table in Table::ALL {
                w.kv.create(table)?;
            }
            match version {
                Some(FORMAT_VERSION) => Ok(()),
                _ => w.put(Table::Meta, row_keys::META_FORMAT, &FORMAT_VERSION),
            }
        })
    }

    /// Whether other processes may write the same database (PostgreSQL):
    /// state an engine keeps in memory must then follow their changes.
    pub(crate) fn shared(&self) -> bool {
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
    fn database(&self) -> Result<RwLockReadGuard<'_, Option<Database>>, StorageError> {
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
    fn recover(&self) {
        let Some(reopen) = &self.reopen else { return };
        // Writers are kept out (they take the slot first); what a held
        // transaction holds is committed, or (if that fails) replayed from
        // the log by the reopening below.
        let mut slot = self.held_slot();
        let _ = self.commit_held(&mut slot);
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
            self.carried.forget();
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

    /// Run `f` in one write transaction: committed durably when it returns `Ok`
    /// (unless it called [`Write::defer_sync`]: committed, durable with the next
    /// durable commit), rolled back entirely when it returns `Err`. With a
    /// redo log, durable means its log record is synced; the commit itself is
    /// redb's without a sync. A failure is told to the hook and followed by
    /// [`Store::recover`].
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&mut Write<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        self.write_as(log::Payload::default, f)
    }

    /// [`Store::write`] for a transaction that is never logged: a chunk of a
    /// catch-up, which nobody is answered about. A deferred one is redb's
    /// commit without a sync; a durable one is redb's durable commit (a
    /// checkpoint). Its operations are not encoded for a record it would not get.
    pub(crate) fn write_unrecorded<T>(
        &self,
        f: impl FnOnce(&mut Write<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        self.write_as(log::Payload::unrecorded, f)
    }

    fn write_as<T>(
        &self,
        payload: fn() -> log::Payload,
        f: impl FnOnce(&mut Write<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        crate::nonblocking::assert_may_block("a storage write");
        let f = |w: &mut Write<'_>| {
            let out = f(w)?;
            w.bump_credentials_epoch()?;
            Ok((out, w.credentials.get()))
        };
        #[cfg(feature = "postgres")]
        if let Some(pg) = &self.pg {
            let written = pg.write(f).map(|(out, _)| out);
            match &written {
                Ok(_) => self.health.committed(),
                Err(e) => {
                    self.health.write_failed();
                    self.health.tell(&StorageEvent::WriteFailed(e.0.clone()));
                }
            }
            return written;
        }
        if self.journal.as_ref().is_some_and(log::Journal::broken) {
            self.recover();
        }
        let attempt = || -> Result<(T, bool), StorageError> {
            // Writers take the held transaction's slot for their whole
            // transaction (and continue the one held, if any).
            let (mut slot, db) = self.slot_and_database()?;
            let db = db.as_ref().ok_or_else(|| StorageError("the database is closed".into()))?;
            let (open, kept) = match slot.take() {
                Some(held) => (held.tx, Some((held.payloads, held.last_seq))),
                None => (redb_kv::OpenTx::begin(db.begin_write().map_err(fail)?), None),
            };
            let journal = self.journal.as_ref();
            let run = |_: &redb::WriteTransaction, kv: &redb_kv::RedbWrite<'_>| {
                let mut w = Write::new(kv, journal.map(|_| payload()));
                w.records = Some(&self.decoded);
                w.carried = Some(RefCell::new(self.carried.begin()));
                // On `Err`, `open` (its tables, then the transaction) drops: nothing is written.
                let out = f(&mut w)?;
                let sync = w.sync.get();
                let logged = match (journal, w.log.take()) {
                    (Some(journal), Some(payload)) => {
                        let appender = journal.lock()?;
                        if !payload.is_empty() {
                            // The record's number, in the same commit as its
                            // effects: replay starts after it.
                            let seq = appender.next_seq().to_be_bytes();
                            w.kv.put(Table::Meta, row_keys::META_LOG_SEQUENCE, &seq)?;
                        }
                        Some((appender, payload))
                    }
                    _ => None,
                };
                Ok((out, sync, logged))
            };
            let (out, sync, logged) = match open.with_dependent(run) {
                Ok(done) => done,
                Err(e) => {
                    drop(open);
                    self.restore_held(&mut slot, db, kept);
                    return Err(e);
                }
            };
            let held_count = kept.as_ref().map_or(0, |(p, _)| p.len());
            match logged {
                Some((appender, payload)) => {
                    let hold = appender.may_hold(held_count, kept.as_ref().map_or(0, |(p, _)| bytes_of(p)));
                    let seq = appender.next_seq();
                    match self.commit_logged(open, sync, hold, appender, &payload) {
                        Ok(Some(tx)) => {
                            let mut payloads = kept.map(|(p, _)| p).unwrap_or_default();
                            payloads.push(payload.as_bytes().to_vec());
                            self.park(&mut slot, held::Held { tx, payloads, last_seq: seq });
                        }
                        Ok(None) => self.holding.store(false, std::sync::atomic::Ordering::SeqCst),
                        Err(e) => {
                            self.lost_held(held_count);
                            return Err(e);
                        }
                    }
                }
                None => {
                    let committed = self.commit(open.close(), sync);
                    self.holding.store(false, std::sync::atomic::Ordering::SeqCst);
                    if committed.is_err() {
                        self.lost_held(held_count);
                    }
                    committed?;
                }
            }
            Ok(out)
        };
        let attempted = attempt();
        self.carried.ended(attempted.is_ok());
        match attempted {
            Ok((out, credentials)) => {
                if credentials {
                    // Before anyone is answered: a key changed here is
                    // looked up afresh by the next authentication.
                    self.credentials_moved.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                self.health.committed();
                Ok(out)
            }
            Err(e) => {
                self.health.write_failed();
                self.health.tell(&StorageEvent::WriteFailed(e.0.clone()));
                self.recover();
                Err(e)
            }
        }
    }

    /// Commit `tx` without a log: durable unless deferred.
    fn commit(&self, mut tx: redb::WriteTransaction, sync: Commit) -> Result<(), StorageError> {
        if sync == Commit::Deferred {
            tx.set_durability(redb::Durability::None).map_err(|e| StorageError(e.to_string()))?;
        }
        let n = self.durability.before_commit(sync);
        tx.commit().map_err(fail)?;
        if sync != Commit::Deferred {
            self.durability.durable(n);
        }
        Ok(())
    }

    /// Commit `tx` with its log record: the record is appended first (synced
    /// unless deferred), then redb commits without a sync, or durably when a
    /// checkpoint is due (the log then starts afresh). A record whose commit
    /// fails is cut off again. The order's argument: `docs/design.md`, "The
    /// redo log".
    /// `hold`: a durable record that is not a checkpoint leaves the
    /// transaction uncommitted, its tables open, and returned, to be held
    /// (`held.rs`).
    fn commit_logged(
        &self,
        open: redb_kv::OpenTx,
        sync: Commit,
        hold: bool,
        mut log: log::Appender<'_>,
        payload: &log::Payload,
    ) -> Result<Option<redb_kv::OpenTx>, StorageError> {
        let n = self.durability.before_commit(sync);
        let durable = sync != Commit::Deferred;
        let direct = log.unlogged() || (durable && (!payload.is_recorded() || log.direct(payload.len())));
        if hold && durable && !payload.is_empty() && !direct && !log.checkpoint_due(payload.len()) {
            log.append(payload, true)?;
            // Durable now; redb's commit waits for the next read (`held.rs`).
            self.durability.durable(n);
            return Ok(Some(open));
        }
        let mut tx = open.close();
        if !durable && !payload.is_empty() {
            // A deferred commit (a step of a catch-up: nobody is answered about
            // it) is not logged: redb commits it without a sync, and it becomes
            // durable with the next checkpoint. A crash before that loses it
            // whole, and the catch-up does it again. Logging it would write
            // every chunk of a cut-off twice.
            tx.set_durability(redb::Durability::None).map_err(|e| StorageError(e.to_string()))?;
            tx.commit().map_err(fail)?;
            log.committed_unlogged();
            return Ok(None);
        }
        if payload.is_empty() && !log.unlogged() {
            // Nothing changed: nothing to log. Durable means every record
            // before it is synced.
            tx.set_durability(redb::Durability::None).map_err(|e| StorageError(e.to_string()))?;
            tx.commit().map_err(fail)?;
            if durable {
                log.sync()?;
                self.durability.durable(n);
            }
            return Ok(None);
        }
        // A commit without a record waits in redb: a record replayed later
        // over a database that lost it would build on state that is gone, so
        // until the next checkpoint every commit is redb's own, and a durable
        // one is the checkpoint. A large durable transaction (a batch of
        // hundreds), or one not encoded, is a checkpoint without a record too:
        // redb's durable commit of it costs less than writing it to the log as
        // well. The log holds nothing after it.
        let unlogged = log.unlogged();
        if unlogged || (durable && (!payload.is_recorded() || log.direct(payload.len()))) {
            let level = if durable { redb::Durability::Immediate } else { redb::Durability::None };
            let committed = tx
                .set_durability(level)
                .map_err(|e| StorageError(e.to_string()))
                .and_then(|()| tx.commit().map_err(fail));
            if let Err(e) = committed {
                log.in_doubt();
                return Err(e);
            }
            if durable {
                self.durability.durable(n);
                let _ = if unlogged { log.reset() } else { log.checkpointed_without_record() };
            }
            return Ok(None);
        }
        let checkpoint = log.checkpoint_due(payload.len());
        log.append(payload, durable && !checkpoint)?;
        let level = if checkpoint { redb::Durability::Immediate } else { redb::Durability::None };
        let committed = tx
            .set_durability(level)
            .map_err(|e| StorageError(e.to_string()))
            .and_then(|()| tx.commit().map_err(fail));
        if let Err(e) = committed {
            log.undo_last(payload.len());
            return Err(e);
        }
        if durable || checkpoint {
            self.durability.durable(n);
        }
        if checkpoint {
            // The transaction is durable in redb whatever becomes of the log; a
            // log that cannot be emptied is in doubt, and the store is reopened
            // before the next write.
            let _ = log.reset();
        }
        Ok(None)
    }

    /// A durable redb commit of everything committed so far, after which the
    /// log starts afresh (at open and at close). Nothing without a log.
    fn checkpoint(&self) -> Result<(), StorageError> {
        let Some(journal) = &self.journal else { return Ok(()) };
        let (mut slot, db) = self.slot_and_database()?;
        let db = db.as_ref().ok_or_else(|| StorageError("the database is closed".into()))?;
        let tx = match slot.take() {
            Some(held) => held.tx.close(),
            None => db.begin_write().map_err(fail)?,
        };
        let mut log = journal.lock()?;
        let n = self.durability.before_commit(Commit::Immediate);
        let committed = tx.commit();
        // After the commit, the slot still locked (`held.rs`).
        self.holding.store(false, std::sync::atomic::Ordering::SeqCst);
        if let Err(e) = committed {
            log.in_doubt();
            return Err(fail(e));
        }
        self.durability.durable(n);
        log.reset()
    }

    /// Make every commit so far durable: sync the log, or (without one) make
    /// one empty durable commit, which redb orders after everything it can see.
    fn make_durable(&self) -> Result<(), StorageError> {
        let Some(journal) = &self.journal else { return self.write(|_| Ok(())) };
        let mut log = journal.lock()?;
        if log.unlogged() {
            // A commit without a record waits: only redb's durable commit
            // (a checkpoint) makes it durable.
            drop(log);
            return self.write(|_| Ok(()));
        }
        // Numbered under the log's lock: every commit numbered so far has
        // appended its record.
        let n = self.durability.latest();
        log.sync()?;
        self.durability.durable(n);
        Ok(())
    }

    /// Run `f` in one read transaction (a consistent snapshot) of durable
    /// data only: if a commit it may see was made without a sync, one durable
    /// commit first makes it durable. For anything answered to someone. A
    /// failure is told to the hook and followed by [`Store::recover`].
    pub(crate) fn read<T>(
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
        self.read_any(|r| r.get_raw(table, key))
    }

    /// Where the credentials stand: bytes that change whenever a committed
    /// write transaction changed a key or a suspension. On PostgreSQL the
    /// stored epoch, read in one statement (other processes write too); on
    /// redb the count of such commits this store made, from memory.
    pub(crate) fn credentials_epoch(&self) -> Result<Vec<u8>, StorageError> {
        if self.shared() {
            return Ok(self.get_now(Table::Meta, row_keys::META_CREDENTIALS_EPOCH)?.unwrap_or_default());
        }
        Ok(self.credentials_moved.load(std::sync::atomic::Ordering::SeqCst).to_be_bytes().to_vec())
    }

    /// [`Store::read`] that may also see commits not yet durable: for the
    /// engine's own decisions (whether work is due, who a key belongs to),
    /// never for an answer that shows stored data.
    pub(crate) fn read_any<T>(
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
            self.settle_held()?;
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

/// One entry of a range scan.
pub(crate) type RawEntry = (Vec<u8>, Vec<u8>);

/// A key [`Write::get_shared`] found absent.
struct Absent;

/// Records decoded during a write transaction, by table, then key.
type Decoded = [HashMap<Vec<u8>, Arc<dyn Any + Send + Sync>>; Table::ALL.len()];

/// A write transaction, over any backend's [`KvWrite`].
///
/// Records read with [`Write::get_shared`] are decoded once per transaction; a
/// write to their key forgets the decoded copy.
pub(crate) struct Write<'tx> {
    kv: &'tx dyn KvWrite,
    /// A key or a suspension was written: the credentials epoch moves on.
    credentials: std::cell::Cell<bool>,
    cache: RefCell<Decoded>,
    /// Records decoded by earlier transactions, by their bytes (`decoded.rs`).
    records: Option<&'tx decoded::DecodedRecords>,
    /// What this and earlier transactions learned of some keys and ranges
    /// (`carried.rs`), kept up to date by every put and remove.
    carried: Option<RefCell<std::sync::MutexGuard<'tx, carried::Known>>>,
    sync: std::cell::Cell<Commit>,
    /// The transaction's operations, for its redo-log record (`None`: no log).
    log: Option<log::Payload>,
}

impl<'tx> Write<'tx> {
    /// A write transaction over `kv`, recording its operations in `log`.
    fn new(kv: &'tx dyn KvWrite, log: Option<log::Payload>) -> Write<'tx> {
        Write {
            kv,
            credentials: std::cell::Cell::new(false),
            cache: RefCell::default(),
            records: None,
            carried: None,
            sync: durability::new_commit(),
            log,
        }
    }

    fn kv(&self) -> &dyn KvRead {
        self.kv
    }

    /// The record at `key`, decoded once per transaction and shared: for records
    /// that many operations of a batch read (merchants, partners). On a store
    /// that keeps decoded records (`decoded.rs`), bytes decoded by an earlier
    /// transaction are not decoded again.
    pub(crate) fn get_shared<T: DeserializeOwned + Send + Sync + 'static>(
        &self,
        table: Table,
        key: &[u8],
    ) -> Result<Option<Arc<T>>, StorageError> {
        if let Some(hit) = self.cache.borrow()[table as usize].get(key) {
            if hit.is::<Absent>() {
                return Ok(None);
            }
            if let Ok(record) = Arc::clone(hit).downcast::<T>() {
                return Ok(Some(record));
            }
        }
        let mut found = None;
        self.kv().get_with(table, key, &mut |bytes| {
            found = Some(match self.records {
                Some(records) => records.decode::<T>(table, key, bytes)?,
                None => Arc::new(decode::<T>(table, bytes)?),
            });
            Ok(())
        })?;
        let Some(record) = found else {
            // Absence is remembered too (a suspension, normally absent, is
            // asked once per batch).
            self.cache.borrow_mut()[table as usize].insert(key.to_vec(), Arc::new(Absent));
            return Ok(None);
        };
        let shared = Arc::clone(&record) as Arc<dyn Any + Send + Sync>;
        self.cache.borrow_mut()[table as usize].insert(key.to_vec(), shared);
        Ok(Some(record))
    }

    /// Whether this transaction changed a key or a suspension so far.
    pub(crate) fn changed_credentials(&self) -> bool {
        self.credentials.get()
    }

    /// Before a change of `table`: note a change of credentials.
    fn changing(&self, table: Table) {
        if matches!(table, Table::Keys | Table::Suspensions) {
            self.credentials.set(true);
        }
    }

    /// Move the credentials epoch on if this transaction changed a key or a
    /// suspension (called once, as it ends).
    fn bump_credentials_epoch(&mut self) -> Result<(), StorageError> {
        if !self.credentials.get() {
            return Ok(());
        }
        let epoch = self.get_raw(Table::Meta, row_keys::META_CREDENTIALS_EPOCH)?;
        let epoch = epoch.and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok()).map_or(0, u64::from_be_bytes);
        self.put_raw(Table::Meta, row_keys::META_CREDENTIALS_EPOCH, &(epoch.wrapping_add(1)).to_be_bytes())
    }

    /// Drop the decoded copy of `key` (no allocation: most tables cache nothing).
    fn forget(&self, table: Table, key: &[u8]) {
        let mut cache = self.cache.borrow_mut();
        let decoded = &mut cache[table as usize];
        if !decoded.is_empty() {
            decoded.remove(key);
        }
    }
}

/// A read transaction: a snapshot of the database, over any backend's [`KvRead`].
pub(crate) struct Snapshot {
    kv: Box<dyn KvRead>,
}

impl Snapshot {
    fn kv(&self) -> &dyn KvRead {
        &*self.kv
    }
}

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
                    self.kv().scan(table, from, Some(to), (false, limit), &mut |k, v| {
                        out.push((k.to_vec(), v.to_vec()));
                        Ok(out.len() < limit)
                    })?;
                }
                Ok(out)
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
                    .scan(table, from, Some(to), (false, usize::MAX), &mut |_, v| visit(v).map(|()| true))
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
                self.kv().scan(table, from, Some(to), (false, usize::MAX), visit)
            }

            /// The last key in `[from, to)`, if any.
            pub(crate) fn last_key(
                &self,
                table: Table,
                from: &[u8],
                to: &[u8],
            ) -> Result<Option<Vec<u8>>, StorageError> {
                let mut out = None;
                self.kv().scan(table, from, Some(to), (true, 1), &mut |k, _| {
                    out = Some(k.to_vec());
                    Ok(false)
                })?;
                Ok(out)
            }

            /// The first key of the table, if any.
            pub(crate) fn first_key(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError> {
                let mut out = None;
                self.kv().scan(table, &[], None, (false, 1), &mut |k, _| {
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

impl Write<'_> {
    /// Store a record at `key` (replacing any).
    pub(crate) fn put<T: Serialize + ?Sized>(
        &mut self,
        table: Table,
        key: &[u8],
        value: &T,
    ) -> Result<(), StorageError> {
        let bytes = encode(table, value)?;
        self.put_raw(table, key, &bytes)
    }

    /// Store raw bytes at `key`.
    pub(crate) fn put_raw(&mut self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StorageError> {
        self.changing(table);
        self.forget(table, key);
        if let Some(known) = &self.carried {
            known.borrow_mut().put(table, key, value);
        }
        self.kv.put(table, key, value)?;
        if let Some(log) = &mut self.log {
            log.put(table, key, value);
        }
        Ok(())
    }

    /// Remove `key`; whether it was present (`true` where the backend cannot
    /// tell without a read: see [`KvWrite::remove`]).
    pub(crate) fn remove(&mut self, table: Table, key: &[u8]) -> Result<bool, StorageError> {
        self.changing(table);
        self.forget(table, key);
        if let Some(known) = &self.carried {
            known.borrow_mut().removed(table, key);
        }
        let present = self.kv.remove(table, key)?;
        if let (Some(log), true) = (&mut self.log, present) {
            log.remove(table, key);
        }
        Ok(present)
    }

    /// Remove every key in `[from, to)` in one pass over the tree (for a run
    /// of index entries just processed: far cheaper than one removal each).
    pub(crate) fn remove_range(&mut self, table: Table, from: &[u8], to: &[u8]) -> Result<(), StorageError> {
        self.changing(table);
        self.cache.borrow_mut()[table as usize].clear();
        if let Some(known) = &self.carried {
            known.borrow_mut().removed_range(table);
        }
        self.kv.remove_range(table, from, to)?;
        if let Some(log) = &mut self.log {
            log.remove_range(table, from, to);
        }
        Ok(())
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
