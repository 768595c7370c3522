//! What a step is, and the engine operation (caller and request) it becomes.

use ach_core::engine::{Caller, Operation};
use ach_core::limits::Limits;
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{json, Value};

use crate::oracle::{Account, AmountSpec, AppSpec, CustomerSpec, Ix, MerchantRef, Oracle, Target, TxnSpec};

/// The example application every merchant starts from.
const APPLICATION: &str = include_str!("../../examples/requests/merchant.json");
/// A PNG signature in base64: a valid check image.
pub const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUg==";

/// One step of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Operator: a partner (an invalid name is refused).
    CreatePartner {
        /// Name.
        name: String,
    },
    /// Operator: a partner's overall limits.
    PartnerLimits {
        /// The partner.
        partner: Target,
        /// Fields to set.
        limits: Limits,
    },
    /// Partner `caller` submits an application as `partner`.
    Submit {
        /// `partner_id` of the request.
        partner: Ix,
        /// Whose key is used.
        caller: Ix,
        /// The application.
        app: AppSpec,
    },
    /// Operator: approve.
    Approve {
        /// The merchant.
        merchant: Target,
        /// Overrides.
        limits: Limits,
    },
    /// Operator: a merchant's limits.
    MerchantLimits {
        /// The merchant.
        merchant: Target,
        /// Fields to set.
        limits: Limits,
    },
    /// Store a customer.
    CreateCustomer {
        /// `partner_id`.
        partner: Ix,
        /// Whose key.
        caller: Ix,
        /// `None`: global.
        scope: Option<Target>,
        /// The account.
        account: Account,
    },
    /// Delete a customer.
    DeleteCustomer {
        /// `partner_id`.
        partner: Ix,
        /// Whose key.
        caller: Ix,
        /// The token.
        customer: Target,
    },
    /// Create a transaction.
    CreateTxn {
        /// `partner_id`.
        partner: Ix,
        /// Whose key.
        caller: Ix,
        /// The request.
        spec: TxnSpec,
    },
    /// Void.
    Void {
        /// `partner_id`.
        partner: Ix,
        /// Whose key.
        caller: Ix,
        /// The transaction.
        txn: Target,
    },
    /// Reverse.
    Reverse {
        /// `partner_id`.
        partner: Ix,
        /// Whose key.
        caller: Ix,
        /// The transaction.
        txn: Target,
    },
    /// Operator: a return.
    Return {
        /// The transaction.
        txn: Target,
        /// Return code as sent.
        code: String,
        /// Return date, if given.
        date: Option<NaiveDate>,
    },
    /// Operator: set the sandbox clock.
    SetClock {
        /// The new instant.
        to: DateTime<Utc>,
    },
    /// Production path: the clock moves, the host calls `advance_to`.
    Advance {
        /// The new instant.
        to: DateTime<Utc>,
    },
    /// The clock moves and the next operation catches up first.
    Drift {
        /// The new instant.
        to: DateTime<Utc>,
        /// The operation.
        then: Box<Step>,
    },
    /// A partner operation made idempotent.
    Keyed {
        /// The key.
        key: String,
        /// In a transaction body's `idempotency_key` member (else the wrapper).
        in_body: bool,
        /// The operation.
        step: Box<Step>,
    },
}

impl Step {
    /// The step's kind, for statistics.
    pub fn kind(&self) -> &'static str {
        match self {
            Step::CreatePartner { .. } => "create_partner",
            Step::PartnerLimits { .. } => "partner_limits",
            Step::Submit { .. } => "submit_merchant",
            Step::Approve { .. } => "approve_merchant",
            Step::MerchantLimits { .. } => "merchant_limits",
            Step::CreateCustomer { .. } => "create_customer",
            Step::DeleteCustomer { .. } => "delete_customer",
            Step::CreateTxn { .. } => "create_transaction",
            Step::Void { .. } => "void",
            Step::Reverse { .. } => "reverse",
            Step::Return { .. } => "return",
            Step::SetClock { .. } => "set_clock",
            Step::Advance { .. } => "advance_to",
            Step::Drift { then, .. } => then.kind(),
            Step::Keyed { step, .. } => step.kind(),
        }
    }

    /// The partner whose key makes the request and the `partner_id` it names
    /// (`None`: an operator step).
    pub fn parties(&self) -> Option<(Ix, Ix)> {
        match self {
            Step::Submit { partner, caller, .. }
            | Step::CreateCustomer { partner, caller, .. }
            | Step::DeleteCustomer { partner, caller, .. }
            | Step::CreateTxn { partner, caller, .. }
            | Step::Void { partner, caller, .. }
            | Step::Reverse { partner, caller, .. } => Some((*caller, *partner)),
            Step::Keyed { step, .. } | Step::Drift { then: step, .. } => step.parties(),
            _ => None,
        }
    }
}

fn id_of(target: &Target, ids: impl Fn(Ix) -> String) -> String {
    match target {
        Target::Known(i) => ids(*i),
        Target::Unknown(id) => id.clone(),
    }
}

fn amount_value(a: &AmountSpec) -> Value {
    match a {
        AmountSpec::Cents { cents, number: true } => {
            serde_json::from_str(&crate::oracle::decimal(*cents)).unwrap_or(Value::Null)
        }
        AmountSpec::Cents { cents, number: false } => json!(crate::oracle::decimal(*cents)),
        AmountSpec::Bad(text) => json!(text),
    }
}

fn account_json(a: &Account) -> Value {
    json!({"name": a.name, "routing_number": a.routing, "account_number": a.number, "account_type": a.kind})
}

