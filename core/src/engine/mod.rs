//! The stateful engine: tenancy, customers, merchants, the transaction lifecycle and
//! both status feeds, over redb.
//!
//! Every operation runs inside one redb write transaction and follows the same
//! shape: catch up on cut-offs and settlements due by `now`, read what the operation
//! needs, decide (pure rules: validation, lifecycle), and only then write. A refused
//! operation writes nothing; a committed one is durable when it returns.
//! [`Engine::execute_batch`] applies many operations in one write transaction (one
//! fsync), each with its own result.

mod bank_files;
mod batch_kind;
mod credentials;
mod customers;
mod duplicates;
mod failure;
mod feeds;
mod host_options;
mod idempotency;
mod images;
#[cfg(test)]
mod images_tests;
mod merchant_settings;
mod open;
mod operation;
mod ops;
mod origination;
mod originator;
mod outcome;
mod prepare;
mod readiness;
mod records;
mod return_rates;
mod schedule;
#[cfg(feature = "simulation")]
mod simulation;
mod tenant_lookup;
mod tenants;
mod transactions;
mod usage;
mod window;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use chrono::{DateTime, Datelike, Utc};

pub use bank_files::Ingested;
pub use credentials::{KeyHolder, DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS};
pub use failure::Failure;
pub use feeds::{EventsPage, StatusPage, NOTICE_EVENT_TYPE, PAGE_LIMIT};
pub use host_options::{HostOptions, OptionNames, OptionsError, MAX_OPERATOR_KEY};
pub use images::{CheckSide, RETENTION_MONTHS};
pub use merchant_settings::{MerchantSettings, DEFAULT_DESCRIPTION, RESERVED_DESCRIPTIONS};
pub use operation::{Caller, Operation};
pub use origination::{HeldEntry, OriginationFile};
pub use outcome::Outcome;
pub use prepare::Prepared;
pub use readiness::PROBE_BYTES;
pub use return_rates::{GroupRate, ReturnGroup, ReturnRates, ThresholdCrossing, WINDOW_DAYS};
pub use schedule::Progress;

pub use crate::storage::{StorageEvent, StorageHook};

/// The simulated disk and the backend trait for [`Engine::open_with_backend`]
/// (feature `simulation`: the crash tests only).
#[cfg(feature = "simulation")]
pub use crate::storage::{crash, StorageBackend};

use crate::clock::{Clock, ManualClock};
use crate::routing::RoutingDirectory;
use crate::secrets::{Cipher, EncryptionKey, Fingerprinter, KeyHash, PointerCodec, SecretError};
use crate::storage::{keys, StorageError, Store, Table, Write};

/// How the engine is set up by its host.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The operator's key (the operator plane: partners, approvals, returns,
    /// directory, the sandbox clock, key rotation). Accepted until an operator
    /// key rotation retires it; from then on the rotated keys stored in the
    /// database are the operator's. `None`: no operator access at all.
    pub operator_key: Option<String>,
    /// Sandbox: the clock is set by the operator (`Operation::SetClock`).
    pub sandbox: bool,
    /// The key that seals account numbers. `None`: for a file database, the key file
    /// `<database>.key` (created with mode 0600 if missing); in memory, a fresh key.
    pub encryption_key: Option<EncryptionKey>,
    /// Where time comes from.
    pub clock: EngineClock,
    /// How long a similar transaction counts as a duplicate (message 17) for
    /// merchants that decline duplicates; `None`: 24 hours.
    pub duplicate_window: Option<chrono::Duration>,
    /// Told of every storage fault and recovery (the host logs them); `None`:
    /// nobody is told (the operations still answer message 7).
    pub storage_hook: Option<StorageHook>,
}

/// The engine's clock.
#[derive(Debug, Clone)]
pub enum EngineClock {
    /// The operating system's clock (production).
    #[cfg(not(target_arch = "wasm32"))]
    System,
    /// A clock that moves only when set (tests, the sandbox, the browser).
    Manual(ManualClock),
}

impl EngineOptions {
    /// Options with a manual clock at `start` (tests, sandbox, browser).
    pub fn manual(start: DateTime<Utc>) -> Self {
        EngineOptions {
            operator_key: None,
            sandbox: false,
            encryption_key: None,
            clock: EngineClock::Manual(ManualClock::new(start)),
            duplicate_window: None,
            storage_hook: None,
        }
    }

