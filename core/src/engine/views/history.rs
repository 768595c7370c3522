//! A transaction's history: its status changes as the status-changes feed
//! showed them, oldest first, without a row per change. Every change but the
//! last is fixed by the record: `A` when it was created (at `created_at`, no
//! dates), `B` at the cut-off that originated it (its `cutoff_at`, with the
//! dates it got then and keeps), `S` at its settlement instant (`settles_at`,
//! the same dates). The change that ended it (a void, a rejection, a return)
//! is kept whole in `Table::Endings` with the state it ended from, which says
//! whether it had settled first. A test checks the history against the feed
//! for every path through the lifecycle.

use crate::engine::feeds::changes::status_change;
use crate::engine::rows::records::TransactionRecord;
use crate::lifecycle::State;
use crate::model::StatusChange;
use crate::storage::{decode, Snapshot, StorageError, Table};

/// `t`'s history, oldest first.
pub(crate) fn of(r: &Snapshot, t: &TransactionRecord) -> Result<Vec<StatusChange>, StorageError> {
    let ending: Option<(State, StatusChange)> = match t.state {
        State::Returned | State::Voided => match r.get_raw(Table::Endings, t.id.as_bytes())? {
            Some(bytes) => Some(decode(Table::Endings, &bytes)?),
            None => None,
        },
        _ => None,
    };
    // The furthest state it reached before its ending, if any.
    let reached = match (&ending, t.state) {
        (Some((from, _)), _) => *from,
        (None, State::Returned) => State::Originated,
        (None, state) => state,
    };
    let none = (None, None);
    let dates = [t.origination_date, t.effective_date, t.settlement_date, None];
    let mut history = vec![status_change(&t.id, State::Pending, [None; 4], none, t.created_at)];
    if matches!(reached, State::Originated | State::Settled) {
        history.push(status_change(&t.id, State::Originated, dates, none, t.cutoff_at));
    }
    if let (State::Settled, Some(at)) = (reached, t.settles_at) {
        history.push(status_change(&t.id, State::Settled, dates, none, at));
    }
    if let Some((_, change)) = ending {
        history.push(change);
    }
    Ok(history)
}
