//! Envelope sealing: account numbers, images and stored files are sealed by
//! a data key; the data key is stored sealed by the key the host gives (the
//! key-encryption key, from `--key-file`, a credential or the key file beside
//! the database). Rotating the given key re-seals the stored keys alone, in
//! one transaction; the rows, their fingerprints and the feed pointers stay
//! as they are.
//!
//! What `meta` holds, each sealed by the given key and bound to its purpose:
//! - `data_key`: the key that seals from now on;
//! - `index_key`: the key of the fingerprints and the key check, stored once
//!   a re-seal replaced the data key it was (until then it is the data key);
//! - `retired_keys`: data keys a re-seal replaced, kept so that any value
//!   sealed by one still opens.
//!
//! A new database gets a random data key. A database made before envelope
//! sealing has none stored: its data key is the given key itself, until a
//! rotation or a re-seal stores it.

use std::path::Path;

use base64::Engine as _;

use super::open::{open_existing, OpenError};
use crate::secrets::{Cipher, EncryptionKey, Fingerprinter};
use crate::storage::{row_keys, StorageError, Store, Table, Write};

const DATA_AAD: &[u8] = b"ach data key";
const INDEX_AAD: &[u8] = b"ach index key";
const RETIRED_AAD: &[u8] = b"ach retired data key";

/// A database's keys, opened.
pub(crate) struct Keys {
    /// Seals from now on.
    pub(crate) data: EncryptionKey,
    /// Keys the fingerprints and the key check.
    pub(crate) index: EncryptionKey,
    /// Open what earlier data keys sealed.
    pub(crate) retired: Vec<EncryptionKey>,
}

/// The check value of an index key stored in `meta` (an HMAC under it).
fn check_value(index_key: &EncryptionKey) -> [u8; 32] {
    Fingerprinter::new(index_key.as_bytes()).digest(&[b"encryption-key-check"])
}

/// A read of one `meta` entry.
type Get<'a> = dyn FnMut(&[u8]) -> Result<Option<Vec<u8>>, StorageError> + 'a;

/// The meta entries the keys are kept in, as stored.
struct Stored {
    check: Option<Vec<u8>>,
    data: Option<Vec<u8>>,
    index: Option<Vec<u8>>,
    retired: Vec<Vec<u8>>,
}

impl Stored {
    fn read(get: &mut Get<'_>) -> Result<Stored, StorageError> {
        let retired = match get(row_keys::META_RETIRED_KEYS)? {
            None => Vec::new(),
            Some(json) => serde_json::from_slice::<Vec<String>>(&json)
                .ok()
                .and_then(|list| list.iter().map(|s| b64().decode(s).ok()).collect())
                .ok_or_else(|| StorageError("the retired data keys are unreadable".into()))?,
        };
        Ok(Stored {
            check: get(row_keys::META_KEY_CHECK)?,
            data: get(row_keys::META_DATA_KEY)?,
            index: get(row_keys::META_INDEX_KEY)?,
            retired,
        })
    }

