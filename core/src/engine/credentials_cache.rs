//! Authentications remembered by an engine. Looking a key up is a read
//! transaction on every request: three statements over PostgreSQL, and on
//! redb a read that first commits the write transaction held open
//! (`storage/held.rs`). An entry holds while the credentials epoch stands
//! still: every write transaction that changes a key or a suspension moves
//! it on (`Store::credentials_epoch`: on PostgreSQL the stored
//! `META_CREDENTIALS_EPOCH`, moved through any process and read in one
//! statement; on redb, which one process writes, a count kept in memory).
//! A key's own expiry (a rotation's grace) is kept with it. Refusals are not
//! remembered (a key may be issued a moment later).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};

use super::Caller;

/// Entries kept at most; past it the cache starts afresh.
const MOST: usize = 100_000;

/// One remembered authentication.
struct Entry {
    epoch: Vec<u8>,
    caller: Caller,
    /// Refused from this instant on (its key's expiry), if any.
    until: Option<DateTime<Utc>>,
}

/// The remembered authentications, by key hash.
#[derive(Default)]
pub(crate) struct CredentialsCache(Mutex<HashMap<[u8; 32], Entry>>);

impl std::fmt::Debug for CredentialsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Which keys are remembered is nobody's business (not even a log's).
        f.write_str("CredentialsCache")
    }
}

impl CredentialsCache {
    /// The caller of `hash` if remembered at `epoch` and its key still valid at `now`.
    pub(crate) fn get(&self, hash: &[u8; 32], epoch: &[u8], now: DateTime<Utc>) -> Option<Caller> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let e = map.get(hash)?;
        (e.epoch == epoch && e.until.is_none_or(|t| now < t)).then(|| e.caller.clone())
    }

    /// The caller of `hash` as remembered, whatever the epoch now, with the
    /// epoch it was remembered at, if its key is still valid at `now`: for a
    /// caller confirmed later ([`super::unconfirmed`]).
    pub(crate) fn get_remembered(&self, hash: &[u8; 32], now: DateTime<Utc>) -> Option<(Caller, Vec<u8>)> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let e = map.get(hash)?;
        e.until.is_none_or(|t| now < t).then(|| (e.caller.clone(), e.epoch.clone()))
    }

    /// Remember `caller` for `hash`, looked up after the epoch was `epoch`.
    pub(crate) fn put(&self, hash: [u8; 32], epoch: Vec<u8>, caller: Caller, until: Option<DateTime<Utc>>) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= MOST {
            map.clear();
        }
        map.insert(hash, Entry { epoch, caller, until });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_holds_only_at_its_epoch_and_before_its_expiry() {
        let c = CredentialsCache::default();
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let partner = Caller::Partner { partner_id: "par_1".into() };
        c.put([1; 32], vec![0, 1], partner.clone(), Some(now + chrono::Duration::seconds(10)));
        assert_eq!(c.get(&[1; 32], &[0, 1], now), Some(partner.clone()));
        assert_eq!(c.get(&[1; 32], &[0, 2], now), None, "the epoch moved on");
        assert_eq!(c.get(&[1; 32], &[0, 1], now + chrono::Duration::seconds(10)), None, "expired");
        assert_eq!(c.get(&[2; 32], &[0, 1], now), None);
        assert_eq!(c.get_remembered(&[1; 32], now), Some((partner, vec![0, 1])), "at its own epoch");
        assert_eq!(c.get_remembered(&[1; 32], now + chrono::Duration::seconds(10)), None, "expired");
    }
}
