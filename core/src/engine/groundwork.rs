//! An operation's groundwork: the work that needs no storage (its body
//! validated into a typed value, a directory parsed, the keyed fingerprints of
//! an account and of an idempotent request), done before the write transaction.

use chrono::{DateTime, NaiveDate, Utc};

use super::operation::Operation;
use super::MerchantSettings;
use super::{customers, idempotency, Engine, Refusal};
use crate::calendar;
use crate::limits::Limits;
use crate::model::{BankAccount, CustomerRef, MerchantApplication, NewCustomer, NewTransaction};
use crate::routing::RoutingDirectory;
use crate::validation::{self, Context, FieldError, Report};

/// The groundwork of an operation: its storage-free work (validation, parsing)
/// done. Creates
/// carry the account's keyed fingerprint (a stored customer's comes from storage:
/// `None`), an idempotent operation its request's keyed fingerprint (hex).
pub(crate) enum Groundwork {
    CreatePartner {
        name: String,
    },
    SetPartnerLimits {
        partner_id: String,
        limits: Limits,
    },
    SubmitMerchant {
        partner_id: String,
        application: Result<Box<MerchantApplication>, Report>,
    },
    ApproveMerchant {
        merchant_id: String,
        limits: Limits,
    },
    SetMerchantLimits {
        merchant_id: String,
        limits: Limits,
    },
    CreateCustomer {
        partner_id: String,
        customer: Result<(NewCustomer, String), Report>,
    },
    DeleteCustomer {
        partner_id: String,
        customer_id: String,
    },
    CreateTransaction {
        partner_id: String,
        transaction: Result<(NewTransaction, Option<String>), Report>,
    },
    VoidTransaction {
        partner_id: String,
        transaction_id: String,
    },
    ReverseTransaction {
        partner_id: String,
        transaction_id: String,
    },
    RecordReturn {
        transaction_id: String,
        return_code: String,
        return_date: Option<NaiveDate>,
    },
    LoadDirectory {
        directory: Result<(RoutingDirectory, String), String>,
    },
    SetMerchantSettings {
        merchant_id: String,
        settings: Result<MerchantSettings, Vec<FieldError>>,
    },
    SetOriginator {
        originator: Result<crate::nacha::Originator, Vec<validation::FieldError>>,
    },
    IngestReturnFile {
        entries: Result<Vec<crate::nacha::Inbound>, Vec<validation::FieldError>>,
    },
    SetClock {
        now: DateTime<Utc>,
    },
    RotateKeys {
        holder: super::KeyHolder,
        grace_seconds: u32,
    },
    RevokeKeys {
        holder: super::KeyHolder,
    },
    SetSuspended {
        holder: super::KeyHolder,
        suspended: bool,
    },
    Idempotent {
        key: Result<String, Refusal>,
        scope: Option<String>,
        request: String,
        inner: Box<Groundwork>,
    },
}

/// Do the work that needs no storage: validate bodies, parse a directory, the
/// keyed fingerprints of an account and of an idempotent request. Depends on
/// `now` only through its Eastern date (see `prepare.rs`).
pub(crate) fn prepare(
    op: Operation,
    engine: &Engine,
    now: DateTime<Utc>,
    directory: &RoutingDirectory,
) -> Groundwork {
    if let Some((key, operation)) = idempotency::key_of(&op) {
        let request = idempotency::request_print(engine, &idempotency::request_bytes(&operation));
        let scope = idempotency::scope(&operation);
        let inner = Box::new(prepare_plain(operation, engine, now, directory));
        return Groundwork::Idempotent { key, scope, request, inner };
    }
    prepare_plain(op, engine, now, directory)
}

