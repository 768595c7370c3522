//! Time-driven work: every cut-off (Pending → Originated) and settlement
//! (Originated → Settled) due by an instant, in time order.
//!
//! Two indexes drive it: `pending` keyed by (cut-off instant, id) and `settlements`
//! keyed by (settlement instant, id). Catching up merges the two in time order, so
//! a long clock jump (a sandbox moving a week ahead) produces the same feed as a
//! clock that ticked through every day. Nothing is scanned but what is due.

use chrono::{DateTime, Datelike, Utc};
use serde::Serialize;

use crate::engine::feeds::changes;
use crate::engine::feeds::feed_rows::FeedRows;
use crate::engine::lifecycle::images;
use crate::engine::rows::packed_index::{row_ids, PackedIndex};
use crate::engine::rows::records::TransactionRecord;
use crate::engine::settlement::cutoff_run::{self, Originated};
use crate::engine::settlement::originator;
use crate::engine::settlement::{cash_letters, origination};
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::lifecycle::State;
use crate::storage::{row_keys, StorageError, Table};
use crate::validation::ProblemCode;
use crate::AchError;

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
pub(crate) const CATCH_UP_BUDGET: u64 = 500;

// A catch-up reads whole packed rows: one row must fit in one budget.
const _: () = assert!(crate::engine::rows::id_list::PER_ROW <= CATCH_UP_BUDGET);

/// Run what is due at or before `now`, in time order: cut-offs, each cut-off's
/// origination file once its last transaction has originated, settlements. With
/// a `budget`, stop once that many items ran (a file counts its entries); the
/// answer says whether everything due is done.
pub(crate) fn catch_up(
    cx: &mut WriteContext<'_, '_>,
    now: DateTime<Utc>,
    budget: Option<u64>,
) -> Result<(Progress, bool), StorageError> {
    let mut progress = Progress::default();
    // Whether an originator is set: read once, and only when a file waits (not
    // on every create's transaction).
    let mut files = None;
    let mut spent = 0u64;
    // A request batch gathers its feed entries itself (`execute.rs`): a
    // catch-up inside one of its operations adds to those rows.
    let outer = cx.feed_rows.is_some();
    // A request batch's pending index rows, so far: in the index before any
    // cut-off reads it (a sandbox clock set later in the batch).
    if let Some(rows) = &mut cx.pending_rows {
        rows.write(cx.write)?;
    }
    loop {
        if budget.is_some_and(|b| spent >= b) {
            return Ok((progress, false));
        }
        let pending = due(cx, Table::Pending, now)?;
        let settling = due(cx, Table::Settlements, now)?;
        let mut file = origination::next_due(cx.write)?;
        let mut letter = cash_letters::next_due(cx)?;
        if file.is_some() || letter.is_some() {
            let set = match files {
                Some(set) => set,
                None => *files.insert(originator::current(cx)?.is_some()),
            };
            if !set {
                file = None;
                letter = None;
            }
        }
        // Ties: a cut-off's transactions, then its file and its image cash
        // letter, then settlements.
        let next = [
            pending.as_ref().map(|(at, _)| (*at, 0)),
            file.map(|at| (at, 1)),
            letter.map(|at| (at, 2)),
            settling.as_ref().map(|(at, _)| (*at, 3)),
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
                let rows = pending_at(cx, at, left)?;
                let (used, ids) = ids_within(&rows, left)?;
                let mut gathered = Gathered::new();
                gather_feeds(cx, outer);
                let mut originated = 0;
                cutoff_run::run(cx, &ids, at, |cx, o| {
                    originated += 1;
                    gathered.originated(cx, o, at)
                })?;
                progress.originated += originated;
                spent += ids.len().max(1) as u64;
                let keys: Vec<Vec<u8>> = rows.into_iter().take(used).map(|(k, _)| k).collect();
                remove_run(cx, Table::Pending, &keys)?;
                gathered.write(cx)?;
            }
            Some((at, 1)) => {
                let (done, _) = origination::assemble(cx, at, left)?;
                spent += done.max(1);
            }
            Some((at, 2)) => {
                spent += cash_letters::assemble(cx, at)?.max(1);
            }
            Some((at, _)) => {
                gather_feeds(cx, outer);
                let (seen, settled) = settle_due(cx, at, left)?;
                progress.settled += settled;
                spent += seen;
            }
        }
        // A run's feed entries, packed per partner and merchant.
        if !outer {
            if let Some(rows) = cx.feed_rows.take() {
                rows.write(cx.write)?;
            }
        }
    }
}

/// Gather a run's feed entries into packed rows, unless a request batch
/// (`outer`) already gathers them.
fn gather_feeds(cx: &mut WriteContext<'_, '_>, outer: bool) {
    if !outer {
        cx.feed_rows = Some(FeedRows::default());
    }
}

/// A stored row: key and value.
type Row = (Vec<u8>, Vec<u8>);

/// Up to `limit` (at least one) pending index rows at exactly `at`: each
/// holds at least one id, so enough for `limit` ids.
fn pending_at(cx: &WriteContext<'_, '_>, at: DateTime<Utc>, limit: u64) -> Result<Vec<Row>, StorageError> {
    let from = row_keys::instant(at);
    let to = row_keys::instant(at + chrono::Duration::microseconds(1));
    cx.write.range(Table::Pending, &from, &to, usize::try_from(limit.max(1)).unwrap_or(usize::MAX))
}

