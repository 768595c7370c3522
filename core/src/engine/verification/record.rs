//! A validation as stored (`Table::Validations`), the index of each partner's
//! validated accounts (`Table::ValidatedAccounts`), and its status at a given
//! day, worked out from what it stores and from its entries' states.

use chrono::{DateTime, Days, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::calendar::add_banking_days;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::{Refusal, Stop, WriteContext};
use crate::lifecycle::State;
use crate::model::{ValidationMethod, ValidationStatus, ValidationView};
use crate::storage::{StorageError, Table};

/// Wrong confirmations of micro-entries that lock a validation.
pub const MAX_TRIES: u8 = 3;
/// Days micro-entries may be confirmed in, from their creation.
pub const CONFIRM_DAYS: u64 = 30;
/// Banking days after a prenote's settlement date by whose opening it has
/// passed (no return or notification of change came).
pub const PRENOTE_PASSED_AFTER: u32 = 2;
/// Banking days after a prenote's settlement date from which its account
/// takes live entries.
pub const PRENOTE_USABLE_AFTER: u32 = 3;

/// A stored validation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ValidationRecord {
    pub id: String,
    pub partner_id: String,
    pub merchant_id: String,
    pub customer_id: Option<String>,
    pub method: ValidationMethod,
    /// The account's keyed fingerprint.
    pub fingerprint: String,
    pub created_at: DateTime<Utc>,
    /// Who recorded it: `partner` or `operator`.
    pub recorded_by: String,
    pub provider: Option<String>,
    pub reference: Option<String>,
    /// Its entries: a prenote; or the two credits, then the debit.
    pub transactions: Vec<String>,
    /// The micro-entry credits' keyed fingerprint (never their amounts).
    pub amounts_print: Option<String>,
    pub tries: u8,
    pub confirmed_at: Option<DateTime<Utc>>,
    /// Why it no longer holds: the code of the return or notification of
    /// change that ended it.
    pub ended_by: Option<String>,
}

/// `(partner, 0, id)`: a validation's key.
pub(crate) fn key(partner_id: &str, id: &str) -> Vec<u8> {
    crate::storage::row_keys::idempotency(partner_id, id)
}

/// `(partner, 0, fingerprint)`: the key of a validated account.
pub(crate) fn account_key(partner_id: &str, fingerprint: &str) -> Vec<u8> {
    crate::storage::row_keys::idempotency(partner_id, fingerprint)
}

/// The partner's validation `id` (another partner's answers as unknown).
pub(crate) fn load(cx: &WriteContext<'_, '_>, partner_id: &str, id: &str) -> Result<ValidationRecord, Stop> {
    match cx.write.get::<ValidationRecord>(Table::Validations, &key(partner_id, id))? {
        Some(v) => Ok(v),
        None => Err(unknown(id).into()),
    }
}

/// The refusal of a validation id the partner does not have.
pub(crate) fn unknown(id: &str) -> Refusal {
    let message = format!("no validation '{}'", crate::echo::echo(id));
    Refusal::not_found("validation_id", message)
}

/// Store `v`; when it validates its account, the account's index names it.
pub(crate) fn save(cx: &mut WriteContext<'_, '_>, v: &ValidationRecord) -> Result<(), StorageError> {
    cx.write.put(Table::Validations, &key(&v.partner_id, &v.id), v)
}

/// Make `v` the validation in force for its account.
pub(crate) fn index(cx: &mut WriteContext<'_, '_>, v: &ValidationRecord) -> Result<(), StorageError> {
    cx.write.put(Table::ValidatedAccounts, &account_key(&v.partner_id, &v.fingerprint), &v.id)
}

/// `v` as its partner sees it on `today`, its entries read by `entry`.
pub(crate) fn view(
    v: &ValidationRecord,
    today: NaiveDate,
    entry: &mut dyn FnMut(&str) -> Result<Option<TransactionRecord>, StorageError>,
) -> Result<ValidationView, StorageError> {
    let mut entries = Vec::with_capacity(v.transactions.len());
    for id in &v.transactions {
        entries.extend(entry(id)?);
    }
    let (status, usable_from, code) = status(v, &entries, today);
    Ok(ValidationView {
        id: v.id.clone(),
        customer_id: v.customer_id.clone(),
        merchant_id: v.merchant_id.clone(),
        method: v.method,
        status,
        usable_from,
        code,
        transaction_ids: v.transactions.clone(),
    })
}

/// The status of `v` on `today` given its `entries`: with the day a
/// prenote's account takes entries from, and the code that failed it.
pub(crate) fn status(
    v: &ValidationRecord,
    entries: &[TransactionRecord],
    today: NaiveDate,
) -> (ValidationStatus, Option<NaiveDate>, Option<String>) {
    use ValidationStatus::*;
    if let Some(code) = &v.ended_by {
        return (Failed, None, Some(code.clone()));
    }
    if let Some(returned) = entries.iter().find(|t| matches!(t.state, State::Returned | State::Voided)) {
        return (Failed, None, returned.return_code.clone());
    }
    match v.method {
        ValidationMethod::Outside => (Validated, None, None),
        ValidationMethod::Prenote => match entries.first().and_then(|t| t.settlement_date) {
            Some(settled) => {
                let usable = add_banking_days(settled, PRENOTE_USABLE_AFTER);
                let passed = today >= add_banking_days(settled, PRENOTE_PASSED_AFTER);
                (if passed { Validated } else { Pending }, Some(usable), None)
            }
            None => (Pending, None, None),
        },
        ValidationMethod::MicroEntries => {
            let deadline =
                crate::calendar::eastern_date(v.created_at).checked_add_days(Days::new(CONFIRM_DAYS));
            if v.confirmed_at.is_some() {
                (Validated, None, None)
            } else if v.tries >= MAX_TRIES {
                (Locked, None, None)
            } else if deadline.is_some_and(|last| today > last) {
                (Expired, None, None)
            } else {
                (Pending, None, None)
            }
        }
    }
}

/// `v`'s view inside a write transaction, now.
pub(crate) fn view_now(
    cx: &WriteContext<'_, '_>,
    v: &ValidationRecord,
) -> Result<ValidationView, StorageError> {
    let today = crate::calendar::eastern_date(cx.now);
    view(v, today, &mut |id| cx.write.get::<TransactionRecord>(Table::Transactions, id.as_bytes()))
}
