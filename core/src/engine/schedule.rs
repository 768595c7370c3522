//! Time-driven work: every cut-off (Pending → Originated) and settlement
//! (Originated → Settled) due by an instant, in time order.
//!
//! Two indexes drive it: `pending` keyed by (cut-off instant, id) and `settlements`
//! keyed by (settlement instant, id). Catching up merges the two in time order, so
//! a long clock jump (a sandbox moving a week ahead) produces the same feed as a
//! clock that ticked through every day. Nothing is scanned but what is due.

use chrono::{DateTime, Datelike, Utc};
use serde::Serialize;

use super::records::TransactionRecord;
use super::{feeds, images, origination, originator, Abort, Cx, Outcome, Refusal};
use crate::lifecycle::{self, State};
use crate::storage::{row_keys, StorageError, Table};
use crate::validation::ProblemCode;
use crate::{calendar, AchError};

/// What a catch-up did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Progress {
    /// Transactions moved to B Originated.
    pub originated: u64,
    /// Transactions moved to S Settled.
    pub settled: u64,
}

/// Work items a request's write transaction does at most before its own
/// operation ([`catch_up`]'s budget there): a cut-off of many transactions is
/// spread over many short transactions instead of holding every writer.
pub(crate) const CHUNK: u64 = 500;

/// Run what is due at or before `now`, in time order: cut-offs, each cut-off's
/// origination file once its last transaction has originated, settlements. With
/// a `budget`, stop once that many items ran (a file counts its entries); the
/// answer says whether everything due is done.
pub(crate) fn catch_up(
    cx: &mut Cx<'_, '_>,
    now: DateTime<Utc>,
    budget: Option<u64>,
) -> Result<(Progress, bool), StorageError> {
    let mut progress = Progress::default();
    // Whether an originator is set: read once, and only when a file waits (not
    // on every create's transaction).
    let mut files = None;
    let mut spent = 0u64;
    loop {
        if budget.is_some_and(|b| spent >= b) {
            return Ok((progress, false));
        }
        let pending = due(cx, Table::Pending, now)?;
        let settling = due(cx, Table::Settlements, now)?;
        let mut file = origination::next_due(cx.w)?;
        if file.is_some() {
            let set = match files {
                Some(set) => set,
                None => *files.insert(originator::current(cx)?.is_some()),
            };
            if !set {
                file = None;
            }
        }
        // Ties: a cut-off's transactions, then its file, then settlements.
        let next = [
            pending.as_ref().map(|(at, _)| (*at, 0)),
            file.map(|at| (at, 1)),
            settling.as_ref().map(|(at, _)| (*at, 2)),
        ]
        .into_iter()
        .flatten()
        .min();
        let left = budget.map_or(u64::MAX, |b| b.saturating_sub(spent));
        // Everything of one instant (a cut-off's transactions, a day's
        // settlements) is read as one range, up to what the budget leaves.
        match next {
            None => return Ok((progress, true)),
            Some((at, 0)) => {
                for key in at_instant(cx, Table::Pending, at, left)? {
                    originate(cx, &key, at)?;
                    progress.originated += 1;
                    spent += 1;
                }
            }
            Some((at, 1)) => {
                let (done, _) = origination::assemble(cx, at, left)?;
                spent += done.max(1);
            }
            Some((at, _)) => {
                for key in at_instant(cx, Table::Settlements, at, left)? {
                    settle(cx, &key, at)?;
                    progress.settled += 1;
                    spent += 1;
                }
            }
        }
    }
}

