//! Backups of a database file: taken while the engine writes, they hold every
//! transaction answered before they began and open as a database of their own;
//! a restore never writes over anything, and sealed data stays sealed.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ach_core::engine::{backup_file, key_file_for, log_file_for, restore_file, Caller, Engine, OpenError};
use ach_tests::world::{options, World};

const START: &str = "2026-11-23 10:00";
const ACCOUNT: &str = "918273645500";

fn open(path: &Path) -> World {
    World::with(Engine::open(path, options(START)).unwrap())
}

/// A database with a partner, a merchant, a customer holding [`ACCOUNT`] and
/// screening off, in a new directory.
fn populated() -> (tempfile::TempDir, PathBuf, World, String, Caller, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    let w = open(&path);
    w.screening_off();
    let (partner, _, caller) = w.partner_with_key();
    let (merchant, _) = w.merchant(&partner, &caller, &["PPD"]);
    w.customer(&partner, &caller, &merchant, ACCOUNT);
    (dir, path, w, partner, caller, merchant)
}

/// A backup of a [`populated`] database, taken in its directory: the
/// directory and the backup's path.
fn backed_up() -> (tempfile::TempDir, PathBuf) {
    let (dir, _path, w, ..) = populated();
    let dest = dir.path().join("backup.redb");
    w.engine.backup(&dest).unwrap();
    (dir, dest)
}

/// `path`'s key beside `restored`, as an operator restoring keeps the key.
fn copy_key(path: &Path, restored: &Path) {
    std::fs::copy(key_file_for(path), key_file_for(restored)).unwrap();
}

#[test]
fn a_backup_taken_under_writes_holds_every_answered_transaction() {
    let (dir, path, w, partner, caller, merchant) = populated();
    let w = Arc::new(w);
    let answered = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (w, answered, stop) = (w.clone(), answered.clone(), stop.clone());
        let (partner, caller, merchant) = (partner.clone(), caller.clone(), merchant.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                let id = w.debit(&partner, &caller, &merchant, &format!("{}.{:02}", 1 + n / 100, n % 100));
                answered.lock().unwrap().push(id);
            }
        })
    };
    while answered.lock().unwrap().len() < 40 {
        std::thread::yield_now();
    }
    let before: Vec<String> = answered.lock().unwrap().clone();
    let dest = dir.path().join("backup.redb");
    let figures = w.engine.backup(&dest).unwrap();
    let during = answered.lock().unwrap().len();
    while answered.lock().unwrap().len() < during + 20 {
        std::thread::yield_now();
    }
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    assert!(figures.entries > before.len() as u64, "{figures:?}");
    assert!(!Path::new(&format!("{}.partial", dest.display())).exists());

    let restored_dir = tempfile::tempdir().unwrap();
    let restored = restored_dir.path().join("ach.redb");
    let again = restore_file(&dest, &restored).unwrap();
    assert_eq!(again, figures, "a restore copies what the backup holds");
    copy_key(&path, &restored);
    let r = open(&restored);
    for id in &before {
        let t = r.engine.transaction(&caller, Some(&partner), id);
        let read = t.unwrap_or_else(|e| panic!("{id} answered before the backup began: {e:?}"));
        assert_eq!(&read.id, id);
    }
    assert_eq!(r.engine.audit_usage().unwrap(), Ok(()));
    // The restored service serves: a new transaction, and the customer's
    // sealed account number opens under the same key.
    r.debit(&partner, &caller, &merchant, "5.00");
    assert_eq!(r.engine.audit_usage().unwrap(), Ok(()));
}

#[test]
fn a_backup_keeps_account_numbers_sealed() {
    let (_dir, dest) = backed_up();
    let bytes = std::fs::read(&dest).unwrap();
    assert!(!bytes.windows(ACCOUNT.len()).any(|win| win == ACCOUNT.as_bytes()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&dest).unwrap().permissions().mode() & 0o777, 0o600);
    }
}