    /// Options on the system clock (production).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn system() -> Self {
        EngineOptions {
            operator_key: None,
            sandbox: false,
            encryption_key: None,
            clock: EngineClock::System,
            duplicate_window: None,
            storage_hook: None,
        }
    }

    /// With this operator key.
    pub fn with_operator_key(mut self, key: impl Into<String>) -> Self {
        self.operator_key = Some(key.into());
        self
    }

    /// In sandbox mode (the operator sets the clock).
    pub fn sandbox(mut self) -> Self {
        self.sandbox = true;
        self
    }

    /// With this encryption key.
    pub fn with_encryption_key(mut self, key: EncryptionKey) -> Self {
        self.encryption_key = Some(key);
        self
    }

    /// Telling `hook` of every storage fault and recovery.
    pub fn with_storage_hook(mut self, hook: StorageHook) -> Self {
        self.storage_hook = Some(hook);
        self
    }
}

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

/// The engine. Share it between threads (`Arc<Engine>`): operations serialize on
/// redb's single writer; feed reads run on snapshots concurrently.
#[derive(Debug)]
pub struct Engine {
    store: Store,
    clock: Arc<dyn Clock>,
    manual: Option<ManualClock>,
    sandbox: bool,
    operator: Option<KeyHash>,
    cipher: Cipher,
    fingerprints: Fingerprinter,
    duplicate_window: chrono::Duration,
    /// The duplicate window in memory; locked for the whole of every write
    /// transaction (see `window.rs`).
    window: Mutex<window::Window>,
    pointers: PointerCodec,
    directory: RwLock<Arc<RoutingDirectory>>,
    /// Whether creates run the limit and duplicate checks (always, but for the
    /// bench that prices them: [`Engine::without_limits_and_duplicates`]).
    checks: bool,
    /// This engine among the process's (a [`Prepared`] is only used by its own).
    instance: u64,
    /// Requests waiting for the write lock (see [`Engine::advance_to`]).
    waiting: std::sync::atomic::AtomicUsize,
}

impl Engine {
    /// Open the database file at `path`, or create it if neither it nor its key
    /// file exists. An existing file is never initialised: an empty, foreign or
    /// damaged file is refused ([`OpenError::Empty`], [`OpenError::NotADatabase`],
    /// [`OpenError::Damaged`]), as is a database without its key file or a key
    /// file without its database (unless the key is given in `options`). A
    /// refused open creates no file.
    pub fn open(path: &Path, options: EngineOptions) -> Result<Engine, OpenError> {
        open::file(path, options)
    }

    /// A database in memory (redb's in-memory backend): nothing survives the engine.
    pub fn in_memory(options: EngineOptions) -> Result<Engine, OpenError> {
        let key = options.encryption_key.clone().unwrap_or_else(EncryptionKey::generate);
        let store = Store::in_memory()?;
        Engine::start(store, key, options, None)
    }

