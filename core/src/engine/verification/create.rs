//! Starting a validation: an outside one is recorded as it is; a prenote
//! (a zero-dollar WEB debit) or micro-entries (two PPD credits of 0.01 to
//! 0.99 chosen at random and a debit of their sum, described `ACCTVERIFY`)
//! are entries like any other, for the next cut-off, in the feeds under
//! their own ids, counted against no limit.

use std::sync::Arc;

use super::record::{self, ValidationRecord};
use crate::engine::lifecycle::pending::{insert, pending};
use crate::engine::rows::records::{MerchantRecord, MerchantStatus, SealedAccount};
use crate::engine::tenancy::{customers, tenant_lookup};
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::ids::{self, CustomerId, IdKind, MerchantId};
use crate::model::{
    CustomerRef, Direction, EntryClass, NewTransaction, NewValidation, OutsideValidation, ValidationMethod,
    ValidationStatus,
};
use crate::money::Money;
use crate::storage::StorageError;
use crate::validation::ProblemCode;
use crate::AchError;

/// What the entries of a validation say they are (the transaction's
/// `description`; their batch is described `ACCTVERIFY` for micro-entries).
const ENTRY_DESCRIPTION: &str = "Account validation";

/// Partner: validate the account of its customer `customer_id` as `request`
/// says.
pub(crate) fn create(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    customer_id: &str,
    request: &NewValidation,
) -> Result<Outcome, Stop> {
    let merchant = tenant_lookup::merchant_of(cx, partner_id, request.merchant_id.as_str())?;
    let account = customers::resolve(cx, partner_id, &merchant.id, customer_id)?;
    let mut v = new_record(cx, partner_id, &merchant.id, Some(customer_id), request.method, &account);
    match request.method {
        ValidationMethod::Outside => {
            v.provider = request.provider.clone();
            v.reference = request.reference.clone();
        }
        ValidationMethod::Prenote => {
            may_send(cx, &merchant)?;
            let prenote = entry(
                cx,
                &v,
                &merchant,
                &account,
                (EntryClass::WEB, Direction::Debit),
                Money::from_cents(0),
            )?;
            v.transactions.push(prenote);
        }
        ValidationMethod::MicroEntries => {
            may_send(cx, &merchant)?;
            let [a, b] = [micro_amount(), micro_amount()];
            let credit = (EntryClass::PPD, Direction::Credit);
            for amount in [a, b] {
                let id = entry(cx, &v, &merchant, &account, credit, amount)?;
                v.transactions.push(id);
            }
            let sum = a.saturating_add(b);
            let debit = entry(cx, &v, &merchant, &account, (EntryClass::PPD, Direction::Debit), sum)?;
            v.transactions.push(debit);
            v.amounts_print = Some(amounts_print(cx, &v.id, [a, b]));
        }
    }
    created(cx, &v)
}

/// Operator: record an outside validation of the account of customer
/// `customer_id` (any partner's: the validation is that partner's).
pub(crate) fn record(
    cx: &mut WriteContext<'_, '_>,
    customer_id: &str,
    request: &NewValidation,
) -> Result<Outcome, Stop> {
    if request.method != ValidationMethod::Outside {
        let why =
            "the operator records outside validations; a prenote or micro-entries are the partner's to start";
        return Err(
            Refusal::problem(AchError::FailedToAccept, "method", ProblemCode::InvalidValue, why).into()
        );
    }
    let Some(partner_id) = customers::partner_of(cx, customer_id)? else {
        return Err(Refusal::not_found(
            "customer_token",
            format!("no customer '{}'", crate::echo::echo(customer_id)),
        )
        .into());
    };
    let merchant = tenant_lookup::merchant_of(cx, &partner_id, request.merchant_id.as_str())?;
    let account = customers::resolve(cx, &partner_id, &merchant.id, customer_id)?;
    let mut v =
        new_record(cx, &partner_id, &merchant.id, Some(customer_id), ValidationMethod::Outside, &account);
    v.recorded_by = "operator".to_owned();
    v.provider = request.provider.clone();
    v.reference = request.reference.clone();
    created(cx, &v)
}

/// Record the outside validation a transaction carries for `account` (for
/// the merchant `merchant_id`): the validation's id.
pub(crate) fn outside(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    merchant_id: &str,
    customer_id: Option<&str>,
    account: &SealedAccount,
    given: &OutsideValidation,
) -> Result<String, StorageError> {
    let mut v = new_record(cx, partner_id, merchant_id, customer_id, ValidationMethod::Outside, account);
    v.provider = Some(given.provider.clone());
    v.reference = Some(given.reference.clone());
    keep(cx, &v)?;
    Ok(v.id)
}

/// Store a new validation, in force for its account unless one usable
/// today already is.
fn keep(cx: &mut WriteContext<'_, '_>, v: &ValidationRecord) -> Result<(), StorageError> {
    record::save(cx, v)?;
    index_if_better(cx, v)
}