/// The JSON body of a transaction request.
pub fn txn_body(oracle: &Oracle, spec: &TxnSpec, key: Option<&str>) -> Value {
    let merchant = match &spec.merchant {
        MerchantRef::Known(m) => oracle.merchants[*m].id.clone(),
        MerchantRef::Unknown(id) | MerchantRef::Malformed(id) => id.clone(),
    };
    let customer = match &spec.customer {
        CustomerSpec::Token(t) => json!({"id": id_of(t, |c| oracle.customers[c].id.clone())}),
        CustomerSpec::Inline(a) => account_json(a),
    };
    let mut v = json!({
        "merchant_id": merchant,
        "amount": amount_value(&spec.amount),
        "description": spec.description,
        "type": if spec.credit { "credit" } else { "debit" },
        "standard_entry_class": spec.class,
        "customer": customer,
    });
    if let Some(c) = &spec.check {
        v["check_number"] = json!(c);
    }
    if let Some(s) = &spec.state {
        v["state"] = json!(s);
    }
    if spec.class == "WEB" && !spec.credit {
        // Nacha Rules 2.5.17.4: a WEB debit's account is validated first; the
        // workload's carry an outside validation (the oracle leaves account
        // validation to the engine's own tests).
        v["account_validation"] = json!({"method": "outside", "provider": "Sim", "reference": "sim-1"});
    }
    if spec.images {
        v["check_image_front"] = json!(IMAGE);
        v["check_image_back"] = json!(IMAGE);
    }
    if let Some(k) = key {
        v["idempotency_key"] = json!(k);
    }
    v
}

/// The JSON of an application.
pub fn app_body(app: &AppSpec) -> Value {
    let mut v: Value = serde_json::from_str(APPLICATION).unwrap_or(Value::Null);
    v["standard_entry_classes"] = json!(app.classes);
    let d = crate::oracle::decimal;
    v["velocities"] = json!({
        "expected_checks_per_year": app.checks_per_year,
        "expected_average_check_amount": d(app.average),
        "expected_sales_per_year": "1000000",
        "highest_amount_allowed": d(app.highest),
        "decline_duplicates": app.decline_duplicates,
    });
    if let Some(low) = app.lowest {
        v["velocities"]["lowest_amount_allowed"] = json!(d(low));
    }
    if app.no_website {
        if let Some(info) = v["company_info"].as_object_mut() {
            info.remove("website");
        }
    }
    v
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// The caller and operation of a step (not [`Step::Drift`], which the runner
/// splits).
pub fn operation(oracle: &Oracle, step: &Step) -> (Caller, Operation) {
    let partner_id = |p: Ix| oracle.partners[p].id.clone();
    let caller = |p: Ix| Caller::Partner { partner_id: partner_id(p) };
    let txn = |t: &Target| id_of(t, |i| oracle.txns[i].id.clone());
    let merchant = |t: &Target| id_of(t, |i| oracle.merchants[i].id.clone());
    let op = Caller::Operator;
    match step {
        Step::CreatePartner { name } => (op, Operation::CreatePartner { name: name.clone() }),
        Step::PartnerLimits { partner, limits } => (
            op,
            Operation::SetPartnerLimits { partner_id: id_of(partner, partner_id), limits: limits.clone() },
        ),
        Step::Submit { partner, caller: c, app } => (
            caller(*c),
            Operation::SubmitMerchant { partner_id: partner_id(*partner), body: bytes(&app_body(app)) },
        ),
        Step::Approve { merchant: m, limits } => {
            (op, Operation::ApproveMerchant { merchant_id: merchant(m), limits: limits.clone() })
        }
        Step::MerchantLimits { merchant: m, limits } => {
            (op, Operation::SetMerchantLimits { merchant_id: merchant(m), limits: limits.clone() })
        }
        Step::CreateCustomer { partner, caller: c, scope, account } => {
            let mut v = account_json(account);
            v["merchant_id"] = json!(scope.as_ref().map_or_else(|| "global".to_owned(), merchant));
            (caller(*c), Operation::CreateCustomer { partner_id: partner_id(*partner), body: bytes(&v) })
        }
        Step::DeleteCustomer { partner, caller: c, customer } => (
            caller(*c),
            Operation::DeleteCustomer {
                partner_id: partner_id(*partner),
                customer_id: id_of(customer, |i| oracle.customers[i].id.clone()),
            },
        ),
        Step::CreateTxn { partner, caller: c, spec } => (
            caller(*c),
            Operation::CreateTransaction {
                partner_id: partner_id(*partner),
                body: bytes(&txn_body(oracle, spec, None)),
            },
        ),
        Step::Void { partner, caller: c, txn: t } => (
            caller(*c),
            Operation::VoidTransaction { partner_id: partner_id(*partner), transaction_id: txn(t) },
        ),
        Step::Reverse { partner, caller: c, txn: t } => (
            caller(*c),
            Operation::ReverseTransaction { partner_id: partner_id(*partner), transaction_id: txn(t) },
        ),
        Step::Return { txn: t, code, date } => (
            op,
            Operation::RecordReturn { transaction_id: txn(t), return_code: code.clone(), return_date: *date },
        ),
        Step::SetClock { to } | Step::Advance { to } | Step::Drift { to, .. } => {
            (op, Operation::SetClock { now: *to })
        }
        Step::Keyed { key, in_body: true, step } => match &**step {
            Step::CreateTxn { partner, caller: c, spec } => (
                caller(*c),
                Operation::CreateTransaction {
                    partner_id: partner_id(*partner),
                    body: bytes(&txn_body(oracle, spec, Some(key))),
                },
            ),
            other => operation(
                oracle,
                &Step::Keyed { key: key.clone(), in_body: false, step: Box::new(other.clone()) },
            ),
        },
        Step::Keyed { key, in_body: false, step } => {
            let (c, inner) = operation(oracle, step);
            (c, Operation::Idempotent { key: key.clone(), operation: Box::new(inner) })
        }
    }
}
