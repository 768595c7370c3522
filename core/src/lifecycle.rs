//! The transaction lifecycle: its states, which operation each state allows, and
//! the dates a transaction moves on.
//!
//! Everything here is a pure decider: nothing reads storage or a clock. The engine
//! calls these functions inside its write transaction with the stored state and
//! the dates or instants it was given, and writes the resulting status change
//! (and event) itself.
//!
//! # States
//!
//! | state | feed status | entered by |
//! |---|---|---|
//! | [`State::Pending`] | `A` | creating the transaction |
//! | [`State::Originated`] | `B` | its 6 PM ET cut-off ([`crate::calendar::next_cutoff_after`]) |
//! | [`State::Settled`] | `S` | [`settlement_instant`] of its [`settlement_date`] |
//! | [`State::Returned`] | `R` | a return by the receiver's bank ([`can_return`], [`validate_return`]) |
//! | [`State::Voided`] | `R`, `return_code: null`, `reason: "Voided"` | the void operation ([`can_void`]) |
//!
//! Moves: Pending → Originated → Settled; Pending → Voided; Originated or Settled →
//! Returned. Returned and Voided are final. Reversing a Settled transaction does not
//! move it: it creates a new transaction (the *reversal*, in the opposite
//! direction) that runs its own life from Pending, while the original stays Settled.
//!
//! # Operations by state
//!
//! | state | void | reverse | return |
//! |---|---|---|---|
//! | Pending | allowed | refused | refused (it has not reached the bank) |
//! | Originated | refused | refused | allowed |
//! | Settled | refused | allowed (once, see [`can_reverse`]) | allowed |
//! | Returned | refused | refused | refused (already returned) |
//! | Voided | refused (already voided) | refused | refused (never originated) |
//!
//! # Which catalogue message a refusal carries
//!
//! The spec's catalogue has exactly two messages about state: 5 (*already
//! reversed with transaction ID …*) and 6 (*the reversal … has been submitted*),
//! both for a repeated reverse. Every other refusal of a void, reverse or return
//! because of the transaction's state answers with message 10, *Failed to accept
//! this transaction*, the catalogue's general refusal, and says why in
//! [`TransitionRefusal::detail`] (e.g. "only a Pending transaction can be voided; this one is
//! Originated"). Those refusals are state conflicts: [`TransitionRefusal::category`] is
//! [`ErrorCategory::StateConflict`] (HTTP 409, as `docs/errors.md` lists "void after
//! Pending"), even though message 10 used for a malformed request is a validation
//! failure (422). Refusals of a return request's *values* ([`validate_return`]) are
//! validation failures (422).
//!
//! # Dates
//!
//! A transaction originates at its cut-off: the origination date is the cut-off's
//! banking date and the effective date is the next banking day ([`origination`]).
//! A credit settles on its effective date; a debit is held
//! [`DEBIT_HOLD_BANKING_DAYS`] more banking days for return risk
//! ([`settlement_date`]). Settlement happens at [`SETTLEMENT_TIME`] (08:30 ET) on
//! the settlement date ([`settlement_instant`]).

use std::fmt;

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};

use crate::calendar::{add_banking_days, next_banking_day};
use crate::echo::echo;
use crate::error::{AchError, ErrorCategory};
use crate::model::{Direction, Status};
use crate::returns::{self, ReturnCode};
use crate::validation::{FieldError, ProblemCode};

/// The `reason` of the status change that reports a void: the feeds show a voided
/// transaction as status `R` with `return_code: null` and this reason.
pub const VOID_REASON: &str = "Voided";

/// Banking days a debit is held after its effective date before it settles (the
/// return-risk hold): most returns of a debit arrive within two banking days of
/// the effective date, so the merchant is funded only after that window.
/// Credits are not held (see [`settlement_date`]).
pub const DEBIT_HOLD_BANKING_DAYS: u32 = 2;

