//! Webhooks (Standard Webhooks): endpoints a partner registers, and the
//! deliveries of its merchants' events to them, signed, at least once,
//! taken from the events feed so that none is lost, and sent by the host
//! off the request path.

pub(crate) mod address;
pub(crate) mod deliveries;
pub(crate) mod endpoints;
pub(crate) mod signature;

use crate::engine::feeds::changes::{EVENT_TYPE, HELD_EVENT_TYPE, NOTICE_EVENT_TYPE, RELEASED_EVENT_TYPE};
use crate::engine::feeds::partner_events::MERCHANT_APPROVED;
use crate::engine::{Caller, Engine, Operation, Outcome, Refusal, Stop, WriteContext};
use crate::validation::ProblemCode;
use crate::AchError;
use deliveries::{Delivery, TryResult, WebhookAttempt};
use endpoints::EndpointView;

/// Every event type a webhook can deliver.
pub const EVENT_TYPES: [&str; 5] =
    [EVENT_TYPE, NOTICE_EVENT_TYPE, HELD_EVENT_TYPE, RELEASED_EVENT_TYPE, MERCHANT_APPROVED];

/// Most deliveries an endpoint's list shows.
pub const MOST_LISTED: usize = 100;

fn invalid(field: &str, message: impl Into<String>) -> Refusal {
    Refusal::problem(AchError::FailedToAccept, field, ProblemCode::InvalidValue, message)
}

/// Partner: a new endpoint at `url` (checked: see `address.rs`) for
/// `event_types` (each one the engine delivers; `None`: all).
pub(crate) fn create_endpoint(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    url: &str,
    event_types: Option<Vec<String>>,
) -> Result<Outcome, Stop> {
    let url = address::check(url, cx.engine.webhook_allow_private).map_err(|why| invalid("url", why))?;
    if let Some(types) = &event_types {
        if types.is_empty() {
            return Err(invalid(
                "event_types",
                "event_types must name at least one type (or be left out: all)",
            )
            .into());
        }
        if let Some((i, t)) = types.iter().enumerate().find(|(_, t)| !EVENT_TYPES.contains(&t.as_str())) {
            let msg = format!("'{}' is not an event type: {}", crate::echo::echo(t), EVENT_TYPES.join(", "));
            return Err(invalid(&format!("event_types[{i}]"), msg).into());
        }
    }
    endpoints::create(cx, partner_id, &url, event_types)
}

/// Partner: try delivery `delivery_id` of its endpoint `endpoint_id` again now.
pub(crate) fn retry(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    endpoint_id: &str,
    delivery_id: &str,
) -> Result<Outcome, Stop> {
    if cx
        .write
        .get_raw(crate::storage::Table::WebhookEndpoints, &endpoints::key(partner_id, endpoint_id))?
        .is_none()
    {
        return Err(endpoints::unknown(endpoint_id).into());
    }
    let now = cx.now;
    match deliveries::retry(cx.write, endpoint_id, delivery_id, now)? {
        Some(delivery) => Ok(Outcome::WebhookRetryScheduled { delivery }),
        None => Err(Refusal::not_found(
            "delivery_id",
            format!("no delivery '{}'", crate::echo::echo(delivery_id)),
        )
        .into()),
    }
}

impl Engine {
    /// The partner's webhook endpoints (no secret).
    pub fn webhook_endpoints(&self, caller: &Caller, partner_id: &str) -> Result<Vec<EndpointView>, Refusal> {
        crate::engine::credentials::authorize::acts_for(caller, partner_id)?;
        Ok(self.store.read_durable(|r| endpoints::list(r, partner_id))?)
    }

    /// The deliveries of the partner's endpoint `endpoint_id`.
    pub fn webhook_deliveries(
        &self,
        caller: &Caller,
        partner_id: &str,
        endpoint_id: &str,
    ) -> Result<Vec<Delivery>, Refusal> {
        crate::engine::credentials::authorize::acts_for(caller, partner_id)?;
        let key = endpoints::key(partner_id, endpoint_id);
        self.store
            .read_durable(|r| {
                if r.get_raw(crate::storage::Table::WebhookEndpoints, &key)?.is_none() {
                    return Ok(Err(endpoints::unknown(endpoint_id)));
                }
                deliveries::list(r, endpoint_id, MOST_LISTED).map(Ok)
            })
            .map_err(Refusal::from)?
    }

    /// How many deliveries are taken and not yet done (a try in flight, or a
    /// retry waiting), every partner's: each has one due row.
    pub fn webhook_pending(&self) -> Result<u64, Refusal> {
        Ok(self.store.read_durable(deliveries::pending)?)
    }

    /// The host's part: take up to `most` deliveries due by the engine's
    /// clock, each leased (`deliveries.rs`) and signed at `timestamp` (Unix
    /// seconds of the wall clock: what a receiver checks its tolerance
    /// against, a sandbox's clock notwithstanding), in the group commit
    /// ([`Operation::TakeWebhooks`], which a host with a writer of its own
    /// queues there instead). Storage: call it where waiting is allowed.
    pub fn webhook_take(&self, most: usize, timestamp: i64) -> Result<Vec<WebhookAttempt>, Refusal> {
        match self.execute(&Caller::Operator, Operation::TakeWebhooks { most, timestamp })? {
            Outcome::WebhookAttempts { attempts } => Ok(attempts),
            _ => Err(Refusal::refused(AchError::SystemUnable)),
        }
    }

    /// The host's part: record how each try went (endpoint, delivery,
    /// result), in the group commit ([`Operation::RecordWebhooks`]).
    pub fn webhook_record(&self, results: &[(String, String, TryResult)]) -> Result<(), Refusal> {
        self.execute(&Caller::Operator, Operation::RecordWebhooks { results: results.to_vec() }).map(|_| ())
    }
}