    /// The engine over `store`; `file`: its database file, if it has one.
    fn start(
        store: Store,
        key: EncryptionKey,
        options: EngineOptions,
        file: Option<&Path>,
    ) -> Result<Engine, OpenError> {
        let fingerprints = Fingerprinter::new(key.as_bytes());
        let key_check = fingerprints.digest(&[b"encryption-key-check"]);
        let (secret, directory_text, clock_at, key_ok) = store.write(|w| -> Result<_, StorageError> {
            let key_ok = match w.get_raw(Table::Meta, keys::META_KEY_CHECK)? {
                Some(stored) => stored == key_check,
                None => {
                    w.put_raw(Table::Meta, keys::META_KEY_CHECK, &key_check)?;
                    true
                }
            };
            let clock_at = w.get_raw(Table::Meta, keys::META_CLOCK)?.and_then(|b| keys::decode_instant(&b));
            let secret = match w.get_raw(Table::Meta, keys::META_POINTER_SECRET)? {
                Some(s) if s.len() == 32 => s,
                _ => {
                    let mut s = vec![0u8; 32];
                    crate::ids::random_bytes(&mut s);
                    w.put_raw(Table::Meta, keys::META_POINTER_SECRET, &s)?;
                    s
                }
            };
            credentials::index_existing(w)?;
            let text = w.get_raw(Table::Blobs, keys::BLOB_DIRECTORY)?;
            Ok((secret, text, clock_at, key_ok))
        })?;
        if !key_ok {
            return Err(OpenError::WrongKey);
        }
        // Images an earlier build stored in clear are sealed in place; their
        // copies in clear stay in the file's freed pages until it is rewritten.
        let rewrite = images::seal_on_open(&store, &Cipher::new(key.as_bytes()))?;
        let store = match file {
            Some(path) if rewrite => {
                let store = store.rewrite(path)?;
                store.write(images::rewritten)?;
                store
            }
            _ => store,
        };
        // Set on the store the engine keeps (a rewrite opens a new one).
        if let Some(hook) = options.storage_hook.clone() {
            store.set_hook(hook);
        }
        let directory = match directory_text {
            None => RoutingDirectory::embedded(),
            Some(bytes) => {
                let text = String::from_utf8(bytes).map_err(|e| OpenError::Directory(e.to_string()))?;
                RoutingDirectory::parse_fedach(&text).map_err(|e| OpenError::Directory(e.to_string()))?
            }
        };
        let mut secret_bytes = [0u8; 32];
        secret_bytes.copy_from_slice(&secret);
        let (clock, manual): (Arc<dyn Clock>, Option<ManualClock>) = match options.clock {
            #[cfg(not(target_arch = "wasm32"))]
            EngineClock::System => (Arc::new(crate::clock::SystemClock), None),
            EngineClock::Manual(m) => {
                let year = m.now().year();
                if !(0..=9999).contains(&year) {
                    return Err(OpenError::Clock(format!("year {year}")));
                }
                // A reopened sandbox resumes where its clock stood; it never goes back.
                if let Some(at) = clock_at.filter(|at| *at > m.now()) {
                    m.set(at);
                }
                (Arc::new(m.clone()), Some(m))
            }
        };
        let mut engine = Engine {
            store,
            clock,
            manual,
            sandbox: options.sandbox,
            operator: options.operator_key.as_deref().map(KeyHash::of),
            cipher: Cipher::new(key.as_bytes()),
            fingerprints,
            duplicate_window: options.duplicate_window.unwrap_or_else(duplicates::default_window),
            window: Mutex::default(),
            pointers: PointerCodec::new(&secret_bytes),
            directory: RwLock::new(Arc::new(directory)),
            checks: true,
            instance: prepare::next_instance(),
            waiting: std::sync::atomic::AtomicUsize::new(0),
        };
        let window = engine.load_window()?;
        *engine.window.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner) = window;
        Ok(engine)
    }

    /// The duplicate window as the stored transactions give it now.
    fn load_window(&self) -> Result<window::Window, StorageError> {
        self.store.read(|r| duplicates::load(r, &self.fingerprints, self.now(), self.duplicate_window))
    }

    /// Lock the duplicate window for a write transaction. If a panic ever left
    /// it poisoned (a change half made), it is rebuilt from storage first.
    fn lock_window(&self) -> Result<MutexGuard<'_, window::Window>, StorageError> {
        match self.window.lock() {
            Ok(guard) => Ok(guard),
            Err(poisoned) => {
                let mut guard = poisoned.into_inner();
                *guard = self.load_window()?;
                self.window.clear_poison();
                Ok(guard)
            }
        }
    }

    /// The current instant by the engine's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Whether this engine is a sandbox.
    pub fn is_sandbox(&self) -> bool {
        self.sandbox
    }

    /// The routing directory in use.
    pub fn directory(&self) -> Arc<RoutingDirectory> {
        self.directory.read().map_or_else(|p| p.into_inner().clone(), |d| d.clone())
    }

    fn set_directory(&self, directory: Arc<RoutingDirectory>) {
        let mut guard = self.directory.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        *guard = directory;
    }

    /// Who an API key belongs to, or [`Failure::Authentication`] (also for a
    /// key past its grace window, a revoked key, or a suspended holder's key).
    pub fn authenticate(&self, api_key: &str) -> Result<Caller, Failure> {
        if api_key.is_empty() || api_key.len() > 256 {
            return Err(Failure::Authentication);
        }
        let hash = KeyHash::of(api_key);
        let now = self.now();
        let caller = self.store.read(|r| credentials::caller_of(r, self.operator.as_ref(), &hash, now))?;
        caller.ok_or(Failure::Authentication)
    }

    /// Run one operation in its own write transaction.
    pub fn execute(&self, caller: &Caller, op: Operation) -> Result<Outcome, Failure> {
        self.execute_batch(vec![(caller.clone(), op)])
            .pop()
            .unwrap_or(Err(Failure::refused(crate::AchError::SystemUnable)))
    }

    /// Run many operations in ONE write transaction (one durable commit), each with
    /// its own result, in order. Work that needs no storage (validation, parsing a
    /// directory, fingerprints of the request) is done before the transaction
    /// begins ([`Engine::prepare`]). If the commit fails, every operation answers
    /// message 7 and nothing is stored.
    pub fn execute_batch(&self, ops: Vec<(Caller, Operation)>) -> Vec<Result<Outcome, Failure>> {
        let now = self.clock.now();
        let directory = self.directory();
        let prepared = self.prepare_many(ops, now, &directory);
        self.execute_prepared(prepared)
    }

    /// [`Engine::execute_batch`] of operations already prepared by
    /// [`Engine::prepare`] (on other threads): the same answers, and the same
    /// stored data, as `execute_batch` of the operations they were prepared from.
    pub fn execute_prepared(&self, ops: Vec<(Caller, Prepared)>) -> Vec<Result<Outcome, Failure>> {
        let now = self.clock.now();
        let mut directory = self.directory();
        let count = ops.len();
        let mut new_directory = None;
        type Answers = Vec<Result<Outcome, Failure>>;
        let unavailable =
            || (0..count).map(|_| Err(Failure::refused(crate::AchError::DatabaseUnavailable))).collect();
        // Counted as waiting until it holds the lock, so that a long catch-up
        // (`advance_to`) lets it in between two chunks.
        self.waiting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let locked = self.lock_window();
        self.waiting.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        let Ok(mut window) = locked else { return unavailable() };
        let mut log = Vec::new();
        let result = self.store.write(|w| -> Result<(Answers, Option<DateTime<Utc>>), StorageError> {
            let mut cx = Cx::new(w, now, self, &mut window, &mut log);
            schedule::catch_up(&mut cx, now, Some(schedule::CHUNK))?;
            let mut out = Vec::with_capacity(count);
            let mut today = (now, crate::calendar::eastern_date(now));
            for (caller, op) in ops {
                // Checked against the date and directory it runs with (a clock set
                // or a directory loaded earlier in the batch).
                if today.0 != cx.now {
                    today = (cx.now, crate::calendar::eastern_date(cx.now));
                }
                let op = op.for_transaction(self, cx.now, today.1, &directory);
                let answer = match ops::apply(&mut cx, &caller, op) {
                    Ok(Applied::Done(o)) => Ok(o),
                    Ok(Applied::Directory(dir, o)) => {
                        directory = Arc::new(dir);
                        new_directory = Some(Arc::clone(&directory));
                        Ok(o)
                    }
                    Err(Fail::Refused(f)) => Err(f),
                    Err(Fail::Storage(e)) => return Err(e),
                };
                out.push(answer);
            }
            Ok((out, cx.finish()?))
        });
        match result {
            Ok((out, clock_to)) => {
                if let Some(dir) = new_directory {
                    self.set_directory(dir);
                }
                if let (Some(t), Some(manual)) = (clock_to, &self.manual) {
                    manual.set(t);
                }
                out
            }
            Err(_) => {
                // Nothing was stored: nor is anything left in the window.
                window.undo(&log);
                unavailable()
            }
        }
    }

    /// Run every cut-off, origination file and settlement due up to `now`, in
    /// time order, in write transactions of at most [`schedule::CHUNK`] items
    /// each (other writers run between them). Production calls this from the
    /// wall clock; the sandbox through [`Operation::SetClock`].
    pub fn advance_to(&self, now: DateTime<Utc>) -> Result<Progress, Failure> {
        let mut total = Progress::default();
        loop {
            // Nothing due: no write transaction (an idle server does not fsync).
            if !self.store.read(|r| schedule::anything_due(r, now, self.sandbox))? {
                return Ok(total);
            }
            self.let_requests_in();
            let mut window = self.lock_window()?;
            let mut log = Vec::new();
            let (progress, done) = self.store.write(|w| {
                let mut cx = Cx::new(w, now, self, &mut window, &mut log);
                let (step, mut done) = schedule::catch_up(&mut cx, now, Some(schedule::CHUNK))?;
                if done {
                    done = images::expire(&mut cx, now, schedule::CHUNK)?;
                }
                cx.finish()?;
                Ok::<_, StorageError>((step, done))
            })?;
            total.originated += progress.originated;
            total.settled += progress.settled;
            if done {
                return Ok(total);
            }
        }
    }

    /// Between two chunks of a catch-up: let requests already waiting for the
    /// write lock take it first (a mutex is not fair: without this the catch-up
    /// would take it again at once and hold creates back for its whole length).
    /// Bounded, so a stream of requests cannot stop the catch-up either.
    fn let_requests_in(&self) {
        for _ in 0..100_000 {
            if self.waiting.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return;
            }
            std::thread::yield_now();
        }
    }

    /// The originator files are written for (`None`: none set on a production
    /// engine; a sandbox has a default).
    pub fn originator(&self) -> Result<Option<crate::nacha::Originator>, Failure> {
        Ok(self.store.read(|r| originator::load(r, self.sandbox))?)
    }

    /// Every origination file written, oldest first.
    pub fn origination_files(&self) -> Result<Vec<OriginationFile>, Failure> {
        Ok(self.store.read(origination::list)?)
    }

    /// One origination file and its bytes (`None`: no such file).
    pub fn origination_file(&self, id: &str) -> Result<Option<(OriginationFile, Vec<u8>)>, Failure> {
        Ok(self.store.read(|r| origination::get(r, &self.cipher, id))?)
    }

    /// A transaction's check image (BOC, POP, ICL) as submitted (base64), unsealed:
    /// for the host (for example to present an image cash letter); no API route
    /// answers images. `None`: no such transaction, no image, or its retention
    /// ended ([`RETENTION_MONTHS`] after settlement; a void deletes them at once).
    pub fn check_image(&self, transaction_id: &str, side: CheckSide) -> Result<Option<String>, Failure> {
        let key = keys::image(transaction_id, side.as_str());
        let Some(stored) = self.store.read(|r| r.get_raw(Table::Images, &key))? else { return Ok(None) };
        Ok(Some(images::open(&self.cipher, transaction_id, side, &stored)?))
    }

    /// The account number of a stored account, unsealed.
    fn unseal_account(&self, account: &records::SealedAccount) -> Result<String, SecretError> {
        use base64::Engine as _;
        let sealed = base64::engine::general_purpose::STANDARD
            .decode(&account.account_sealed)
            .map_err(|_| SecretError::Decrypt)?;
        let plain = self.cipher.decrypt(&sealed, account.sealed_for.as_bytes())?;
        String::from_utf8(plain).map_err(|_| SecretError::Decrypt)
    }

    /// The partner's status-changes feed after `pointer` (`"0"` for the first call).
    pub fn status_changes(
        &self,
        caller: &Caller,
        partner_id: &str,
        pointer: &str,
    ) -> Result<StatusPage, Failure> {
        feeds::status_page(self, caller, partner_id, pointer)
    }

    /// Recompute every usage counter from the stored transactions and compare it
    /// with the stored counters: `Err` describes the first differences. A full scan,
    /// for tests, the simulator and operators; never on a request path.
    pub fn audit_usage(&self) -> Result<Result<(), String>, Failure> {
        Ok(self.store.read(usage::audit)?)
    }

    /// The merchant's events feed after `pointer` (`None` for the first call).
    pub fn events(&self, caller: &Caller, pointer: Option<&str>) -> Result<EventsPage, Failure> {
        feeds::events_page(self, caller, pointer)
    }
}