/// The Eastern wall-clock time at which a settlement date's transactions settle:
/// 08:30 ET, the FedACH settlement time.
pub const SETTLEMENT_TIME: NaiveTime = match NaiveTime::from_hms_opt(8, 30, 0) {
    Some(t) => t,
    // Evaluated at compile time; can never be reached at run time.
    None => panic!("08:30:00 is a valid time of day"),
};

/// The state of a transaction.
///
/// Four states are the spec's statuses; [`State::Voided`] is internal (see its
/// documentation and [`State::feed_status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Accepted for processing, waiting for its cut-off (feed status `A`).
    Pending,
    /// Pulled at its cut-off and sent through the central bank network (feed status `B`).
    Originated,
    /// Funded to the merchant's bank (feed status `S`).
    Settled,
    /// Returned by the customer's bank (feed status `R`, with a return code).
    Returned,
    /// Voided while Pending: internal, since the spec has no void status. A voided
    /// transaction never originates and never moves funds. The feeds report the void
    /// as status `R` with `return_code: null`, `return_date: null` and `reason:
    /// "Voided"` ([`VOID_REASON`]); the engine writes that status change.
    Voided,
}

impl State {
    /// Every state, in lifecycle order.
    pub const ALL: [State; 5] =
        [State::Pending, State::Originated, State::Settled, State::Returned, State::Voided];

    /// The status the feeds show for this state: Pending → `A`, Originated → `B`,
    /// Settled → `S`, Returned → `R`, and Voided → `R` (with a null return code and
    /// reason [`VOID_REASON`]).
    pub const fn feed_status(self) -> Status {
        match self {
            State::Pending => Status::A,
            State::Originated => Status::B,
            State::Settled => Status::S,
            State::Returned | State::Voided => Status::R,
        }
    }

    /// The state's name: `Pending`, `Originated`, `Settled`, `Returned` or `Voided`.
    pub const fn name(self) -> &'static str {
        match self {
            State::Pending => "Pending",
            State::Originated => "Originated",
            State::Settled => "Settled",
            State::Returned => "Returned",
            State::Voided => "Voided",
        }
    }

    /// Whether no operation or automatic move leaves this state (Returned, Voided).
    pub const fn is_final(self) -> bool {
        matches!(self, State::Returned | State::Voided)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an operation is refused: the catalogue error the engine answers with, and
/// one entry for the field-problem list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionRefusal {
    /// The catalogue error; its `to_string()` is the envelope message.
    pub error: AchError,
    /// What kind of failure this is, which decides the HTTP status: a state
    /// conflict (409) for a refused void, reverse or return (even with message 10,
    /// see the module documentation), a validation failure (422) for a return
    /// request's values.
    pub category: ErrorCategory,
    /// JSON path of the field concerned: `""` for the transaction as a whole (void
    /// and reverse have no body), `return_code` or `return_date` for a return.
    pub field: &'static str,
    /// Machine-readable kind: `conflict` for a state refusal; `required`,
    /// `invalid_format`, `invalid_value` or `future_date` for a return request.
    pub code: ProblemCode,
    /// Human-readable explanation (e.g. "only a Pending transaction can be voided;
    /// this one is Originated").
    pub detail: String,
}

impl TransitionRefusal {
    fn state(error: AchError, detail: String) -> Self {
        TransitionRefusal {
            error,
            category: ErrorCategory::StateConflict,
            field: "",
            code: ProblemCode::Conflict,
            detail,
        }
    }

    fn invalid(field: &'static str, code: ProblemCode, detail: String) -> Self {
        TransitionRefusal {
            error: AchError::FailedToAccept,
            category: ErrorCategory::Validation,
            field,
            code,
            detail,
        }
    }

    /// The HTTP status of the refusal (from [`TransitionRefusal::category`]).
    pub const fn http_status(&self) -> u16 {
        self.category.http_status()
    }

    /// The envelope message: the catalogue error's exact text.
    pub fn message(&self) -> String {
        self.error.to_string()
    }

