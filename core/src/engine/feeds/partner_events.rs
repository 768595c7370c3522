//! A partner's own events: what happens to its merchants rather than to a
//! transaction (`merchant.approved`). They are written in the commit that
//! made the change, numbered per partner, and stored as a webhook's `data`
//! shows them; webhooks take them as they take the merchants' events feeds.

use crate::calendar;
use crate::engine::WriteContext;
use crate::model::MerchantView;
use crate::storage::{row_keys, StorageError, Table, Write};

/// The type of the event an approval writes.
pub const MERCHANT_APPROVED: &str = "merchant.approved";

/// Whether events of type `kind` live in the partner's feed (rather than a
/// merchant's events feed).
pub(crate) fn is_partner_event(kind: &str) -> bool {
    kind == MERCHANT_APPROVED
}

/// One of a partner's events as stored: `{"id", "type", "occurred_at", "merchant"}`.
#[derive(serde::Serialize)]
struct Stored<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: &'a str,
    occurred_at: String,
    merchant: &'a MerchantView,
}

/// Record that `merchant` (as it now stands) was approved.
pub(crate) fn record_approved(
    cx: &mut WriteContext<'_, '_>,
    merchant: &MerchantView,
) -> Result<(), StorageError> {
    let partner_id = merchant.partner_id.as_str();
    let seq = last(cx.write, partner_id)? + 1;
    let event = Stored {
        id: format!("evt_{seq}"),
        kind: MERCHANT_APPROVED,
        occurred_at: calendar::format_eastern_timestamp(cx.now),
        merchant,
    };
    let json = serde_json::to_vec(&event).map_err(|e| StorageError(e.to_string()))?;
    cx.write.put_raw(Table::PartnerEvents, &row_keys::seq(partner_id, seq), &json)
}

/// The last position of `partner_id`'s feed (0 when empty).
pub(crate) fn last(w: &Write<'_>, partner_id: &str) -> Result<u64, StorageError> {
    let (from, to) = row_keys::seq_range_after(partner_id, 0);
    Ok(w.last_key(Table::PartnerEvents, &from, &to)?.and_then(|k| row_keys::seq_of(&k)).unwrap_or(0))
}

/// An event as a webhook carries it: its position, type, id, the merchant
/// it is about, and its JSON (the message's `data`).
pub(crate) struct Message {
    /// Its position in its feed.
    pub position: u64,
    /// Its type.
    pub kind: String,
    /// `evt_…`.
    pub id: String,
    /// The merchant it is about.
    pub merchant_id: String,
    /// The JSON a message's `data` holds.
    pub data: String,
}

/// What a stored event is read back as.
#[derive(serde::Deserialize)]
struct Head {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    merchant: MerchantId,
}

#[derive(serde::Deserialize)]
struct MerchantId {
    id: String,
}

fn message(position: u64, value: &[u8]) -> Result<Message, StorageError> {
    let unreadable = || StorageError("a partner's event is unreadable".into());
    let head: Head = serde_json::from_slice(value).map_err(|_| unreadable())?;
    let data = String::from_utf8(value.to_vec()).map_err(|_| unreadable())?;
    Ok(Message { position, kind: head.kind, id: head.id, merchant_id: head.merchant.id, data })
}

/// Up to `most` of `partner_id`'s events after position `after`, in order.
pub(crate) fn after(
    w: &Write<'_>,
    partner_id: &str,
    after: u64,
    most: usize,
) -> Result<Vec<Message>, StorageError> {
    let (from, to) = row_keys::seq_range_after(partner_id, after);
    w.range(Table::PartnerEvents, &from, &to, most)?
        .into_iter()
        .map(|(k, v)| {
            let position =
                row_keys::seq_of(&k).ok_or_else(|| StorageError("a feed key is unreadable".into()))?;
            message(position, &v)
        })
        .collect()
}

/// `partner_id`'s event at `position`, if there is one.
pub(crate) fn at(w: &Write<'_>, partner_id: &str, position: u64) -> Result<Option<Message>, StorageError> {
    w.get_raw(Table::PartnerEvents, &row_keys::seq(partner_id, position))?
        .map(|v| message(position, &v))
        .transpose()
}
