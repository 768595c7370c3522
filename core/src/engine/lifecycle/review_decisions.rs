//! The operator's decisions on entries held for review: a release sends one
//! to the next cut-off (and into its merchant's exposure); a rejection ends
//! it like a void, with the reason `Rejected in review`.

use crate::calendar;
use crate::echo::echo;
use crate::engine::feeds::changes;
use crate::engine::lifecycle::{pending, transactions};
use crate::engine::risk::exposure;
use crate::engine::risk::reviews::{self, MAX_NOTE};
use crate::engine::rows::records::TransactionRecord;
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::model::{Review, ReviewStatus};
use crate::storage::Table;
use crate::validation::ProblemCode;
use crate::AchError;

/// A decision's note: at most [`MAX_NOTE`] characters.
fn checked_note(note: Option<String>) -> Result<Option<String>, Stop> {
    match note {
        Some(n) if n.chars().count() > MAX_NOTE => Err(Refusal::problem(
            AchError::FailedToAccept,
            "note",
            ProblemCode::InvalidValue,
            format!("note must be at most {MAX_NOTE} characters"),
        )
        .into()),
        other => Ok(other),
    }
}

/// The held entry `id` and its review, or the refusal: 404 unknown, 409 not held.
fn decidable(cx: &mut WriteContext<'_, '_>, id: &str) -> Result<(TransactionRecord, Review), Stop> {
    transactions::current(cx)?;
    let t = transactions::load(cx, None, id)?;
    let Some(review) = reviews::held(cx, id)? else {
        let why = match cx.write.get::<Review>(Table::Reviews, id.as_bytes())? {
            Some(r) => format!("transaction '{}' is not held for review: it was {:?}", echo(id), r.status)
                .to_lowercase(),
            None => format!("transaction '{}' is not held for review", echo(id)),
        };
        return Err(Refusal::problem_with_status(
            AchError::FailedToAccept,
            409,
            "transaction_id",
            ProblemCode::Conflict,
            why,
        )
        .into());
    };
    Ok((t, review))
}

/// Operator: release a held entry: it originates at the next cut-off.
pub(crate) fn release(
    cx: &mut WriteContext<'_, '_>,
    id: &str,
    note: Option<String>,
) -> Result<Outcome, Stop> {
    let note = checked_note(note)?;
    let (mut t, review) = decidable(cx, id)?;
    // A same-day entry stays one: the next same-day cut-off.
    t.cutoff_at = pending::cutoff_for(cx, calendar::is_same_day_cutoff(t.cutoff_at))?;
    cx.write.put(Table::Transactions, t.id.as_bytes(), &t)?;
    pending::index_pending(cx, &t)?;
    exposure::apply(cx, &t, true)?;
    let review = reviews::close(cx, review, ReviewStatus::Released, "operator", note)?;
    changes::record_review(cx, &t, false, &review.rules)?;
    Ok(Outcome::ReviewDecided { review })
}

/// Operator: reject a held entry: it never originates (status R, no return
/// code, reason `Rejected in review`).
pub(crate) fn reject(cx: &mut WriteContext<'_, '_>, id: &str, note: Option<String>) -> Result<Outcome, Stop> {
    let note = checked_note(note)?;
    let (t, review) = decidable(cx, id)?;
    transactions::end_pending(cx, t, Some(changes::REJECTED_REASON))?;
    let review = reviews::close(cx, review, ReviewStatus::Rejected, "operator", note)?;
    Ok(Outcome::ReviewDecided { review })
}
