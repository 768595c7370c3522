//! Webhook endpoints: where a partner wants its merchants' events pushed,
//! with the secrets their deliveries are signed with (sealed at rest). A
//! rotated-out secret keeps signing, beside the new one, for 24 hours.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use crate::echo::echo;
use crate::engine::webhooks::signature;
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::ids::{self, IdKind};
use crate::storage::{row_keys, StorageError, Table, Write};

/// How long a rotated-out secret keeps signing.
pub const ROTATION_GRACE_HOURS: i64 = 24;

/// Most endpoints a partner may have.
pub const MOST_PER_PARTNER: usize = 16;

/// A stored endpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EndpointRecord {
    pub id: String,
    pub partner_id: String,
    pub url: String,
    /// Only these event types (`None`: all).
    pub event_types: Option<Vec<String>>,
    /// The secrets deliveries are signed with, newest first.
    pub secrets: Vec<SecretRecord>,
    pub created_at: DateTime<Utc>,
    /// Disabled (a receiver answered 410 Gone): no more deliveries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled_at: Option<DateTime<Utc>>,
}

/// A secret's key bytes, sealed for its endpoint, and until when it signs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SecretRecord {
    pub sealed: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<DateTime<Utc>>,
}

/// An endpoint as the partner sees it (never its secret but once, at creation
/// and rotation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointView {
    /// `whe_…`.
    pub id: String,
    /// Where deliveries go.
    pub url: String,
    /// The event types delivered (`null`: all of them).
    pub event_types: Option<Vec<String>>,
    /// `enabled`, or `disabled` (its receiver answered 410 Gone).
    pub status: String,
    /// `YYYY-MM-DD HH:MM:SS`, US Eastern Time.
    pub created_at: String,
    /// The secret: shown when the endpoint is made and when it is rotated only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl EndpointRecord {
    /// The view of this endpoint, with `secret` if it is to be shown.
    pub(crate) fn view(&self, secret: Option<String>) -> EndpointView {
        EndpointView {
            id: self.id.clone(),
            url: self.url.clone(),
            event_types: self.event_types.clone(),
            status: if self.disabled_at.is_some() { "disabled" } else { "enabled" }.to_owned(),
            created_at: crate::calendar::format_eastern_timestamp(self.created_at),
            secret,
        }
    }

    /// Whether it takes events of type `kind`.
    pub(crate) fn takes(&self, kind: &str) -> bool {
        self.event_types.as_ref().is_none_or(|types| types.iter().any(|t| t == kind))
    }
}

/// The key of endpoint `id` of `partner_id`.
pub(crate) fn key(partner_id: &str, id: &str) -> Vec<u8> {
    [partner_id.as_bytes(), &[0], id.as_bytes()].concat()
}

/// The keys of every endpoint of `partner_id`: `[from, to)`.
fn partner_range(partner_id: &str) -> (Vec<u8>, Vec<u8>) {
    (key(partner_id, ""), [partner_id.as_bytes(), &[1]].concat())
}

/// What a secret is sealed as (associated data): bound to its endpoint.
pub(crate) fn aad(endpoint_id: &str) -> Vec<u8> {
    [b"webhook-secret/".as_slice(), endpoint_id.as_bytes()].concat()
}

/// A new secret for endpoint `id`: its record and its text (shown once).
fn new_secret(cx: &WriteContext<'_, '_>, id: &str) -> (SecretRecord, String) {
    let key = signature::new_key();
    let sealed = STANDARD.encode(cx.engine.cipher.encrypt(&key, &aad(id)));
    (SecretRecord { sealed, until: None }, signature::secret_text(&key))
}

/// The key bytes of every secret of `e` that still signs at `now`.
pub(crate) fn signing_keys(
    cipher: &crate::engine::host::sealing_keys::SealingKeys,
    e: &EndpointRecord,
    now: DateTime<Utc>,
) -> Result<Vec<Vec<u8>>, StorageError> {
    e.secrets
        .iter()
        .filter(|s| s.until.is_none_or(|until| now < until))
        .map(|s| {
            let sealed = STANDARD.decode(&s.sealed).map_err(|_| unreadable(e))?;
            cipher.decrypt(&sealed, &aad(&e.id)).map_err(|_| unreadable(e))
        })
        .collect()
}

fn unreadable(e: &EndpointRecord) -> StorageError {
    StorageError(format!("a secret of webhook endpoint {} does not open", e.id))
}

/// The refusal of an endpoint the partner does not have.
pub(crate) fn unknown(id: &str) -> Refusal {
    Refusal::not_found("endpoint_id", format!("no webhook endpoint '{}'", echo(id)))
}

