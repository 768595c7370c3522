//! Operations prepared (their storage-free work done) and applied inside the
//! write transaction, once the caller is checked.

use chrono::{DateTime, NaiveDate, Utc};

use super::operation::{Caller, Operation};
use super::outcome::Outcome;
use super::MerchantSettings;
use super::{credentials, customers, idempotency, tenants, transactions, Applied, Cx, Engine, Fail, Failure};
use crate::calendar;
use crate::limits::Limits;
use crate::model::{BankAccount, CustomerRef, MerchantApplication, NewCustomer, NewTransaction};
use crate::routing::RoutingDirectory;
use crate::validation::{self, Context, FieldError, ProblemCode, Report};
use crate::AchError;

/// An operation with its storage-free work (validation, parsing) done. Creates
/// carry the account's keyed fingerprint (a stored customer's comes from storage:
/// `None`), an idempotent operation its request's keyed fingerprint (hex).
pub(crate) enum Prepared {
    CreatePartner { name: String },
    SetPartnerLimits { partner_id: String, limits: Limits },
    SubmitMerchant { partner_id: String, application: Result<Box<MerchantApplication>, Report> },
    ApproveMerchant { merchant_id: String, limits: Limits },
    SetMerchantLimits { merchant_id: String, limits: Limits },
    CreateCustomer { partner_id: String, customer: Result<(NewCustomer, String), Report> },
    DeleteCustomer { partner_id: String, customer_id: String },
    CreateTransaction { partner_id: String, transaction: Result<(NewTransaction, Option<String>), Report> },
    VoidTransaction { partner_id: String, transaction_id: String },
    ReverseTransaction { partner_id: String, transaction_id: String },
    RecordReturn { transaction_id: String, return_code: String, return_date: Option<NaiveDate> },
    LoadDirectory { directory: Result<(RoutingDirectory, String), String> },
    SetMerchantSettings { merchant_id: String, settings: Result<MerchantSettings, Vec<FieldError>> },
    SetOriginator { originator: Result<crate::nacha::Originator, Vec<validation::FieldError>> },
    IngestReturnFile { entries: Result<Vec<crate::nacha::Inbound>, Vec<validation::FieldError>> },
    SetClock { now: DateTime<Utc> },
    RotateKeys { holder: super::KeyHolder, grace_seconds: u32 },
    RevokeKeys { holder: super::KeyHolder },
    SetSuspended { holder: super::KeyHolder, suspended: bool },
    Idempotent { key: Result<String, Failure>, scope: Option<String>, request: String, inner: Box<Prepared> },
}

/// Do the work that needs no storage: validate bodies, parse a directory, the
/// keyed fingerprints of an account and of an idempotent request. Depends on
/// `now` only through its Eastern date (see `prepare.rs`).
pub(crate) fn prepare(
    op: Operation,
    engine: &Engine,
    now: DateTime<Utc>,
    directory: &RoutingDirectory,
) -> Prepared {
    if let Some((key, operation)) = idempotency::key_of(&op) {
        let request = idempotency::request_print(engine, &idempotency::request_bytes(&operation));
        let scope = idempotency::scope(&operation);
        let inner = Box::new(prepare_plain(operation, engine, now, directory));
        return Prepared::Idempotent { key, scope, request, inner };
    }
    prepare_plain(op, engine, now, directory)
}