#[test]
fn a_backup_never_writes_over_a_file() {
    let (dir, _path, w, ..) = populated();
    let dest = dir.path().join("backup.redb");
    std::fs::write(&dest, b"keep me").unwrap();
    let refused = w.engine.backup(&dest).unwrap_err().to_string();
    assert!(refused.contains("exists"), "{refused}");
    assert_eq!(std::fs::read(&dest).unwrap(), b"keep me");
}

#[test]
fn a_closed_database_is_backed_up_without_its_key_and_an_open_one_is_refused() {
    let (dir, path, w, partner, caller, merchant) = populated();
    let id = w.debit(&partner, &caller, &merchant, "7.00");
    let dest = dir.path().join("open.redb");
    let refused = backup_file(&path, &dest).unwrap_err().to_string();
    assert!(!dest.exists(), "{refused}");
    drop(w);
    std::fs::remove_file(key_file_for(&path)).unwrap();
    let figures = backup_file(&path, &dest).unwrap();
    assert!(figures.entries > 0);
    let missing = backup_file(&dir.path().join("none.redb"), &dir.path().join("none-copy.redb"));
    assert!(matches!(missing, Err(OpenError::Storage(_))), "{missing:?}");
    assert!(!dir.path().join("none.redb").exists(), "never created");

    let restored_dir = tempfile::tempdir().unwrap();
    let restored = restored_dir.path().join("ach.redb");
    restore_file(&dest, &restored).unwrap();
    // Without the key the restored database does not open; no key is made.
    assert!(matches!(Engine::open(&restored, options(START)), Err(OpenError::MissingKey { .. })));
    assert!(!key_file_for(&restored).exists());
    let _ = id;
}

#[test]
fn a_restore_never_writes_over_a_database_or_its_log() {
    let (_dir, dest) = backed_up();
    let target = tempfile::tempdir().unwrap();
    let database = target.path().join("ach.redb");
    std::fs::write(&database, b"existing").unwrap();
    let refused = restore_file(&dest, &database).unwrap_err().to_string();
    assert!(refused.contains("exists"), "{refused}");
    assert_eq!(std::fs::read(&database).unwrap(), b"existing");
    std::fs::remove_file(&database).unwrap();
    std::fs::write(log_file_for(&database), b"").unwrap();
    let refused = restore_file(&dest, &database).unwrap_err().to_string();
    assert!(refused.contains("ach.redb.log exists"), "{refused}");
    assert!(!database.exists());
}

#[test]
fn a_restore_of_anything_but_a_whole_backup_is_refused_and_leaves_nothing() {
    let (dir, dest) = backed_up();
    let whole = std::fs::read(&dest).unwrap();
    type Expect = fn(&OpenError) -> bool;
    let cases: Vec<(&str, Vec<u8>, Expect)> = vec![
        ("empty", Vec::new(), |e| matches!(e, OpenError::Empty(_))),
        ("not a database", b"hello, this is not redb at all".to_vec(), |e| {
            matches!(e, OpenError::NotADatabase(_))
        }),
        ("truncated", whole[..whole.len() / 3].to_vec(), |e| {
            matches!(e, OpenError::Storage(_) | OpenError::Damaged { .. })
        }),
    ];
    for (what, bytes, expect) in cases {
        let bad = dir.path().join(format!("{}.redb", what.replace(' ', "-")));
        std::fs::write(&bad, &bytes).unwrap();
        let target = tempfile::tempdir().unwrap();
        let database = target.path().join("ach.redb");
        let refused = restore_file(&bad, &database).unwrap_err();
        assert!(expect(&refused), "{what}: {refused}");
        let left: Vec<_> = std::fs::read_dir(target.path()).unwrap().collect();
        assert!(left.is_empty(), "{what}: {left:?}");
        assert_eq!(std::fs::read(&bad).unwrap(), bytes, "{what}: the backup is only read");
    }
}
