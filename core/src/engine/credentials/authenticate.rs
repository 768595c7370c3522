//! Who a request's key belongs to: the one place a key is checked.
//!
//! A key is hashed ([`key_hash`]) and its caller looked up in the store
//! (`Table::Keys`), remembered in [`CredentialsCache`](super::cache) while
//! the credentials epoch stands still. A host that must not wait on storage
//! (an async worker) asks [`Engine::admit_key_remembered`] first: memory
//! only, `None` when the store must be read, which it then does with
//! [`Engine::admit_key`] on a thread that may block.
//!
//! On a shared store (PostgreSQL) knowing that a remembered authentication
//! still holds takes a read of the credentials epoch: a round trip on every
//! request. A host may instead admit a request on what its engine remembers
//! and have it confirmed before it is answered: a write operation inside its
//! own write transaction ([`holds`]: the transaction holds the store's write
//! lock and sees every commit before it, with the epoch read ahead: no round
//! trip of its own), anything else by [`Engine::confirm`] before its answer.
//! Either way a key revoked, or a holder suspended, before the request came
//! is refused, through whichever process it was changed. On redb the epoch
//! is a count in memory: every admission is confirmed at once.

use chrono::{DateTime, Utc};

use super::CallerUntil;
use crate::engine::{Caller, Engine, Refusal, WriteContext};
use crate::secrets::KeyHash;
use crate::storage::{row_keys, StorageError, Table};

/// An authentication answered from memory, still to be confirmed: the key's
/// hash and the credentials epoch it was remembered at.
#[derive(Clone)]
pub struct Unconfirmed {
    hash: KeyHash,
    epoch: Vec<u8>,
}

impl std::fmt::Debug for Unconfirmed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A key's hash is nobody's business (not even a log's).
        f.write_str("Unconfirmed")
    }
}

/// A caller admitted on its key.
#[derive(Debug, Clone)]
pub struct Admission {
    /// Who.
    pub caller: Caller,
    /// What is left to confirm (`None`: nothing).
    pub unconfirmed: Option<Unconfirmed>,
    /// The requests per second the operator set for the caller's partner
    /// (`None`: none set; the host's default holds).
    pub request_rate: Option<u32>,
}

impl Admission {
    fn of(found: CallerUntil, unconfirmed: Option<Unconfirmed>) -> Admission {
        Admission { caller: found.caller, unconfirmed, request_rate: found.request_rate }
    }
}

/// The hash of an API key, or [`Refusal::Authentication`] for an empty key
/// or one over 256 bytes (no key is).
pub(crate) fn key_hash(api_key: &str) -> Result<KeyHash, Refusal> {
    if api_key.is_empty() || api_key.len() > 256 {
        return Err(Refusal::Authentication);
    }
    Ok(KeyHash::of(api_key))
}

impl Engine {
    /// Who an API key belongs to, or [`Refusal::Authentication`] (also for a
    /// key past its grace window, a revoked key, or a suspended holder's key).
    /// May read the store.
    pub fn authenticate(&self, api_key: &str) -> Result<Caller, Refusal> {
        self.authenticate_hash(&key_hash(api_key)?)
    }

    /// [`Engine::authenticate`] of a key's hash.
    fn authenticate_hash(&self, hash: &KeyHash) -> Result<Caller, Refusal> {
        self.found_hash(hash).map(|found| found.caller)
    }

    /// Who the key hashed `hash` authenticates, with its key's end and its
    /// partner's request rate.
    fn found_hash(&self, hash: &KeyHash) -> Result<CallerUntil, Refusal> {
        let now = self.now();
        // The epoch is read first, so a change after it is seen by the next request.
        let epoch = self.store.credentials_epoch()?;
        if let Some(found) = self.credentials_cache.get(hash.as_bytes(), &epoch, now) {
            return Ok(found);
        }
        if self.credentials_cache.refused(hash.as_bytes(), &epoch) {
            return Err(Refusal::Authentication);
        }
        self.look_up(hash, epoch, now)?.ok_or(Refusal::Authentication)
    }

