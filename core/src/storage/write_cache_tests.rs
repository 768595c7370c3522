//! What write transactions carry to the next (`write_cache.rs`), over a store:
//! only what committed is ever known.
#![allow(clippy::unwrap_used)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::{row_keys, StorageError, Store, Table};

/// What a write transaction sees: the usage value at `key`, the last key of
/// scope `s`'s feed, the pending index's first key.
type Seen = (Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>);

fn seen(store: &Store) -> Seen {
    store
        .write(|w| {
            let (from, to) = row_keys::seq_range_after("s", 0);
            let value = w.get_known(Table::Usage, b"k")?;
            let last = w.last_key_known(Table::Changes, &from, &to)?;
            Ok((value, last, w.first_key_known(Table::Pending)?))
        })
        .unwrap()
}

/// A write transaction that changes all three, and checks that what it
/// knows is what it reads.
fn change_all(w: &mut super::Write<'_>, n: u64) -> Result<(), StorageError> {
    w.put_raw(Table::Usage, b"k", &n.to_be_bytes())?;
    w.put_raw(Table::Changes, &row_keys::seq("s", n), b"change")?;
    w.put_raw(Table::Pending, &[0, n as u8], b"due")?;
    let (from, to) = row_keys::seq_range_after("s", 0);
    assert_eq!(w.get_known(Table::Usage, b"k")?, Some(n.to_be_bytes().to_vec()));
    assert_eq!(w.last_key_known(Table::Changes, &from, &to)?, w.last_key(Table::Changes, &from, &to)?);
    assert_eq!(w.first_key_known(Table::Pending)?, w.first_key(Table::Pending)?);
    Ok(())
}

fn committed(n: u64) -> Seen {
    (Some(n.to_be_bytes().to_vec()), Some(row_keys::seq("s", n)), Some(vec![0, n as u8]))
}

#[test]
fn what_a_failed_transaction_did_is_never_known_after_it() {
    let store = Store::in_memory().unwrap();
    assert_eq!(seen(&store), (None, None, None));
    store.write(|w| change_all(w, 5)).unwrap();
    assert_eq!(seen(&store), committed(5));
    let failed = store.write(|w| {
        // A later key, a larger value: all three would move.
        w.remove(Table::Pending, &[0, 5])?;
        change_all(w, 7)?;
        Err::<(), _>(StorageError("refused".into()))
    });
    assert_eq!(failed, Err(StorageError("refused".into())));
    assert_eq!(seen(&store), committed(5));
    // And what commits is known at once.
    store.write(|w| change_all(w, 9)).unwrap();
    assert_eq!(seen(&store), (committed(9).0, committed(9).1, committed(5).2));
}

#[test]
fn what_a_transaction_that_panicked_did_is_never_known_after_it() {
    let store = Store::in_memory().unwrap();
    store.write(|w| change_all(w, 5)).unwrap();
    assert_eq!(seen(&store), committed(5));
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        store.write(|w| -> Result<(), StorageError> {
            w.remove(Table::Pending, &[0, 5])?;
            change_all(w, 7)?;
            panic!("a bug in an operation");
        })
    }));
    let payload = panicked.map(drop).unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"a bug in an operation"));
    assert_eq!(seen(&store), committed(5));
}

#[test]
fn removing_a_known_last_or_first_key_makes_the_next_one_read_again() {
    let store = Store::in_memory().unwrap();
    store.write(|w| change_all(w, 3)).unwrap();
    store.write(|w| change_all(w, 4)).unwrap();
    assert_eq!(seen(&store), (committed(4).0, committed(4).1, committed(3).2));
    store
        .write(|w| {
            w.remove(Table::Changes, &row_keys::seq("s", 4))?;
            w.remove(Table::Pending, &[0, 3])?;
            w.remove(Table::Usage, b"k")
        })
        .unwrap();
    assert_eq!(seen(&store), (None, committed(3).1, committed(4).2));
}
