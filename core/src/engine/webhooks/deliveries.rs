//! Deliveries: each event of an endpoint's partner's merchants, taken from
//! the merchant's events feed or the partner's own (each event was written
//! in the commit that made the change, so none is lost), signed and handed
//! to the host to send.
//!
//! A delivery is taken in a write transaction that moves the endpoint's
//! position in the feed and stores the delivery as due again a minute later
//! (its lease): a host that dies before it records the answer sends it again
//! after a restart, with the same `webhook-id` (at least once). A 2xx ends
//! it; a 410 disables the endpoint; anything else (or no answer) is tried
//! again at [`RETRY_AFTER`] from the first try, then it is `failed`.

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use crate::engine::feeds::changes;
use crate::engine::feeds::partner_events::{self, Message};
use crate::engine::webhooks::endpoints::{self, EndpointRecord};
use crate::engine::webhooks::signature;
use crate::engine::Engine;
use crate::model::Event;
use crate::storage::{row_keys, StorageError, Table, Write};

/// When a delivery is tried again, counted from its first try: 5 s, 5 min,
/// 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
pub const RETRY_AFTER: [i64; 9] = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400];

/// How long a delivery handed to the host is its own before it is due again.
pub const LEASE_SECONDS: i64 = 60;

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Not yet answered with a 2xx; tried again at `next_try`.
    Pending,
    /// A 2xx answered it.
    Delivered,
    /// Every try failed, or its endpoint answered 410.
    Failed,
}

/// A stored delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// The message's id (`webhook-id`): its feed's scope (the merchant, or
    /// the partner for a partner's event) and its event's id, the same on
    /// every try.
    pub id: String,
    /// The merchant the event is about.
    pub merchant_id: String,
    /// The event's position in its feed (the merchant's events feed, or the
    /// partner's own for `merchant.*` events).
    pub position: u64,
    /// The event's type.
    pub event_type: String,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Tries made (answered or not).
    pub attempts: u32,
    /// When it was first taken (the body's `timestamp`; retries count from it).
    pub first_try: DateTime<Utc>,
    /// The last answer's HTTP status, if one came.
    pub last_response: Option<u16>,
    /// Why the last try failed without an answer, if it did.
    pub last_error: Option<String>,
    /// When it is due (`None` once delivered or failed).
    pub next_try: Option<DateTime<Utc>>,
}

/// One message for the host to send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookAttempt {
    /// The endpoint.
    pub endpoint_id: String,
    /// The delivery (also its `webhook-id`).
    pub delivery_id: String,
    /// Where to POST it.
    pub url: String,
    /// `webhook-timestamp`: Unix seconds of this try.
    pub timestamp: i64,
    /// `webhook-signature`: `v1,…` per secret in force, space-separated.
    pub signature: String,
    /// The JSON body: `{"type", "timestamp", "data"}`.
    pub body: String,
}

/// How a try went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TryResult {
    /// The receiver answered with this HTTP status.
    Answered(u16),
    /// No answer (refused, timed out, TLS failed): why.
    NoAnswer(String),
}

/// The key of a delivery.
fn delivery_key(endpoint_id: &str, delivery_id: &str) -> Vec<u8> {
    [endpoint_id.as_bytes(), &[0], delivery_id.as_bytes()].concat()
}

/// The key of a due row.
fn due_key(at: DateTime<Utc>, endpoint_id: &str, delivery_id: &str) -> Vec<u8> {
    let mut k = row_keys::instant(at).to_vec();
    k.extend_from_slice(&delivery_key(endpoint_id, delivery_id));
    k
}

/// A due row's endpoint and delivery.
fn due_parts(key: &[u8]) -> Option<(&str, &str)> {
    let rest = std::str::from_utf8(key.get(8..)?).ok()?;
    rest.split_once('\0')
}

