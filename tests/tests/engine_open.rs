//! Opening a database file, as every host does (`Engine::open`): a new one only
//! where neither the database nor its key exists; an existing file never
//! initialised; every refusal a clear error (never a panic) that leaves no new
//! file behind.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ach_core::engine::{key_file_for, Caller, Engine, EngineOptions, OpenError};
use ach_tests::world::{options, World};

const START: &str = "2026-11-23 10:00";

/// A directory holding a database with one partner, and its path.
fn made() -> (tempfile::TempDir, PathBuf) {
    let (dir, path, _, _) = made_with_key();
    (dir, path)
}

/// As [`made`], with the partner's API key and the caller it authenticates as.
fn made_with_key() -> (tempfile::TempDir, PathBuf, String, Caller) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    let w = World::with(Engine::open(&path, options(START)).unwrap());
    let (_, api_key, caller) = w.partner_with_key();
    (dir, path, api_key, caller)
}

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

fn refusal(path: &Path, options: EngineOptions) -> OpenError {
    let dir = path.parent().unwrap();
    let before = names(dir);
    let refused =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Engine::open(path, options).err()));
    let error = refused.expect("no panic").expect("refused");
    assert_eq!(names(dir), before, "{error}: no file made or removed");
    error
}

#[test]
fn an_empty_database_file_is_refused_not_initialised() {
    let (_dir, path) = made();
    std::fs::write(&path, b"").unwrap();
    let error = refusal(&path, options(START));
    assert!(matches!(error, OpenError::Empty(_)), "{error}");
    assert!(error.to_string().contains("is empty (0 bytes)"), "{error}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
}

#[test]
fn a_database_without_its_key_file_is_refused_and_no_key_is_made() {
    let (_dir, path) = made();
    std::fs::remove_file(key_file_for(&path)).unwrap();
    let error = refusal(&path, options(START));
    assert!(matches!(error, OpenError::MissingKey { .. }), "{error}");
}

#[test]
fn a_key_file_without_its_database_is_refused_and_no_database_is_made() {
    let (_dir, path) = made();
    std::fs::remove_file(&path).unwrap();
    let error = refusal(&path, options(START));
    assert!(matches!(error, OpenError::KeyWithoutDatabase { .. }), "{error}");
}

#[test]
fn a_damaged_or_foreign_file_is_an_error_not_a_panic() {
    let (_dir, path, api_key, caller) = made_with_key();
    let good = std::fs::read(&path).unwrap();
    let mut garbage = good.clone();
    for (i, byte) in garbage[4096..].iter_mut().enumerate() {
        *byte = (i * 7) as u8;
    }
    let error = {
        std::fs::write(&path, &garbage).unwrap();
        refusal(&path, options(START))
    };
    assert!(matches!(error, OpenError::Damaged { .. }), "{error}");
    std::fs::write(&path, b"not a database at all").unwrap();
    let error = refusal(&path, options(START));
    assert!(matches!(error, OpenError::NotADatabase(_)), "{error}");
    std::fs::write(&path, &good).unwrap();
    let reopened =
        Engine::open(&path, options(START)).unwrap_or_else(|e| panic!("the good file still opens: {e}"));
    assert_eq!(reopened.authenticate(&api_key), Ok(caller), "the good file still opens");
}

#[test]
fn a_new_database_that_cannot_start_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    let beyond = EngineOptions::manual(chrono::DateTime::<chrono::Utc>::MAX_UTC);
    let error = refusal(&path, beyond);
    assert!(matches!(error, OpenError::Clock(_)), "{error}");
    assert!(names(dir.path()).is_empty());
}

