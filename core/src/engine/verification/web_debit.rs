//! The rule at a WEB debit's creation, and what ends a validation: a return
//! that shows the account closed or unusable, or a notification of change.

use super::create;
use super::record::{self, ValidationRecord};
use crate::engine::rows::records::{MerchantRecord, SealedAccount, TransactionRecord};
use crate::engine::tenancy::merchant_settings::WebDebitValidation;
use crate::engine::{Refusal, Stop, WriteContext};
use crate::model::{Direction, EntryClass, NewTransaction, ValidationStatus};
use crate::storage::{StorageError, Table};
use crate::validation::ProblemCode;
use crate::AchError;

/// Returns after which an account's validation no longer holds: the account
/// is closed (R02), not found (R03), its number invalid (R04), or it takes no
/// such entries (R20).
pub const ENDING_RETURNS: [&str; 4] = ["R02", "R03", "R04", "R20"];

/// What validated the account of the new transaction `t` (to `account`, of
/// the customer `customer_id` if named), when it is a WEB debit: a
/// validation's id, or `merchant`. Refused (422, message 10, `customer`,
/// `account_not_validated`) when nothing does. An outside validation the
/// transaction carries is recorded whatever its class.
pub(crate) fn validated_by(
    cx: &mut WriteContext<'_, '_>,
    merchant: &MerchantRecord,
    t: &NewTransaction,
    account: &SealedAccount,
    customer_id: Option<&str>,
) -> Result<Option<String>, Stop> {
    let partner_id = merchant.partner_id.as_str();
    let carried = match &t.account_validation {
        Some(given) => Some(create::outside(cx, partner_id, &merchant.id, customer_id, account, given)?),
        None => None,
    };
    if (t.standard_entry_class, t.direction) != (EntryClass::WEB, Direction::Debit) {
        return Ok(None);
    }
    if merchant.web_debit_validation == WebDebitValidation::Merchant {
        return Ok(Some("merchant".to_owned()));
    }
    if carried.is_some() {
        return Ok(carried);
    }
    let why = match in_force(cx, partner_id, &account.fingerprint)? {
        None => "no validation of this account is on record for the partner".to_owned(),
        Some((v, view)) => match (view.status, view.usable_from) {
            (ValidationStatus::Validated, None) => return Ok(Some(v.id)),
            (ValidationStatus::Validated, Some(from)) if crate::calendar::eastern_date(cx.now) >= from => {
                return Ok(Some(v.id))
            }
            (ValidationStatus::Validated | ValidationStatus::Pending, Some(from)) => {
                format!("its prenote {} lets it take WEB debits from {from}", v.id)
            }
            (status, _) => format!("its validation {} is {}", v.id, status.as_str()),
        },
    };
    let message = format!(
        "a WEB debit needs an account validated for the partner (Nacha Rules 2.5.17.4): {why}; validate it \
         with POST /customers/{{customer_token}}/validations or send account_validation"
    );
    Err(Refusal::problem(AchError::FailedToAccept, "customer", ProblemCode::AccountNotValidated, message)
        .into())
}

/// The validation the index names for the partner's account, with its view now.
fn in_force(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    fingerprint: &str,
) -> Result<Option<(ValidationRecord, crate::model::ValidationView)>, StorageError> {
    let Some(id) =
        cx.write.get::<String>(Table::ValidatedAccounts, &record::account_key(partner_id, fingerprint))?
    else {
        return Ok(None);
    };
    let Some(v) = cx.write.get::<ValidationRecord>(Table::Validations, &record::key(partner_id, &id))? else {
        return Ok(None);
    };
    let view = record::view_now(cx, &v)?;
    Ok(Some((v, view)))
}

/// After `t` was returned with `code`: a return that shows its account closed
/// or unusable ends the account's validation.
pub(crate) fn after_return(cx: &mut WriteContext<'_, '_>, t: &TransactionRecord) -> Result<(), StorageError> {
    let Some(code) = t.return_code.as_deref().filter(|c| ENDING_RETURNS.contains(c)) else { return Ok(()) };
    end(cx, &t.partner_id, &t.account.fingerprint, code)
}

/// After a notification of change `code` on `t`: the validation of its
/// account ends for the old data (a validation's own entry fails with it);
/// when the customer took the corrected data, the validation carries to it
/// (`corrected`: the corrected account's fingerprint).
pub(crate) fn after_notice(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    code: &str,
    corrected: Option<&str>,
) -> Result<(), StorageError> {
    if let Some(own) = &t.validation_of {
        if let Some(mut v) =
            cx.write.get::<ValidationRecord>(Table::Validations, &record::key(&t.partner_id, own))?
        {
            v.ended_by = Some(code.to_owned());
            record::save(cx, &v)?;
        }
        return Ok(());
    }
    let Some(fingerprint) = corrected else {
        return end(cx, &t.partner_id, &t.account.fingerprint, code);
    };
    let key = record::account_key(&t.partner_id, &t.account.fingerprint);
    let Some(id) = cx.write.get::<String>(Table::ValidatedAccounts, &key)? else { return Ok(()) };
    cx.write.remove(Table::ValidatedAccounts, &key)?;
    if let Some(mut v) =
        cx.write.get::<ValidationRecord>(Table::Validations, &record::key(&t.partner_id, &id))?
    {
        v.fingerprint = fingerprint.to_owned();
        record::save(cx, &v)?;
        record::index(cx, &v)?;
    }
    Ok(())
}

/// End the validation in force for the partner's account `fingerprint`
/// (the index still names it, so a refused WEB debit says why).
fn end(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    fingerprint: &str,
    code: &str,
) -> Result<(), StorageError> {
    let key = record::account_key(partner_id, fingerprint);
    let Some(id) = cx.write.get::<String>(Table::ValidatedAccounts, &key)? else { return Ok(()) };
    if let Some(mut v) =
        cx.write.get::<ValidationRecord>(Table::Validations, &record::key(partner_id, &id))?
    {
        v.ended_by = Some(code.to_owned());
        record::save(cx, &v)?;
    }
    Ok(())
}
