//! A cut-off's run of originations, at the least cost per transaction.
//!
//! Moving a transaction from Pending to B Originated: read its stored record
//! in place ([`record_parts`]: no field copied), write it back with its new
//! tail (state and dates), and encode its feed entry (once per direction and
//! run but for the id: [`ChangeTemplates`]) and its outgoing entry. What is
//! worked out here is pure; the writes are the caller's.

use chrono::{DateTime, NaiveDate, Utc};

use crate::engine::feeds::changes;
use crate::engine::rows::record_parts::{self, Head, Tail};
use crate::engine::WriteContext;
use crate::lifecycle::{self, State};
use crate::model::Direction;
use crate::storage::{self, StorageError, Table};

/// A cut-off's origination and effective dates, and the settlement date and
/// instant of a credit and of a debit originated at it.
#[derive(Clone, Copy)]
struct RunDates {
    pub origination: NaiveDate,
    pub effective: NaiveDate,
    pub settlement: [(NaiveDate, DateTime<Utc>); 2],
}

impl RunDates {
    /// The dates of everything originated at `cutoff` (banking days and
    /// holidays worked out once per run, not once per transaction).
    fn of(cutoff: DateTime<Utc>) -> Self {
        let (origination, effective) = lifecycle::origination_at(cutoff);
        RunDates {
            origination,
            effective,
            settlement: [
                lifecycle::settlement_at(Direction::Credit, cutoff),
                lifecycle::settlement_at(Direction::Debit, cutoff),
            ],
        }
    }
}

/// A transaction moved to B Originated, with what its writes need encoded;
/// borrowed from its stored record as read.
pub(in crate::engine) struct Originated<'a> {
    /// Its fixed fields.
    pub head: Head<'a>,
    /// The transaction it reverses, if any.
    pub reversal_of: Option<&'a str>,
    /// When it settles.
    pub settles_at: DateTime<Utc>,
    /// Its stored bytes.
    pub stored: Vec<u8>,
    /// Its status change, as both feeds store it.
    pub change: Vec<u8>,
    /// Its outgoing entry ([`crate::engine::settlement::batch_kind::EntrySource`]), as the file's rows store it.
    pub source: Vec<u8>,
}

/// Work out the origination of the stored record `raw` at `cutoff`: `None`
/// when it is no longer Pending. Pure: no storage.
fn originate<'a>(
    raw: &'a [u8],
    cutoff: DateTime<Utc>,
    dates: &RunDates,
    changes: &mut ChangeTemplates,
) -> Result<Option<Originated<'a>>, StorageError> {
    let (head, mut tail, tail_at) = record_parts::split(raw)?;
    if tail.state != State::Pending {
        return Ok(None);
    }
    let (settlement, settles_at) = dates.settlement[usize::from(head.direction != Direction::Credit)];
    tail.state = State::Originated;
    tail.origination_date = Some(dates.origination);
    tail.effective_date = Some(dates.effective);
    tail.settlement_date = Some(settlement);
    tail.settles_at = Some(settles_at);
    let stored = record_parts::with_tail(raw, tail_at, &tail)?;
    let change = changes.encode(&head, &tail, cutoff)?;
    let source = postcard::to_extend(&head.entry_source(), Vec::with_capacity(160))
        .map_err(|e| StorageError(format!("an entry cannot be encoded: {e}")))?;
    Ok(Some(Originated { head, reversal_of: tail.reversal_of, settles_at, stored, change, source }))
}

/// A run's feed entries: every transaction of one direction originated at one
/// cut-off reports the same change but for its id, which postcard writes
/// first. So the rest is encoded once per direction and each entry is its id
/// followed by those bytes.
#[derive(Default)]
struct ChangeTemplates([Option<Vec<u8>>; 2]);

impl ChangeTemplates {
    fn encode(
        &mut self,
        head: &Head<'_>,
        tail: &Tail<'_>,
        cutoff: DateTime<Utc>,
    ) -> Result<Vec<u8>, StorageError> {
        let change = |id: &str| changes::change_from(id, tail, cutoff);
        // A Pending record carries no return; were one there, the slow way.
        if tail.return_date.is_some() || tail.return_code.is_some() || tail.return_reason.is_some() {
            return storage::encode(Table::Changes, &change(head.id));
        }
        let slot = &mut self.0[usize::from(head.direction != Direction::Credit)];
        if slot.is_none() {
            // An empty id is written as the single byte 0.
            let bytes = storage::encode(Table::Changes, &change(""))?;
            match bytes.split_first() {
                Some((0, rest)) if Table::Changes.binary() => *slot = Some(rest.to_vec()),
                _ => return storage::encode(Table::Changes, &change(head.id)),
            }
        }
        let rest = slot.as_deref().unwrap_or_default();
        let mut out = postcard::to_extend(head.id, Vec::with_capacity(head.id.len() + rest.len() + 2))
            .map_err(|e| StorageError(format!("a change cannot be encoded: {e}")))?;
        out.extend_from_slice(rest);
        debug_assert_eq!(Some(&out), storage::encode(Table::Changes, &change(head.id)).ok().as_ref());
        Ok(out)
    }
}

/// Originate the transactions of the pending index `keys` (a run of the
/// cut-off at `cutoff`), handing each to `write` in order.
pub(in crate::engine) fn run(
    cx: &mut WriteContext<'_, '_>,
    ids: &[&str],
    cutoff: DateTime<Utc>,
    mut write: impl FnMut(&mut WriteContext<'_, '_>, Originated<'_>) -> Result<(), StorageError>,
) -> Result<(), StorageError> {
    let dates = RunDates::of(cutoff);
    let mut changes = ChangeTemplates::default();
    for id in ids {
        if let Some(raw) = cx.write.get_raw(Table::Transactions, id.as_bytes())? {
            if let Some(o) = originate(&raw, cutoff, &dates, &mut changes)? {
                write(cx, o)?;
            }
        }
    }
    Ok(())
}
