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
use super::{feeds, Cx, Fail, Failure, Outcome};
use crate::lifecycle::{self, State};
use crate::storage::{keys, StorageError, Table};
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

/// Run everything due at or before `now`.
pub(crate) fn catch_up(cx: &mut Cx<'_, '_>, now: DateTime<Utc>) -> Result<Progress, StorageError> {
    let mut progress = Progress::default();
    loop {
        let pending = due(cx, Table::Pending, now)?;
        let settling = due(cx, Table::Settlements, now)?;
        match (pending, settling) {
            (None, None) => return Ok(progress),
            (Some((pt, pk)), Some((st, _))) if pt <= st => {
                originate(cx, &pk, pt)?;
                progress.originated += 1;
            }
            (Some((pt, pk)), None) => {
                originate(cx, &pk, pt)?;
                progress.originated += 1;
            }
            (_, Some((st, sk))) => {
                settle(cx, &sk, st)?;
                progress.settled += 1;
            }
        }
    }
}

/// An index entry that is due: its instant and key.
type Due = (DateTime<Utc>, Vec<u8>);

/// Whether any cut-off or settlement is due by `now` (a read-only check).
pub(crate) fn anything_due(r: &crate::storage::Read, now: DateTime<Utc>) -> Result<bool, StorageError> {
    for table in [Table::Pending, Table::Settlements] {
        if let Some(key) = r.first_key(table)? {
            if keys::decode_instant(&key).is_some_and(|at| at <= now) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The first entry of an index if it is due by `now`.
fn due(cx: &Cx<'_, '_>, table: Table, now: DateTime<Utc>) -> Result<Option<Due>, StorageError> {
    let Some(key) = cx.w.first_key(table)? else {
        return Ok(None);
    };
    let at = keys::decode_instant(&key).ok_or_else(|| StorageError("an index key is unreadable".into()))?;
    Ok((at <= now).then_some((at, key)))
}

fn load(cx: &Cx<'_, '_>, key: &[u8]) -> Result<Option<TransactionRecord>, StorageError> {
    let id = keys::at_id(key).ok_or_else(|| StorageError("an index key is unreadable".into()))?;
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
    cx.w.put_raw(Table::Settlements, &keys::at(settles_at, &t.id), &[])?;
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
pub(crate) fn set_clock(cx: &mut Cx<'_, '_>, now: DateTime<Utc>) -> Result<Outcome, Fail> {
    if !cx.engine.sandbox {
        return Err(Failure::problem(
            AchError::FailedToAccept,
            "now",
            ProblemCode::InvalidValue,
            "the clock can only be set on a sandbox engine",
        )
        .into());
    }
    if now.year() > 9999 {
        let msg = "the clock cannot move past the year 9999";
        return Err(Failure::problem(AchError::FailedToAccept, "now", ProblemCode::InvalidValue, msg).into());
    }
    if now < cx.now {
        let msg = format!("the clock cannot move backwards (it reads {})", cx.now.to_rfc3339());
        return Err(Failure::problem(AchError::FailedToAccept, "now", ProblemCode::InvalidValue, msg).into());
    }
    let progress = catch_up(cx, now)?;
    cx.w.put_raw(Table::Meta, keys::META_CLOCK, &keys::instant(now))?;
    cx.now = now;
    cx.clock_to = Some(now);
    Ok(Outcome::ClockSet { now, progress })
}