/// [`prepare`] without looking for an idempotency key.
fn prepare_plain(
    op: Operation,
    engine: &Engine,
    now: DateTime<Utc>,
    directory: &RoutingDirectory,
) -> Prepared {
    let ctx = Context { today: calendar::eastern_date(now), directory };
    let print = |account: &BankAccount| customers::account_fingerprint(&engine.fingerprints, account);
    match op {
        Operation::CreatePartner { name } => Prepared::CreatePartner { name },
        Operation::SetPartnerLimits { partner_id, limits } => {
            Prepared::SetPartnerLimits { partner_id, limits }
        }
        Operation::SubmitMerchant { partner_id, body } => Prepared::SubmitMerchant {
            partner_id,
            application: validation::merchant::validate_bytes(&body, &ctx).map(Box::new),
        },
        Operation::ApproveMerchant { merchant_id, limits } => {
            Prepared::ApproveMerchant { merchant_id, limits }
        }
        Operation::SetMerchantLimits { merchant_id, limits } => {
            Prepared::SetMerchantLimits { merchant_id, limits }
        }
        Operation::CreateCustomer { partner_id, body } => Prepared::CreateCustomer {
            partner_id,
            customer: validation::customer::validate_bytes(&body, &ctx).map(|c| {
                let fingerprint = print(&c.account);
                (c, fingerprint)
            }),
        },
        Operation::DeleteCustomer { partner_id, customer_id } => {
            Prepared::DeleteCustomer { partner_id, customer_id }
        }
        Operation::CreateTransaction { partner_id, body } => Prepared::CreateTransaction {
            partner_id,
            transaction: validation::transaction::validate_bytes(&body, &ctx).map(|t| {
                let fingerprint = match &t.customer {
                    CustomerRef::Inline(account) => Some(print(account)),
                    CustomerRef::Token { .. } => None,
                };
                (t, fingerprint)
            }),
        },
        Operation::VoidTransaction { partner_id, transaction_id } => {
            Prepared::VoidTransaction { partner_id, transaction_id }
        }
        Operation::ReverseTransaction { partner_id, transaction_id } => {
            Prepared::ReverseTransaction { partner_id, transaction_id }
        }
        Operation::RecordReturn { transaction_id, return_code, return_date } => {
            Prepared::RecordReturn { transaction_id, return_code, return_date }
        }
        Operation::LoadDirectory { text } => Prepared::LoadDirectory {
            directory: RoutingDirectory::parse_fedach(&text).map(|d| (d, text)).map_err(|e| e.to_string()),
        },
        Operation::SetMerchantSettings { merchant_id, settings } => {
            let problems = super::merchant_settings::problems(&settings);
            Prepared::SetMerchantSettings {
                merchant_id,
                settings: if problems.is_empty() { Ok(settings) } else { Err(problems) },
            }
        }
        Operation::SetOriginator { originator } => {
            let problems = super::originator::problems(&originator);
            Prepared::SetOriginator {
                originator: if problems.is_empty() { Ok(originator) } else { Err(problems) },
            }
        }
        Operation::IngestReturnFile { bytes } => {
            Prepared::IngestReturnFile { entries: super::bank_files::read(&bytes) }
        }
        Operation::SetClock { now } => Prepared::SetClock { now },
        Operation::RotateKeys { holder, grace_seconds } => Prepared::RotateKeys { holder, grace_seconds },
        Operation::RevokeKeys { holder } => Prepared::RevokeKeys { holder },
        Operation::SetSuspended { holder, suspended } => Prepared::SetSuspended { holder, suspended },
        Operation::Idempotent { operation, .. } => prepare_plain(*operation, engine, now, directory),
    }
}

/// The caller must be the operator.
fn operator(caller: &Caller) -> Result<(), Fail> {
    match caller {
        Caller::Operator => Ok(()),
        _ => Err(Fail::Refused(Failure::Authentication)),
    }
}

/// The caller must be this partner (the request's `partner_id` is the key's).
fn partner(caller: &Caller, partner_id: &str) -> Result<(), Fail> {
    match caller {
        Caller::Partner { partner_id: p } if p == partner_id => Ok(()),
        _ => Err(Fail::Refused(Failure::Authentication)),
    }
}