    /// The refusal as one `{field, code, message}` entry of the problem list
    /// (`message` is [`TransitionRefusal::detail`]).
    pub fn field_error(&self) -> FieldError {
        FieldError { field: self.field.to_owned(), code: self.code, message: self.detail.clone() }
    }
}

impl fmt::Display for TransitionRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.error, self.detail)
    }
}

impl std::error::Error for TransitionRefusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Whether a transaction in `state` may be voided: only a Pending one.
///
/// # Errors
///
/// Message 10 (*Failed to accept this transaction*, a state conflict) for every
/// other state, with detail "only a Pending transaction can be voided; this one is
/// {state}", or "this transaction is already voided" for a Voided one. An engine
/// that wants a repeated `PUT …/void` to succeed (idempotent retry) checks for
/// [`State::Voided`] before calling this.
pub fn can_void(state: State) -> Result<(), TransitionRefusal> {
    match state {
        State::Pending => Ok(()),
        State::Voided => Err(TransitionRefusal::state(
            AchError::FailedToAccept,
            "this transaction is already voided".to_owned(),
        )),
        State::Originated | State::Settled | State::Returned => Err(TransitionRefusal::state(
            AchError::FailedToAccept,
            format!("only a Pending transaction can be voided; this one is {state}"),
        )),
    }
}

/// Whether a transaction may be reversed.
///
/// `state` is the transaction's, `is_reversal` says whether it is itself a
/// reversal, and `reversal` is its latest reversal, if any, as `(reversal id,
/// reversal state)`. At most one reversal of a transaction is ever live (not
/// Voided nor Returned), so the latest one decides.
///
/// Checked in this order:
///
/// 1. A reversal cannot itself be reversed (message 10, detail "a reversal cannot
///    itself be reversed").
/// 2. A repeated reverse: if the latest reversal is Pending or Originated, message
///    6 (*The reversal for transaction has been submitted*); if it is Settled,
///    message 5 (*The original transaction has already been reversed with
///    transaction ID {reversal id}*). Checked before the original's state, so a
///    repeat is always reported as one, even if the original was since returned.
/// 3. A reversal that was **Voided** or **Returned** does not count: the original
///    may be reversed again. Neither moved funds: a voided reversal never
///    originated, and a returned one was sent back by the receiver's bank. An
///    operator who reverses, sees the reversal come back and reverses again
///    expects a new attempt, not "already reversed" (which would claim a refund
///    that never happened). The returned reversal stays in the feeds with its
///    return code, so the operator can see why the first attempt failed.
/// 4. Only a Settled transaction can be reversed (message 10, detail naming the
///    state: "only a Settled transaction can be reversed; this one is Pending
///    (void it instead)").
///
/// # Errors
///
/// A [`TransitionRefusal`] as listed above; every one is a state conflict (HTTP 409).
pub fn can_reverse(
    state: State,
    is_reversal: bool,
    reversal: Option<(&str, State)>,
) -> Result<(), TransitionRefusal> {
    if is_reversal {
        return Err(TransitionRefusal::state(
            AchError::FailedToAccept,
            "a reversal cannot itself be reversed".to_owned(),
        ));
    }
    if let Some((reversal_id, reversal_state)) = reversal {
        match reversal_state {
            State::Pending | State::Originated => {
                return Err(TransitionRefusal::state(
                    AchError::ReversalSubmitted,
                    format!("reversal {reversal_id} is {reversal_state} and has not settled yet"),
                ));
            }
            State::Settled => {
                return Err(TransitionRefusal::state(
                    AchError::AlreadyReversed { reversal_id: reversal_id.to_owned() },
                    format!("reversal {reversal_id} has settled"),
                ));
            }
            State::Returned | State::Voided => {}
        }
    }
    let hint = match state {
        State::Settled => return Ok(()),
        State::Pending => "void it instead",
        State::Originated => "it can be reversed once it has settled",
        State::Returned => "its funds were already sent back",
        State::Voided => "it never moved funds",
    };
    Err(TransitionRefusal::state(
        AchError::FailedToAccept,
        format!("only a Settled transaction can be reversed; this one is {state} ({hint})"),
    ))
}