/// Store a new validation and answer it as its partner sees it.
fn created(cx: &mut WriteContext<'_, '_>, v: &ValidationRecord) -> Result<Outcome, Stop> {
    keep(cx, v)?;
    Ok(Outcome::ValidationCreated { validation: record::view_now(cx, v)? })
}

fn new_record(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    merchant_id: &str,
    customer_id: Option<&str>,
    method: ValidationMethod,
    account: &SealedAccount,
) -> ValidationRecord {
    ValidationRecord {
        id: ids::generate(IdKind::Validation),
        partner_id: partner_id.to_owned(),
        merchant_id: merchant_id.to_owned(),
        customer_id: customer_id.map(str::to_owned),
        method,
        fingerprint: account.fingerprint.clone(),
        created_at: cx.now,
        recorded_by: "partner".to_owned(),
        provider: None,
        reference: None,
        transactions: Vec::new(),
        amounts_print: None,
        tries: 0,
        confirmed_at: None,
        ended_by: None,
    }
}

/// Make `v` the validation its account's index names, unless the one it
/// names already lets the account take WEB debits today (a new prenote never
/// undoes a validation in force; a prenote still short of its `usable_from`
/// gives way to one usable now).
pub(crate) fn index_if_better(
    cx: &mut WriteContext<'_, '_>,
    v: &ValidationRecord,
) -> Result<(), StorageError> {
    let key = record::account_key(&v.partner_id, &v.fingerprint);
    if let Some(current) = cx.write.get::<String>(crate::storage::Table::ValidatedAccounts, &key)? {
        let stored = cx.write.get::<ValidationRecord>(
            crate::storage::Table::Validations,
            &record::key(&v.partner_id, &current),
        )?;
        if let Some(stored) = stored {
            let view = record::view_now(cx, &stored)?;
            let today = crate::calendar::eastern_date(cx.now);
            let usable =
                view.status == ValidationStatus::Validated && view.usable_from.is_none_or(|d| d <= today);
            if current != v.id && usable {
                return Ok(());
            }
        }
    }
    record::index(cx, v)
}

/// Entries are sent only for an approved merchant that is not suspended.
fn may_send(cx: &WriteContext<'_, '_>, merchant: &Arc<MerchantRecord>) -> Result<(), Stop> {
    let why = if merchant.status != MerchantStatus::Approved {
        "the merchant is still in underwriting"
    } else if crate::engine::credentials::is_suspended(cx.write, &merchant.id)? {
        "the merchant is suspended"
    } else {
        return Ok(());
    };
    let e = AchError::NotAccepted { transaction_type: "account validation".to_owned() };
    Err(Refusal::problem(e, "merchant_id", ProblemCode::InvalidValue, why).into())
}

/// One entry of validation `v`, stored Pending for the next cut-off: its id.
fn entry(
    cx: &mut WriteContext<'_, '_>,
    v: &ValidationRecord,
    merchant: &MerchantRecord,
    account: &SealedAccount,
    (class, direction): (EntryClass, Direction),
    amount: Money,
) -> Result<String, Stop> {
    let id = cx.new_transaction_id(&v.partner_id)?;
    let customer = v.customer_id.as_deref().and_then(CustomerId::parse);
    let Some(token) = customer else { return Err(Refusal::refused(AchError::SystemUnable).into()) };
    let t = NewTransaction {
        merchant_id: MerchantId::parse(&merchant.id)
            .ok_or_else(|| Refusal::refused(AchError::SystemUnable))?,
        amount,
        description: ENTRY_DESCRIPTION.to_owned(),
        direction,
        standard_entry_class: class,
        check_number: None,
        check_image_front: None,
        check_image_back: None,
        state: None,
        customer: CustomerRef::Token { id: token },
        purpose: None,
        account_validation: None,
        same_day: false,
    };
    let mut record =
        pending(cx, &v.partner_id, merchant, &t, id.clone(), account.clone(), v.customer_id.clone())?;
    record.validation_of = Some(v.id.clone());
    insert(cx, &record)?;
    Ok(id)
}

/// A micro-entry credit: 0.01 to 0.99, uniformly at random.
fn micro_amount() -> Money {
    loop {
        let mut byte = [0u8];
        ids::random_bytes(&mut byte);
        // 198 = 2 × 99: no amount is favoured.
        if byte[0] < 198 {
            return Money::from_cents(i64::from(byte[0] % 99) + 1);
        }
    }
}

/// The keyed fingerprint of validation `id`'s two credits, in either order.
pub(crate) fn amounts_print(cx: &WriteContext<'_, '_>, id: &str, amounts: [Money; 2]) -> String {
    let (low, high) = (amounts[0].min(amounts[1]), amounts[0].max(amounts[1]));
    let digest = cx.engine.fingerprints.digest(&[
        b"micro-entries",
        id.as_bytes(),
        &low.cents().to_be_bytes(),
        &high.cents().to_be_bytes(),
    ]);
    crate::secrets::hex::encode(&digest)
}