/// The key file used when the host supplies no encryption key: `<database>.key`.
pub fn key_file_for(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// The context of one write transaction.
pub(crate) struct Cx<'a, 'tx> {
    pub w: &'a mut Write<'tx>,
    pub now: DateTime<Utc>,
    pub engine: &'a Engine,
    /// Next sequence number per feed scope, cached for the transaction.
    pub seqs: HashMap<Vec<u8>, u64>,
    /// Usage counters read or changed by the transaction, written back by
    /// [`Cx::finish`].
    pub usage: usage::Counters,
    /// The sandbox clock's new instant, set on the clock once the commit succeeds.
    pub clock_to: Option<DateTime<Utc>>,
    /// The stamp and id of the newest transaction this write transaction made
    /// for each partner, written back by [`Cx::finish`].
    last_txn: HashMap<String, (crate::ids::TxnStamp, String)>,
    /// The duplicate window (locked by the engine for this transaction).
    pub window: &'a mut window::Window,
    /// The window's changes, undone if the transaction does not commit.
    pub window_log: &'a mut Vec<window::Change>,
}

impl<'a, 'tx> Cx<'a, 'tx> {
    fn new(
        w: &'a mut Write<'tx>,
        now: DateTime<Utc>,
        engine: &'a Engine,
        window: &'a mut window::Window,
        window_log: &'a mut Vec<window::Change>,
    ) -> Self {
        Cx {
            window,
            window_log,
            w,
            now,
            engine,
            seqs: HashMap::new(),
            usage: usage::Counters::default(),
            clock_to: None,
            last_txn: HashMap::new(),
        }
    }

    /// A new transaction id of `partner_id` that sorts after each of the
    /// partner's ids ([`crate::ids::generate_transaction_after`] the partner's
    /// newest): its sequence number counts the partner's own creates in the
    /// millisecond, never another's. A partner with none stored yet (new, or
    /// with ids from before per-partner stamps) starts past the millisecond of
    /// the newest id stored, so its ids still sort after its older ones.
    pub fn new_transaction_id(&mut self, partner_id: &str) -> Result<String, StorageError> {
        let prev = match self.last_txn.get(partner_id) {
            Some((stamp, _)) => *stamp,
            None => {
                let stored = self.w.get_raw(Table::Meta, &keys::last_transaction(partner_id))?;
                match stored.and_then(|id| stamp_of(&id)) {
                    Some(stamp) => stamp,
                    None => {
                        let last = self.w.last_key(Table::Transactions, &[], &[u8::MAX])?;
                        let newest = last.and_then(|k| stamp_of(&k));
                        newest.map_or(crate::ids::TxnStamp::ZERO, crate::ids::TxnStamp::end_of_millisecond)
                    }
                }
            }
        };
        let (id, stamp) = crate::ids::generate_transaction_after(Some(prev), self.now);
        self.last_txn.insert(partner_id.to_owned(), (stamp, id.clone()));
        Ok(id)
    }

    /// Write back what the transaction kept in memory (the usage counters). Call
    /// once, after the last operation, before the commit.
    fn finish(self) -> Result<Option<DateTime<Utc>>, StorageError> {
        self.usage.write_back(self.w)?;
        for (partner_id, (_, id)) in &self.last_txn {
            self.w.put_raw(Table::Meta, &keys::last_transaction(partner_id), id.as_bytes())?;
        }
        Ok(self.clock_to)
    }
}

/// The stamp of a stored transaction id.
fn stamp_of(id: &[u8]) -> Option<crate::ids::TxnStamp> {
    std::str::from_utf8(id).ok().and_then(crate::ids::TxnStamp::of)
}

/// What applying an operation did.
pub(crate) enum Applied {
    /// Finished with this outcome.
    Done(Outcome),
    /// Finished, and the engine must switch to this directory after the commit.
    Directory(RoutingDirectory, Outcome),
}

/// Why applying an operation stopped: a refusal (nothing was written), or a
/// storage failure (the whole transaction is abandoned).
pub(crate) enum Fail {
    Refused(Failure),
    Storage(StorageError),
}

impl From<StorageError> for Fail {
    fn from(e: StorageError) -> Self {
        Fail::Storage(e)
    }
}

impl From<Failure> for Fail {
    fn from(f: Failure) -> Self {
        Fail::Refused(f)
    }
}