/// Whether a transaction in `state` may be returned by the receiver's bank: only an
/// Originated or Settled one (a Pending transaction has not reached the bank).
///
/// # Errors
///
/// Message 10 (*Failed to accept this transaction*, a state conflict) with detail
/// "only an Originated or Settled transaction can be returned; this one is Pending
/// (it has not reached the bank)" (or Voided: it was never originated), or "this
/// transaction is already returned".
pub fn can_return(state: State) -> Result<(), TransitionRefusal> {
    let detail = match state {
        State::Originated | State::Settled => return Ok(()),
        State::Returned => "this transaction is already returned".to_owned(),
        State::Pending => format!(
            "only an Originated or Settled transaction can be returned; this one is {state} \
             (it has not reached the bank)"
        ),
        State::Voided => format!(
            "only an Originated or Settled transaction can be returned; this one is {state} \
             (it was never originated)"
        ),
    };
    Err(TransitionRefusal::state(AchError::FailedToAccept, detail))
}

/// Checks a return request: the NACHA return reason `code` and the return date
/// (`return_date`, defaulting to `today`, the engine's current Eastern date) against
/// the transaction's `origination_date`. Returns the return code (whose title is
/// the status change's `reason`) and the return date to record.
///
/// Call [`can_return`] for the transaction's state as well.
///
/// # Errors
///
/// Message 10 (*Failed to accept this transaction*, a validation failure, 422), the
/// first problem found:
///
/// - `return_code`: empty (`required`), not `R` + two digits (`invalid_format`,
///   e.g. `r01`, `R1`), or not a NACHA code (`invalid_value`, e.g. `R00`);
/// - `return_date`: after `today` (`future_date`) or before the origination date
///   (`invalid_value`). The origination date itself is allowed.
pub fn validate_return(
    code: &str,
    return_date: Option<NaiveDate>,
    today: NaiveDate,
    origination_date: NaiveDate,
) -> Result<(ReturnCode, NaiveDate), TransitionRefusal> {
    let return_code = match returns::lookup(code) {
        Some(found) => found,
        None if code.is_empty() => {
            return Err(TransitionRefusal::invalid(
                "return_code",
                ProblemCode::Required,
                "a return code is required".to_owned(),
            ));
        }
        None if !returns::is_well_formed(code) => {
            return Err(TransitionRefusal::invalid(
                "return_code",
                ProblemCode::InvalidFormat,
                format!("'{}' is not a return code: expected R followed by two digits", echo(code)),
            ));
        }
        None => {
            return Err(TransitionRefusal::invalid(
                "return_code",
                ProblemCode::InvalidValue,
                format!("'{code}' is not a NACHA return reason code"),
            ));
        }
    };
    let date = return_date.unwrap_or(today);
    if date > today {
        return Err(TransitionRefusal::invalid(
            "return_date",
            ProblemCode::FutureDate,
            format!("the return date {date} is in the future (today is {today})"),
        ));
    }
    if date < origination_date {
        return Err(TransitionRefusal::invalid(
            "return_date",
            ProblemCode::InvalidValue,
            format!("the return date {date} is before the origination date {origination_date}"),
        ));
    }
    Ok((return_code, date))
}

/// Banking days after the original's settlement date within which a reversing
/// entry may be originated (Nacha: available to the receiving bank by the fifth
/// banking day following the settlement date of the erroneous entry).
pub const REVERSAL_WINDOW_BANKING_DAYS: u32 = 5;

/// The last origination date of a reversing entry for an original that settled
/// on `settlement`.
pub fn reversal_window_end(settlement: NaiveDate) -> NaiveDate {
    add_banking_days(settlement, REVERSAL_WINDOW_BANKING_DAYS)
}

