//! Responses in the spec's shapes: `{success, payload}`, merchant creation's
//! top-level `id`, `success` as the string `"true"` for customers and status
//! changes, the events list's own shape, and failures as `{success: false,
//! message}` (plus `error_code`, `error_type` and the field problems).

use serde::Serialize;
use serde_json::Value;

use crate::engine::{EventsPage, Outcome, Refusal, ReturnRates, StatusPage};
use crate::error::ERROR_TYPE;
use crate::validation::FieldError;

/// An HTTP status and a JSON body: what every host sends back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// The JSON body.
    pub body: String,
    /// Whether this answers an idempotent request made again, with what its
    /// first time answered: an HTTP host adds `Idempotent-Replayed: true`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

impl Response {
    /// The JSON form of the response: `{"status": 200, "body": {...}}`.
    pub fn to_json(&self) -> String {
        let body: Value = serde_json::from_str(&self.body).unwrap_or(Value::String(self.body.clone()));
        if self.replayed {
            let headers = serde_json::json!({ REPLAYED_HEADER: "true" });
            return serde_json::json!({"status": self.status, "body": body, "headers": headers}).to_string();
        }
        serde_json::json!({"status": self.status, "body": body}).to_string()
    }
}

/// The header an HTTP host adds to a [`Response::replayed`] answer (the JSON
/// form carries it in `headers`).
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";

/// `success` as the spec shows it: a boolean, or the string `"true"` (customers
/// and status changes).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Success {
    Bool,
    Text,
}

impl Serialize for Success {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Success::Bool => s.serialize_bool(true),
            Success::Text => s.serialize_str("true"),
        }
    }
}

#[derive(Serialize)]
struct Envelope<'a, P: Serialize> {
    success: Success,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<P>,
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| String::from(r#"{"success":false}"#))
}

/// A success with a payload.
pub(crate) fn ok<P: Serialize>(status: u16, success: Success, payload: P) -> Response {
    Response { status, body: json(&Envelope { success, id: None, payload: Some(payload) }), replayed: false }
}

/// A success with nothing else (`{"success": "true"}`).
pub(crate) fn ok_empty(success: Success) -> Response {
    Response {
        status: 200,
        body: json(&Envelope::<()> { success, id: None, payload: None }),
        replayed: false,
    }
}

#[derive(Serialize)]
struct IdPayload<'a> {
    id: &'a str,
}

