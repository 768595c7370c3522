//! Transactions: create (A Pending), void, reverse, and returns.

use crate::engine::lifecycle::images::{self, CheckSide};
use std::sync::Arc;

use crate::echo::echo;
use crate::engine::feeds::changes;
use crate::engine::lifecycle::pending::{insert_screened, pending};
use crate::engine::risk::duplicates;
use crate::engine::risk::return_rates;
use crate::engine::risk::reviews;
use crate::engine::risk::usage;
use crate::engine::rows::records::{MerchantRecord, MerchantStatus, SealedAccount, TransactionRecord};
use crate::engine::settlement::schedule;
use crate::engine::tenancy::customers;
use crate::engine::tenancy::sealed_text;
use crate::engine::tenancy::tenant_lookup;
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::lifecycle::{self, State};
use crate::limits::{self, Candidate};
use crate::model::{CustomerRef, NewTransaction};
use crate::storage::{row_keys, Table};
use crate::validation::ProblemCode;
use crate::{calendar, AchError};

/// Partner: accept a validated transaction as A Pending, waiting for the next
/// banking day's 6 PM ET cut-off. `fingerprint`: an inline account's, from
/// preparation.
pub(crate) fn create(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    t: &NewTransaction,
    fingerprint: Option<String>,
) -> Result<Outcome, Stop> {
    let merchant = merchant_for(cx, partner_id, t)?;
    let id = cx.new_transaction_id(partner_id)?;
    let (account, customer_id) = receiver(cx, partner_id, &merchant, t, &id, fingerprint)?;
    let validated_by = crate::engine::verification::web_debit::validated_by(
        cx,
        &merchant,
        t,
        &account,
        customer_id.as_deref(),
    )?;
    let mut record = pending(cx, partner_id, &merchant, t, id, account, customer_id)?;
    record.validated_by = validated_by;
    let prints = check_limits_and_duplicates(cx, &merchant, &record)?;
    // Decided: from here on only writes.
    insert_screened(cx, &merchant, &record, Some(prints.account()))?;
    usage::apply(cx, &record, true)?;
    duplicates::record(cx, &record, &prints)?;
    for (side, image) in CheckSide::BOTH.into_iter().zip([&t.check_image_front, &t.check_image_back]) {
        if let Some(image) = image {
            images::store(cx, &record.id, side, image)?;
        }
    }
    Ok(Outcome::TransactionCreated { transaction_id: record.id })
}

/// The partner's merchant named by the transaction, if it may originate it:
/// approved, not suspended, set up for the entry class (message 3 otherwise).
fn merchant_for(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    t: &NewTransaction,
) -> Result<Arc<MerchantRecord>, Stop> {
    let class = t.standard_entry_class;
    let merchant = tenant_lookup::merchant_of(cx, partner_id, t.merchant_id.as_str())?;
    let refuse = |detail: String| -> Stop {
        let e = AchError::NotAccepted { transaction_type: class.as_str().to_owned() };
        Refusal::problem(e, "standard_entry_class", ProblemCode::InvalidValue, detail).into()
    };
    if merchant.status != MerchantStatus::Approved {
        return Err(refuse("the merchant is still in underwriting".into()));
    }
    if crate::engine::credentials::is_suspended(cx.write, &merchant.id)? {
        return Err(refuse("the merchant is suspended".into()));
    }
    if !merchant.classes.contains(&class) {
        return Err(refuse(format!("the merchant is not set up for {} entries", class.as_str())));
    }
    Ok(merchant)
}

/// The receiver's account, sealed to the new transaction `id`: a stored
/// customer's, or the inline account (with its fingerprint from preparation,
/// or made now); and the customer's token, if one was named.
fn receiver(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    merchant: &MerchantRecord,
    t: &NewTransaction,
    id: &str,
    fingerprint: Option<String>,
) -> Result<(SealedAccount, Option<String>), Stop> {
    Ok(match &t.customer {
        CustomerRef::Token { id: token } => {
            (customers::resolve(cx, partner_id, merchant.id.as_str(), token.as_str())?, Some(token.0.clone()))
        }
        CustomerRef::Inline(account) => {
            let fingerprint = fingerprint
                .unwrap_or_else(|| customers::account_fingerprint(&cx.engine.fingerprints, account));
            (customers::seal(cx, account, id, fingerprint), None)
        }
    })
}

