//! Re-initiation (Nacha Rules 2.12.4): a debit returned for insufficient or
//! uncollected funds (R01, R09) may be originated again, at most twice after
//! the original, within 180 days of the original's settlement date, as the
//! same entry (amount, class, account, company) in a `RETRY PYMT` batch. No
//! other return is ever re-initiated: a stop payment, an unauthorized debit or
//! a closed account (R05, R07, R08, R10, R11, R29, R02, ...) is the receiver's
//! answer, not a shortfall.
//!
//! The original and its re-initiations form a chain: each re-initiation names
//! the original (`reinitiation_of`), and each entry names the one that retried
//! it (`reinitiated_by`). Only the chain's last entry, once returned R01 or
//! R09, may be re-initiated.

use chrono::{Days, NaiveDate};

use super::pending::insert_screened;
use super::transactions::{check_debit_limits, current, load};
use crate::engine::risk::usage;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::tenancy::sealed_text;
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::lifecycle::State;
use crate::model::Direction;
use crate::validation::ProblemCode;
use crate::{calendar, AchError};

/// The returns after which an entry may be re-initiated.
pub const RETRYABLE_RETURNS: [&str; 2] = ["R01", "R09"];
/// Most re-initiations of one original entry.
pub const MAX_REINITIATIONS: usize = 2;
/// Days after the original's settlement date within which it may be retried.
pub const WINDOW_DAYS: u64 = 180;

/// Partner: originate the returned debit `id` again, as a new transaction
/// (A Pending, for the next cut-off) linked to the original.
pub(crate) fn reinitiate(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    id: &str,
    same_day: bool,
) -> Result<Outcome, Stop> {
    current(cx)?;
    let mut returned = load(cx, Some(partner_id), id)?;
    let original = match &returned.reinitiation_of {
        Some(original) => load(cx, Some(partner_id), original)?,
        None => returned.clone(),
    };
    let tries = chain_position(cx, partner_id, &original, &returned.id)?;
    let today = calendar::eastern_date(cx.now);
    if let Err(why) = allowed(&returned, original.settlement_date, tries, today) {
        return Err(refused(why));
    }
    let merchant = crate::engine::tenancy::tenant_lookup::merchant_of(cx, partner_id, &returned.merchant_id)?;
    if crate::engine::credentials::is_suspended(cx.write, &merchant.id)? {
        let e = AchError::NotAccepted { transaction_type: returned.class.as_str().to_owned() };
        let why = "the merchant is suspended";
        return Err(Refusal::problem(e, "standard_entry_class", ProblemCode::InvalidValue, why).into());
    }
    if same_day && returned.amount > crate::validation::transaction::SAME_DAY_MAX {
        let e = AchError::InvalidAmount { value: returned.amount.to_string() };
        let why = format!(
            "{e}: Same Day ACH entries are limited to {} each",
            crate::validation::transaction::SAME_DAY_MAX.dollars()
        );
        return Err(Refusal::problem(e, "same_day", ProblemCode::SameDayLimit, why).into());
    }
    let cutoff_at = crate::engine::lifecycle::pending::cutoff_for(cx, same_day)?;
    let new_id = cx.new_transaction_id(partner_id)?;
    let mut record = returned.clone();
    record.id = new_id.clone();
    // The description is sealed bound to its record: sealed again for this one.
    let description = sealed_text::open(
        &cx.engine.cipher,
        sealed_text::DESCRIPTION,
        &returned.id,
        &returned.description_sealed,
    )
    .map_err(|_| crate::storage::StorageError(format!("the description of {} does not open", returned.id)))?;
    record.description_sealed =
        sealed_text::seal(&cx.engine.cipher, sealed_text::DESCRIPTION, &new_id, &description);
    record.has_images = false;
    record.reinitiation_of = Some(original.id.clone());
    record.reversal_of = None;
    record.begin_pending(cx.now, cutoff_at);
    let counted = check_debit_limits(cx, partner_id, &record)?;
    returned.reinitiated_by = Some(new_id.clone());
    cx.write.put(crate::storage::Table::Transactions, returned.id.as_bytes(), &returned)?;
    insert_screened(cx, &merchant, &record, None)?;
    if counted {
        usage::apply(cx, &record, true)?;
    }
    Ok(Outcome::TransactionReinitiated { transaction_id: returned.id, reinitiation_id: new_id })
}

/// How many re-initiations of `original` came before the entry `id` of its
/// chain (0: `id` is the original), following `reinitiated_by`.
fn chain_position(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    original: &TransactionRecord,
    id: &str,
) -> Result<usize, Stop> {
    let mut at = original.clone();
    for tries in 0..=MAX_REINITIATIONS {
        if at.id == id {
            return Ok(tries);
        }
        match &at.reinitiated_by {
            Some(next) => at = load(cx, Some(partner_id), next)?,
            None => break,
        }
    }
    // Not reached from the original: an entry never made by a re-initiation.
    Ok(MAX_REINITIATIONS)
}

/// Why Nacha's rules do not let `returned` (after `tries` re-initiations of
/// an original settled on `settled`) be re-initiated `today`.
pub(crate) fn allowed(
    returned: &TransactionRecord,
    settled: Option<NaiveDate>,
    tries: usize,
    today: NaiveDate,
) -> Result<(), String> {
    if returned.validation_of.is_some() {
        return Err("an account validation's entry is never re-initiated".into());
    }
    if returned.direction != Direction::Debit {
        return Err("only a debit may be re-initiated; this is a credit".into());
    }
    if let Some(next) = &returned.reinitiated_by {
        return Err(format!("it was already re-initiated as {next}"));
    }
    let code = match (returned.state, returned.return_code.as_deref()) {
        (State::Returned, Some(code)) => code,
        (state, _) => {
            return Err(format!(
                "only an entry returned R01 or R09 may be re-initiated; this one is {}",
                state.name()
            ))
        }
    };
    if !RETRYABLE_RETURNS.contains(&code) {
        return Err(format!(
            "an entry returned {code} may never be re-initiated (only R01 and R09: insufficient or uncollected funds)"
        ));
    }
    if tries >= MAX_REINITIATIONS {
        return Err(format!("an entry may be re-initiated at most {MAX_REINITIATIONS} times"));
    }
    if let Some(last) = settled.and_then(|s| s.checked_add_days(Days::new(WINDOW_DAYS))) {
        if today > last {
            return Err(format!(
                "more than {WINDOW_DAYS} days after the original's settlement date ({})",
                settled.map(|d| d.to_string()).unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// 409, message 10, problem `reinitiation_not_allowed` saying which rule.
fn refused(why: String) -> Stop {
    let message = format!("this transaction cannot be re-initiated: {why}");
    Refusal::problem_with_status(
        AchError::FailedToAccept,
        409,
        "transaction_id",
        ProblemCode::ReinitiationNotAllowed,
        message,
    )
    .into()
}
