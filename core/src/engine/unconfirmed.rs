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
        let hash = super::execute::key_hash(api_key)?;
        if self.store.shared() {
            if let Some((caller, epoch)) = self.credentials_cache.get_remembered(hash.as_bytes(), self.now())
            {
                return Ok((caller, Some(Unconfirmed { hash, epoch })));
            }
        }
        self.authenticate_hash(&hash).map(|caller| (caller, None))
    }

    /// Confirm `caller`'s authentication outside a write transaction (before
    /// answering a read): [`Refusal::Authentication`] if its key no longer
    /// authenticates it.
    pub fn confirm(&self, caller: &Caller, unconfirmed: &Unconfirmed) -> Result<(), Refusal> {
        let epoch = self.store.credentials_epoch()?;
        if epoch == unconfirmed.epoch {
            return Ok(());
        }
        match self.look_up(&unconfirmed.hash, epoch, self.now())? {
            Some(found) if found == *caller => Ok(()),
            _ => Err(Refusal::Authentication),
        }
    }
}

/// Whether `caller`'s authentication still holds in the write transaction
/// `cx`: its epoch (read once per transaction: only the transaction's own
/// end moves it) unchanged and no key or suspension changed earlier in the
/// transaction, or else the key looked up again there.
pub(crate) fn holds(
    cx: &mut Cx<'_, '_>,
    caller: &Caller,
    unconfirmed: &Unconfirmed,
    now: DateTime<Utc>,
) -> Result<bool, StorageError> {
    if cx.credentials_epoch.is_none() {
        let stored = cx.w.get_raw(Table::Meta, row_keys::META_CREDENTIALS_EPOCH)?;
        cx.credentials_epoch = Some(stored.unwrap_or_default());
    }
    if cx.credentials_epoch.as_ref() == Some(&unconfirmed.epoch) && !cx.w.changed_credentials() {
        return Ok(true);
    }
    let found = credentials::caller_until_in(cx.w, cx.engine.operator.as_ref(), &unconfirmed.hash, now)?;
    Ok(found.is_some_and(|(found, _)| found == *caller))
}