    /// Who the key hashed `hash` authenticates at `now`, read from the store
    /// and remembered at `epoch` (read before the lookup); `None`: refused.
    fn look_up(
        &self,
        hash: &KeyHash,
        epoch: Vec<u8>,
        now: DateTime<Utc>,
    ) -> Result<Option<CallerUntil>, StorageError> {
        let found = self.store.read_latest(|r| super::caller_until(r, self.operator.as_ref(), hash, now))?;
        Ok(match found {
            Some(found) => {
                self.credentials_cache.put(*hash.as_bytes(), epoch, found.clone());
                Some(found)
            }
            None => {
                self.credentials_cache.put_refused(*hash.as_bytes(), epoch);
                None
            }
        })
    }

    /// Who an API key belongs to, as [`Engine::authenticate`] answers, except
    /// that on a shared store a remembered authentication is answered without
    /// reading the credentials epoch, with what is left to confirm before the
    /// request is answered (see the module's text). May read the store.
    pub fn admit_key(&self, api_key: &str) -> Result<Admission, Refusal> {
        let hash = key_hash(api_key)?;
        if let Some(remembered) = self.remembered(hash) {
            return remembered;
        }
        self.found_hash(&hash).map(|found| Admission::of(found, None))
    }

    /// [`Engine::admit_key`] from memory alone, never waiting on storage:
    /// `None` when the answer needs the store (a key not remembered, or on a
    /// shared store a refusal, which only the store can confirm).
    pub fn admit_key_remembered(&self, api_key: &str) -> Option<Result<Admission, Refusal>> {
        match key_hash(api_key) {
            Ok(hash) => self.remembered(hash),
            Err(refused) => Some(Err(refused)),
        }
    }

    /// [`Engine::admit_key_remembered`] of a key's hash.
    fn remembered(&self, hash: KeyHash) -> Option<Result<Admission, Refusal>> {
        let now = self.now();
        if self.store.multiprocess() {
            let (found, epoch) = self.credentials_cache.get_remembered(hash.as_bytes(), now)?;
            return Some(Ok(Admission::of(found, Some(Unconfirmed { hash, epoch }))));
        }
        // On redb the epoch is a count in memory.
        let epoch = self.store.credentials_epoch().ok()?;
        if let Some(found) = self.credentials_cache.get(hash.as_bytes(), &epoch, now) {
            return Some(Ok(Admission::of(found, None)));
        }
        self.credentials_cache.refused(hash.as_bytes(), &epoch).then_some(Err(Refusal::Authentication))
    }

    /// Confirm `caller`'s authentication outside a write transaction (before
    /// answering a read): [`Refusal::Authentication`] if its key no longer
    /// authenticates it. Reads the store.
    pub fn confirm(&self, caller: &Caller, unconfirmed: &Unconfirmed) -> Result<(), Refusal> {
        let epoch = self.store.credentials_epoch()?;
        if epoch == unconfirmed.epoch {
            return Ok(());
        }
        match self.look_up(&unconfirmed.hash, epoch, self.now())? {
            Some(found) if found.caller == *caller => Ok(()),
            _ => Err(Refusal::Authentication),
        }
    }
}

/// Whether `caller`'s authentication still holds in the write transaction
/// `cx`: its epoch (read once per transaction: only the transaction's own
/// end moves it) unchanged and no key or suspension changed earlier in the
/// transaction, or else the key looked up again there.
pub(crate) fn holds(
    cx: &mut WriteContext<'_, '_>,
    caller: &Caller,
    unconfirmed: &Unconfirmed,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    if cx.credentials_epoch.is_none() {
        let stored = cx.write.get_raw(Table::Meta, row_keys::META_CREDENTIALS_EPOCH)?;
        cx.credentials_epoch = Some(stored.unwrap_or_default());
    }
    if cx.credentials_epoch.as_ref() == Some(&unconfirmed.epoch) && !cx.write.changed_credentials() {
        return Ok(true);
    }
    let found = super::caller_until(cx.write, cx.engine.operator.as_ref(), &unconfirmed.hash, now)?;
    Ok(found.is_some_and(|found| found.caller == *caller))
}
