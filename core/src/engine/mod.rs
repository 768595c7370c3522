//! The stateful engine: tenancy, customers, merchants, the transaction lifecycle and
//! both status feeds, over redb.
//!
//! Every operation runs inside one redb write transaction and follows the same
//! shape: catch up on cut-offs and settlements due by `now`, read what the operation
//! needs, decide (pure rules: validation, lifecycle), and only then write. A refused
//! operation writes nothing; a committed one is durable when it returns.
//! [`Engine::execute_batch`] applies many operations in one write transaction (one
//! fsync), each with its own result.
//!
//! This file holds the [`Engine`] and its construction; what the engine does
//! stands in files named for it (`execute.rs`: requests in, answers out;
//! `advance.rs`: the clock's catch-up; `reads.rs`: reads outside a write
//! transaction; `context.rs`: one write transaction's context).

mod credentials;
mod feeds;
mod host;
mod lifecycle;
mod multiprocess;
mod request;
mod risk;
mod rows;
mod settlement;
mod tenancy;
mod verification;
mod views;
mod webhooks;
pub use webhooks::address::is_public as is_public_address;
pub use webhooks::deliveries::{Delivery, DeliveryStatus, TryResult, WebhookAttempt, RETRY_AFTER};
pub use webhooks::endpoints::EndpointView;
pub use webhooks::signature::{secret_key, signature as webhook_signature};

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use chrono::{DateTime, Datelike, Utc};

pub use crate::storage::BackupFigures;
pub use credentials::authenticate::{Admission, Unconfirmed};
pub(crate) use credentials::authorize::{may_call, names_own_partner, Role};
pub use credentials::{KeyHolder, DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS};
pub use feeds::changes::{
    EventsPage, StatusPage, HELD_EVENT_TYPE, NOTICE_EVENT_TYPE, PAGE_LIMIT, REJECTED_REASON,
    RELEASED_EVENT_TYPE,
};
pub use host::backup::{backup_file, check_backup_file, restore_file};
pub use host::data_key::rotate_key;
pub use host::host_options::{HostOptions, OptionNames, OptionsError, MAX_OPERATOR_KEY};
pub use host::open::{key_file_for, OpenError};
pub use host::options::{EngineClock, EngineOptions};
pub use host::readiness::PROBE_BYTES;
pub use host::reseal::{ResealError, ResealFigures};
pub use lifecycle::images::{CheckSide, RETENTION_MONTHS};
pub use request::operation::{Caller, Operation};
pub use request::outcome::Outcome;
pub use request::prepare::PreparedOperation;
pub use request::refusal::Refusal;
pub use risk::return_rates::{GroupRate, ReturnGroup, ReturnRates, ThresholdCrossing, WINDOW_DAYS};
pub use risk::reviews::{MAX_NOTE, REPORT_DAYS, REVIEWS_PAGE};
pub use settlement::bank_files::Ingested;
pub use settlement::cash_letters::ImageCashLetter;
pub use settlement::file_ids::HeldEntry;
pub use settlement::origination::OriginationFile;
pub use settlement::schedule::Progress;
pub use tenancy::merchant_settings::{
    MerchantSettings, WebDebitValidation, DEFAULT_DESCRIPTION, RESERVED_DESCRIPTIONS,
};

pub use crate::storage::{log_file_for, StorageEvent, StorageHook};

/// The simulated disk and the backend trait for [`Engine::open_with_backend`],
/// and when [`Engine::open_on_disk`] checkpoints (feature `simulation`: the
/// crash tests only).
#[cfg(feature = "simulation")]
pub use crate::storage::{crash, LogSettings, StorageBackend};

pub(crate) use request::applied::{Applied, Stop};
pub(crate) use request::context::WriteContext;

use crate::clock::{Clock, ManualClock};
use crate::routing::RoutingDirectory;
use crate::secrets::{EncryptionKey, Fingerprinter, KeyHash, PointerCodec};
use crate::storage::{row_keys, StorageError, Store, Table};