/// [`prepare`] without looking for an idempotency key.
fn prepare_plain(
    op: Operation,
    engine: &Engine,
    now: DateTime<Utc>,
    directory: &RoutingDirectory,
) -> Groundwork {
    let ctx = Context { today: calendar::eastern_date(now), directory };
    match op {
        Operation::CreatePartner { name } => Groundwork::CreatePartner { name },
        Operation::SetPartnerLimits { partner_id, limits } => {
            Groundwork::SetPartnerLimits { partner_id, limits }
        }
        Operation::SubmitMerchant { partner_id, body } => Groundwork::SubmitMerchant {
            partner_id,
            application: validation::merchant::validate_bytes(&body, &ctx).map(Box::new),
        },
        Operation::ApproveMerchant { merchant_id, limits } => {
            Groundwork::ApproveMerchant { merchant_id, limits }
        }
        Operation::SetMerchantLimits { merchant_id, limits } => {
            Groundwork::SetMerchantLimits { merchant_id, limits }
        }
        Operation::CreateCustomer { partner_id, body } => {
            Groundwork::CreateCustomer { partner_id, customer: customer(engine, &body, &ctx) }
        }
        Operation::DeleteCustomer { partner_id, customer_id } => {
            Groundwork::DeleteCustomer { partner_id, customer_id }
        }
        Operation::CreateTransaction { partner_id, body } => {
            Groundwork::CreateTransaction { partner_id, transaction: transaction(engine, &body, &ctx) }
        }
        Operation::VoidTransaction { partner_id, transaction_id } => {
            Groundwork::VoidTransaction { partner_id, transaction_id }
        }
        Operation::ReverseTransaction { partner_id, transaction_id } => {
            Groundwork::ReverseTransaction { partner_id, transaction_id }
        }
        Operation::RecordReturn { transaction_id, return_code, return_date } => {
            Groundwork::RecordReturn { transaction_id, return_code, return_date }
        }
        Operation::LoadDirectory { text } => Groundwork::LoadDirectory {
            directory: RoutingDirectory::parse_fedach(&text).map(|d| (d, text)).map_err(|e| e.to_string()),
        },
        Operation::SetMerchantSettings { merchant_id, settings } => {
            let problems = super::merchant_settings::problems(&settings);
            Groundwork::SetMerchantSettings { merchant_id, settings: unless(problems, settings) }
        }
        Operation::SetOriginator { originator } => {
            let problems = super::originator::problems(&originator);
            Groundwork::SetOriginator { originator: unless(problems, originator) }
        }
        Operation::IngestReturnFile { bytes } => {
            Groundwork::IngestReturnFile { entries: super::bank_files::read(&bytes) }
        }
        Operation::SetClock { now } => Groundwork::SetClock { now },
        Operation::RotateKeys { holder, grace_seconds } => Groundwork::RotateKeys { holder, grace_seconds },
        Operation::RevokeKeys { holder } => Groundwork::RevokeKeys { holder },
        Operation::SetSuspended { holder, suspended } => Groundwork::SetSuspended { holder, suspended },
        Operation::Idempotent { operation, .. } => prepare_plain(*operation, engine, now, directory),
    }
}

/// A customer's body validated, with its account's keyed fingerprint.
fn customer(engine: &Engine, body: &[u8], ctx: &Context<'_>) -> Result<(NewCustomer, String), Report> {
    validation::customer::validate_bytes(body, ctx).map(|c| {
        let fingerprint = print(engine, &c.account);
        (c, fingerprint)
    })
}

/// A transaction's body validated, with an inline account's keyed fingerprint
/// (a stored customer's comes from storage: `None`).
fn transaction(
    engine: &Engine,
    body: &[u8],
    ctx: &Context<'_>,
) -> Result<(NewTransaction, Option<String>), Report> {
    validation::transaction::validate_bytes(body, ctx).map(|t| {
        let fingerprint = match &t.customer {
            CustomerRef::Inline(account) => Some(print(engine, account)),
            CustomerRef::Token { .. } => None,
        };
        (t, fingerprint)
    })
}

/// An account's keyed fingerprint.
fn print(engine: &Engine, account: &BankAccount) -> String {
    customers::account_fingerprint(&engine.fingerprints, account)
}

/// `value`, unless there are problems with it.
fn unless<T>(problems: Vec<FieldError>, value: T) -> Result<T, Vec<FieldError>> {
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(problems)
    }
}
