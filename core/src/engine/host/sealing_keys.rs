//! The keys that seal values at rest, as the engine uses them: the current
//! data key seals; it and every retired data key open (a value sealed before
//! a re-seal opens until the re-seal reaches it, and after, should one have
//! been missed). The set changes while the engine runs (a re-seal begins)
//! without stopping anyone: a reader takes the set as it stands.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use crate::secrets::{Cipher, EncryptionKey, SecretError};

/// The current and retired data keys.
pub(crate) struct SealingKeys {
    ring: RwLock<Ring>,
    /// Values opened by a retired key since the engine started.
    retired_opens: AtomicU64,
}

struct Ring {
    current: Cipher,
    retired: Vec<Cipher>,
}

/// What [`SealingKeys::reseal`] made of a sealed value.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resealed {
    /// Already sealed by the current key: left as it is.
    Current,
    /// Opened by a retired key and sealed again by the current one.
    Again(Vec<u8>),
    /// No key opens it (damaged, or not a sealed value): left as it is.
    Unopened,
}

impl SealingKeys {
    /// Sealing with `current`; opening with it and every one of `retired`.
    pub(crate) fn new(current: &EncryptionKey, retired: &[EncryptionKey]) -> SealingKeys {
        SealingKeys { ring: RwLock::new(Ring::of(current, retired)), retired_opens: AtomicU64::new(0) }
    }

    /// From now on, seal with `current` and open with it and `retired`.
    pub(crate) fn replace(&self, current: &EncryptionKey, retired: &[EncryptionKey]) {
        *self.ring.write().unwrap_or_else(PoisonError::into_inner) = Ring::of(current, retired);
    }

    /// The keys as they stand, held for one operation.
    fn ring(&self) -> RwLockReadGuard<'_, Ring> {
        self.ring.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Seal `plain`, bound to `aad`, with the current key.
    pub(crate) fn encrypt(&self, plain: &[u8], aad: &[u8]) -> Vec<u8> {
        self.ring().current.encrypt(plain, aad)
    }

    /// Open a sealed value with the current key, else a retired one.
    pub(crate) fn decrypt(&self, sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>, SecretError> {
        let ring = self.ring();
        match ring.current.decrypt(sealed, aad) {
            Ok(plain) => Ok(plain),
            Err(e) => {
                let plain = ring.retired.iter().find_map(|c| c.decrypt(sealed, aad).ok()).ok_or(e)?;
                self.retired_opens.fetch_add(1, Ordering::Relaxed);
                Ok(plain)
            }
        }
    }

    /// `sealed` sealed by the current key, if a retired key sealed it.
    pub(crate) fn reseal(&self, sealed: &[u8], aad: &[u8]) -> Resealed {
        let ring = self.ring();
        if ring.current.decrypt(sealed, aad).is_ok() {
            return Resealed::Current;
        }
        match ring.retired.iter().find_map(|c| c.decrypt(sealed, aad).ok()) {
            Some(mut plain) => {
                let again = ring.current.encrypt(&plain, aad);
                zeroize::Zeroize::zeroize(&mut plain);
                Resealed::Again(again)
            }
            None => Resealed::Unopened,
        }
    }

    /// How many values a retired key opened since the engine started.
    pub(crate) fn retired_opens(&self) -> u64 {
        self.retired_opens.load(Ordering::Relaxed)
    }
}

impl Ring {
    fn of(current: &EncryptionKey, retired: &[EncryptionKey]) -> Ring {
        Ring {
            current: Cipher::new(current.as_bytes()),
            retired: retired.iter().map(|k| Cipher::new(k.as_bytes())).collect(),
        }
    }
}

impl std::fmt::Debug for SealingKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealingKeys(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_retired_key_opens_and_only_the_current_one_seals() {
        let (old, new) = (EncryptionKey::generate(), EncryptionKey::generate());
        let keys = SealingKeys::new(&old, &[]);
        let before = keys.encrypt(b"987654321", b"cus_1");
        keys.replace(&new, std::slice::from_ref(&old));
        assert_eq!(keys.decrypt(&before, b"cus_1").unwrap(), b"987654321");
        assert_eq!(keys.retired_opens(), 1);
        let after = keys.encrypt(b"987654321", b"cus_1");
        assert_eq!(Cipher::new(new.as_bytes()).decrypt(&after, b"cus_1").unwrap(), b"987654321");
        assert!(matches!(keys.decrypt(&before, b"cus_2"), Err(SecretError::Decrypt)), "bound to its record");
        let Resealed::Again(again) = keys.reseal(&before, b"cus_1") else { panic!() };
        assert_eq!(Cipher::new(new.as_bytes()).decrypt(&again, b"cus_1").unwrap(), b"987654321");
        assert_eq!(keys.reseal(&again, b"cus_1"), Resealed::Current);
        assert_eq!(
            keys.reseal(b"not sealed at all, long enough to hold a nonce", b"cus_1"),
            Resealed::Unopened
        );
        keys.replace(&new, &[]);
        assert!(
            matches!(keys.decrypt(&before, b"cus_1"), Err(SecretError::Decrypt)),
            "a forgotten key opens nothing"
        );
    }
}
