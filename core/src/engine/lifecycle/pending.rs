//! A new Pending transaction: its record, for the next cut-off, and its
//! storing: indexed for that cut-off, or, if screening holds it, kept out of
//! the index until it is released.

use crate::calendar;
use crate::engine::feeds::changes;
use crate::engine::risk::window::Print;
use crate::engine::risk::{reviews, screening};
use crate::engine::rows::listings;
use crate::engine::rows::records::{MerchantRecord, SealedAccount, TransactionRecord};
use crate::engine::settlement::originator;
use crate::engine::tenancy::sealed_text;
use crate::engine::{Stop, WriteContext};
use crate::lifecycle::State;
use crate::model::NewTransaction;
use crate::storage::{row_keys, StorageError, Table};
use chrono::{DateTime, Utc};

/// The new transaction's record: A Pending, for the next cut-off.
pub(crate) fn pending(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    merchant: &MerchantRecord,
    t: &NewTransaction,
    id: String,
    account: SealedAccount,
    customer_id: Option<String>,
) -> Result<TransactionRecord, StorageError> {
    let cutoff_at = cutoff_for(cx, t.same_day)?;
    let description_sealed =
        sealed_text::seal(&cx.engine.cipher, sealed_text::DESCRIPTION, &id, &t.description);
    Ok(TransactionRecord {
        id,
        partner_id: partner_id.to_owned(),
        merchant_id: merchant.id.clone(),
        amount: t.amount,
        direction: t.direction,
        class: t.standard_entry_class,
        description_sealed,
        check_number: t.check_number.clone(),
        terminal_state: t.state.clone(),
        customer_id,
        account,
        has_images: t.check_image_front.is_some(),
        purpose: t.purpose,
        reinitiation_of: None,
        validation_of: None,
        validated_by: None,
        state: State::Pending,
        created_at: cx.now,
        cutoff_at,
        origination_date: None,
        effective_date: None,
        settlement_date: None,
        settles_at: None,
        return_date: None,
        return_code: None,
        return_reason: None,
        reversal_of: None,
        reversed_by: None,
        reinitiated_by: None,
    })
}

/// The cut-off an entry made now waits for: the next same-day cut-off (the
/// originator's, else the defaults) for a Same Day ACH entry, else the next
/// 18:00 one.
pub(crate) fn cutoff_for(cx: &WriteContext<'_, '_>, same_day: bool) -> Result<DateTime<Utc>, StorageError> {
    if same_day {
        let cutoffs = originator::same_day_cutoffs(cx)?;
        if let Some((_, at)) = calendar::next_same_day_cutoff_after(cx.now, &cutoffs) {
            return Ok(at);
        }
    }
    Ok(calendar::next_cutoff_after(cx.now).1)
}

/// Store a new Pending transaction, index it for its cut-off, report it.
pub(crate) fn insert(cx: &mut WriteContext<'_, '_>, record: &TransactionRecord) -> Result<(), Stop> {
    cx.write.put(Table::Transactions, record.id.as_bytes(), record)?;
    listings::add_transaction(cx, record);
    index_pending(cx, record)?;
    changes::record_change(cx, record, cx.now)?;
    Ok(())
}

/// Store a new Pending entry of `merchant` screened by the risk rules: one
/// that trips none is [`insert`]ed; one that trips any is stored and
/// reported but held for review, outside the pending index. `account_print`:
/// the entry's account print, when its duplicate prints were already made.
pub(crate) fn insert_screened(
    cx: &mut WriteContext<'_, '_>,
    merchant: &MerchantRecord,
    record: &TransactionRecord,
    account_print: Option<Print>,
) -> Result<(), Stop> {
    let (on, tripped) = screening::screen(cx, merchant, record, account_print)?;
    cx.write.put(Table::Transactions, record.id.as_bytes(), record)?;
    listings::add_transaction(cx, record);
    if tripped.is_empty() {
        index_pending(cx, record)?;
    }
    changes::record_change(cx, record, cx.now)?;
    reviews::after_screening(cx, record, &on, tripped)?;
    Ok(())
}

/// Index a Pending transaction for its cut-off (in a batch, in its packed row).
pub(crate) fn index_pending(cx: &mut WriteContext<'_, '_>, record: &TransactionRecord) -> Result<(), Stop> {
    match &mut cx.pending_rows {
        Some(rows) => rows.add(record.cutoff_at, &record.id)?,
        None => cx.write.put_raw(Table::Pending, &row_keys::at(record.cutoff_at, &record.id), &[])?,
    }
    Ok(())
}