/// The merchant's limits and duplicates, in the documented order: per
/// transaction, then duplicates, then the history-wide windows. Answers the
/// record's duplicate prints.
fn check_limits_and_duplicates(
    cx: &mut WriteContext<'_, '_>,
    merchant: &MerchantRecord,
    record: &TransactionRecord,
) -> Result<duplicates::Prints, Stop> {
    let candidate =
        Candidate { amount: record.amount, credit: record.direction == crate::model::Direction::Credit };
    limits::check_transaction(&merchant.limits, candidate).map_err(limit_refusal)?;
    let prints = duplicates::prints(&cx.engine.fingerprints, record);
    duplicates::check(cx, record, &prints, merchant.decline_duplicates)?;
    check_windows(cx, merchant, candidate)?;
    Ok(prints)
}

/// The merchant's and the partner's limits for a new debit made from another
/// transaction (a reversal, a re-initiation), which takes money from the
/// receiver like any debit. `true` when it counts toward them (store its
/// usage once it is inserted).
pub(super) fn check_debit_limits(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    record: &TransactionRecord,
) -> Result<bool, Stop> {
    let counted = usage::counts(record);
    if counted {
        let merchant = tenant_lookup::merchant_of(cx, partner_id, &record.merchant_id)?;
        let candidate = Candidate { amount: record.amount, credit: false };
        limits::check_transaction(&merchant.limits, candidate).map_err(limit_refusal)?;
        check_windows(cx, &merchant, candidate)?;
    }
    Ok(counted)
}

/// Refuse `candidate` where the usage of `merchant`, or of its partner, over
/// the day, the rolling period or the month has no room for it.
fn check_windows(
    cx: &mut WriteContext<'_, '_>,
    merchant: &MerchantRecord,
    candidate: Candidate,
) -> Result<(), Stop> {
    let partner = tenant_lookup::load_partner(cx, &merchant.partner_id)?;
    let windows = usage::windows(cx, merchant, &partner)?;
    limits::check_windows(&merchant.limits, &partner.limits, &windows, candidate).map_err(limit_refusal)
}

/// A limit's refusal with the field it concerns.
fn limit_refusal(e: AchError) -> Stop {
    let (field, code) = match e {
        AchError::NotAccepted { .. } => ("type", ProblemCode::DirectionNotAllowed),
        AchError::InvalidAmount { .. } => ("amount", ProblemCode::InvalidAmount),
        _ => ("amount", ProblemCode::OverLimit),
    };
    let message = match &e {
        AchError::InvalidAmount { .. } => format!("{e}: below this merchant's minimum amount"),
        _ => e.to_string(),
    };
    Refusal::problem(e, field, code, message).into()
}

/// Finish every cut-off and settlement already due, so that a transaction's
/// state is the one the clock says before it is voided, reversed or returned
/// (a request's own catch-up is bounded: see `schedule::CATCH_UP_BUDGET`).
pub(crate) fn current(cx: &mut WriteContext<'_, '_>) -> Result<(), Stop> {
    let now = cx.now;
    schedule::catch_up(cx, now, None)?;
    Ok(())
}

/// The partner's transaction (another partner's answers as unknown).
pub(crate) fn load(
    cx: &WriteContext<'_, '_>,
    partner_id: Option<&str>,
    id: &str,
) -> Result<TransactionRecord, Stop> {
    let record: Option<TransactionRecord> = cx.write.get(Table::Transactions, id.as_bytes())?;
    match record {
        Some(t) if partner_id.is_none_or(|p| p == t.partner_id) => Ok(t),
        _ => Err(Refusal::not_found("transaction_id", format!("no transaction '{}'", echo(id))).into()),
    }
}

/// Partner: void a Pending transaction; it never originates (its check images
/// are deleted). The feeds report it as status R with no return code and the
/// reason `Voided`.
pub(crate) fn void(cx: &mut WriteContext<'_, '_>, partner_id: &str, id: &str) -> Result<Outcome, Stop> {
    current(cx)?;
    let t = load(cx, Some(partner_id), id)?;
    lifecycle::can_void(t.state).map_err(Refusal::from)?;
    reviews::on_void(cx, &t)?;
    let transaction_id = t.id.clone();
    end_pending(cx, t, None)?;
    Ok(Outcome::TransactionVoided { transaction_id })
}