/// Apply one prepared operation inside the write transaction.
pub(crate) fn apply(cx: &mut Cx<'_, '_>, caller: &Caller, op: Prepared) -> Result<Applied, Fail> {
    let done = |o| Ok(Applied::Done(o));
    match op {
        Prepared::CreatePartner { name } => {
            operator(caller)?;
            done(tenants::create_partner(cx, &name)?)
        }
        Prepared::SetPartnerLimits { partner_id, limits } => {
            operator(caller)?;
            done(tenants::set_partner_limits(cx, &partner_id, &limits)?)
        }
        Prepared::SubmitMerchant { partner_id, application } => {
            partner(caller, &partner_id)?;
            let application = application.map_err(Failure::from_report)?;
            done(tenants::submit_merchant(cx, &partner_id, &application)?)
        }
        Prepared::ApproveMerchant { merchant_id, limits } => {
            operator(caller)?;
            done(tenants::approve_merchant(cx, &merchant_id, &limits)?)
        }
        Prepared::SetMerchantLimits { merchant_id, limits } => {
            operator(caller)?;
            done(tenants::set_merchant_limits(cx, &merchant_id, &limits)?)
        }
        Prepared::CreateCustomer { partner_id, customer } => {
            partner(caller, &partner_id)?;
            let (customer, fingerprint) = customer.map_err(Failure::from_report)?;
            done(customers::create(cx, &partner_id, &customer, fingerprint)?)
        }
        Prepared::DeleteCustomer { partner_id, customer_id } => {
            partner(caller, &partner_id)?;
            done(customers::delete(cx, &partner_id, &customer_id)?)
        }
        Prepared::CreateTransaction { partner_id, transaction } => {
            partner(caller, &partner_id)?;
            let (transaction, fingerprint) = transaction.map_err(Failure::from_report)?;
            done(transactions::create(cx, &partner_id, &transaction, fingerprint)?)
        }
        Prepared::VoidTransaction { partner_id, transaction_id } => {
            partner(caller, &partner_id)?;
            done(transactions::void(cx, &partner_id, &transaction_id)?)
        }
        Prepared::ReverseTransaction { partner_id, transaction_id } => {
            partner(caller, &partner_id)?;
            done(transactions::reverse(cx, &partner_id, &transaction_id)?)
        }
        Prepared::RecordReturn { transaction_id, return_code, return_date } => {
            operator(caller)?;
            done(transactions::record_return(cx, &transaction_id, &return_code, return_date)?)
        }
        Prepared::LoadDirectory { directory } => {
            operator(caller)?;
            let (directory, text) = directory.map_err(|why| {
                Failure::problem(AchError::FailedToAccept, "", ProblemCode::InvalidFormat, why)
            })?;
            cx.w.put_raw(
                crate::storage::Table::Blobs,
                crate::storage::keys::BLOB_DIRECTORY,
                text.as_bytes(),
            )?;
            let records = directory.len();
            Ok(Applied::Directory(directory, Outcome::DirectoryLoaded { records }))
        }
        Prepared::SetMerchantSettings { merchant_id, settings } => {
            operator(caller)?;
            done(super::merchant_settings::set(cx, &merchant_id, settings)?)
        }
        Prepared::SetOriginator { originator } => {
            operator(caller)?;
            done(super::originator::set(cx, originator)?)
        }
        Prepared::IngestReturnFile { entries } => {
            operator(caller)?;
            let entries = entries.map_err(|errors| Failure::Refused {
                error: AchError::FailedToAccept,
                status: 422,
                errors,
            })?;
            done(super::bank_files::ingest(cx, &entries)?)
        }
        Prepared::SetClock { now } => {
            operator(caller)?;
            done(super::schedule::set_clock(cx, now)?)
        }
        Prepared::RotateKeys { holder, grace_seconds } => {
            operator(caller)?;
            done(credentials::rotate(cx, &holder, grace_seconds)?)
        }
        Prepared::RevokeKeys { holder } => {
            operator(caller)?;
            done(credentials::revoke(cx, &holder)?)
        }
        Prepared::SetSuspended { holder, suspended } => {
            operator(caller)?;
            done(credentials::set_suspended(cx, &holder, suspended)?)
        }
        Prepared::Idempotent { key, scope, request, inner } => {
            let key = key?;
            let Some(partner_id) = scope else {
                let msg = "idempotency keys apply to partner operations only";
                return Err(Failure::problem(
                    AchError::FailedToAccept,
                    "idempotency_key",
                    ProblemCode::InvalidValue,
                    msg,
                )
                .into());
            };
            partner(caller, &partner_id)?;
            idempotency::run(cx, &partner_id, &key, request, |cx| apply(cx, caller, *inner))
        }
    }
}