/// Render an operation's outcome.
pub(crate) fn outcome(o: &Outcome) -> Response {
    match o {
        Outcome::Replayed(first) => Response { replayed: true, ..outcome(first) },
        Outcome::TransactionCreated { transaction_id } => {
            ok(201, Success::Bool, IdPayload { id: transaction_id })
        }
        Outcome::CustomerCreated { customer_id } => ok(201, Success::Text, IdPayload { id: customer_id }),
        Outcome::CustomerDeleted { .. } => ok_empty(Success::Text),
        Outcome::MerchantSubmitted { merchant_id } => Response {
            status: 201,
            body: json(&Envelope::<()> { success: Success::Bool, id: Some(merchant_id), payload: None }),
            replayed: false,
        },
        Outcome::TransactionVoided { transaction_id } => {
            ok(200, Success::Bool, serde_json::json!({"id": transaction_id, "status": "voided"}))
        }
        Outcome::ValidationCreated { validation } => ok(201, Success::Bool, validation),
        Outcome::ValidationConfirmed { validation } => ok(200, Success::Bool, validation),
        Outcome::TransactionReinitiated { transaction_id, reinitiation_id } => ok(
            201,
            Success::Bool,
            serde_json::json!({"id": reinitiation_id, "reinitiation_of": transaction_id}),
        ),
        Outcome::TransactionReversed { transaction_id, reversal_id } => {
            ok(200, Success::Bool, serde_json::json!({"id": transaction_id, "reversal_id": reversal_id}))
        }
        Outcome::PartnerCreated { partner_id, api_key } => {
            ok(201, Success::Bool, serde_json::json!({"partner_id": partner_id, "api_key": api_key}))
        }
        Outcome::MerchantApproved { merchant_id, api_key, limits } => ok(
            200,
            Success::Bool,
            serde_json::json!({"merchant_id": merchant_id, "api_key": api_key, "limits": limits}),
        ),
        Outcome::LimitsSet { id, limits } => {
            ok(200, Success::Bool, serde_json::json!({"id": id, "limits": limits}))
        }
        Outcome::ReturnRecorded { transaction_id, .. } => {
            ok(200, Success::Bool, IdPayload { id: transaction_id })
        }
        Outcome::WebhookEndpointCreated { endpoint } => ok(201, Success::Bool, endpoint),
        Outcome::WebhookSecretRotated { endpoint } => ok(200, Success::Bool, endpoint),
        Outcome::WebhookEndpointDeleted { id } => {
            ok(200, Success::Bool, serde_json::json!({"id": id, "deleted": true}))
        }
        Outcome::WebhookRetryScheduled { delivery } => ok(200, Success::Bool, delivery),
        Outcome::WebhookAttempts { attempts } => ok(200, Success::Bool, attempts),
        Outcome::WebhooksRecorded { count } => {
            ok(200, Success::Bool, serde_json::json!({ "recorded": count }))
        }
        Outcome::NoticeApplied { transaction_id, customer_updated } => ok(
            200,
            Success::Bool,
            serde_json::json!({"id": transaction_id, "customer_updated": customer_updated}),
        ),
        Outcome::DirectoryLoaded { records } => {
            ok(200, Success::Bool, serde_json::json!({"records": records}))
        }
        Outcome::MerchantSettingsSet { merchant_id, settings } => ok(
            200,
            Success::Bool,
            serde_json::json!({
                "merchant_id": merchant_id,
                "company_entry_description": settings.company_entry_description,
                "web_debit_validation": settings.web_debit_validation,
            }),
        ),
        Outcome::OriginatorSet { originator } => ok(200, Success::Bool, originator),
        Outcome::RiskRulesSet { rules } => ok(200, Success::Bool, rules),
        Outcome::ReviewDecided { review } => ok(200, Success::Bool, review),
        Outcome::ReturnFileIngested { ingested, .. } => ok(200, Success::Bool, ingested),
        Outcome::KeysRotated { id, api_key, previous_keys, previous_keys_valid_until } => ok(
            200,
            Success::Bool,
            serde_json::json!({
                "id": id,
                "api_key": api_key,
                "previous_keys": previous_keys,
                "previous_keys_valid_until": previous_keys_valid_until.map(|t| t.to_rfc3339()),
            }),
        ),
        Outcome::KeysRevoked { id, revoked } => {
            ok(200, Success::Bool, serde_json::json!({"id": id, "revoked": revoked}))
        }
        Outcome::SuspensionSet { id, suspended, since } => ok(
            200,
            Success::Bool,
            serde_json::json!({"id": id, "suspended": suspended, "since": since.map(|t| t.to_rfc3339())}),
        ),
        Outcome::ClockSet { now, progress } => ok(
            200,
            Success::Bool,
            serde_json::json!({"now": now.to_rfc3339(), "originated": progress.originated, "settled": progress.settled}),
        ),
    }
}

/// `GET /status-changes/{pointer}`.
pub(crate) fn status_page(page: &StatusPage) -> Response {
    ok(200, Success::Text, page)
}

/// `GET /events[/{pointer}]`: the spec's own shape, no envelope.
pub(crate) fn events_page(page: &EventsPage) -> Response {
    Response { status: 200, body: json(page), replayed: false }
}

/// `GET /admin/return-rates`: `{success: true, payload: [per merchant]}`.
pub(crate) fn return_rates(rates: &[ReturnRates]) -> Response {
    ok(200, Success::Bool, rates)
}

/// The body of a catalogued refusal.
#[derive(Serialize)]
struct RefusalBody<'a> {
    success: bool,
    message: String,
    error_code: u16,
    error_type: &'static str,
    errors: &'a [FieldError],
}

/// The body of an authentication refusal.
#[derive(Serialize)]
struct AuthRefusalBody<'a> {
    success: bool,
    message: &'static str,
    #[serde(skip_serializing_if = "<[FieldError]>::is_empty")]
    errors: &'a [FieldError],
}

/// Render a refusal: exactly `{"success":false,"message":"Authentication failed."}`
/// for authentication (with `errors` naming `partner_id` when a right key came
/// without it); otherwise the message, its code, type `E` and the field
/// problems.
pub(crate) fn refusal(f: &Refusal) -> Response {
    match f {
        Refusal::Replayed(first) => Response { replayed: true, ..refusal(first) },
        Refusal::Authentication | Refusal::PartnerIdRequired => Response {
            status: 401,
            body: json(&AuthRefusalBody {
                success: false,
                message: crate::error::AUTHENTICATION_FAILED,
                errors: f.errors(),
            }),
            replayed: false,
        },
        Refusal::Refused { error, errors, .. } => Response {
            status: f.status(),
            body: json(&RefusalBody {
                success: false,
                message: error.to_string(),
                error_code: error.code(),
                error_type: ERROR_TYPE,
                errors,
            }),
            replayed: false,
        },
    }
}

/// A success payload for a read-only lookup.
pub(crate) fn data<P: Serialize>(payload: P) -> Response {
    ok(200, Success::Bool, payload)
}
