//! Confirming micro-entries: the receiver read the two credits on its
//! statement and the partner passes them on, in either order. A wrong pair
//! is refused and counted; the third wrong pair locks the validation.

use super::create::{amounts_print, index_if_better};
use super::record::{self, MAX_TRIES};
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::model::{Confirmation, ValidationMethod, ValidationStatus};
use crate::validation::ProblemCode;
use crate::AchError;

/// Partner: confirm the micro-entries of validation `id` of its customer
/// `customer_id`.
pub(crate) fn confirm(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    customer_id: &str,
    id: &str,
    confirmation: &Confirmation,
) -> Result<Outcome, Stop> {
    let mut v = record::load(cx, partner_id, id)?;
    if v.customer_id.as_deref() != Some(customer_id) {
        return Err(record::unknown(id).into());
    }
    if v.method != ValidationMethod::MicroEntries {
        return Err(conflict(format!("a {} validation has nothing to confirm", v.method.as_str())));
    }
    let view = record::view_now(cx, &v)?;
    match view.status {
        ValidationStatus::Validated => return Ok(Outcome::ValidationConfirmed { validation: view }),
        ValidationStatus::Pending => {}
        other => return Err(conflict(format!("the validation is {}", other.as_str()))),
    }
    if v.amounts_print.as_deref() == Some(amounts_print(cx, &v.id, confirmation.amounts).as_str()) {
        v.confirmed_at = Some(cx.now);
        record::save(cx, &v)?;
        index_if_better(cx, &v)?;
        return Ok(Outcome::ValidationConfirmed { validation: record::view_now(cx, &v)? });
    }
    // The wrong try is stored with its refusal: a refusal keeps what the
    // operation wrote before it.
    v.tries = v.tries.saturating_add(1);
    record::save(cx, &v)?;
    let left = MAX_TRIES.saturating_sub(v.tries);
    let message = match left {
        0 => "the amounts are not the micro-entries' credits: the validation is now locked".to_owned(),
        n => format!("the amounts are not the micro-entries' credits ({n} tries left)"),
    };
    Err(Refusal::problem(AchError::FailedToAccept, "amounts", ProblemCode::AmountsMismatch, message).into())
}

/// 409, message 10, a `conflict` on `validation_id`.
fn conflict(why: String) -> Stop {
    Refusal::problem_with_status(AchError::FailedToAccept, 409, "validation_id", ProblemCode::Conflict, why)
        .into()
}
