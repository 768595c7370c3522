//! Authentications confirmed later. On a shared store (PostgreSQL) knowing
//! that a remembered authentication still holds takes a read of the
//! credentials epoch: a round trip on every request, while the request
//! thread waits. A host may instead admit a request on what its engine
//! remembers ([`Engine::admit_key`]) and have it confirmed before it is
//! answered: a write operation inside its own write transaction (which holds
//! the store's write lock and sees every commit before it, with the epoch
//! read ahead: no round trip of its own), anything else by
//! [`Engine::confirm`] before its answer. Either way a key revoked, or a
//! holder suspended, before the request came is refused, through whichever
//! process it was changed: the rule of `credentials_cache.rs` holds.
//!
//! On redb the epoch is a count in memory: [`Engine::admit_key`] confirms at
//! once and leaves nothing to confirm.

use chrono::{DateTime, Utc};

use super::{credentials, Caller, Cx, Engine, Refusal};
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

impl Engine {
    /// Who an API key belongs to, as [`Engine::authenticate`] answers, except
    /// that on a shared store a remembered authentication is answered without
    /// reading the credentials epoch, with what is left to confirm before the
    /// request is answered (see the module's text). `None`: confirmed already.
    pub fn admit_key(&self, api_key: &str) -> Result<(Caller, Option<Unconfirmed>), Refusal> {
        if self.store.shared() && !api_key.is_empty() && api_key.len() <= 256 {
            let hash = KeyHash::of(api_key);
            if let Some((caller, epoch)) = self.credentials_cache.get_remembered(hash.as_bytes(), self.now())
            {
                return Ok((caller, Some(Unconfirmed { hash, epoch })));
            }
        }
        self.authenticate(api_key).map(|caller| (caller, None))
    }

    /// Confirm `caller`'s authentication outside a write transaction (before
    /// answering a read): [`Refusal::Authentication`] if its key no longer
    /// authenticates it.
    pub fn confirm(&self, caller: &Caller, unconfirmed: &Unconfirmed) -> Result<(), Refusal> {
        let epoch = self.store.credentials_epoch()?;
        if epoch == unconfirmed.epoch {
            return Ok(());
        }
        let now = self.now();
        let found = self
            .store
            .read_any(|r| credentials::caller_until(r, self.operator.as_ref(), &unconfirmed.hash, now))?;
        match found {
            Some((found, until)) if found == *caller => {
                self.credentials_cache.put(*unconfirmed.hash.as_bytes(), epoch, found, until);
                Ok(())
            }
            _ => Err(Refusal::Authentication),
        }
    }
}

/// Whether `caller`'s authentication still holds in the write transaction
/// `cx`: its epoch unchanged and no key or suspension changed earlier in the
/// transaction, or else the key looked up again there.
pub(crate) fn holds(
    cx: &Cx<'_, '_>,
    caller: &Caller,
    unconfirmed: &Unconfirmed,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let epoch = cx.w.get_raw(Table::Meta, row_keys::META_CREDENTIALS_EPOCH)?.unwrap_or_default();
    if epoch == unconfirmed.epoch && !cx.w.changed_credentials() {
        return Ok(true);
    }
    let found = credentials::caller_until_in(cx.w, cx.engine.operator.as_ref(), &unconfirmed.hash, now)?;
    Ok(found.is_some_and(|(found, _)| found == *caller))
}
