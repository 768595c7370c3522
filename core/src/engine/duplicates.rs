//! Duplicate detection: the same merchant, account, amount, direction and class
//! within the duplicate window (message 17, when the merchant declines
//! duplicates), and a check number already used on the same account for the same
//! merchant (message 18, always, with no time limit; a voided transaction's check
//! is still spent). Both are point lookups of keyed fingerprints: no account
//! number is ever stored in these indexes.
//!
//! The duplicate index is keyed by (UTC day, fingerprint) and holds the creation
//! instant: a create writes into today's bucket and looks into the buckets its
//! window reaches (two for the default 24 hours); a void removes its entry; every
//! create removes a couple of entries from days the window no longer reaches. So
//! the index holds about one window of transactions in 24-byte entries, and a
//! create's cost does not grow with history. Spent checks have no time limit and
//! are keyed by fingerprint alone.

use chrono::{DateTime, Duration, Utc};

use super::records::TransactionRecord;
use super::{Cx, Fail, Failure};
use crate::secrets::Fingerprinter;
use crate::storage::{keys, StorageError, Table};
use crate::validation::ProblemCode;
use crate::AchError;

/// The default duplicate window: 24 hours.
pub const DEFAULT_DUPLICATE_WINDOW_HOURS: i64 = 24;

/// Expired duplicate-index entries removed per create: more than one, so the
/// index shrinks back to one window's worth however the volume varies.
const PRUNE_PER_CREATE: usize = 2;

/// The two fingerprints of a transaction.
pub(crate) struct Prints {
    similar: [u8; 32],
    check: Option<[u8; 32]>,
}

/// The fingerprints of `t` (its account fingerprint comes from its sealed account).
pub(crate) fn prints(f: &Fingerprinter, t: &TransactionRecord) -> Prints {
    let account = t.account.fingerprint.as_bytes();
    let amount = t.amount.cents().to_be_bytes();
    let similar = f.digest(&[
        b"similar",
        t.merchant_id.as_bytes(),
        account,
        &amount,
        t.direction.as_str().as_bytes(),
        t.class.as_str().as_bytes(),
    ]);
    let check = t.check_number.as_ref().map(|n| {
        f.digest(&[b"check", t.merchant_id.as_bytes(), account, n.trim_start_matches('0').as_bytes()])
    });
    Prints { similar, check }
}

/// The duplicate-index key of `t`.
fn index_key(t: &TransactionRecord, p: &Prints) -> [u8; keys::SIMILAR_KEY] {
    keys::similar(keys::day_bucket(t.created_at), &p.similar)
}

/// Refuse `t` if it repeats a check (always) or, when the merchant declines
/// duplicates, a similar transaction within the window.
pub(crate) fn check(
    cx: &Cx<'_, '_>,
    t: &TransactionRecord,
    p: &Prints,
    decline_duplicates: bool,
) -> Result<(), Fail> {
    if let (Some(key), Some(number)) = (&p.check, &t.check_number) {
        if cx.w.get_raw(Table::Checks, key)?.is_some() {
            let e = AchError::DuplicateCheck { check_number: number.clone() };
            return Err(Failure::problem(
                e,
                "check_number",
                ProblemCode::Conflict,
                "this check was already used",
            )
            .into());
        }
    }
    if !decline_duplicates {
        return Ok(());
    }
    // Newest day first: the window reaches back into at most a few day buckets.
    let oldest = keys::day_bucket(window_start(cx));
    for day in (oldest..=keys::day_bucket(cx.now)).rev() {
        let Some(value) = cx.w.get_raw(Table::Fingerprints, &keys::similar(day, &p.similar))? else {
            continue;
        };
        let at = keys::decode_instant(&value)
            .ok_or_else(|| StorageError("a duplicate-index entry is unreadable".into()))?;
        if cx.now - at < cx.engine.duplicate_window {
            let msg = format!(
                "the same transaction was accepted at {}",
                crate::calendar::format_eastern_timestamp(at)
            );
            return Err(
                Failure::problem(AchError::DuplicateTransaction, "", ProblemCode::Conflict, msg).into()
            );
        }
    }
    Ok(())
}

