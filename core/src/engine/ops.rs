//! Operations, who may run them, and what they answer.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use super::schedule::Progress;
use super::MerchantSettings;
use super::{credentials, customers, idempotency, tenants, transactions, Applied, Cx, Engine, Fail, Failure};
use crate::calendar;
use crate::limits::Limits;
use crate::model::{BankAccount, CustomerRef, MerchantApplication, NewCustomer, NewTransaction};
use crate::routing::RoutingDirectory;
use crate::validation::{self, Context, FieldError, ProblemCode, Report};
use crate::AchError;

/// Who is calling, as established by [`super::Engine::authenticate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The operator (partners, approvals, returns, directory, sandbox clock).
    Operator,
    /// A partner, by its key.
    Partner {
        /// The partner.
        partner_id: String,
    },
    /// A merchant, by its key (the events feed).
    Merchant {
        /// The merchant's partner.
        partner_id: String,
        /// The merchant.
        merchant_id: String,
    },
}

/// One operation of the service.
#[derive(Debug, Clone)]
pub enum Operation {
    /// Operator: create a partner; answers its id and API key.
    CreatePartner {
        /// Display name.
        name: String,
    },
    /// Operator: set a partner's overall limits.
    SetPartnerLimits {
        /// The partner.
        partner_id: String,
        /// Limits to set (unset fields keep their value).
        limits: Limits,
    },
    /// Partner: submit a merchant application (`POST /merchants`).
    SubmitMerchant {
        /// The calling partner.
        partner_id: String,
        /// The application's JSON.
        body: Vec<u8>,
    },
    /// Operator: approve a merchant; answers its API key.
    ApproveMerchant {
        /// The merchant.
        merchant_id: String,
        /// Limits overriding the defaults from its velocities.
        limits: Limits,
    },
    /// Operator: change an approved merchant's limits.
    SetMerchantLimits {
        /// The merchant.
        merchant_id: String,
        /// Limits to set (unset fields keep their value).
        limits: Limits,
    },
    /// Partner: store a customer (`POST /customers`).
    CreateCustomer {
        /// The calling partner.
        partner_id: String,
        /// The customer's JSON.
        body: Vec<u8>,
    },
    /// Partner: delete a customer (`DELETE /customers/{token}`).
    DeleteCustomer {
        /// The calling partner.
        partner_id: String,
        /// The token.
        customer_id: String,
    },
    /// Partner: create a transaction (`POST /transactions`).
    CreateTransaction {
        /// The calling partner.
        partner_id: String,
        /// The transaction's JSON.
        body: Vec<u8>,
    },
    /// Partner: void a Pending transaction.
    VoidTransaction {
        /// The calling partner.
        partner_id: String,
        /// The transaction.
        transaction_id: String,
    },
    /// Partner: reverse a Settled transaction.
    ReverseTransaction {
        /// The calling partner.
        partner_id: String,
        /// The transaction.
        transaction_id: String,
    },
    /// Operator: record a return from the receiving bank.
    RecordReturn {
        /// The transaction.
        transaction_id: String,
        /// `R` + two digits.
        return_code: String,
        /// Defaults to today (Eastern).
        return_date: Option<NaiveDate>,
    },
    /// Operator: replace the routing directory with a FedACH file.
    LoadDirectory {
        /// The file's text.
        text: String,
    },
    /// Operator: set a merchant's origination settings.
    SetMerchantSettings {
        /// The merchant.
        merchant_id: String,
        /// Its settings (replacing the ones in force).
        settings: super::MerchantSettings,
    },
    /// Operator: set the originator every origination file is written for.
    SetOriginator {
        /// The ODFI, immediate destination and origin.
        originator: crate::nacha::Originator,
    },
    /// Operator: apply a NACHA file of returns and notifications of change
    /// from the bank (`POST /admin/return-files`).
    IngestReturnFile {
        /// The file's bytes.
        bytes: Vec<u8>,
    },
    /// Operator, sandbox only: set the clock and run everything due up to it.
    SetClock {
        /// The new instant (never earlier than the current one).
        now: DateTime<Utc>,
    },
    /// Operator: a new API key for a partner, a merchant or the operator; the
    /// holder's other keys keep working for `grace_seconds` (0: refused at
    /// once; at most [`super::MAX_GRACE_SECONDS`]).
    RotateKeys {
        /// Whose keys.
        holder: super::KeyHolder,
        /// How long the old keys keep working.
        grace_seconds: u32,
    },
    /// Operator: every key of a partner or a merchant refused from now on.
    RevokeKeys {
        /// Whose keys.
        holder: super::KeyHolder,
    },
    /// Operator: suspend (`true`) or resume (`false`) a partner or a merchant.
    SetSuspended {
        /// Who.
        holder: super::KeyHolder,
        /// Suspended from now on, or resumed.
        suspended: bool,
    },
    /// Any operation made idempotent by a client-chosen key (the
    /// `Idempotency-Key` header): a retry with the same key and the same request
    /// answers what the first answered, success or refusal, and does nothing
    /// again; the same key with a different request is refused with message 2.
    /// A transaction body's own `idempotency_key` member has the same effect.
    Idempotent {
        /// The client's key (1 to 255 printable ASCII characters).
        key: String,
        /// The operation.
        operation: Box<Operation>,
    },
}