    /// The keys `given` opens, if the database has a key check (it is not
    /// new) and `given` is its key.
    fn open(&self, given: &EncryptionKey) -> Option<Keys> {
        let check = self.check.as_ref()?;
        let data = match &self.data {
            Some(sealed) => unseal(given, sealed, DATA_AAD)?,
            None => given.clone(),
        };
        let index = match &self.index {
            Some(sealed) => unseal(given, sealed, INDEX_AAD)?,
            None => data.clone(),
        };
        if check_value(&index).as_slice() != check.as_slice() {
            return None;
        }
        let retired =
            self.retired.iter().map(|s| unseal(given, s, RETIRED_AAD)).collect::<Option<Vec<_>>>()?;
        Some(Keys { data, index, retired })
    }
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// The keys `given` opens in `w`'s database, making them for a new
/// database; `None` when `given` is not this database's key.
pub(in crate::engine) fn open_or_make(
    w: &mut Write<'_>,
    given: &EncryptionKey,
) -> Result<Option<Keys>, StorageError> {
    let stored = Stored::read(&mut |key| w.get_raw(Table::Meta, key))?;
    if stored.check.is_some() {
        return Ok(stored.open(given));
    }
    let made = EncryptionKey::generate();
    w.put_raw(Table::Meta, row_keys::META_DATA_KEY, &seal(given, &made, DATA_AAD))?;
    w.put_raw(Table::Meta, row_keys::META_KEY_CHECK, &check_value(&made))?;
    Ok(Some(Keys { index: made.clone(), data: made, retired: Vec::new() }))
}

/// Store `keys`, every one sealed by `kek` (in `w`, one transaction).
pub(in crate::engine) fn save(
    w: &mut Write<'_>,
    kek: &EncryptionKey,
    keys: &Keys,
) -> Result<(), StorageError> {
    w.put_raw(Table::Meta, row_keys::META_DATA_KEY, &seal(kek, &keys.data, DATA_AAD))?;
    w.put_raw(Table::Meta, row_keys::META_INDEX_KEY, &seal(kek, &keys.index, INDEX_AAD))?;
    let retired: Vec<String> = keys.retired.iter().map(|k| b64().encode(seal(kek, k, RETIRED_AAD))).collect();
    let json = serde_json::to_vec(&retired).map_err(|e| StorageError(e.to_string()))?;
    w.put_raw(Table::Meta, row_keys::META_RETIRED_KEYS, &json)
}

fn seal(kek: &EncryptionKey, key: &EncryptionKey, aad: &[u8]) -> Vec<u8> {
    Cipher::new(kek.as_bytes()).encrypt(key.as_bytes(), aad)
}

fn unseal(kek: &EncryptionKey, sealed: &[u8], aad: &[u8]) -> Option<EncryptionKey> {
    let mut plain = Cipher::new(kek.as_bytes()).decrypt(sealed, aad).ok()?;
    let key = <[u8; 32]>::try_from(plain.as_slice()).ok().map(EncryptionKey::from_bytes);
    zeroize::Zeroize::zeroize(&mut plain);
    key
}

/// The keys `given` opens in `store` (read only); [`OpenError::WrongKey`]
/// when it is not the database's key.
pub(in crate::engine) fn read(store: &Store, given: &EncryptionKey) -> Result<Keys, OpenError> {
    let stored = store.read_durable(|r| Stored::read(&mut |key| r.get_raw(Table::Meta, key)))?;
    stored.open(given).ok_or(OpenError::WrongKey)
}

/// Re-seal the stored keys of the database file at `database` (which no
/// process has open) under `new`, in one transaction: afterwards `new` opens
/// it and `current` does not. `current` must be its key
/// ([`OpenError::WrongKey`] otherwise, and nothing is written).
pub fn rotate_key(database: &Path, current: &EncryptionKey, new: &EncryptionKey) -> Result<(), OpenError> {
    let store = open_existing(database)?;
    let keys = read(&store, current)?;
    store.write(|w| save(w, new, &keys))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn stored(store: &Store, key: &[u8]) -> Option<Vec<u8>> {
        store.read_durable(|r| r.get_raw(Table::Meta, key)).unwrap()
    }

    #[test]
    fn a_new_database_gets_a_random_data_key_sealed_by_the_given_key() {
        let store = Store::in_memory().unwrap();
        let given = EncryptionKey::generate();
        let made = store.write(|w| open_or_make(w, &given)).unwrap().unwrap();
        assert_ne!(made.data.as_bytes(), given.as_bytes());
        assert_eq!(made.index.as_bytes(), made.data.as_bytes());
        let sealed = stored(&store, row_keys::META_DATA_KEY).unwrap();
        assert!(!sealed.windows(32).any(|w| w == made.data.as_bytes()), "sealed, never in clear");
        let again = store.write(|w| open_or_make(w, &given)).unwrap().unwrap();
        assert_eq!(again.data.as_bytes(), made.data.as_bytes());
        assert!(store.write(|w| open_or_make(w, &EncryptionKey::generate())).unwrap().is_none());
    }

    #[test]
    fn a_database_from_before_envelope_sealing_keeps_the_given_key_as_its_data_key() {
        let store = Store::in_memory().unwrap();
        let given = EncryptionKey::generate();
        store.write(|w| w.put_raw(Table::Meta, row_keys::META_KEY_CHECK, &check_value(&given))).unwrap();
        let keys = store.write(|w| open_or_make(w, &given)).unwrap().unwrap();
        assert_eq!(keys.data.as_bytes(), given.as_bytes());
        assert_eq!(keys.index.as_bytes(), given.as_bytes());
        assert_eq!(stored(&store, row_keys::META_DATA_KEY), None, "no data key is made for it");
        assert!(store.write(|w| open_or_make(w, &EncryptionKey::generate())).unwrap().is_none());
    }

    #[test]
    fn stored_keys_open_with_their_key_only_and_keep_every_part() {
        let store = Store::in_memory().unwrap();
        let (kek, other) = (EncryptionKey::generate(), EncryptionKey::generate());
        let first = store.write(|w| open_or_make(w, &kek)).unwrap().unwrap();
        let keys = Keys {
            data: EncryptionKey::generate(),
            index: first.index.clone(),
            retired: vec![first.data.clone(), EncryptionKey::generate()],
        };
        store.write(|w| save(w, &other, &keys)).unwrap();
        assert!(matches!(read(&store, &kek), Err(OpenError::WrongKey)));
        let opened = read(&store, &other).unwrap();
        assert_eq!(opened.data.as_bytes(), keys.data.as_bytes());
        assert_eq!(opened.index.as_bytes(), first.index.as_bytes());
        let retired: Vec<_> = opened.retired.iter().map(|k| *k.as_bytes()).collect();
        assert_eq!(retired, keys.retired.iter().map(|k| *k.as_bytes()).collect::<Vec<_>>());
    }

    #[test]
    fn a_key_sealed_for_another_purpose_or_damaged_does_not_open() {
        let kek = EncryptionKey::generate();
        let data_key = EncryptionKey::generate();
        let mut sealed = seal(&kek, &data_key, DATA_AAD);
        assert_eq!(unseal(&kek, &sealed, DATA_AAD).unwrap().as_bytes(), data_key.as_bytes());
        assert!(unseal(&kek, &sealed, INDEX_AAD).is_none(), "a data key is not an index key");
        let short = Cipher::new(kek.as_bytes()).encrypt(&[1u8; 16], DATA_AAD);
        assert!(unseal(&kek, &short, DATA_AAD).is_none(), "not 32 bytes");
        sealed[30] ^= 1;
        assert!(unseal(&kek, &sealed, DATA_AAD).is_none());
    }
}