/// Remember an accepted transaction's fingerprints, and forget a few entries
/// that no window can reach any more (days before the window's first day).
pub(crate) fn record(cx: &mut Cx<'_, '_>, t: &TransactionRecord, p: &Prints) -> Result<(), StorageError> {
    cx.w.put_raw(Table::Fingerprints, &index_key(t, p), &keys::instant(t.created_at))?;
    let expired = keys::bucket_bytes(keys::day_bucket(window_start(cx)));
    cx.w.remove_first_below(Table::Fingerprints, &expired, PRUNE_PER_CREATE)?;
    if let Some(key) = &p.check {
        cx.w.put_raw(Table::Checks, key, t.id.as_bytes())?;
    }
    Ok(())
}

/// A voided transaction is no one's duplicate: remove its entry (if the entry is
/// still its own; a later alike transaction's entry stays). Its check stays spent.
pub(crate) fn forget(cx: &mut Cx<'_, '_>, t: &TransactionRecord) -> Result<(), StorageError> {
    let key = index_key(t, &prints(&cx.engine.fingerprints, t));
    if cx.w.get_raw(Table::Fingerprints, &key)?.as_deref() == Some(&keys::instant(t.created_at)[..]) {
        cx.w.remove(Table::Fingerprints, &key)?;
    }
    Ok(())
}

/// The first instant the duplicate window reaches (the calendar's first instant
/// for a window longer than the calendar).
fn window_start(cx: &Cx<'_, '_>) -> DateTime<Utc> {
    cx.now
        .checked_sub_signed(cx.engine.duplicate_window)
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
        .max(calendar_start())
}

/// 0000-01-01T00:00:00Z, the engine clock's first instant.
fn calendar_start() -> DateTime<Utc> {
    DateTime::from_timestamp(-62_167_219_200, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// The window as a duration.
pub(crate) fn default_window() -> Duration {
    Duration::hours(DEFAULT_DUPLICATE_WINDOW_HOURS)
}

/// The day buckets the duplicate index holds and how many entries each (for the
/// simulation audit and tests: a full scan).
#[cfg(feature = "simulation")]
pub(crate) fn days(r: &crate::storage::Read) -> Result<Vec<(i64, usize)>, StorageError> {
    let mut days: Vec<(i64, usize)> = Vec::new();
    for (k, _) in r.range(Table::Fingerprints, &[], &[0xff; 8], usize::MAX)? {
        let day = keys::decode_bucket(&k)
            .ok_or_else(|| StorageError("a duplicate-index key is unreadable".into()))?;
        match days.last_mut() {
            Some((d, n)) if *d == day => *n += 1,
            _ => days.push((day, 1)),
        }
    }
    Ok(days)
}

/// Problems with the duplicate index: an entry that is not the key and creation
/// instant of a transaction that is not voided.
#[cfg(feature = "simulation")]
pub(crate) fn audit(
    r: &crate::storage::Read,
    f: &Fingerprinter,
    txns: &std::collections::BTreeMap<String, TransactionRecord>,
    problems: &mut Vec<String>,
) -> Result<(), StorageError> {
    use std::collections::BTreeSet;
    let live: BTreeSet<(Vec<u8>, Vec<u8>)> = txns
        .values()
        .filter(|t| t.state != crate::lifecycle::State::Voided)
        .map(|t| (index_key(t, &prints(f, t)).to_vec(), keys::instant(t.created_at).to_vec()))
        .collect();
    for entry in r.range(Table::Fingerprints, &[], &[0xff; 8], usize::MAX)? {
        if !live.contains(&entry) {
            let at = keys::decode_instant(&entry.1);
            problems.push(format!("a duplicate-index entry at {at:?} is no live transaction's"));
        }
    }
    Ok(())
}
