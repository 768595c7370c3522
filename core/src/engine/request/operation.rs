//! What a host asks the engine for: one operation of the service, and who is
//! asking.

use chrono::{DateTime, NaiveDate, Utc};

use crate::limits::Limits;
use crate::model::NewTransaction;

/// Who is calling, as established by [`crate::engine::Engine::authenticate`].
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
    /// Partner: validate a customer's account
    /// (`POST /customers/{customer_token}/validations`).
    CreateValidation {
        /// The calling partner.
        partner_id: String,
        /// The customer.
        customer_id: String,
        /// The request's JSON.
        body: Vec<u8>,
    },
    /// Partner: confirm a validation's micro-entries
    /// (`POST /customers/{customer_token}/validations/{id}/confirm`).
    ConfirmValidation {
        /// The calling partner.
        partner_id: String,
        /// The customer.
        customer_id: String,
        /// The validation.
        validation_id: String,
        /// The request's JSON (`amounts`).
        body: Vec<u8>,
    },
    /// Operator: record an outside validation of a customer's account
    /// (`POST /admin/customers/{customer_token}/validations`).
    RecordValidation {
        /// The customer (of any partner: the validation is its partner's).
        customer_id: String,
        /// The request's JSON (`merchant_id`, `method` `outside`, `provider`,
        /// `reference`).
        body: Vec<u8>,
    },
    /// Partner: re-initiate a debit returned R01 or R09 (Nacha Rules 2.12.4).
    ReinitiateTransaction {
        /// The calling partner.
        partner_id: String,
        /// The returned transaction (the original or its last re-initiation).
        transaction_id: String,
        /// Same Day ACH: at the next same-day cut-off.
        same_day: bool,
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
        settings: crate::engine::MerchantSettings,
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
    /// Partner: a webhook endpoint for its merchants' events.
    CreateWebhookEndpoint {
        /// The partner.
        partner_id: String,
        /// Where deliveries go.
        url: String,
        /// Only these event types (`None`: all).
        event_types: Option<Vec<String>>,
    },
    /// Partner: delete a webhook endpoint.
    DeleteWebhookEndpoint {
        /// The partner.
        partner_id: String,
        /// The endpoint.
        endpoint_id: String,
    },
    /// Partner: a new secret for a webhook endpoint (the old one signs too for 24 h).
    RotateWebhookSecret {
        /// The partner.
        partner_id: String,
        /// The endpoint.
        endpoint_id: String,
    },
    /// Partner: try a delivery again now.
    RetryWebhookDelivery {
        /// The partner.
        partner_id: String,
        /// The endpoint.
        endpoint_id: String,
        /// The delivery.
        delivery_id: String,
    },
    /// Host (as the operator): take up to `most` webhook deliveries due,
    /// signed at `timestamp` (Unix seconds), each leased.
    TakeWebhooks {
        /// Most deliveries to take.
        most: usize,
        /// Unix seconds of the wall clock, for `webhook-timestamp`.
        timestamp: i64,
    },
    /// Host (as the operator): how each webhook try went (endpoint,
    /// delivery, result).
    RecordWebhooks {
        /// The tries' results.
        results: Vec<(String, String, crate::engine::TryResult)>,
    },
    /// Operator, sandbox only: apply a notification of change to an
    /// originated transaction, exactly as one in a bank's file would be.
    SimulateNotice {
        /// The transaction.
        transaction_id: String,
        /// `C` and two digits.
        change_code: String,
        /// The corrected data as the bank sends it (the 29-character field of
        /// the `98` addenda, read with the change code's layout).
        corrected_data: String,
    },
    /// Operator, sandbox only: set the clock and run everything due up to it.
    SetClock {
        /// The new instant (never earlier than the current one).
        now: DateTime<Utc>,
    },
    /// Operator: a new API key for a partner, a merchant or the operator; the
    /// holder's other keys keep working for `grace_seconds` (0: refused at
    /// once; at most [`crate::engine::MAX_GRACE_SECONDS`]).
    RotateKeys {
        /// Whose keys.
        holder: crate::engine::KeyHolder,
        /// How long the old keys keep working.
        grace_seconds: u32,
    },
    /// Operator: every key of a partner or a merchant refused from now on.
    RevokeKeys {
        /// Whose keys.
        holder: crate::engine::KeyHolder,
    },
    /// Operator: suspend (`true`) or resume (`false`) a partner or a merchant.
    SetSuspended {
        /// Who.
        holder: crate::engine::KeyHolder,
        /// Suspended from now on, or resumed.
        suspended: bool,
    },
    /// Operator: replace the screening rules the update names
    /// (`PUT /admin/risk-rules`).
    SetRiskRules {
        /// The rules to replace.
        update: crate::model::RiskRulesUpdate,
    },
    /// Operator: release (`true`) or reject an entry held for review.
    DecideReview {
        /// The held transaction.
        transaction_id: String,
        /// Release it (it originates at the next cut-off), or reject it.
        release: bool,
        /// The reviewer's note.
        note: Option<String>,
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
    /// The partner a partner's operation acts for (`None`: an operator's
    /// operation); an idempotent operation's is its inner one's.
    pub(crate) fn partner_id(&self) -> Option<&str> {
        match self {
            Operation::SubmitMerchant { partner_id, .. }
            | Operation::CreateCustomer { partner_id, .. }
            | Operation::DeleteCustomer { partner_id, .. }
            | Operation::CreateTransaction { partner_id, .. }
            | Operation::VoidTransaction { partner_id, .. }
            | Operation::ReverseTransaction { partner_id, .. }
            | Operation::ReinitiateTransaction { partner_id, .. }
            | Operation::CreateValidation { partner_id, .. }
            | Operation::ConfirmValidation { partner_id, .. }
            | Operation::CreateWebhookEndpoint { partner_id, .. }
            | Operation::DeleteWebhookEndpoint { partner_id, .. }
            | Operation::RotateWebhookSecret { partner_id, .. }
            | Operation::RetryWebhookDelivery { partner_id, .. } => Some(partner_id),
            Operation::Idempotent { operation, .. } => operation.partner_id(),
            _ => None,
        }
    }

    /// A transaction given as a typed value (serialized to the same JSON a client
    /// would send).
    pub fn create_transaction(partner_id: &str, transaction: &NewTransaction) -> Operation {
        Operation::CreateTransaction {
            partner_id: partner_id.to_owned(),
            body: serde_json::to_vec(transaction).unwrap_or_default(),
        }
    }
}
