//! Authentications remembered by an engine. Looking a key up is a read
//! transaction: three statements over PostgreSQL, and on redb a read that
//! first commits the write transaction held open (`storage/pending_commit.rs`). An
//! entry holds while the credentials epoch stands still: every write
//! transaction that changes a key or a suspension moves it on
//! (`Store::credentials_epoch`: on PostgreSQL the stored
//! `META_CREDENTIALS_EPOCH`, moved through any process and read in one
//! statement; on redb, which one process writes, a count kept in memory).
//! A key's own expiry (a rotation's grace) is kept with it.
//!
//! Refusals are remembered too, apart and fewer: a key issued later moves
//! the epoch, so a refusal remembered at an epoch still standing is still
//! right. A flood of made-up keys fills only the refusals, never evicting
//! the callers that authenticate.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};

use super::CallerUntil;

/// Callers remembered at most; past it they are forgotten all at once.
const MOST: usize = 100_000;
/// Refused keys remembered at most; past it they are forgotten all at once.
const MOST_REFUSED: usize = 10_000;

/// One remembered authentication.
struct Entry {
    epoch: Vec<u8>,
    found: CallerUntil,
}

/// What is remembered, by key hash.
#[derive(Default)]
struct Remembered {
    callers: HashMap<[u8; 32], Entry>,
    /// The epoch each refused key was refused at.
    refused: HashMap<[u8; 32], Vec<u8>>,
}

/// The remembered authentications, by key hash.
#[derive(Default)]
pub(crate) struct CredentialsCache(Mutex<Remembered>);

impl std::fmt::Debug for CredentialsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Which keys are remembered is nobody's business (not even a log's).
        f.write_str("CredentialsCache")
    }
}

impl CredentialsCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The caller of `hash` if remembered at `epoch` and its key still valid at `now`.
    pub(crate) fn get(&self, hash: &[u8; 32], epoch: &[u8], now: DateTime<Utc>) -> Option<CallerUntil> {
        let map = self.lock();
        let e = map.callers.get(hash)?;
        (e.epoch == epoch && e.found.until.is_none_or(|t| now < t)).then(|| e.found.clone())
    }

    /// Whether `hash` was refused at `epoch` (and so is still refused).
    pub(crate) fn refused(&self, hash: &[u8; 32], epoch: &[u8]) -> bool {
        self.lock().refused.get(hash).is_some_and(|at| at == epoch)
    }

    /// The caller of `hash` as remembered, whatever the epoch now, with the
    /// epoch it was remembered at, if its key is still valid at `now`: for a
    /// caller confirmed later (`authenticate.rs`).
    pub(crate) fn get_remembered(
        &self,
        hash: &[u8; 32],
        now: DateTime<Utc>,
    ) -> Option<(CallerUntil, Vec<u8>)> {
        let map = self.lock();
        let e = map.callers.get(hash)?;
        e.found.until.is_none_or(|t| now < t).then(|| (e.found.clone(), e.epoch.clone()))
    }

    /// Remember `found` for `hash`, looked up after the epoch was `epoch`.
    pub(crate) fn put(&self, hash: [u8; 32], epoch: Vec<u8>, found: CallerUntil) {
        let mut map = self.lock();
        if map.callers.len() >= MOST {
            map.callers.clear();
        }
        map.refused.remove(&hash);
        map.callers.insert(hash, Entry { epoch, found });
    }

    /// Remember that `hash` authenticates nobody, looked up after the epoch was `epoch`.
    pub(crate) fn put_refused(&self, hash: [u8; 32], epoch: Vec<u8>) {
        let mut map = self.lock();
        if map.refused.len() >= MOST_REFUSED {
            map.refused.clear();
        }
        map.callers.remove(&hash);
        map.refused.insert(hash, epoch);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::Caller;

    fn found(caller: &Caller, until: Option<DateTime<Utc>>) -> CallerUntil {
        CallerUntil { caller: caller.clone(), until, request_rate: Some(5) }
    }

    #[test]
    fn an_entry_holds_only_at_its_epoch_and_before_its_expiry() {
        let c = CredentialsCache::default();
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let partner = Caller::Partner { partner_id: "par_1".into() };
        let until = Some(now + chrono::Duration::seconds(10));
        c.put([1; 32], vec![0, 1], found(&partner, until));
        assert_eq!(c.get(&[1; 32], &[0, 1], now), Some(found(&partner, until)));
        assert_eq!(c.get(&[1; 32], &[0, 2], now), None, "the epoch moved on");
        assert_eq!(c.get(&[1; 32], &[0, 1], now + chrono::Duration::seconds(10)), None, "expired");
        assert_eq!(c.get(&[2; 32], &[0, 1], now), None);
        assert_eq!(
            c.get_remembered(&[1; 32], now),
            Some((found(&partner, until), vec![0, 1])),
            "at its own epoch"
        );
        assert_eq!(c.get_remembered(&[1; 32], now + chrono::Duration::seconds(10)), None, "expired");
    }

    #[test]
    fn a_refusal_holds_only_at_its_epoch_and_never_evicts_a_caller() {
        let c = CredentialsCache::default();
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let partner = Caller::Partner { partner_id: "par_1".into() };
        c.put([1; 32], vec![7], found(&partner, None));
        c.put_refused([2; 32], vec![7]);
        assert!(c.refused(&[2; 32], &[7]));
        assert!(!c.refused(&[2; 32], &[8]), "a key may have been issued since");
        assert!(!c.refused(&[1; 32], &[7]));
        for i in 0..=MOST_REFUSED as u32 {
            let mut hash = [9; 32];
            hash[..4].copy_from_slice(&i.to_be_bytes());
            c.put_refused(hash, vec![7]);
        }
        assert_eq!(c.get(&[1; 32], &[7], now), Some(found(&partner, None)), "refusals past their bound");
        assert!(c.lock().refused.len() <= MOST_REFUSED);
        c.put([2; 32], vec![8], found(&partner, None));
        assert!(!c.refused(&[2; 32], &[7]), "a key found later is no longer refused");
        assert_eq!(c.get(&[2; 32], &[8], now), Some(found(&partner, None)));
    }
}
