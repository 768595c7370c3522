//! Envelope sealing: account numbers, images and stored files are sealed by
//! a data key; the data key is stored sealed by the key the host gives (the
//! key-encryption key, from `--key-file`, a credential or the key file beside
//! the database). Rotating the given key re-seals the data key alone, in one
//! transaction; the rows, their fingerprints and the feed pointers stay as
//! they are.
//!
//! A new database gets a random data key. A database made before envelope
//! sealing has none stored: its data key is the given key itself, until a
//! rotation stores it sealed under the new one.

use std::path::Path;

use super::open::{open_existing, OpenError};
use crate::secrets::{Cipher, EncryptionKey, Fingerprinter};
use crate::storage::{row_keys, StorageError, Table, Write};

/// What binds a sealed data key to its purpose.
const AAD: &[u8] = b"ach data key";

/// The check value of a data key stored in `meta` (an HMAC under it).
fn check_value(data_key: &EncryptionKey) -> [u8; 32] {
    Fingerprinter::new(data_key.as_bytes()).digest(&[b"encryption-key-check"])
}

/// The data key `given` opens in `w`'s database, making one for a new
/// database; `None` when `given` is not this database's key.
pub(in crate::engine) fn open_or_make(
    w: &mut Write<'_>,
    given: &EncryptionKey,
) -> Result<Option<EncryptionKey>, StorageError> {
    let check = w.get_raw(Table::Meta, row_keys::META_KEY_CHECK)?;
    let data_key = match (w.get_raw(Table::Meta, row_keys::META_DATA_KEY)?, &check) {
        (Some(sealed), _) => unseal(given, &sealed),
        (None, Some(_)) => Some(given.clone()),
        (None, None) => {
            let made = EncryptionKey::generate();
            w.put_raw(Table::Meta, row_keys::META_DATA_KEY, &seal(given, &made))?;
            Some(made)
        }
    };
    let Some(data_key) = data_key else { return Ok(None) };
    let expected = check_value(&data_key);
    match check {
        Some(stored) if stored != expected => Ok(None),
        Some(_) => Ok(Some(data_key)),
        None => {
            w.put_raw(Table::Meta, row_keys::META_KEY_CHECK, &expected)?;
            Ok(Some(data_key))
        }
    }
}

fn seal(kek: &EncryptionKey, data_key: &EncryptionKey) -> Vec<u8> {
    Cipher::new(kek.as_bytes()).encrypt(data_key.as_bytes(), AAD)
}

fn unseal(kek: &EncryptionKey, sealed: &[u8]) -> Option<EncryptionKey> {
    let mut plain = Cipher::new(kek.as_bytes()).decrypt(sealed, AAD).ok()?;
    let key = <[u8; 32]>::try_from(plain.as_slice()).ok().map(EncryptionKey::from_bytes);
    zeroize::Zeroize::zeroize(&mut plain);
    key
}

/// Re-seal the data key of the database file at `database` (which no
/// process has open) under `new`, in one transaction: afterwards `new` opens
/// it and `current` does not. `current` must be its key
/// ([`OpenError::WrongKey`] otherwise, and nothing is written).
pub fn rotate_key(database: &Path, current: &EncryptionKey, new: &EncryptionKey) -> Result<(), OpenError> {
    let store = open_existing(database)?;
    let (check, sealed) = store.read_durable(|r| {
        Ok((
            r.get_raw(Table::Meta, row_keys::META_KEY_CHECK)?,
            r.get_raw(Table::Meta, row_keys::META_DATA_KEY)?,
        ))
    })?;
    let data_key = match sealed {
        Some(sealed) => unseal(current, &sealed),
        None => Some(current.clone()),
    };
    let data_key = data_key
        .filter(|k| check.as_deref() == Some(check_value(k).as_slice()))
        .ok_or(OpenError::WrongKey)?;
    store.write(|w| w.put_raw(Table::Meta, row_keys::META_DATA_KEY, &seal(new, &data_key)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::storage::Store;

    fn stored(store: &Store, key: &[u8]) -> Option<Vec<u8>> {
        store.read_durable(|r| r.get_raw(Table::Meta, key)).unwrap()
    }

    #[test]
    fn a_new_database_gets_a_random_data_key_sealed_by_the_given_key() {
        let store = Store::in_memory().unwrap();
        let given = EncryptionKey::generate();
        let made = store.write(|w| open_or_make(w, &given)).unwrap().unwrap();
        assert_ne!(made.as_bytes(), given.as_bytes());
        let sealed = stored(&store, row_keys::META_DATA_KEY).unwrap();
        assert!(!sealed.windows(32).any(|w| w == made.as_bytes()), "sealed, never in clear");
        let again = store.write(|w| open_or_make(w, &given)).unwrap().unwrap();
        assert_eq!(again.as_bytes(), made.as_bytes());
        assert!(store.write(|w| open_or_make(w, &EncryptionKey::generate())).unwrap().is_none());
    }

    #[test]
    fn a_database_from_before_envelope_sealing_keeps_the_given_key_as_its_data_key() {
        let store = Store::in_memory().unwrap();
        let given = EncryptionKey::generate();
        store.write(|w| w.put_raw(Table::Meta, row_keys::META_KEY_CHECK, &check_value(&given))).unwrap();
        let key = store.write(|w| open_or_make(w, &given)).unwrap().unwrap();
        assert_eq!(key.as_bytes(), given.as_bytes());
        assert_eq!(stored(&store, row_keys::META_DATA_KEY), None, "no data key is made for it");
        assert!(store.write(|w| open_or_make(w, &EncryptionKey::generate())).unwrap().is_none());
    }

    #[test]
    fn a_data_key_sealed_for_another_purpose_or_damaged_does_not_open() {
        let kek = EncryptionKey::generate();
        let data_key = EncryptionKey::generate();
        let mut sealed = seal(&kek, &data_key);
        assert_eq!(unseal(&kek, &sealed).unwrap().as_bytes(), data_key.as_bytes());
        let other = Cipher::new(kek.as_bytes()).encrypt(data_key.as_bytes(), b"something else");
        assert!(unseal(&kek, &other).is_none());
        let short = Cipher::new(kek.as_bytes()).encrypt(&[1u8; 16], AAD);
        assert!(unseal(&kek, &short).is_none(), "not 32 bytes");
        sealed[30] ^= 1;
        assert!(unseal(&kek, &sealed).is_none());
    }
}
