//! An operation validated: the work that needs no storage (its body
//! validated into a typed value, a directory parsed, the keyed fingerprints of
//! an account and of an idempotent request), done before the write transaction.

use chrono::{DateTime, Utc};

use crate::calendar;
use crate::engine::request::idempotency;
use crate::engine::request::operation::Operation;
use crate::engine::tenancy::customers;
use crate::engine::MerchantSettings;
use crate::engine::{Engine, Refusal};
use crate::model::{BankAccount, CustomerRef, MerchantApplication, NewCustomer, NewTransaction};
use crate::routing::RoutingDirectory;
use crate::validation::json::JsonBody;
use crate::validation::{self, Context, FieldError, Report};

/// An operation validated: its storage-free work (validation, parsing)
/// done. Creates
/// carry the account's keyed fingerprint (a stored customer's comes from storage:
/// `None`), an idempotent operation its request's keyed fingerprint (hex).
pub(crate) enum Validated {
    /// An operation with no storage-free work, as it came.
    Plain(Operation),
    SubmitMerchant {
        partner_id: String,
        application: Result<Box<MerchantApplication>, Report>,
    },
    CreateCustomer {
        partner_id: String,
        customer: Result<(NewCustomer, String), Report>,
    },
    CreateTransaction {
        partner_id: String,
        transaction: Result<(NewTransaction, Option<String>), Report>,
    },
    CreateValidation {
        partner_id: String,
        customer_id: String,
        request: Result<crate::model::NewValidation, Report>,
    },
    ConfirmValidation {
        partner_id: String,
        customer_id: String,
        validation_id: String,
        confirmation: Result<crate::model::Confirmation, Report>,
    },
    RecordValidation {
        customer_id: String,
        request: Result<crate::model::NewValidation, Report>,
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
    Idempotent {
        key: Result<String, Refusal>,
        scope: Option<String>,
        request: String,
        inner: Box<Validated>,
    },
}

impl Validated {
    /// The partner a partner's operation acts for (`None`: an operator's
    /// operation, or an idempotent one, whose scope is checked after its key).
    pub(crate) fn partner_id(&self) -> Option<&str> {
        match self {
            Validated::Plain(op) => op.partner_id(),
            Validated::SubmitMerchant { partner_id, .. }
            | Validated::CreateCustomer { partner_id, .. }
            | Validated::CreateTransaction { partner_id, .. }
            | Validated::CreateValidation { partner_id, .. }
            | Validated::ConfirmValidation { partner_id, .. } => Some(partner_id),
            _ => None,
        }
    }
}

/// Do the work that needs no storage: validate bodies, parse a directory, the
/// keyed fingerprints of an account and of an idempotent request. `parsed`:
/// the operation's body, if the router already parsed it (else it is parsed
/// here). Depends on `now` only through its Eastern date (see `prepare.rs`).
pub(crate) fn prepare(
    op: &Operation,
    parsed: Option<&JsonBody<'_>>,
    engine: &Engine,
    now: DateTime<Utc>,
    directory: &RoutingDirectory,
) -> Validated {
    let ctx = Context { today: calendar::eastern_date(now), directory };
    if let Some((key, operation)) = idempotency::key_of(op, parsed) {
        let request = idempotency::request_print(engine, &idempotency::request_bytes(operation, parsed));
        let scope = operation.partner_id().map(str::to_owned);
        let inner = Box::new(prepare_plain(operation, parsed, engine, &ctx));
        return Validated::Idempotent { key, scope, request, inner };
    }
    prepare_plain(op, parsed, engine, &ctx)
}

/// [`prepare`] without looking for an idempotency key, validating against
/// `ctx` (the Eastern date and the routing directory).
pub(crate) fn prepare_plain(
    op: &Operation,
    parsed: Option<&JsonBody<'_>>,
    engine: &Engine,
    ctx: &Context<'_>,
) -> Validated {
    match op {
        Operation::SubmitMerchant { partner_id, body } => Validated::SubmitMerchant {
            partner_id: partner_id.clone(),
            application: validate(body, parsed, |b| validation::merchant::validate(b, ctx)).map(Box::new),
        },
        Operation::CreateCustomer { partner_id, body } => Validated::CreateCustomer {
            partner_id: partner_id.clone(),
            customer: validate(body, parsed, |b| customer(engine, b, ctx)),
        },
        Operation::CreateTransaction { partner_id, body } => Validated::CreateTransaction {
            partner_id: partner_id.clone(),
            transaction: validate(body, parsed, |b| transaction(engine, b, ctx)),
        },
        Operation::CreateValidation { partner_id, customer_id, body } => Validated::CreateValidation {
            partner_id: partner_id.clone(),
            customer_id: customer_id.clone(),
            request: validate(body, parsed, validation::account_validation::new_validation),
        },
        Operation::ConfirmValidation { partner_id, customer_id, validation_id, body } => {
            Validated::ConfirmValidation {
                partner_id: partner_id.clone(),
                customer_id: customer_id.clone(),
                validation_id: validation_id.clone(),
                confirmation: validate(body, parsed, validation::account_validation::confirmation),
            }
        }
        Operation::RecordValidation { customer_id, body } => Validated::RecordValidation {
            customer_id: customer_id.clone(),
            request: validate(body, parsed, validation::account_validation::new_validation),
        },
        Operation::LoadDirectory { text } => Validated::LoadDirectory {
            directory: RoutingDirectory::parse_fedach(text)
                .map(|d| (d, text.clone()))
                .map_err(|e| e.to_string()),
        },
        Operation::SetMerchantSettings { merchant_id, settings } => {
            let problems = crate::engine::tenancy::merchant_settings::problems(settings);
            Validated::SetMerchantSettings {
                merchant_id: merchant_id.clone(),
                settings: unless(problems, settings.clone()),
            }
        }
        Operation::SetOriginator { originator } => {
            let problems = crate::engine::settlement::originator::problems(originator);
            Validated::SetOriginator { originator: unless(problems, originator.clone()) }
        }
        Operation::IngestReturnFile { bytes } => {
            Validated::IngestReturnFile { entries: crate::engine::settlement::bank_files::read(bytes) }
        }
        Operation::Idempotent { operation, .. } => prepare_plain(operation, parsed, engine, ctx),
        plain => Validated::Plain(plain.clone()),
    }
}

/// A body validated by `check`: the router's parse if given, else `bytes`
/// parsed here (a body that is not JSON is a one-problem report).
fn validate<T>(
    bytes: &[u8],
    parsed: Option<&JsonBody<'_>>,
    check: impl FnOnce(&JsonBody<'_>) -> Result<T, Report>,
) -> Result<T, Report> {
    match parsed {
        Some(body) => check(body),
        None => check(&validation::parse_json(bytes)?),
    }
}

/// A customer's body validated, with its account's keyed fingerprint.
fn customer(
    engine: &Engine,
    body: &JsonBody<'_>,
    ctx: &Context<'_>,
) -> Result<(NewCustomer, String), Report> {
    validation::customer::validate(body, ctx).map(|c| {
        let fingerprint = print(engine, &c.account);
        (c, fingerprint)
    })
}

/// A transaction's body validated, with an inline account's keyed fingerprint
/// (a stored customer's comes from storage: `None`).
fn transaction(
    engine: &Engine,
    body: &JsonBody<'_>,
    ctx: &Context<'_>,
) -> Result<(NewTransaction, Option<String>), Report> {
    validation::transaction::validate(body, ctx).map(|t| {
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