/// The partner's endpoint `id`.
fn load(cx: &WriteContext<'_, '_>, partner_id: &str, id: &str) -> Result<EndpointRecord, Stop> {
    cx.write.get(Table::WebhookEndpoints, &key(partner_id, id))?.ok_or_else(|| unknown(id).into())
}

/// Partner: a new endpoint. It delivers the events of the partner's
/// merchants from now on: each merchant's feed is taken from its end.
pub(crate) fn create(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    url: &str,
    event_types: Option<Vec<String>>,
) -> Result<Outcome, Stop> {
    crate::engine::tenancy::tenant_lookup::load_partner(cx, partner_id)?;
    let mut count = 0;
    let (from, to) = partner_range(partner_id);
    cx.write.scan(Table::WebhookEndpoints, &from, &to, &mut |_, _| {
        count += 1;
        Ok(true)
    })?;
    if count >= MOST_PER_PARTNER {
        let msg = format!("a partner has at most {MOST_PER_PARTNER} webhook endpoints");
        return Err(Refusal::conflict(crate::AchError::FailedToAccept, "url", msg).into());
    }
    let id = ids::generate(IdKind::WebhookEndpoint);
    let (secret, text) = new_secret(cx, &id);
    let record = EndpointRecord {
        id: id.clone(),
        partner_id: partner_id.to_owned(),
        url: url.to_owned(),
        event_types,
        secrets: vec![secret],
        created_at: cx.now,
        disabled_at: None,
    };
    take_feeds_from_their_ends(cx.write, &record)?;
    cx.write.put(Table::WebhookEndpoints, &key(partner_id, &id), &record)?;
    Ok(Outcome::WebhookEndpointCreated { endpoint: record.view(Some(text)) })
}

/// Start `e` at the end of each of its partner's merchants' events feeds
/// (a merchant made later starts at its feed's beginning).
fn take_feeds_from_their_ends(w: &mut Write<'_>, e: &EndpointRecord) -> Result<(), StorageError> {
    for m in crate::engine::rows::listings::merchants(w, &e.partner_id)? {
        let (from, to) = row_keys::seq_range_after(&m, 0);
        let last = w.last_key(Table::Events, &from, &to)?.and_then(|k| row_keys::seq_of(&k)).unwrap_or(0);
        w.put_raw(Table::WebhookCursors, &cursor_key(&e.id, &m), &last.to_be_bytes())?;
    }
    let last = crate::engine::feeds::partner_events::last(w, &e.partner_id)?;
    w.put_raw(Table::WebhookCursors, &cursor_key(&e.id, &e.partner_id), &last.to_be_bytes())?;
    Ok(())
}

/// The key of endpoint `endpoint_id`'s position in the feed of `scope` (a
/// merchant's events feed, or the partner's own events).
pub(crate) fn cursor_key(endpoint_id: &str, scope: &str) -> Vec<u8> {
    [endpoint_id.as_bytes(), &[0], scope.as_bytes()].concat()
}

/// Partner: delete an endpoint; nothing more is delivered to it.
pub(crate) fn delete(cx: &mut WriteContext<'_, '_>, partner_id: &str, id: &str) -> Result<Outcome, Stop> {
    let e = load(cx, partner_id, id)?;
    cx.write.remove(Table::WebhookEndpoints, &key(partner_id, id))?;
    Ok(Outcome::WebhookEndpointDeleted { id: e.id })
}

/// Partner: a new secret for an endpoint; the ones before keep signing for
/// [`ROTATION_GRACE_HOURS`] (or less, if they were ending sooner).
pub(crate) fn rotate(cx: &mut WriteContext<'_, '_>, partner_id: &str, id: &str) -> Result<Outcome, Stop> {
    let mut e = load(cx, partner_id, id)?;
    let until = cx.now + TimeDelta::hours(ROTATION_GRACE_HOURS);
    let now = cx.now;
    e.secrets.retain(|s| s.until.is_none_or(|u| now < u));
    for s in &mut e.secrets {
        s.until = Some(s.until.map_or(until, |u| u.min(until)));
    }
    let (secret, text) = new_secret(cx, id);
    e.secrets.insert(0, secret);
    cx.write.put(Table::WebhookEndpoints, &key(partner_id, id), &e)?;
    Ok(Outcome::WebhookSecretRotated { endpoint: e.view(Some(text)) })
}

/// The partner's endpoints, as it sees them.
pub(crate) fn list(
    r: &crate::storage::Snapshot,
    partner_id: &str,
) -> Result<Vec<EndpointView>, StorageError> {
    let (from, to) = partner_range(partner_id);
    let mut out = Vec::new();
    for (_, v) in r.range(Table::WebhookEndpoints, &from, &to, MOST_PER_PARTNER * 2)? {
        let e: EndpointRecord = crate::storage::decode(Table::WebhookEndpoints, &v)?;
        out.push(e.view(None));
    }
    Ok(out)
}