/// The engine. Share it between threads (`Arc<Engine>`): operations serialize on
/// redb's single writer; feed reads run on snapshots concurrently.
#[derive(Debug)]
pub struct Engine {
    store: Store,
    clock: Arc<dyn Clock>,
    manual: Option<ManualClock>,
    sandbox: bool,
    operator: Option<KeyHash>,
    cipher: host::sealing_keys::SealingKeys,
    /// The key the host gave (it seals the data keys in `meta`).
    kek: EncryptionKey,
    fingerprints: Fingerprinter,
    duplicate_window: chrono::Duration,
    /// The screening rules until the operator stores some.
    default_risk_rules: crate::model::RiskRules,
    /// Whether webhook endpoints may be private or loopback addresses.
    webhook_allow_private: bool,
    /// The duplicate window in memory; locked for the whole of every write
    /// transaction (see `window.rs`).
    window: Mutex<risk::window::Window>,
    pointers: PointerCodec,
    directory: RwLock<Arc<RoutingDirectory>>,
    /// The stored directory epoch `directory` is of (`directory_epoch.rs`).
    directory_epoch: std::sync::atomic::AtomicU64,
    /// This engine among the process's (a [`PreparedOperation`] is only used by its own).
    instance: u64,
    /// Requests waiting for the write lock (see [`Engine::advance_to`]).
    waiting: std::sync::atomic::AtomicUsize,
    /// Concurrent [`Engine::execute`] calls sharing commits.
    groups: request::group_commit::Groups,
    /// The digest of the origination file being assembled, as far as it goes.
    file_digest: settlement::file_digest::FileDigest,
    /// Authentications and refusals remembered (`credentials/cache.rs`).
    credentials_cache: credentials::cache::CredentialsCache,
}

impl Engine {
    /// Open the database file at `path`, or create it if neither it nor its key
    /// file exists. An existing file is never initialised: an empty, foreign or
    /// damaged file is refused ([`OpenError::Empty`], [`OpenError::NotADatabase`],
    /// [`OpenError::Damaged`]), as is a database without its key file or a key
    /// file without its database (unless the key is given in `options`). A
    /// refused open creates no file.
    pub fn open(path: &Path, options: EngineOptions) -> Result<Engine, OpenError> {
        host::open::file(path, options)
    }

    /// A database on PostgreSQL (feature `postgres`), reached with `url` (a
    /// libpq connection string or URL; several hosts with
    /// `target_session_attrs=read-write` find the primary after a failover).
    /// The schema is created or migrated; a newer schema is refused. The key
    /// must be given in `options` (there is no file beside the database to
    /// keep it in): every process over the database uses the same key, or
    /// [`OpenError::WrongKey`].
    #[cfg(feature = "postgres")]
    pub fn open_postgres(url: &str, options: EngineOptions) -> Result<Engine, OpenError> {
        let key = options.encryption_key.clone().ok_or_else(|| {
            OpenError::Storage(StorageError("a PostgreSQL database needs the encryption key given".into()))
        })?;
        let store = Store::postgres(url)?;
        Engine::start(store, key, options)
    }

    /// A database in memory (redb's in-memory backend): nothing survives the engine.
    pub fn in_memory(options: EngineOptions) -> Result<Engine, OpenError> {
        let key = options.encryption_key.clone().unwrap_or_else(EncryptionKey::generate);
        let store = Store::in_memory()?;
        Engine::start(store, key, options)
    }

