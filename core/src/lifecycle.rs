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

use chrono::{DateTime, NaiveDate, NaiveTime, TimeZone, Utc};
use chrono_tz::America::New_York;

use crate::calendar::{add_banking_days, cutoff_instant, next_banking_day, CUTOFF_TIME};
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
    eastern_instant(settlement_date, SETTLEMENT_TIME)
}

/// The UTC instant of an Eastern wall-clock `time` on `date`, for a `time` outside
/// the 01:00–03:00 window where DST switches (so it exists exactly once).
///
/// Falls back, should the tz data ever skip that time, to the same offset as the
/// calendar's cut-off of that date (18:00 ET is never in a switch window).
fn eastern_instant(date: NaiveDate, time: NaiveTime) -> DateTime<Utc> {
    let local = date.and_time(time);
    if let Some(t) = New_York.from_local_datetime(&local).earliest() {
        return t.with_timezone(&Utc);
    }
    let cutoff = cutoff_instant(date);
    cutoff.checked_sub_signed(CUTOFF_TIME - time).unwrap_or(cutoff)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::calendar::{is_banking_day, next_cutoff_after, parse_instant, to_eastern};
    use chrono::{Datelike, TimeDelta};
    use proptest::prelude::*;

    /// From a date's 18:00 cut-off back to its 08:30 settlement time.
    const CUTOFF_TO_SETTLEMENT: TimeDelta = TimeDelta::minutes(9 * 60 + 30);

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    fn utc(text: &str) -> DateTime<Utc> {
        parse_instant(text).unwrap()
    }

    const REVERSAL_ID: &str = "txn_7Hq2mB9xKpL4vN8sR3tW1y";

    const FAILED: &str = "Failed to accept this transaction";
    const SUBMITTED: &str = "The reversal for transaction has been submitted";
    const ALREADY: &str =
        "The original transaction has already been reversed with transaction ID txn_7Hq2mB9xKpL4vN8sR3tW1y";

    /// `Ok` → `None`; a refusal → `(message, detail)`, checking the state-conflict
    /// shape every lifecycle refusal has.
    fn outcome(result: Result<(), TransitionRefusal>) -> Option<(String, String)> {
        let refusal = result.err()?;
        assert_eq!(refusal.category, ErrorCategory::StateConflict, "{refusal}");
        assert_eq!(refusal.http_status(), 409);
        assert_eq!(refusal.field, "");
        assert_eq!(refusal.code, ProblemCode::Conflict);
        assert_eq!(refusal.message(), refusal.error.to_string());
        Some((refusal.error.to_string(), refusal.detail))
    }

    fn refused(message: &str, detail: &str) -> Option<(String, String)> {
        Some((message.to_owned(), detail.to_owned()))
    }

    #[test]
    fn states_map_to_feed_statuses_and_names() {
        let rows: Vec<(State, Status, &str, bool)> =
            State::ALL.iter().map(|s| (*s, s.feed_status(), s.name(), s.is_final())).collect();
        assert_eq!(
            rows,
            [
                (State::Pending, Status::A, "Pending", false),
                (State::Originated, Status::B, "Originated", false),
                (State::Settled, Status::S, "Settled", false),
                (State::Returned, Status::R, "Returned", true),
                (State::Voided, Status::R, "Voided", true),
            ]
        );
        // The spec's names agree with the feed status names, except the internal Voided.
        for state in [State::Pending, State::Originated, State::Settled, State::Returned] {
            assert_eq!(state.name(), state.feed_status().name());
        }
        assert_eq!(State::Voided.to_string(), "Voided");
        assert_eq!(VOID_REASON, "Voided");
    }

    #[test]
    fn void_in_every_state() {
        let only_pending =
            |s: &str| refused(FAILED, &format!("only a Pending transaction can be voided; this one is {s}"));
        assert_eq!(outcome(can_void(State::Pending)), None);
        assert_eq!(outcome(can_void(State::Originated)), only_pending("Originated"));
        assert_eq!(outcome(can_void(State::Settled)), only_pending("Settled"));
        assert_eq!(outcome(can_void(State::Returned)), only_pending("Returned"));
        assert_eq!(outcome(can_void(State::Voided)), refused(FAILED, "this transaction is already voided"));
    }

    #[test]
    fn return_in_every_state() {
        assert_eq!(outcome(can_return(State::Originated)), None);
        assert_eq!(outcome(can_return(State::Settled)), None);
        assert_eq!(
            outcome(can_return(State::Pending)),
            refused(
                FAILED,
                "only an Originated or Settled transaction can be returned; this one is Pending \
                 (it has not reached the bank)"
            )
        );
        assert_eq!(
            outcome(can_return(State::Voided)),
            refused(
                FAILED,
                "only an Originated or Settled transaction can be returned; this one is Voided \
                 (it was never originated)"
            )
        );
        assert_eq!(
            outcome(can_return(State::Returned)),
            refused(FAILED, "this transaction is already returned")
        );
    }

    #[test]
    fn reverse_without_a_previous_reversal_in_every_state() {
        let only_settled = |s: &str, hint: &str| {
            refused(FAILED, &format!("only a Settled transaction can be reversed; this one is {s} ({hint})"))
        };
        assert_eq!(outcome(can_reverse(State::Settled, false, None)), None);
        for (state, name, hint) in [
            (State::Pending, "Pending", "void it instead"),
            (State::Originated, "Originated", "it can be reversed once it has settled"),
            (State::Returned, "Returned", "its funds were already sent back"),
            (State::Voided, "Voided", "it never moved funds"),
        ] {
            assert_eq!(outcome(can_reverse(state, false, None)), only_settled(name, hint), "{name}");
        }
    }

    #[test]
    fn a_reversal_is_never_reversed() {
        for state in State::ALL {
            for reversal in [None, Some((REVERSAL_ID, State::Settled))] {
                assert_eq!(
                    outcome(can_reverse(state, true, reversal)),
                    refused(FAILED, "a reversal cannot itself be reversed"),
                    "{state}"
                );
            }
        }
    }

    #[test]
    fn reversing_twice() {
        // First reverse of a Settled transaction: allowed.
        assert_eq!(outcome(can_reverse(State::Settled, false, None)), None);
        // Again while the reversal is on its way: message 6.
        assert_eq!(
            outcome(can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Pending)))),
            refused(SUBMITTED, "reversal txn_7Hq2mB9xKpL4vN8sR3tW1y is Pending and has not settled yet")
        );
        assert_eq!(
            outcome(can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Originated)))),
            refused(SUBMITTED, "reversal txn_7Hq2mB9xKpL4vN8sR3tW1y is Originated and has not settled yet")
        );
        // Again once the reversal has settled: message 5 with the reversal's id.
        let settled = can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Settled))).unwrap_err();
        assert_eq!(settled.error, AchError::AlreadyReversed { reversal_id: REVERSAL_ID.to_owned() });
        assert_eq!(settled.error.code(), 5);
        assert_eq!(
            outcome(Err(settled)),
            refused(ALREADY, "reversal txn_7Hq2mB9xKpL4vN8sR3tW1y has settled")
        );
        // A voided or returned reversal frees the original.
        assert_eq!(outcome(can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Voided)))), None);
        assert_eq!(outcome(can_reverse(State::Settled, false, Some((REVERSAL_ID, State::Returned)))), None);
    }

    #[test]
    fn reverse_every_original_state_against_every_reversal_state() {
        use State::*;
        for original in State::ALL {
            let without = outcome(can_reverse(original, false, None));
            for reversal in State::ALL {
                let got = outcome(can_reverse(original, false, Some((REVERSAL_ID, reversal))));
                let expected = match reversal {
                    Pending | Originated => refused(
                        SUBMITTED,
                        &format!("reversal {REVERSAL_ID} is {reversal} and has not settled yet"),
                    ),
                    Settled => refused(ALREADY, &format!("reversal {REVERSAL_ID} has settled")),
                    // Does not count: same answer as with no reversal at all.
                    Returned | Voided => without.clone(),
                };
                assert_eq!(got, expected, "original {original}, reversal {reversal}");
            }
        }
        // A returned original whose reversal settled still reports the repeat.
        assert_eq!(
            outcome(can_reverse(Returned, false, Some((REVERSAL_ID, Settled)))).map(|(m, _)| m),
            Some(ALREADY.to_owned())
        );
    }

    #[test]
    fn refusals_render_for_hosts() {
        let refusal = can_void(State::Originated).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "Failed to accept this transaction (only a Pending transaction can be voided; this one is Originated)"
        );
        let fe = refusal.field_error();
        assert_eq!((fe.field.as_str(), fe.code), ("", ProblemCode::Conflict));
        assert_eq!(fe.message, refusal.detail);
        let json = serde_json::to_string(&fe).unwrap();
        assert_eq!(
            json,
            r#"{"field":"","code":"conflict","message":"only a Pending transaction can be voided; this one is Originated"}"#
        );
        assert!(std::error::Error::source(&refusal).is_some());
    }

    #[test]
    fn return_requests() {
        let orig = d(2026, 11, 25);
        let today = d(2026, 11, 30);

        let (code, date) = validate_return("R01", None, today, orig).unwrap();
        assert_eq!((code.code(), code.reason(), date), ("R01", "Insufficient Funds", today));
        let (code, date) = validate_return("R90", Some(orig), today, orig).unwrap();
        assert_eq!((code.code(), date), ("R90", orig));
        assert_eq!(validate_return("R02", Some(d(2026, 11, 27)), today, orig).unwrap().1, d(2026, 11, 27));

        let refusal = |code: &str, date: Option<NaiveDate>| {
            let r = validate_return(code, date, today, orig).unwrap_err();
            assert_eq!(r.error, AchError::FailedToAccept);
            assert_eq!(r.message(), FAILED);
            assert_eq!((r.category, r.http_status()), (ErrorCategory::Validation, 422));
            (r.field, r.code, r.detail)
        };
        assert_eq!(
            refusal("R00", None),
            ("return_code", ProblemCode::InvalidValue, "'R00' is not a NACHA return reason code".to_owned())
        );
        assert_eq!(refusal("R48", None).1, ProblemCode::InvalidValue);
        for bad in ["r01", "R1", "R011", " R01", "01"] {
            assert_eq!(
                refusal(bad, None),
                (
                    "return_code",
                    ProblemCode::InvalidFormat,
                    format!("'{bad}' is not a return code: expected R followed by two digits")
                ),
            );
        }
        assert_eq!(
            refusal("", None),
            ("return_code", ProblemCode::Required, "a return code is required".to_owned())
        );
        // A hostile code is echoed cut short.
        let long = "X".repeat(10_000);
        let detail = refusal(&long, None).2;
        assert!(detail.starts_with(&format!("'{}...'", "X".repeat(40))), "{detail}");
        // The code is checked before the date.
        assert_eq!(refusal("R00", Some(d(2030, 1, 1))).0, "return_code");

        assert_eq!(
            refusal("R01", Some(d(2026, 12, 1))),
            (
                "return_date",
                ProblemCode::FutureDate,
                "the return date 2026-12-01 is in the future (today is 2026-11-30)".to_owned()
            )
        );
        assert_eq!(
            refusal("R01", Some(d(2026, 11, 24))),
            (
                "return_date",
                ProblemCode::InvalidValue,
                "the return date 2026-11-24 is before the origination date 2026-11-25".to_owned()
            )
        );
        // Today before the origination date (defaulted) is refused too.
        let r = validate_return("R01", None, d(2026, 11, 24), orig).unwrap_err();
        assert_eq!((r.field, r.code), ("return_date", ProblemCode::InvalidValue));
    }

    #[test]
    fn thanksgiving_2026() {
        // Cut-off Wed 2026-11-25; Thursday 2026-11-26 is Thanksgiving.
        let (origination_date, effective) = origination(d(2026, 11, 25));
        assert_eq!((origination_date, effective), (d(2026, 11, 25), d(2026, 11, 27)));
        assert_eq!(settlement_date(Direction::Credit, effective), d(2026, 11, 27));
        assert_eq!(settlement_date(Direction::Debit, effective), d(2026, 12, 1));
        // The next cut-off: Friday → effective Monday.
        assert_eq!(origination(d(2026, 11, 27)), (d(2026, 11, 27), d(2026, 11, 30)));
        assert_eq!(settlement_date(Direction::Debit, d(2026, 11, 30)), d(2026, 12, 2));
        // Whole path from a creation instant: Wed 17:59:59 ET vs. 18:00:00 ET.
        let (cut, _) = next_cutoff_after(utc("2026-11-25T17:59:59-05:00"));
        assert_eq!(origination(cut).1, d(2026, 11, 27));
        let (cut, _) = next_cutoff_after(utc("2026-11-25T18:00:00-05:00"));
        assert_eq!(cut, d(2026, 11, 27));
        assert_eq!(origination(cut).1, d(2026, 11, 30));
        assert_eq!(settlement_instant(d(2026, 12, 1)), utc("2026-12-01T13:30:00Z"));
    }

    #[test]
    fn independence_day_2026_and_2027() {
        // July 4 2026 is a Saturday: the Fed stays open on Friday 2026-07-03.
        assert!(is_banking_day(d(2026, 7, 3)));
        assert_eq!(origination(d(2026, 7, 2)), (d(2026, 7, 2), d(2026, 7, 3)));
        assert_eq!(settlement_date(Direction::Credit, d(2026, 7, 3)), d(2026, 7, 3));
        assert_eq!(settlement_date(Direction::Debit, d(2026, 7, 3)), d(2026, 7, 7));
        assert_eq!(origination(d(2026, 7, 3)), (d(2026, 7, 3), d(2026, 7, 6)));
        assert_eq!(settlement_instant(d(2026, 7, 3)), utc("2026-07-03T12:30:00Z"));

        // July 4 2027 is a Sunday: Monday 2027-07-05 is closed.
        assert!(!is_banking_day(d(2027, 7, 5)));
        assert_eq!(origination(d(2027, 7, 2)), (d(2027, 7, 2), d(2027, 7, 6)));
        assert_eq!(settlement_date(Direction::Credit, d(2027, 7, 6)), d(2027, 7, 6));
        assert_eq!(settlement_date(Direction::Debit, d(2027, 7, 6)), d(2027, 7, 8));
        assert_eq!(settlement_date(Direction::Debit, d(2027, 7, 1)), d(2027, 7, 6));
    }

    #[test]
    fn settlement_instant_follows_dst() {
        // Spring forward Sunday 2026-03-08.
        assert_eq!(settlement_instant(d(2026, 3, 6)), utc("2026-03-06T13:30:00Z"));
        assert_eq!(settlement_instant(d(2026, 3, 8)), utc("2026-03-08T12:30:00Z"));
        assert_eq!(settlement_instant(d(2026, 3, 9)), utc("2026-03-09T12:30:00Z"));
        // Fall back Sunday 2026-11-01.
        assert_eq!(settlement_instant(d(2026, 10, 30)), utc("2026-10-30T12:30:00Z"));
        assert_eq!(settlement_instant(d(2026, 11, 1)), utc("2026-11-01T13:30:00Z"));
        assert_eq!(settlement_instant(d(2026, 11, 2)), utc("2026-11-02T13:30:00Z"));
    }

    #[test]
    fn dates_never_panic_at_the_ends_of_the_range() {
        for date in [NaiveDate::MIN, NaiveDate::MAX] {
            let (o, e) = origination(date);
            assert_eq!(o, date);
            assert!(e >= date);
            for direction in [Direction::Debit, Direction::Credit] {
                assert!(settlement_date(direction, e) >= e);
            }
            assert_eq!(settlement_instant(date).date_naive(), date);
        }
        assert_eq!(origination(NaiveDate::MAX).1, NaiveDate::MAX);
        assert_eq!(settlement_date(Direction::Debit, NaiveDate::MAX), NaiveDate::MAX);
    }

    fn date_2000_2100() -> impl Strategy<Value = NaiveDate> {
        let lo = d(2000, 1, 1).num_days_from_ce();
        let hi = d(2100, 1, 1).num_days_from_ce();
        (lo..hi).prop_map(|n| NaiveDate::from_num_days_from_ce_opt(n).unwrap())
    }

    proptest! {
        #[test]
        fn prop_dates_of_a_banking_day_cutoff(
            cut in date_2000_2100().prop_map(crate::calendar::banking_day_on_or_after),
        ) {
            let (o, effective) = origination(cut);
            prop_assert_eq!(o, cut);
            prop_assert!(effective > cut && is_banking_day(effective));
            prop_assert_eq!(effective, next_banking_day(cut));
            let credit = settlement_date(Direction::Credit, effective);
            let debit = settlement_date(Direction::Debit, effective);
            prop_assert_eq!(credit, effective);
            prop_assert!(is_banking_day(debit));
            prop_assert_eq!(debit, next_banking_day(next_banking_day(effective)));
            // Settlement happens after the cut-off that originated the transaction.
            prop_assert!(settlement_instant(credit) > cutoff_instant(cut));
        }

        #[test]
        fn prop_settlement_instant_is_0830_eastern(date in date_2000_2100()) {
            let t = settlement_instant(date);
            prop_assert_eq!(to_eastern(t).date_naive(), date);
            prop_assert_eq!(to_eastern(t).time(), SETTLEMENT_TIME);
            // Same offset as that day's 18:00 cut-off.
            prop_assert_eq!(t, cutoff_instant(date) - CUTOFF_TO_SETTLEMENT);
            prop_assert!(matches!(t.format("%H:%M:%S").to_string().as_str(), "12:30:00" | "13:30:00"));
        }
    }
}
