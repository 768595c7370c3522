//! Applying a validated operation inside the write transaction: who may run
//! it, then the file that does it.

use crate::engine::credentials::authorize;
use crate::engine::lifecycle::transactions;
use crate::engine::request::idempotency;
use crate::engine::request::operation::{Caller, Operation};
use crate::engine::request::outcome::Outcome;
use crate::engine::request::validated::{self, Validated};
use crate::engine::settlement::bank_files;
use crate::engine::settlement::originator;
use crate::engine::settlement::schedule;
use crate::engine::tenancy::customers;
use crate::engine::tenancy::merchant_settings;
use crate::engine::tenancy::tenants::{self, LimitsOf};
use crate::engine::{credentials, Applied, Refusal, Stop, WriteContext};
use crate::routing::RoutingDirectory;
use crate::storage::{row_keys, Table};
use crate::validation::ProblemCode;
use crate::AchError;

/// Apply a validated operation inside the write transaction: the caller
/// checked first, then the operation run.
pub(crate) fn apply(
    cx: &mut WriteContext<'_, '_>,
    caller: &Caller,
    work: Validated,
) -> Result<Applied, Stop> {
    authorize::may_run(caller, &work)?;
    run(cx, caller, work)
}

/// Run an authorized operation: refuse its validation's problems, then ask
/// the file that does it.
fn run(cx: &mut WriteContext<'_, '_>, caller: &Caller, work: Validated) -> Result<Applied, Stop> {
    let done = |o| Ok(Applied::Done(o));
    match work {
        Validated::Plain(op) => run_plain(cx, caller, op),
        Validated::SubmitMerchant { partner_id, application } => {
            let application = application.map_err(Refusal::from_report)?;
            done(tenants::submit_merchant(cx, &partner_id, &application)?)
        }
        Validated::CreateCustomer { partner_id, customer } => {
            let (customer, fingerprint) = customer.map_err(Refusal::from_report)?;
            done(customers::create(cx, &partner_id, &customer, fingerprint)?)
        }
        Validated::CreateTransaction { partner_id, transaction } => {
            let (transaction, fingerprint) = transaction.map_err(Refusal::from_report)?;
            done(transactions::create(cx, &partner_id, &transaction, fingerprint)?)
        }
        Validated::CreateValidation { partner_id, customer_id, request } => {
            let request = request.map_err(Refusal::from_report)?;
            done(crate::engine::verification::create::create(cx, &partner_id, &customer_id, &request)?)
        }
        Validated::ConfirmValidation { partner_id, customer_id, validation_id, confirmation } => {
            let confirmation = confirmation.map_err(Refusal::from_report)?;
            done(crate::engine::verification::confirm::confirm(
                cx,
                &partner_id,
                &customer_id,
                &validation_id,
                &confirmation,
            )?)
        }
        Validated::RecordValidation { customer_id, request } => {
            let request = request.map_err(Refusal::from_report)?;
            done(crate::engine::verification::create::record(cx, &customer_id, &request)?)
        }
        Validated::LoadDirectory { directory } => load_directory(cx, directory),
        Validated::SetMerchantSettings { merchant_id, settings } => {
            done(merchant_settings::set(cx, &merchant_id, settings)?)
        }
        Validated::SetOriginator { originator } => done(originator::set(cx, originator)?),
        Validated::IngestReturnFile { entries } => {
            let entries = entries.map_err(|errors| Refusal::Refused {
                error: AchError::FailedToAccept,
                status: 422,
                errors,
            })?;
            done(bank_files::ingest(cx, &entries)?)
        }
        Validated::Idempotent { key, scope, request, inner } => {
            apply_idempotent(cx, caller, key, scope, request, *inner)
        }
    }
}