/// Whether a reversal originating on `origination` may reverse an original in
/// `direction` that settled on `settlement`. A debit's reversal (a credit to the
/// receiver) is always allowed: after the window it leaves as a refund. A
/// credit's reversal debits the receiver and is valid only within the window.
///
/// # Errors
///
/// A state conflict (HTTP 409, message 10) for a credit past its window.
pub fn can_reverse_by(
    direction: Direction,
    settlement: NaiveDate,
    origination: NaiveDate,
) -> Result<(), TransitionRefusal> {
    let end = reversal_window_end(settlement);
    if direction == Direction::Credit && origination > end {
        return Err(TransitionRefusal::state(
            AchError::FailedToAccept,
            format!(
                "a credit can be reversed only until the cut-off of {end} (five banking days after it settled); \
                 ask its receiver to send the funds back"
            ),
        ));
    }
    Ok(())
}

/// The dates of a transaction originated at the cut-off of `cutoff_date` (the
/// banking date [`crate::calendar::next_cutoff_after`] gave it), as
/// `(origination date, effective date)`: the origination date is the cut-off's
/// date, the effective date the next banking day after it.
///
/// E.g. cut-off Wednesday 2026-11-25 → (2026-11-25, Friday 2026-11-27),
/// Thanksgiving skipped. Saturates at [`NaiveDate::MAX`] like
/// [`next_banking_day`].
pub fn origination(cutoff_date: NaiveDate) -> (NaiveDate, NaiveDate) {
    (cutoff_date, next_banking_day(cutoff_date))
}

/// The dates of an entry originated at the cut-off instant `cutoff`, as
/// `(origination date, effective date)`: [`origination`] for the standard
/// 18:00 cut-off; for a Same Day ACH cut-off, that day for both.
pub fn origination_at(cutoff: DateTime<Utc>) -> (NaiveDate, NaiveDate) {
    let date = crate::calendar::eastern_date(cutoff);
    if crate::calendar::is_same_day_cutoff(cutoff) {
        (date, date)
    } else {
        origination(date)
    }
}

/// When an entry in `direction` originated at the cut-off instant `cutoff`
/// settles, as `(date, instant)`: [`settlement_date`] at
/// [`SETTLEMENT_TIME`] for the standard cut-off; for a Same Day ACH cut-off,
/// that day at its window's settlement time, debits and credits alike.
pub fn settlement_at(direction: Direction, cutoff: DateTime<Utc>) -> (NaiveDate, DateTime<Utc>) {
    match crate::calendar::same_day_settlement(cutoff) {
        Some(at) => (crate::calendar::eastern_date(cutoff), at),
        None => {
            let (_, effective) = origination(crate::calendar::eastern_date(cutoff));
            let date = settlement_date(direction, effective);
            (date, settlement_instant(date))
        }
    }
}

/// The settlement date of a transaction with this `direction` and `effective_date`.
///
/// A credit settles on its effective date. A debit is held
/// [`DEBIT_HOLD_BANKING_DAYS`] (2) banking days after its effective date, the
/// return-risk hold: effective Friday 2026-11-27 → settles Tuesday 2026-12-01.
/// Saturates at [`NaiveDate::MAX`] like [`add_banking_days`].
pub fn settlement_date(direction: Direction, effective_date: NaiveDate) -> NaiveDate {
    match direction {
        Direction::Credit => effective_date,
        Direction::Debit => add_banking_days(effective_date, DEBIT_HOLD_BANKING_DAYS),
    }
}

/// The instant a transaction settles: [`SETTLEMENT_TIME`] (08:30 Eastern, the
/// FedACH settlement time) on `settlement_date`, in UTC.
///
/// 12:30 UTC while New York is on EDT, 13:30 UTC on EST (e.g. 2026-03-09 →
/// 12:30Z, 2026-11-02 → 13:30Z). Daylight-saving time comes from the tz database.
/// Defined for every date; never panics.
pub fn settlement_instant(settlement_date: NaiveDate) -> DateTime<Utc> {
    crate::calendar::eastern_instant(settlement_date, SETTLEMENT_TIME)
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