impl Operation {
    /// A transaction given as a typed value (serialized to the same JSON a client
    /// would send).
    pub fn create_transaction(partner_id: &str, transaction: &NewTransaction) -> Operation {
        Operation::CreateTransaction {
            partner_id: partner_id.to_owned(),
            body: serde_json::to_vec(transaction).unwrap_or_default(),
        }
    }
}

/// What a successful operation answers. (Hosts render it in the spec's shapes;
/// the serde form, tagged by `outcome`, is how idempotent answers are stored.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// A partner was created.
    PartnerCreated {
        /// Its id.
        partner_id: String,
        /// Its API key (shown once; only its hash is stored).
        api_key: String,
    },
    /// Limits were set.
    LimitsSet {
        /// The partner or merchant.
        id: String,
        /// The limits now in force.
        limits: Limits,
    },
    /// A merchant application was stored and waits in underwriting.
    MerchantSubmitted {
        /// Its id.
        merchant_id: String,
    },
    /// A merchant was approved.
    MerchantApproved {
        /// Its id.
        merchant_id: String,
        /// Its API key for the events feed (shown once).
        api_key: String,
        /// Its limits.
        limits: Limits,
    },
    /// A customer was stored.
    CustomerCreated {
        /// Its token.
        customer_id: String,
    },
    /// A customer was deleted.
    CustomerDeleted {
        /// Its token.
        customer_id: String,
    },
    /// A transaction was accepted (Pending).
    TransactionCreated {
        /// Its id.
        transaction_id: String,
    },
    /// A transaction was voided.
    TransactionVoided {
        /// Its id.
        transaction_id: String,
    },
    /// A reversal was created.
    TransactionReversed {
        /// The original transaction.
        transaction_id: String,
        /// The new reversal transaction.
        reversal_id: String,
    },
    /// A return was recorded.
    ReturnRecorded {
        /// The transaction.
        transaction_id: String,
        /// The return-rate thresholds this return put its merchant over
        /// ([`super::Engine::return_rates`]); hosts log them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        crossings: Vec<super::ThresholdCrossing>,
    },
    /// A routing directory was loaded.
    DirectoryLoaded {
        /// Records in it.
        records: usize,
    },
    /// A merchant's origination settings were set.
    MerchantSettingsSet {
        /// The merchant.
        merchant_id: String,
        /// The settings now in force (description in upper case).
        settings: super::MerchantSettings,
    },
    /// The originator was set.
    OriginatorSet {
        /// The originator now in force (names in upper case).
        originator: crate::nacha::Originator,
    },
    /// A file of returns and notifications of change was applied.
    ReturnFileIngested {
        /// What each entry did.
        ingested: super::Ingested,
        /// Return-rate thresholds the file's returns put a merchant over.
        crossings: Vec<super::return_rates::ThresholdCrossing>,
    },
    /// A holder's keys were rotated.
    KeysRotated {
        /// The partner, the merchant, or `operator`.
        id: String,
        /// The new key (shown once; only its hash is stored).
        api_key: String,
        /// How many working keys the rotation retired.
        previous_keys: u32,
        /// Until when they work (`None`: refused already).
        previous_keys_valid_until: Option<DateTime<Utc>>,
    },
    /// A holder's keys were revoked.
    KeysRevoked {
        /// The partner or the merchant.
        id: String,
        /// How many working keys were revoked.
        revoked: u32,
    },
    /// A partner or a merchant was suspended or resumed.
    SuspensionSet {
        /// The partner or the merchant.
        id: String,
        /// Whether it is suspended now.
        suspended: bool,
        /// Since when (`None` once resumed).
        since: Option<DateTime<Utc>>,
    },
    /// The sandbox clock was set.
    ClockSet {
        /// The new instant.
        now: DateTime<Utc>,
        /// What ran.
        progress: Progress,
    },
}

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