/// The message body of `m`, first taken at `first_try`: `{"type", "timestamp", "data"}`.
fn body(m: &Message, first_try: DateTime<Utc>) -> Result<String, StorageError> {
    let kind = serde_json::to_string(&m.kind).map_err(|e| StorageError(e.to_string()))?;
    let at = first_try.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Ok(format!(r#"{{"type":{kind},"timestamp":"{at}","data":{}}}"#, m.data))
}

/// Every endpoint that delivers.
fn endpoints(w: &Write<'_>) -> Result<Vec<EndpointRecord>, StorageError> {
    let mut out = Vec::new();
    w.scan(Table::WebhookEndpoints, &[], &[0xFF], &mut |_, v| {
        let e: EndpointRecord = crate::storage::decode(Table::WebhookEndpoints, v)?;
        if e.disabled_at.is_none() {
            out.push(e);
        }
        Ok(true)
    })?;
    Ok(out)
}

/// Sign and shape a try of `d` (carrying `m`) to `e` at `now`.
fn attempt(
    engine: &Engine,
    e: &EndpointRecord,
    d: &Delivery,
    m: &Message,
    (now, timestamp): (DateTime<Utc>, i64),
) -> Result<WebhookAttempt, StorageError> {
    let body = body(m, d.first_try)?;
    let keys = endpoints::signing_keys(&engine.cipher, e, now)?;
    Ok(WebhookAttempt {
        endpoint_id: e.id.clone(),
        delivery_id: d.id.clone(),
        url: e.url.clone(),
        timestamp,
        signature: signature::signature(&keys, &d.id, timestamp, &body),
        body,
    })
}

/// A merchant's event as a message.
fn merchant_message(merchant_id: &str, position: u64, event: &Event) -> Result<Message, StorageError> {
    Ok(Message {
        position,
        kind: event.kind.clone(),
        id: event.id.clone(),
        merchant_id: merchant_id.to_owned(),
        data: serde_json::to_string(event).map_err(|e| StorageError(e.to_string()))?,
    })
}

/// Up to `most` events of `merchant_id`'s feed after position `after`, in order.
fn merchant_events_after(
    engine: &Engine,
    w: &Write<'_>,
    merchant_id: &str,
    after: u64,
    most: usize,
) -> Result<Vec<Message>, StorageError> {
    let (from, to) = row_keys::seq_range_after(merchant_id, after);
    let mut out = Vec::new();
    w.scan(Table::Events, &from, &to, &mut |key, value| {
        let last = row_keys::seq_of(key).ok_or_else(|| StorageError("a feed key is unreadable".into()))?;
        for (p, entry) in crate::engine::feeds::feed_rows::entries(last, value)? {
            if p <= after {
                continue;
            }
            if out.len() == most {
                return Ok(false);
            }
            let event = changes::event_of(engine, p, changes::decode_event(entry)?);
            out.push(merchant_message(merchant_id, p, &event)?);
        }
        Ok(true)
    })?;
    Ok(out)
}

/// The message delivery `d` of a `partner_id`'s endpoint carries.
fn message_of(
    engine: &Engine,
    w: &Write<'_>,
    partner_id: &str,
    d: &Delivery,
) -> Result<Option<Message>, StorageError> {
    if partner_events::is_partner_event(&d.event_type) {
        return partner_events::at(w, partner_id, d.position);
    }
    Ok(merchant_events_after(engine, w, &d.merchant_id, d.position.saturating_sub(1), 1)?
        .into_iter()
        .find(|m| m.position == d.position))
}

/// Where new events are taken from: the partner's own feed or one of its
/// merchants' events feeds (its id is the feed's scope).
enum Feed {
    Partner(String),
    Merchant(String),
}

impl Feed {
    fn scope(&self) -> &str {
        match self {
            Feed::Partner(id) | Feed::Merchant(id) => id,
        }
    }
}

/// Take up to `most` tries due at `now` (signed at `timestamp`): deliveries
/// due again first, then new events, each endpoint's partner feed and
/// merchants in turn. Each is leased for [`LEASE_SECONDS`].
pub(crate) fn take(
    engine: &Engine,
    w: &mut Write<'_>,
    (now, timestamp): (DateTime<Utc>, i64),
    most: usize,
) -> Result<Vec<WebhookAttempt>, StorageError> {
    let mut out = Vec::new();
    let lease = now + TimeDelta::seconds(LEASE_SECONDS);
    let all = endpoints(w)?;
    // Due again (a retry, or a lease that ran out).
    let upto = row_keys::instant(now + TimeDelta::microseconds(1));
    for (key, _) in w.range(Table::WebhookDue, &[], &upto, most)? {
        let Some((endpoint_id, delivery_id)) = due_parts(&key) else { continue };
        w.remove(Table::WebhookDue, &key)?;
        let Some(e) = all.iter().find(|e| e.id == endpoint_id) else { continue };
        let Some(mut d) =
            w.get::<Delivery>(Table::WebhookDeliveries, &delivery_key(endpoint_id, delivery_id))?
        else {
            continue;
        };
        let Some(m) = message_of(engine, w, &e.partner_id, &d)? else { continue };
        d.next_try = Some(lease);
        w.put(Table::WebhookDeliveries, &delivery_key(&e.id, &d.id), &d)?;
        w.put_raw(Table::WebhookDue, &due_key(lease, &e.id, &d.id), &[])?;
        out.push(attempt(engine, e, &d, &m, (now, timestamp))?);
    }
    // New events.
    for e in &all {
        let merchants = crate::engine::rows::listings::merchants(w, &e.partner_id)?;
        let feeds = std::iter::once(Feed::Partner(e.partner_id.clone()))
            .chain(merchants.into_iter().map(Feed::Merchant));
        for feed in feeds {
            if out.len() >= most {
                return Ok(out);
            }
            let scope = feed.scope();
            let cursor_key = endpoints::cursor_key(&e.id, scope);
            let cursor = w
                .get_raw(Table::WebhookCursors, &cursor_key)?
                .and_then(|b| b.try_into().ok().map(u64::from_be_bytes))
                .unwrap_or(0);
            let room = most - out.len();
            let messages = match &feed {
                Feed::Partner(p) => partner_events::after(w, p, cursor, room)?,
                Feed::Merchant(m) => merchant_events_after(engine, w, m, cursor, room)?,
            };
            let Some(taken) = messages.last().map(|m| m.position) else { continue };
            for m in messages.iter().filter(|m| e.takes(&m.kind)) {
                let d = Delivery {
                    id: format!("{scope}.{}", m.id),
                    merchant_id: m.merchant_id.clone(),
                    position: m.position,
                    event_type: m.kind.clone(),
                    status: DeliveryStatus::Pending,
                    attempts: 0,
                    first_try: now,
                    last_response: None,
                    last_error: None,
                    next_try: Some(lease),
                };
                w.put(Table::WebhookDeliveries, &delivery_key(&e.id, &d.id), &d)?;
                w.put_raw(Table::WebhookDue, &due_key(lease, &e.id, &d.id), &[])?;
                out.push(attempt(engine, e, &d, m, (now, timestamp))?);
            }
            w.put_raw(Table::WebhookCursors, &cursor_key, &taken.to_be_bytes())?;
        }
    }
    Ok(out)
}

/// Record how a try of delivery `delivery_id` to `endpoint_id` went, at `now`.
pub(crate) fn record(
    w: &mut Write<'_>,
    (endpoint_id, delivery_id): (&str, &str),
    result: &TryResult,
    now: DateTime<Utc>,
) -> Result<(), StorageError> {
    let key = delivery_key(endpoint_id, delivery_id);
    let Some(mut d) = w.get::<Delivery>(Table::WebhookDeliveries, &key)? else { return Ok(()) };
    if d.status != DeliveryStatus::Pending {
        return Ok(());
    }
    if let Some(at) = d.next_try {
        w.remove(Table::WebhookDue, &due_key(at, endpoint_id, delivery_id))?;
    }
    d.attempts += 1;
    let (status, error) = match result {
        TryResult::Answered(s) => (Some(*s), None),
        TryResult::NoAnswer(why) => (None, Some(why.chars().take(200).collect::<String>())),
    };
    d.last_response = status;
    d.last_error = error;
    d.next_try = None;
    match status {
        Some(200..=299) => d.status = DeliveryStatus::Delivered,
        Some(410) => {
            d.status = DeliveryStatus::Failed;
            disable(w, endpoint_id, now)?;
        }
        _ => match RETRY_AFTER.get(usize::try_from(d.attempts - 1).unwrap_or(usize::MAX)) {
            Some(after) => {
                let at = (d.first_try + TimeDelta::seconds(*after)).max(now);
                d.next_try = Some(at);
                w.put_raw(Table::WebhookDue, &due_key(at, endpoint_id, delivery_id), &[])?;
            }
            None => d.status = DeliveryStatus::Failed,
        },
    }
    w.put(Table::WebhookDeliveries, &key, &d)
}

/// Disable endpoint `endpoint_id` (its receiver answered 410 Gone).
fn disable(w: &mut Write<'_>, endpoint_id: &str, now: DateTime<Utc>) -> Result<(), StorageError> {
    let mut found = None;
    w.scan(Table::WebhookEndpoints, &[], &[0xFF], &mut |k, v| {
        let e: EndpointRecord = crate::storage::decode(Table::WebhookEndpoints, v)?;
        if e.id == endpoint_id {
            found = Some((k.to_vec(), e));
            return Ok(false);
        }
        Ok(true)
    })?;
    if let Some((k, mut e)) = found {
        e.disabled_at = Some(now);
        w.put(Table::WebhookEndpoints, &k, &e)?;
    }
    Ok(())
}

/// Partner: try delivery `delivery_id` again now (a failed one too).
pub(crate) fn retry(
    w: &mut Write<'_>,
    endpoint_id: &str,
    delivery_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<Delivery>, StorageError> {
    let key = delivery_key(endpoint_id, delivery_id);
    let Some(mut d) = w.get::<Delivery>(Table::WebhookDeliveries, &key)? else { return Ok(None) };
    if let Some(at) = d.next_try {
        w.remove(Table::WebhookDue, &due_key(at, endpoint_id, delivery_id))?;
    }
    d.status = DeliveryStatus::Pending;
    d.next_try = Some(now);
    w.put_raw(Table::WebhookDue, &due_key(now, endpoint_id, delivery_id), &[])?;
    w.put(Table::WebhookDeliveries, &key, &d)?;
    Ok(Some(d))
}

/// How many due rows there are: deliveries taken and not yet delivered or
/// failed.
pub(crate) fn pending(r: &crate::storage::Snapshot) -> Result<u64, StorageError> {
    r.count(Table::WebhookDue)
}

/// An endpoint's deliveries (at most `most`).
pub(crate) fn list(
    r: &crate::storage::Snapshot,
    endpoint_id: &str,
    most: usize,
) -> Result<Vec<Delivery>, StorageError> {
    let from = [endpoint_id.as_bytes(), &[0]].concat();
    let to = [endpoint_id.as_bytes(), &[1]].concat();
    r.range(Table::WebhookDeliveries, &from, &to, most)?
        .into_iter()
        .map(|(_, v)| crate::storage::decode(Table::WebhookDeliveries, &v))
        .collect()
}