/// Up to `limit` (at least one) keys of an index at exactly `at`.
fn at_instant(
    cx: &Cx<'_, '_>,
    table: Table,
    at: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Vec<u8>>, StorageError> {
    let from = row_keys::instant(at);
    let to = row_keys::instant(at + chrono::Duration::microseconds(1));
    let limit = usize::try_from(limit.max(1)).unwrap_or(usize::MAX);
    Ok(cx.w.range(table, &from, &to, limit)?.into_iter().map(|(k, _)| k).collect())
}

/// An index entry that is due: its instant and key.
type Due = (DateTime<Utc>, Vec<u8>);

/// Whether any cut-off, settlement, file or image deletion is due by `now` (a
/// read-only check; `sandbox` for the default originator).
pub(crate) fn anything_due(
    r: &crate::storage::Snapshot,
    now: DateTime<Utc>,
    sandbox: bool,
) -> Result<bool, StorageError> {
    if origination::next_due(r)?.is_some() && originator::load(r, sandbox)?.is_some() {
        return Ok(true);
    }
    for table in [Table::Pending, Table::Settlements] {
        if let Some(key) = r.first_key(table)? {
            if row_keys::decode_instant(&key).is_some_and(|at| at <= now) {
                return Ok(true);
            }
        }
    }
    images::anything_due(r, now)
}

/// The first entry of an index if it is due by `now`.
fn due(cx: &Cx<'_, '_>, table: Table, now: DateTime<Utc>) -> Result<Option<Due>, StorageError> {
    let Some(key) = cx.w.first_key(table)? else {
        return Ok(None);
    };
    let at =
        row_keys::decode_instant(&key).ok_or_else(|| StorageError("an index key is unreadable".into()))?;
    Ok((at <= now).then_some((at, key)))
}

fn load(cx: &Cx<'_, '_>, key: &[u8]) -> Result<Option<TransactionRecord>, StorageError> {
    let id = row_keys::at_id(key).ok_or_else(|| StorageError("an index key is unreadable".into()))?;
    cx.w.get(Table::Transactions, id.as_bytes())
}

/// A Pending transaction reaches its cut-off: B Originated, with its dates.
fn originate(cx: &mut Cx<'_, '_>, key: &[u8], cutoff: DateTime<Utc>) -> Result<(), StorageError> {
    cx.w.remove(Table::Pending, key)?;
    let Some(mut t) = load(cx, key)? else { return Ok(()) };
    if t.state != State::Pending {
        return Ok(());
    }
    let (origination, effective) = lifecycle::origination(calendar::eastern_date(cutoff));
    let settlement = lifecycle::settlement_date(t.direction, effective);
    let settles_at = lifecycle::settlement_instant(settlement);
    t.state = State::Originated;
    t.origination_date = Some(origination);
    t.effective_date = Some(effective);
    t.settlement_date = Some(settlement);
    t.settles_at = Some(settles_at);
    cx.w.put(Table::Transactions, t.id.as_bytes(), &t)?;
    cx.w.put_raw(Table::Settlements, &row_keys::at(settles_at, &t.id), &[])?;
    images::keep_until_retention(cx.w, &t)?;
    origination::enqueue(cx, &t, cutoff)?;
    feeds::record_change(cx, &t, cutoff)
}

/// An Originated transaction reaches its settlement instant: S Settled.
fn settle(cx: &mut Cx<'_, '_>, key: &[u8], at: DateTime<Utc>) -> Result<(), StorageError> {
    cx.w.remove(Table::Settlements, key)?;
    let Some(mut t) = load(cx, key)? else { return Ok(()) };
    if t.state != State::Originated {
        return Ok(());
    }
    t.state = State::Settled;
    cx.w.put(Table::Transactions, t.id.as_bytes(), &t)?;
    feeds::record_change(cx, &t, at)
}

/// Sandbox: move the clock to `now` (never backwards) and run everything due.
pub(crate) fn set_clock(cx: &mut Cx<'_, '_>, now: DateTime<Utc>) -> Result<Outcome, Abort> {
    if !cx.engine.sandbox {
        return Err(Refusal::problem(
            AchError::FailedToAccept,
            "now",
            ProblemCode::InvalidValue,
            "the clock can only be set on a sandbox engine",
        )
        .into());
    }
    if now.year() > 9999 {
        let msg = "the clock cannot move past the year 9999";
        return Err(Refusal::problem(AchError::FailedToAccept, "now", ProblemCode::InvalidValue, msg).into());
    }
    if now < cx.now {
        let msg = format!("the clock cannot move backwards (it reads {})", cx.now.to_rfc3339());
        return Err(Refusal::problem(AchError::FailedToAccept, "now", ProblemCode::InvalidValue, msg).into());
    }
    let (progress, _) = catch_up(cx, now, None)?;
    images::expire(cx, now, u64::MAX)?;
    cx.w.put_raw(Table::Meta, row_keys::META_CLOCK, &row_keys::instant(now))?;
    cx.now = now;
    cx.clock_to = Some(now);
    Ok(Outcome::ClockSet { now, progress })
}
