//! The data directory: the database `ach.redb`, its encryption key
//! `ach.redb.key` and the operator key `operator.key` (plus the generated TLS
//! certificate). A new service is made there only when asked (`achd init`,
//! `achd serve --init`), for a sandbox, or on the very first start on the
//! default directory; an existing file is never initialised, and a refused
//! start leaves no new file behind.

use std::path::{Path, PathBuf};

use ach_core::engine::{key_file_for, Engine, EngineOptions};
use ach_core::secrets::{load_or_create_secret_file, ApiKey, KeyKind};

/// The data directory when `--data` is not given.
pub const DEFAULT: &str = "./ach-data";

/// The database file of a data directory.
pub fn database(dir: &Path) -> PathBuf {
    dir.join("ach.redb")
}

/// Why a start may make a new service in a directory that holds none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MayCreate {
    /// `achd init` or `achd serve --init`.
    Asked,
    /// A sandbox (its clock is the operator's; its files go to no bank).
    Sandbox,
    /// No `--data` and the default directory does not exist: the first start
    /// of `achd serve` (the README's first command).
    FirstStart,
    /// None of these: a directory without a service is refused.
    No,
}

/// Whether the directory holds neither the database nor its key (it may not
/// exist at all): a new service would be made there.
pub fn holds_no_service(dir: &Path) -> bool {
    let database = database(dir);
    let present = |p: &Path| p.try_exists().unwrap_or(true);
    !present(&database) && !present(&key_file_for(&database))
}

/// Make sure a new service may be made in `dir`, and create the directory
/// (mode 0700) if it is missing: whether it was created.
pub fn prepare_new(dir: &Path, may: MayCreate) -> Result<bool, String> {
    if may == MayCreate::No {
        return Err(format!(
            "{} holds no database (ach.redb): a new service is made only when asked. To make one \
             there, run `achd init --data {0}` (or `achd serve --init --data {0}`); to serve an \
             existing one, name its directory with --data",
            dir.display()
        ));
    }
    if dir.is_dir() {
        return Ok(false);
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()))?;
    Ok(true)
}

/// Open the database of `dir` (creating it if the directory holds no service:
/// the caller checked that it may). A refusal is the engine's clear error,
/// never a panic, and leaves no new file (and no directory this start made).
pub fn open(dir: &Path, options: EngineOptions, made_dir: bool) -> Result<Engine, String> {
    let path = database(dir);
    // redb panics on some damaged files; the engine catches it. The default
    // hook would still print the panic: quiet while opening (no other thread
    // runs yet).
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = Engine::open(&path, options);
    std::panic::set_hook(hook);
    opened.map_err(|e| {
        if made_dir {
            let _ = std::fs::remove_dir(dir);
        }
        format!("cannot open the database {}: {e}", path.display())
    })
}

/// The encryption key file of a service on PostgreSQL (`--store`): beside the
/// operator key, as `ach.redb.key` is beside `ach.redb`.
pub fn store_key(dir: &Path) -> PathBuf {
    dir.join("ach.key")
}

/// Whether the directory holds no encryption key for a service on PostgreSQL.
pub fn holds_no_key(dir: &Path) -> bool {
    !store_key(dir).try_exists().unwrap_or(true)
}

/// Open the engine on PostgreSQL at `url` with `dir`'s encryption key (made
/// when missing: the caller checked that it may). A refused start removes a
/// key it made (and a directory it made).
#[cfg(feature = "postgres")]
pub fn open_postgres(
    dir: &Path,
    url: &str,
    options: EngineOptions,
    made_dir: bool,
) -> Result<Engine, String> {
    let key_file = store_key(dir);
    // A key given by the host (`--key-file`, a credential) seals the data:
    // the directory's own file is neither read nor made.
    if let Some(key) = options.encryption_key.clone() {
        return Engine::open_postgres(url, options.with_encryption_key(key)).map_err(|e| {
            if made_dir {
                let _ = std::fs::remove_dir(dir);
            }
            format!("cannot open the PostgreSQL store: {e}")
        });
    }
    let made_key = holds_no_key(dir);
    let undo = || {
        if made_key {
            let _ = std::fs::remove_file(&key_file);
        }
        if made_dir {
            let _ = std::fs::remove_dir(dir);
        }
    };
    let key = ach_core::secrets::EncryptionKey::load_or_create(&key_file).map_err(|e| {
        undo();
        e.to_string()
    })?;
    Engine::open_postgres(url, options.with_encryption_key(key)).map_err(|e| {
        undo();
        format!("cannot open the PostgreSQL store: {e}")
    })
}

/// The operator key of a data directory: the file's, or a new one that
/// [`OperatorKey::keep`] writes once the database has opened.
pub struct OperatorKey {
    /// The key.
    pub key: String,
    /// Its file.
    pub path: PathBuf,
    /// Whether it is new (not yet written).
    pub fresh: bool,
}

impl OperatorKey {
    /// Read `dir/operator.key`, or make a new key (not written yet).
    pub fn of(dir: &Path) -> Result<OperatorKey, String> {
        let path = dir.join("operator.key");
        if path.try_exists().unwrap_or(true) {
            let key =
                load_or_create_secret_file(&path, || ApiKey::generate(KeyKind::Operator).as_str().to_owned())
                    .map_err(|e| e.to_string())?;
            return Ok(OperatorKey { key, path, fresh: false });
        }
        Ok(OperatorKey { key: ApiKey::generate(KeyKind::Operator).as_str().to_owned(), path, fresh: true })
    }

    /// Write a new key to its file (mode 0600); nothing for an existing one.
    pub fn keep(&self) -> Result<(), String> {
        if !self.fresh {
            return Ok(());
        }
        let written =
            load_or_create_secret_file(&self.path, || self.key.clone()).map_err(|e| e.to_string())?;
        if written != self.key {
            return Err(format!("{} was written by another process meanwhile", self.path.display()));
        }
        Ok(())
    }
}