#[test]
fn a_path_that_cannot_be_looked_at_is_a_storage_error_and_no_key_is_made() {
    let dir = std::env::temp_dir().join(format!("ach-open-nul-{}", ach_core::ids::random_alphanumeric(10)));
    std::fs::create_dir(&dir).unwrap();
    let path = PathBuf::from(format!("{}/x\0y.redb", dir.display()));
    let err = Engine::open(&path, options("2026-11-23 10:00")).map(drop).unwrap_err();
    assert!(matches!(err, OpenError::Storage(_)), "{err:?}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing created");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_redo_log_lives_beside_the_database_owner_only() {
    let (dir, path, api_key, caller) = made_with_key();
    let log = ach_core::engine::log_file_for(&path);
    assert_eq!(names(dir.path()), ["ach.redb", "ach.redb.key", "ach.redb.log"].map(String::from).into());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&log).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let reopened =
        Engine::open(&path, options(START)).unwrap_or_else(|e| panic!("reopens with its log: {e}"));
    assert_eq!(reopened.authenticate(&api_key), Ok(caller), "reopens with its log");
}

#[test]
fn a_redo_log_without_its_database_is_refused_and_nothing_is_made() {
    let (_dir, path) = made();
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(key_file_for(&path)).unwrap();
    let error = refusal(&path, options(START));
    assert!(error.to_string().contains("exists but its database"), "{error}");
}

#[test]
fn a_refused_open_removes_the_redo_log_it_made() {
    let (_dir, path) = made();
    std::fs::remove_file(ach_core::engine::log_file_for(&path)).unwrap();
    let wrong = options(START).with_encryption_key(ach_core::secrets::EncryptionKey::generate());
    let error = refusal(&path, wrong);
    assert!(matches!(error, OpenError::WrongKey), "{error}");
}

/// The three files copied while the engine is open, as a crash leaves them:
/// the database as of its last checkpoint, the log with every write since.
fn copied_while_open() -> (tempfile::TempDir, PathBuf, Vec<String>, (String, ach_core::engine::Caller)) {
    let (dir, path) = made();
    let w = World::with(Engine::open(&path, options(START)).unwrap());
    let (partner, caller, merchant) = w.tenant(&["PPD"]);
    let ids: Vec<String> =
        (0..5).map(|i| w.debit(&partner, &caller, &merchant, &format!("{i}.25"))).collect();
    let copy = tempfile::tempdir().unwrap();
    for name in ["ach.redb", "ach.redb.key", "ach.redb.log"] {
        std::fs::copy(dir.path().join(name), copy.path().join(name)).unwrap();
    }
    drop(w);
    let copied = copy.path().join("ach.redb");
    (copy, copied, ids, (partner, caller))
}

#[test]
fn a_database_copied_while_open_opens_with_every_write_replayed_from_its_log() {
    let (_copy, path, ids, (partner, caller)) = copied_while_open();
    let w = World::with(Engine::open(&path, options(START)).unwrap());
    let seen: Vec<String> = w.changes(&partner, &caller).into_iter().map(|c| c.transaction_id).collect();
    assert_eq!(seen, ids);
    assert_eq!(w.engine.audit_records().unwrap(), Ok(()));
}

#[test]
fn a_damaged_redo_log_record_before_synced_ones_is_refused_not_a_panic() {
    let (_copy, path, _, _) = copied_while_open();
    let log = ach_core::engine::log_file_for(&path);
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[40] ^= 0x20;
    std::fs::write(&log, &bytes).unwrap();
    let error = refusal(&path, options(START));
    assert!(error.to_string().contains("the redo log is damaged at byte 0"), "{error}");
}

#[test]
fn a_database_restored_from_an_older_backup_beside_a_newer_redo_log_is_refused() {
    let (dir, path) = made();
    let backup = std::fs::read(&path).unwrap();
    let log = ach_core::engine::log_file_for(&path);
    drop(World::with(Engine::open(&path, options(START)).unwrap()).partner());
    let newer_log = {
        let w = World::with(Engine::open(&path, options(START)).unwrap());
        w.partner();
        std::fs::read(&log).unwrap()
    };
    std::fs::write(&path, backup).unwrap();
    std::fs::write(&log, newer_log).unwrap();
    let error = refusal(&path, options(START));
    assert!(error.to_string().contains("the log is not this database's"), "{error}");
    drop(dir);
}