/// Run an operation that needs no validation: it goes straight to the file that
/// does it.
fn run_plain(cx: &mut WriteContext<'_, '_>, caller: &Caller, op: Operation) -> Result<Applied, Stop> {
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
        Operation::ReinitiateTransaction { partner_id, transaction_id, same_day } => done(
            crate::engine::lifecycle::reinitiation::reinitiate(cx, &partner_id, &transaction_id, same_day)?,
        ),
        Operation::RecordReturn { transaction_id, return_code, return_date } => {
            done(transactions::record_return(cx, &transaction_id, &return_code, return_date)?)
        }
        Operation::SetClock { now } => done(schedule::set_clock(cx, now)?),
        Operation::TakeWebhooks { most, timestamp } => {
            let now = cx.now;
            let attempts =
                crate::engine::webhooks::deliveries::take(cx.engine, cx.write, (now, timestamp), most)?;
            done(Outcome::WebhookAttempts { attempts })
        }
        Operation::RecordWebhooks { results } => {
            let now = cx.now;
            for (endpoint_id, delivery_id, result) in &results {
                crate::engine::webhooks::deliveries::record(
                    cx.write,
                    (endpoint_id, delivery_id),
                    result,
                    now,
                )?;
            }
            done(Outcome::WebhooksRecorded { count: results.len() })
        }
        Operation::CreateWebhookEndpoint { partner_id, url, event_types } => {
            done(crate::engine::webhooks::create_endpoint(cx, &partner_id, &url, event_types)?)
        }
        Operation::DeleteWebhookEndpoint { partner_id, endpoint_id } => {
            done(crate::engine::webhooks::endpoints::delete(cx, &partner_id, &endpoint_id)?)
        }
        Operation::RotateWebhookSecret { partner_id, endpoint_id } => {
            done(crate::engine::webhooks::endpoints::rotate(cx, &partner_id, &endpoint_id)?)
        }
        Operation::RetryWebhookDelivery { partner_id, endpoint_id, delivery_id } => {
            done(crate::engine::webhooks::retry(cx, &partner_id, &endpoint_id, &delivery_id)?)
        }
        Operation::SimulateNotice { transaction_id, change_code, corrected_data } => {
            done(crate::engine::settlement::bank_files::simulate_notice(
                cx,
                &transaction_id,
                &change_code,
                &corrected_data,
            )?)
        }
        Operation::SetRiskRules { update } => done(crate::engine::risk::rules::set(cx, update)?),
        Operation::DecideReview { transaction_id, release: true, note } => {
            done(crate::engine::lifecycle::review_decisions::release(cx, &transaction_id, note)?)
        }
        Operation::DecideReview { transaction_id, release: false, note } => {
            done(crate::engine::lifecycle::review_decisions::reject(cx, &transaction_id, note)?)
        }
        Operation::RotateKeys { holder, grace_seconds } => {
            done(credentials::rotate(cx, &holder, grace_seconds)?)
        }
        Operation::RevokeKeys { holder } => done(credentials::revoke(cx, &holder)?),
        Operation::SetSuspended { holder, suspended } => {
            done(credentials::set_suspended(cx, &holder, suspended)?)
        }
        // An operation with validation never comes here plain; were one to, it
        // is validated now, as the engine would have done it.
        other => {
            let directory = cx.engine.directory();
            let ctx = crate::validation::Context {
                today: crate::calendar::eastern_date(cx.now),
                directory: &directory,
            };
            let work = validated::prepare_plain(&other, None, cx.engine, &ctx);
            run(cx, caller, work)
        }
    }
}

/// Store the directory the operator loaded; the engine switches to it once the
/// transaction commits.
fn load_directory(
    cx: &mut WriteContext<'_, '_>,
    directory: Result<(RoutingDirectory, String), String>,
) -> Result<Applied, Stop> {
    let (directory, text) = directory
        .map_err(|why| Refusal::problem(AchError::FailedToAccept, "", ProblemCode::InvalidFormat, why))?;
    cx.write.put_raw(Table::Blobs, row_keys::BLOB_DIRECTORY, text.as_bytes())?;
    crate::engine::multiprocess::directory_epoch::loaded(cx)?;
    let records = directory.len();
    Ok(Applied::Directory(directory, Outcome::DirectoryLoaded { records }))
}

/// An idempotent operation: its key checked, then its scope (a partner's
/// operation) and its caller, then run once per key.
fn apply_idempotent(
    cx: &mut WriteContext<'_, '_>,
    caller: &Caller,
    key: Result<String, Refusal>,
    scope: Option<String>,
    request: String,
    inner: Validated,
) -> Result<Applied, Stop> {
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