/// End the Pending transaction `t` before it originates: status R with no
/// return code and `reason` (`None`: `Voided`); out of its cut-off, its usage
/// and the duplicate window; its check images deleted.
pub(crate) fn end_pending(
    cx: &mut WriteContext<'_, '_>,
    mut t: TransactionRecord,
    reason: Option<&str>,
) -> Result<(), Stop> {
    debug_assert_eq!(t.state, State::Pending);
    t.state = State::Voided;
    t.return_reason = reason.map(str::to_owned);
    cx.write.remove(Table::Pending, &row_keys::at(t.cutoff_at, &t.id))?;
    usage::apply(cx, &t, false)?;
    duplicates::forget(cx, &t)?;
    images::drop_all(cx, &t)?;
    cx.write.put(Table::Transactions, t.id.as_bytes(), &t)?;
    changes::record_ending(cx, &t, cx.now, State::Pending)?;
    Ok(())
}

/// Partner: reverse a Settled transaction: a new transaction in the opposite
/// direction, with its own id, linked to the original.
pub(crate) fn reverse(cx: &mut WriteContext<'_, '_>, partner_id: &str, id: &str) -> Result<Outcome, Stop> {
    current(cx)?;
    let mut original = load(cx, Some(partner_id), id)?;
    let reversal = match &original.reversed_by {
        Some(rid) => Some(load(cx, Some(partner_id), rid)?),
        None => None,
    };
    let previous = reversal.as_ref().map(|r| (r.id.as_str(), r.state));
    lifecycle::can_reverse(original.state, original.reversal_of.is_some(), previous)
        .map_err(Refusal::from)?;
    let (cutoff_date, cutoff_at) = calendar::next_cutoff_after(cx.now);
    if let Some(settled) = original.settlement_date {
        lifecycle::can_reverse_by(original.direction, settled, cutoff_date).map_err(Refusal::from)?;
    }
    let rid = cx.new_transaction_id(partner_id)?;
    let mut description = format!("Reversal of {}", original.id);
    description.truncate(crate::validation::transaction::MAX_DESCRIPTION);
    let mut record = original.clone();
    record.id = rid.clone();
    record.direction = original.direction.opposite();
    record.description_sealed =
        sealed_text::seal(&cx.engine.cipher, sealed_text::DESCRIPTION, &rid, &description);
    record.check_number = None;
    record.has_images = false;
    record.reversal_of = Some(original.id.clone());
    record.purpose = None;
    record.reinitiation_of = None;
    record.validation_of = None;
    record.begin_pending(cx.now, cutoff_at);
    // A reversal debit takes money from the receiver like any debit: the
    // merchant's and the partner's limits apply, and it counts toward them.
    let counted = check_debit_limits(cx, partner_id, &record)?;
    let merchant = tenant_lookup::merchant_of(cx, partner_id, &record.merchant_id)?;
    original.reversed_by = Some(rid.clone());
    cx.write.put(Table::Transactions, original.id.as_bytes(), &original)?;
    insert_screened(cx, &merchant, &record, None)?;
    if counted {
        usage::apply(cx, &record, true)?;
    }
    Ok(Outcome::TransactionReversed { transaction_id: original.id, reversal_id: rid })
}

/// Operator: the receiving bank returned an Originated or Settled transaction.
pub(crate) fn record_return(
    cx: &mut WriteContext<'_, '_>,
    id: &str,
    code: &str,
    date: Option<chrono::NaiveDate>,
) -> Result<Outcome, Stop> {
    current(cx)?;
    let mut t = load(cx, None, id)?;
    lifecycle::can_return(t.state).map_err(Refusal::from)?;
    let today = calendar::eastern_date(cx.now);
    let originated = t.origination_date.unwrap_or(today);
    let (code, date) = lifecycle::validate_return(code, date, today, originated).map_err(Refusal::from)?;
    let before = t.state;
    t.state = State::Returned;
    t.return_code = Some(code.code().to_owned());
    t.return_reason = Some(code.reason().to_owned());
    t.return_date = Some(date);
    cx.write.put(Table::Transactions, t.id.as_bytes(), &t)?;
    changes::record_ending(cx, &t, cx.now, before)?;
    crate::engine::verification::web_debit::after_return(cx, &t)?;
    reviews::on_return(cx, &t, None)?;
    let crossings = return_rates::crossings(cx, &[&t])?;
    Ok(Outcome::ReturnRecorded { transaction_id: t.id, crossings })
}
