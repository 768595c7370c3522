//! Envelope sealing and key rotation: a rotation re-seals the data key alone,
//! so everything sealed before it opens under the new key, the old key opens
//! nothing, and a wrong current key is refused without any change.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use ach_core::engine::{rotate_key, Caller, Engine, OpenError};
use ach_core::nacha;
use ach_core::secrets::EncryptionKey;
use ach_tests::world::{options, World};

const START: &str = "2026-11-23 10:00";
/// The account number of [`ach_tests::world::transaction`]'s customer.
const ACCOUNT: &str = "987654321";

fn open(path: &Path, key: &EncryptionKey) -> Result<Engine, OpenError> {
    Engine::open(path, options(START).with_encryption_key(key.clone()))
}

/// A database path in a new directory (which goes with the directory) and `N`
/// new keys.
fn fresh<const N: usize>() -> (tempfile::TempDir, PathBuf, [EncryptionKey; N]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    (dir, path, std::array::from_fn(|_| EncryptionKey::generate()))
}

/// The database at `path` opened by `key`, screening off, with a partner and a
/// PPD merchant of it: the world, the partner's id and caller, the merchant's id.
fn with_merchant(path: &Path, key: &EncryptionKey) -> (World, String, Caller, String) {
    let w = World::with(open(path, key).unwrap());
    w.screening_off();
    let (partner, _, caller) = w.partner_with_key();
    let (merchant, _) = w.merchant(&partner, &caller, &["PPD"]);
    (w, partner, caller, merchant)
}

/// The account numbers of every entry of every origination file.
fn originated_accounts(engine: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for f in engine.origination_files().unwrap() {
        let (_, bytes) = engine.origination_file(&f.id).unwrap().unwrap();
        let file = nacha::read(&bytes).unwrap().file;
        out.extend(file.batches.iter().flat_map(|b| &b.entries).map(|e| e.account_number.trim().to_owned()));
    }
    out
}

#[test]
fn a_rotated_key_opens_everything_sealed_before_and_the_old_key_nothing() {
    let (_dir, path, [first, second, third]) = fresh();
    let (w, partner, caller, merchant) = with_merchant(&path, &first);
    let id = w.debit(&partner, &caller, &merchant, "10.00");
    drop(w);

    rotate_key(&path, &first, &second).unwrap();
    assert!(matches!(open(&path, &first), Err(OpenError::WrongKey)), "the old key opens nothing");
    let w = World::with(open(&path, &second).unwrap());
    // Sealed before the rotation, opened after it: the debit's account number
    // goes into the bank's file, and its fingerprint still finds the account.
    w.at("2026-11-24 12:00");
    assert_eq!(originated_accounts(&w.engine), vec![ACCOUNT.to_owned()]);
    assert_eq!(w.engine.transaction(&caller, Some(&partner), &id).unwrap().id, id);
    w.debit(&partner, &caller, &merchant, "11.00");
    assert_eq!(w.engine.audit_usage().unwrap(), Ok(()));
    drop(w);

    // Again: the key rotates any number of times.
    rotate_key(&path, &second, &third).unwrap();
    assert!(matches!(open(&path, &second), Err(OpenError::WrongKey)));
    let w = World::with(open(&path, &third).unwrap());
    w.at("2026-11-25 12:00");
    assert_eq!(originated_accounts(&w.engine), vec![ACCOUNT.to_owned(), ACCOUNT.to_owned()]);
}

#[test]
fn a_wrong_current_key_is_refused_and_changes_nothing() {
    let (dir, path, [right, wrong, new]) = fresh();
    drop(open(&path, &right).unwrap());
    assert!(matches!(rotate_key(&path, &wrong, &new), Err(OpenError::WrongKey)));
    drop(open(&path, &right).expect("the key it had still opens it"));
    assert!(matches!(open(&path, &new), Err(OpenError::WrongKey)), "the new key was never stored");
    // No database there: refused, and none is made.
    let missing = dir.path().join("none.redb");
    let refused = rotate_key(&missing, &right, &new).unwrap_err().to_string();
    assert!(refused.contains("does not exist"), "{refused}");
    assert!(!missing.exists());
}

#[test]
fn a_database_in_use_is_not_rotated_under_it() {
    let (_dir, path, [key, new]) = fresh();
    let engine = open(&path, &key).unwrap();
    let refused = rotate_key(&path, &key, &new).unwrap_err().to_string();
    assert!(refused.contains("already open"), "the engine holds the file: {refused}");
    drop(engine);
    drop(open(&path, &key).expect("unchanged"));
}

#[test]
fn a_sealing_key_rotated_after_a_reseal_keeps_every_data_key_it_sealed() {
    let (_dir, path, [first, second]) = fresh();
    let (w, partner, caller, merchant) = with_merchant(&path, &first);
    // Sealed by the first data key, the re-seal stopped before the
    // transactions: they stay sealed by the (now retired) first data key.
    let before = w.debit(&partner, &caller, &merchant, "10.00");
    assert_eq!(w.engine.reseal_some(2).unwrap(), None);
    let after = w.debit(&partner, &caller, &merchant, "11.00");
    drop(w);

    rotate_key(&path, &first, &second).unwrap();
    assert!(matches!(open(&path, &first), Err(OpenError::WrongKey)));
    let w = World::with(open(&path, &second).unwrap());
    for id in [&before, &after] {
        assert_eq!(&w.engine.transaction(&caller, Some(&partner), id).unwrap().id, id);
    }
    w.at("2026-11-24 12:00");
    assert_eq!(originated_accounts(&w.engine), vec![ACCOUNT.to_owned(), ACCOUNT.to_owned()]);
    // The re-seal goes on under the new sealing key and finishes.
    let done = w.engine.reseal().unwrap();
    assert_eq!(done.unopened, 0, "{done:?}");
}