/// The ids of `rows`, a row at a time until they reach `limit` (at least one
/// row): how many rows, and their ids.
fn ids_within(rows: &[Row], limit: u64) -> Result<(usize, Vec<&str>), StorageError> {
    let limit = usize::try_from(limit.max(1)).unwrap_or(usize::MAX);
    let mut ids = Vec::new();
    let mut used = 0;
    for (key, value) in rows {
        if ids.len() >= limit {
            break;
        }
        ids.extend(row_ids(key, value)?);
        used += 1;
    }
    Ok((used, ids))
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
fn due(cx: &WriteContext<'_, '_>, table: Table, now: DateTime<Utc>) -> Result<Option<Due>, StorageError> {
    let Some(key) = cx.write.first_key_known(table)? else {
        return Ok(None);
    };
    let at =
        row_keys::decode_instant(&key).ok_or_else(|| StorageError("an index key is unreadable".into()))?;
    Ok((at <= now).then_some((at, key)))
}

/// Remove a run of index keys just processed (consecutive in key order: read
/// as one range) in one pass.
fn remove_run(cx: &mut WriteContext<'_, '_>, table: Table, keys: &[Vec<u8>]) -> Result<(), StorageError> {
    match (keys.first(), keys.last()) {
        (Some(first), Some(last)) => cx.write.remove_range(table, first, &crate::storage::key_after(last)),
        _ => Ok(()),
    }
}

/// What one run of a cut-off's originations writes as rows of its own once
/// the run is done: the settlement index, one row per settlement instant (and
/// per `id_list::PER_ROW` transactions), and the origination file's outgoing rows.
struct Gathered {
    settlements: PackedIndex,
    outgoing: origination::Outgoing,
}

impl Gathered {
    fn new() -> Gathered {
        Gathered {
            settlements: PackedIndex::new(Table::Settlements),
            outgoing: origination::Outgoing::default(),
        }
    }

    /// Write a transaction of the run just moved to B Originated (see
    /// [`cutoff_run`]); its pending index entry is removed with the whole run's.
    fn originated(
        &mut self,
        cx: &mut WriteContext<'_, '_>,
        o: Originated<'_>,
        cutoff: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        let h = &o.head;
        cx.write.put_raw(Table::Transactions, h.id.as_bytes(), &o.stored)?;
        self.settlements.add(o.settles_at, h.id)?;
        images::keep_for(cx.write, h.id, h.has_images, o.settles_at)?;
        self.outgoing.add(cx, h, o.reversal_of, &o.source, cutoff)?;
        changes::record_encoded(cx, (h.partner_id, h.merchant_id), &o.change)
    }

    /// Write every row gathered.
    fn write(mut self, cx: &mut WriteContext<'_, '_>) -> Result<(), StorageError> {
        self.settlements.write(cx.write)?;
        self.outgoing.write(cx)
    }
}

/// Settle what is due at `at`: index rows one at a time until `budget`
/// transactions were seen (at least one row). Returns the transactions seen
/// and those settled (a returned one stays in its packed row until then, and
/// is skipped).
fn settle_due(
    cx: &mut WriteContext<'_, '_>,
    at: DateTime<Utc>,
    budget: u64,
) -> Result<(u64, u64), StorageError> {
    let mut from = row_keys::instant(at).to_vec();
    let to = row_keys::instant(at + chrono::Duration::microseconds(1));
    let (mut seen, mut settled) = (0, 0);
    let start = from.clone();
    while seen < budget.max(1) {
        let Some((key, value)) = cx.write.range(Table::Settlements, &from, &to, 1)?.pop() else { break };
        for id in row_ids(&key, &value)? {
            seen += 1;
            settled += u64::from(settle(cx, id, at)?);
        }
        from = crate::storage::key_after(&key);
    }
    cx.write.remove_range(Table::Settlements, &start, &from)?;
    Ok((seen, settled))
}

/// An Originated transaction reaches its settlement instant: S Settled.
/// Whether it was still Originated (not returned meanwhile).
fn settle(cx: &mut WriteContext<'_, '_>, id: &str, at: DateTime<Utc>) -> Result<bool, StorageError> {
    let Some(mut t) = cx.write.get::<TransactionRecord>(Table::Transactions, id.as_bytes())? else {
        return Ok(false);
    };
    if t.state != State::Originated {
        return Ok(false);
    }
    t.state = State::Settled;
    cx.write.put(Table::Transactions, t.id.as_bytes(), &t)?;
    changes::record_change(cx, &t, at)?;
    Ok(true)
}

/// Refuse an operation a production engine does not have (404, as the
/// router answers its path there).
pub(crate) fn sandbox_only(cx: &WriteContext<'_, '_>) -> Result<(), Stop> {
    if cx.engine.sandbox {
        return Ok(());
    }
    let msg = "this simulation exists only on a sandbox engine";
    Err(Refusal::problem_with_status(AchError::FailedToAccept, 404, "path", ProblemCode::NotFound, msg)
        .into())
}

/// Sandbox: move the clock to `now` (never backwards) and run everything due.
pub(crate) fn set_clock(cx: &mut WriteContext<'_, '_>, now: DateTime<Utc>) -> Result<Outcome, Stop> {
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
    cx.write.put_raw(Table::Meta, row_keys::META_CLOCK, &row_keys::instant(now))?;
    cx.now = now;
    cx.clock_to = Some(now);
    Ok(Outcome::ClockSet { now, progress })
}