    /// The engine over `store`.
    fn start(store: Store, key: EncryptionKey, options: EngineOptions) -> Result<Engine, OpenError> {
        let meta = StoredMeta::read_or_make(&store, &key)?;
        let Some(keys) = meta.keys else { return Err(OpenError::WrongKey) };
        let fingerprints = Fingerprinter::new(keys.index.as_bytes());
        if let Some(hook) = options.storage_hook.clone() {
            store.set_hook(hook);
        }
        let directory = stored_directory(meta.directory_text)?;
        let mut secret_bytes = [0u8; 32];
        secret_bytes.copy_from_slice(&meta.pointer_secret);
        let (clock, manual) = clock_of(options.clock, meta.clock_at)?;
        let mut engine = Engine {
            store,
            clock,
            manual,
            sandbox: options.sandbox,
            operator: options.operator_key.as_deref().map(KeyHash::of),
            cipher: host::sealing_keys::SealingKeys::new(&keys.data, &keys.retired),
            kek: key,
            fingerprints,
            duplicate_window: options.duplicate_window.unwrap_or_else(risk::duplicates::default_window),
            default_risk_rules: options.risk_rules.unwrap_or_default(),
            webhook_allow_private: options.webhook_allow_private || options.sandbox,
            window: Mutex::default(),
            pointers: PointerCodec::new(&secret_bytes),
            directory: RwLock::new(Arc::new(directory)),
            directory_epoch: std::sync::atomic::AtomicU64::new(meta.directory_epoch),
            instance: request::prepare::next_instance(),
            waiting: std::sync::atomic::AtomicUsize::new(0),
            groups: request::group_commit::Groups::default(),
            file_digest: settlement::file_digest::FileDigest::default(),
            credentials_cache: credentials::cache::CredentialsCache::default(),
        };
        let window = engine.load_window()?;
        *engine.window.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner) = window;
        Ok(engine)
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
}

/// What the engine reads from `meta` (and makes there when a new database
/// lacks it) before it starts.
struct StoredMeta {
    /// The secret that MACs feed pointers (32 bytes).
    pointer_secret: Vec<u8>,
    /// The routing directory the operator loaded, if any.
    directory_text: Option<Vec<u8>>,
    /// Its epoch (`directory_epoch.rs`).
    directory_epoch: u64,
    /// Where a sandbox's clock stood.
    clock_at: Option<DateTime<Utc>>,
    /// The keys the given key opens (`None`: the given key is not this
    /// database's).
    keys: Option<host::data_key::Keys>,
}

impl StoredMeta {
    /// Read the meta entries, making the key check and the pointer secret of a
    /// new database and the holder index of one from before it.
    fn read_or_make(store: &Store, given: &EncryptionKey) -> Result<StoredMeta, StorageError> {
        store.write(|w| {
            let keys = host::data_key::open_or_make(w, given)?;
            let clock_at =
                w.get_raw(Table::Meta, row_keys::META_CLOCK)?.and_then(|b| row_keys::decode_instant(&b));
            let pointer_secret = match w.get_raw(Table::Meta, row_keys::META_POINTER_SECRET)? {
                Some(s) if s.len() == 32 => s,
                _ => {
                    let mut s = vec![0u8; 32];
                    crate::ids::random_bytes(&mut s);
                    w.put_raw(Table::Meta, row_keys::META_POINTER_SECRET, &s)?;
                    s
                }
            };
            let directory_text = w.get_raw(Table::Blobs, row_keys::BLOB_DIRECTORY)?;
            let directory_epoch = multiprocess::directory_epoch::stored(w)?;
            Ok(StoredMeta { pointer_secret, directory_text, directory_epoch, clock_at, keys })
        })
    }
}

/// The routing directory the operator loaded, or the embedded one.
pub(super) fn stored_directory(text: Option<Vec<u8>>) -> Result<RoutingDirectory, OpenError> {
    match text {
        None => Ok(RoutingDirectory::embedded()),
        Some(bytes) => {
            let text = String::from_utf8(bytes).map_err(|e| OpenError::Directory(e.to_string()))?;
            RoutingDirectory::parse_fedach(&text).map_err(|e| OpenError::Directory(e.to_string()))
        }
    }
}

/// The engine's clock: the system's, or a manual one within the years 0000 to
/// 9999 that a reopened sandbox moves on to where it stood (never back).
fn clock_of(
    clock: EngineClock,
    stood_at: Option<DateTime<Utc>>,
) -> Result<(Arc<dyn Clock>, Option<ManualClock>), OpenError> {
    match clock {
        #[cfg(not(target_arch = "wasm32"))]
        EngineClock::System => Ok((Arc::new(crate::clock::SystemClock), None)),
        EngineClock::Manual(m) => {
            let year = m.now().year();
            if !(0..=9999).contains(&year) {
                return Err(OpenError::Clock(format!("year {year}")));
            }
            if let Some(at) = stood_at.filter(|at| *at > m.now()) {
                m.set(at);
            }
            Ok((Arc::new(m.clone()), Some(m)))
        }
    }
}
