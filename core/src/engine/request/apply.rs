//! Applying an operation's groundwork inside the write transaction: who may run
//! it, then the file that does it.

use crate::engine::credentials::authorize;
use crate::engine::lifecycle::transactions;
use crate::engine::request::groundwork::{self, Groundwork};
use crate::engine::request::idempotency;
use crate::engine::request::operation::{Caller, Operation};
use crate::engine::request::outcome::Outcome;
use crate::engine::settlement::bank_files;
use crate::engine::settlement::originator;
use crate::engine::settlement::schedule;
use crate::engine::tenancy::customers;
use crate::engine::tenancy::merchant_settings;
use crate::engine::tenancy::tenants::{self, LimitsOf};
use crate::engine::{credentials, Abort, Applied, Cx, Refusal};
use crate::routing::RoutingDirectory;
use crate::storage::{row_keys, Table};
use crate::validation::ProblemCode;
use crate::AchError;

/// Apply an operation's groundwork inside the write transaction: the caller
/// checked first, then the operation run.
pub(crate) fn apply(cx: &mut Cx<'_, '_>, caller: &Caller, work: Groundwork) -> Result<Applied, Abort> {
    authorize::may_run(caller, &work)?;
    run(cx, caller, work)
}

/// Run an authorized operation: refuse its groundwork's problems, then ask
/// the file that does it.
fn run(cx: &mut Cx<'_, '_>, caller: &Caller, work: Groundwork) -> Result<Applied, Abort> {
    let done = |o| Ok(Applied::Done(o));
    match work {
        Groundwork::Plain(op) => run_plain(cx, caller, op),
        Groundwork::SubmitMerchant { partner_id, application } => {
            let application = application.map_err(Refusal::from_report)?;
            done(tenants::submit_merchant(cx, &partner_id, &application)?)
        }
        Groundwork::CreateCustomer { partner_id, customer } => {
            let (customer, fingerprint) = customer.map_err(Refusal::from_report)?;
            done(customers::create(cx, &partner_id, &customer, fingerprint)?)
        }
        Groundwork::CreateTransaction { partner_id, transaction } => {
            let (transaction, fingerprint) = transaction.map_err(Refusal::from_report)?;
            done(transactions::create(cx, &partner_id, &transaction, fingerprint)?)
        }
        Groundwork::LoadDirectory { directory } => load_directory(cx, directory),
        Groundwork::SetMerchantSettings { merchant_id, settings } => {
            done(merchant_settings::set(cx, &merchant_id, settings)?)
        }
        Groundwork::SetOriginator { originator } => done(originator::set(cx, originator)?),
        Groundwork::IngestReturnFile { entries } => {
            let entries = entries.map_err(|errors| Refusal::Refused {
                error: AchError::FailedToAccept,
                status: 422,
                errors,
            })?;
            done(bank_files::ingest(cx, &entries)?)
        }
        Groundwork::Idempotent { key, scope, request, inner } => {
            apply_idempotent(cx, caller, key, scope, request, *inner)
        }
    }
}

/// Run an operation that has no groundwork: it goes straight to the file that
/// does it.
fn run_plain(cx: &mut Cx<'_, '_>, caller: &Caller, op: Operation) -> Result<Applied, Abort> {
    let done = |o| Ok(Applied::Done(o));
    match op {
        Operation::CreatePartner { name } => done(tenants::create_partner(cx, &name)?),
        Operation::SetPartnerLimits { partner_id, limits } => {
            done(tenants::set_limits(cx, LimitsOf::Partner(&partner_id), &limits)?)
        }
        Operation::ApproveMerchant { merchant_id, limits } => {
            done(tenants::approve_merchant(cx, &merchant_id, &limits)?)
        }
        Operation::SetMerchantLimits { merchant_id, limits } => {
            done(tenants::set_limits(cx, LimitsOf::Merchant(&merchant_id), &limits)?)
        }
        Operation::DeleteCustomer { partner_id, customer_id } => {
            done(customers::delete(cx, &partner_id, &customer_id)?)
        }
        Operation::VoidTransaction { partner_id, transaction_id } => {
            done(transactions::void(cx, &partner_id, &transaction_id)?)
        }
        Operation::ReverseTransaction { partner_id, transaction_id } => {
            done(transactions::reverse(cx, &partner_id, &transaction_id)?)
        }
        Operation::RecordReturn { transaction_id, return_code, return_date } => {
            done(transactions::record_return(cx, &transaction_id, &return_code, return_date)?)
        }
        Operation::SetClock { now } => done(schedule::set_clock(cx, now)?),
        Operation::RotateKeys { holder, grace_seconds } => {
            done(credentials::rotate(cx, &holder, grace_seconds)?)
        }
        Operation::RevokeKeys { holder } => done(credentials::revoke(cx, &holder)?),
        Operation::SetSuspended { holder, suspended } => {
            done(credentials::set_suspended(cx, &holder, suspended)?)
        }
        // An operation with groundwork never comes here plain; were one to, its
        // groundwork is done now, as the engine would have done it.
        other => {
            let work = groundwork::prepare_plain(other, cx.engine, cx.now, &cx.engine.directory());
            run(cx, caller, work)
        }
    }
}

/// Store the directory the operator loaded; the engine switches to it once the
/// transaction commits.
fn load_directory(
    cx: &mut Cx<'_, '_>,
    directory: Result<(RoutingDirectory, String), String>,
) -> Result<Applied, Abort> {
    let (directory, text) = directory
        .map_err(|why| Refusal::problem(AchError::FailedToAccept, "", ProblemCode::InvalidFormat, why))?;
    cx.w.put_raw(Table::Blobs, row_keys::BLOB_DIRECTORY, text.as_bytes())?;
    crate::engine::multiprocess::shared_directory::loaded(cx)?;
    let records = directory.len();
    Ok(Applied::Directory(directory, Outcome::DirectoryLoaded { records }))
}

/// An idempotent operation: its key checked, then its scope (a partner's
/// operation) and its caller, then run once per key.
fn apply_idempotent(
    cx: &mut Cx<'_, '_>,
    caller: &Caller,
    key: Result<String, Refusal>,
    scope: Option<String>,
    request: String,
    inner: Groundwork,
) -> Result<Applied, Abort> {
    let key = key?;
    let Some(partner_id) = scope else {
        let msg = "idempotency keys apply to partner operations only";
        return Err(Refusal::problem(
            AchError::FailedToAccept,
            "idempotency_key",
            ProblemCode::InvalidValue,
            msg,
        )
        .into());
    };
    authorize::acts_for(caller, &partner_id)?;
    idempotency::run(cx, &partner_id, &key, request, |cx| apply(cx, caller, inner))
}
