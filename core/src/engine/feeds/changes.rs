//! The two status feeds: status changes per partner, events per merchant.
//!
//! Every change gets the next sequence number of its feed inside the write
//! transaction that makes it, so a feed is in commit order with no gaps, and a
//! reader (a snapshot) sees a prefix of it. A pointer is the last sequence number
//! delivered, MAC'd for its feed (`secrets::PointerCodec`): unforgeable and useless
//! to another partner. A page is a range read after the pointer: O(page), whatever
//! the history.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::calendar;
use crate::engine::feeds::feed_rows;
use crate::engine::rows::record_parts::Tail;
use crate::engine::rows::records::{NoticeRecord, TransactionRecord};
use crate::engine::{Caller, Engine, Refusal, WriteContext};
use crate::lifecycle::State;
use crate::model::{Event, NoticeOfChange, StatusChange};
use crate::storage::{row_keys, Snapshot, StorageError, Table};
use crate::validation::ProblemCode;
use crate::AchError;

/// Most changes or events in one answer.
pub const PAGE_LIMIT: usize = 10_000;

/// The kind of every event today.
pub const EVENT_TYPE: &str = "transaction.status_changed";

/// The reason a void shows in the feeds.
pub const VOID_REASON: &str = "Voided";

/// The reason an entry rejected in review shows in the feeds.
pub const REJECTED_REASON: &str = "Rejected in review";

/// `GET /status-changes/{pointer}`: `{new_pointer, changes}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusPage {
    /// Pass this as the next call's pointer.
    pub new_pointer: String,
    /// The changes, oldest first.
    pub changes: Vec<StatusChange>,
}

/// `GET /events[/{pointer}]`: `{events, new_pointer, exists_more_events}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventsPage {
    /// The events, oldest first.
    pub events: Vec<Event>,
    /// Pass this as the next call's pointer.
    pub new_pointer: String,
    /// Whether more events wait after this page.
    pub exists_more_events: bool,
}

/// A feed's date text, or `null`.
pub(in crate::engine) fn date(d: Option<chrono::NaiveDate>) -> Option<String> {
    d.map(crate::calendar::format_date)
}

/// The status change a transaction's current state reports, at `at`.
fn change_of(t: &TransactionRecord, at: DateTime<Utc>) -> StatusChange {
    let dates = [t.origination_date, t.effective_date, t.settlement_date, t.return_date];
    let ret = (t.return_code.as_deref(), t.return_reason.as_deref());
    status_change(&t.id, t.state, dates, ret, at)
}

/// [`change_of`] a record read as its parts (`id` and its tail).
pub(crate) fn change_from(id: &str, t: &Tail<'_>, at: DateTime<Utc>) -> StatusChange {
    let dates = [t.origination_date, t.effective_date, t.settlement_date, t.return_date];
    status_change(id, t.state, dates, (t.return_code, t.return_reason), at)
}

/// The status change of transaction `id` in `state`, with its origination,
/// effective, settlement and return dates and its return code and reason.
pub(in crate::engine) fn status_change(
    id: &str,
    state: State,
    [origination, effective, settlement, returned]: [Option<chrono::NaiveDate>; 4],
    (return_code, return_reason): (Option<&str>, Option<&str>),
    at: DateTime<Utc>,
) -> StatusChange {
    StatusChange {
        transaction_id: id.to_owned(),
        change_timestamp: calendar::format_eastern_timestamp(at),
        origination_date: date(origination),
        effective_date: date(effective),
        settlement_date: date(settlement),
        return_date: date(returned),
        return_code: return_code.map(str::to_owned),
        status: state.feed_status(),
        // A void shows `Voided`, a rejection in review its own reason.
        reason: match (state, return_reason) {
            (State::Voided, None) => Some(VOID_REASON.to_owned()),
            (_, reason) => reason.map(str::to_owned),
        },
    }
}

/// The next sequence number of a feed (cached for the rest of the transaction).
fn next_seq(cx: &mut WriteContext<'_, '_>, table: Table, scope: &str) -> Result<u64, StorageError> {
    let seqs = &mut cx.seqs[usize::from(table == Table::Events)];
    if let Some(n) = seqs.get_mut(scope) {
        *n += 1;
        return Ok(*n);
    }
    let (from, to) = row_keys::seq_range_after(scope, 0);
    let last = cx.write.last_key_known(table, &from, &to)?.and_then(|k| row_keys::seq_of(&k)).unwrap_or(0);
    let next = last + 1;
    cx.seqs[usize::from(table == Table::Events)].insert(scope.to_owned(), next);
    Ok(next)
}

/// Append the transaction's current status to its partner's status-changes feed
/// and its merchant's events feed.
pub(crate) fn record_change(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    at: DateTime<Utc>,
) -> Result<(), StorageError> {
    let bytes = encode_change(t, at)?;
    record_encoded(cx, (&t.partner_id, &t.merchant_id), &bytes)
}

/// [`record_change`] of the change that ends `t` (a void, a rejection in
/// review, a return), kept also under `t`'s id with the state it ended from:
/// the last entry of its history (`engine/views/history.rs`).
pub(crate) fn record_ending(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    at: DateTime<Utc>,
    ended_from: State,
) -> Result<(), StorageError> {
    let change = change_of(t, at);
    let bytes = crate::storage::encode(Table::Changes, &change)?;
    record_encoded(cx, (&t.partner_id, &t.merchant_id), &bytes)?;
    let ending = crate::storage::encode(Table::Endings, &(ended_from, change))?;
    cx.write.put_raw(Table::Endings, t.id.as_bytes(), &ending)
}

/// The transaction's current status as both feeds store it: encoded once, the
/// same bytes in both (both tables store postcard); an event adds only what
/// its position gives (see `event_at`).
pub(crate) fn encode_change(t: &TransactionRecord, at: DateTime<Utc>) -> Result<Vec<u8>, StorageError> {
    crate::storage::encode(Table::Changes, &change_of(t, at))
}

/// [`record_change`] with the change already encoded ([`encode_change`]), for
/// a transaction of `partner_id` and `merchant_id`.
pub(crate) fn record_encoded(
    cx: &mut WriteContext<'_, '_>,
    (partner_id, merchant_id): (&str, &str),
    change: &[u8],
) -> Result<(), StorageError> {
    append(cx, Table::Changes, partner_id, change)?;
    append(cx, Table::Events, merchant_id, change)
}

/// Append `entry` at the next position of `scope`'s feed in `table`: its own
/// row, or, while a catch-up gathers them, its run's packed row.
fn append(
    cx: &mut WriteContext<'_, '_>,
    table: Table,
    scope: &str,
    entry: &[u8],
) -> Result<(), StorageError> {
    let seq = next_seq(cx, table, scope)?;
    match &mut cx.feed_rows {
        Some(rows) => rows.push(cx.write, table, scope, seq, entry),
        None => cx.write.put_raw(table, &row_keys::seq(scope, seq), entry),
    }
}

/// Append a notification of change to the transaction's merchant's events
/// feed: the transaction's current status change with the notice. Stored as a
/// `0` byte (no status change starts with one: its transaction id is never
/// empty) and the pair, so the feed tells the two kinds apart.
pub(crate) fn record_notice(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    notice: &NoticeRecord,
    at: DateTime<Utc>,
) -> Result<(), StorageError> {
    let mut bytes = vec![NOTICE_TAG];
    bytes.extend(crate::storage::encode(Table::Events, &(change_of(t, at), notice))?);
    append(cx, Table::Events, &t.merchant_id, &bytes)
}

/// A stored event with its sealed parts (a notification of change's
/// corrected data) sealed again by the current data key; `None` when nothing
/// in it was sealed by a retired key. `unopened` counts sealed parts no key
/// opens (left as they are).
pub(crate) fn reseal_event(
    keys: &crate::engine::host::sealing_keys::SealingKeys,
    bytes: &[u8],
    unopened: &mut u64,
) -> Result<Option<Vec<u8>>, StorageError> {
    use crate::engine::host::sealing_keys::Resealed;
    let Some((&NOTICE_TAG, rest)) = bytes.split_first() else { return Ok(None) };
    let (change, mut notice): (StatusChange, NoticeRecord) = crate::storage::decode(Table::Events, rest)?;
    let mut changed = false;
    let aad = notice.sealed_for.clone();
    for part in [&mut notice.account_sealed, &mut notice.text_sealed].into_iter().flatten() {
        match keys.reseal(part, aad.as_bytes()) {
            Resealed::Again(again) => {
                *part = again;
                changed = true;
            }
            Resealed::Unopened => *unopened += 1,
            Resealed::Current => {}
        }
    }
    if !changed {
        return Ok(None);
    }
    let mut out = vec![NOTICE_TAG];
    out.extend(crate::storage::encode(Table::Events, &(change, notice))?);
    Ok(Some(out))
}

/// The first byte of a stored notification of change in the events table.
const NOTICE_TAG: u8 = 0;

/// The first byte of a stored review event (held or released) in the events
/// table: a status change never starts with it either (its transaction id,
/// written first, is longer than one byte).
const REVIEW_TAG: u8 = 1;

/// The type of an event reporting an entry held for review.
pub const HELD_EVENT_TYPE: &str = "transaction.held_for_review";

/// The type of an event reporting an entry released from review.
pub const RELEASED_EVENT_TYPE: &str = "transaction.released_from_review";

/// Append a review event to the transaction's merchant's events feed: the
/// transaction's current status change, whether it was held (`true`) or
/// released, and the rules it tripped. The status-changes feed is untouched:
/// the status did not change.
pub(crate) fn record_review(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    held: bool,
    rules: &[crate::model::Rule],
) -> Result<(), StorageError> {
    let mut bytes = vec![REVIEW_TAG, u8::from(held)];
    bytes.extend(crate::storage::encode(Table::Events, &(change_of(t, cx.now), rules))?);
    append(cx, Table::Events, &t.merchant_id, &bytes)
}

/// The type of an event reporting a notification of change.
pub const NOTICE_EVENT_TYPE: &str = "transaction.notice_of_change";

/// A stored event: a status change, a notification of change, or a review.
pub(crate) enum StoredEvent {
    Change(StatusChange),
    Notice(StatusChange, NoticeRecord),
    Review { change: StatusChange, held: bool, rules: Vec<crate::model::Rule> },
}

#[cfg(feature = "simulation")]
impl StoredEvent {
    /// The status change the event reports.
    pub(crate) fn change(&self) -> &StatusChange {
        match self {
            StoredEvent::Change(c) | StoredEvent::Notice(c, _) | StoredEvent::Review { change: c, .. } => c,
        }
    }
}

/// An events-table row back as what it stores.
pub(crate) fn decode_event(bytes: &[u8]) -> Result<StoredEvent, StorageError> {
    match bytes.split_first() {
        Some((&NOTICE_TAG, rest)) => {
            let (change, notice) = crate::storage::decode(Table::Events, rest)?;
            Ok(StoredEvent::Notice(change, notice))
        }
        Some((&REVIEW_TAG, rest)) => {
            let Some((&held, rest)) = rest.split_first() else {
                return Err(StorageError("a stored review event is cut short".into()));
            };
            let (change, rules) = crate::storage::decode(Table::Events, rest)?;
            Ok(StoredEvent::Review { change, held: held == 1, rules })
        }
        _ => crate::storage::decode(Table::Events, bytes).map(StoredEvent::Change),
    }
}

/// The event at position `seq` of a merchant's feed, reporting `change`.
pub(crate) fn event_at(seq: u64, change: StatusChange) -> Event {
    Event {
        id: format!("evt_{seq}"),
        kind: EVENT_TYPE.to_owned(),
        occurred_at: change.change_timestamp.clone(),
        change,
        notice_of_change: None,
        review: None,
    }
}

/// The event at `seq` from its stored form (a notice's seals opened).
pub(crate) fn event_of(engine: &Engine, seq: u64, stored: StoredEvent) -> Event {
    match stored {
        StoredEvent::Change(change) => event_at(seq, change),
        StoredEvent::Notice(change, notice) => Event {
            kind: NOTICE_EVENT_TYPE.to_owned(),
            notice_of_change: Some(notice_shown(engine, &notice)),
            ..event_at(seq, change)
        },
        StoredEvent::Review { change, held, rules } => Event {
            kind: if held { HELD_EVENT_TYPE } else { RELEASED_EVENT_TYPE }.to_owned(),
            review: Some(crate::model::ReviewNotice { rules }),
            ..event_at(seq, change)
        },
    }
}

/// A stored notice as the events feed shows it (the seals opened).
fn notice_shown(engine: &Engine, n: &NoticeRecord) -> NoticeOfChange {
    let open = |sealed: &Option<Vec<u8>>| {
        sealed
            .as_ref()
            .and_then(|s| engine.cipher.decrypt(s, n.sealed_for.as_bytes()).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    NoticeOfChange {
        change_code: n.change_code.clone(),
        routing_number: n.routing_number.clone(),
        account_number: open(&n.account_sealed),
        account_type: n.account_type.map(|t| t.as_str().to_owned()),
        corrected_data: open(&n.text_sealed),
        customer_id: n.customer_id.clone(),
        customer_updated: n.customer_updated,
    }
}

/// Decode a pointer for `scope`: `"0"` is the start; anything else must be a
/// pointer this feed issued.
fn position(engine: &Engine, scope: &str, pointer: &str) -> Result<u64, Refusal> {
    if pointer == "0" {
        return Ok(0);
    }
    engine.pointers.decode(scope, pointer).ok_or_else(|| {
        Refusal::problem(
            AchError::FailedToAccept,
            "pointer",
            ProblemCode::InvalidValue,
            "this pointer was not issued by this feed (use 0 for the first call)",
        )
    })
}

/// Status changes with their positions, the last position read, whether more follow.
type Page<T = StatusChange> = (Vec<(u64, T)>, u64, bool);

/// Up to `limit` status changes of `scope`'s feed after position `after`, each
/// with its position; the last position read; whether more follow.
fn page(r: &Snapshot, table: Table, scope: &str, after: u64, limit: usize) -> Result<Page, StorageError> {
    page_of(r, table, scope, after, limit, |v| crate::storage::decode(table, v))
}

/// [`page`] with each stored value read by `decode`.
fn page_of<T>(
    r: &Snapshot,
    table: Table,
    scope: &str,
    after: u64,
    limit: usize,
    decode: impl Fn(&[u8]) -> Result<T, StorageError>,
) -> Result<Page<T>, StorageError> {
    // The row holding position `after + 1` is the first keyed at or after it
    // (rows are keyed by their last position; see `feed_rows`).
    let (from, to) = row_keys::seq_range_after(scope, after);
    let mut items = Vec::new();
    let mut more = false;
    r.scan(table, &from, &to, &mut |key, value| {
        let last = row_keys::seq_of(key).ok_or_else(|| StorageError("a feed key is unreadable".into()))?;
        for (position, entry) in feed_rows::entries(last, value)? {
            if position <= after {
                continue;
            }
            if items.len() == limit {
                more = true;
                return Ok(false);
            }
            items.push((position, decode(entry)?));
        }
        Ok(true)
    })?;
    let last = items.last().map_or(after, |(position, _)| *position);
    Ok((items, last, more))
}

/// A page of the partner's status changes.
pub(crate) fn status_page(
    engine: &Engine,
    caller: &Caller,
    partner_id: &str,
    pointer: &str,
) -> Result<StatusPage, Refusal> {
    match caller {
        Caller::Partner { partner_id: p } if p == partner_id => {}
        _ => return Err(Refusal::Authentication),
    }
    let after = position(engine, partner_id, pointer)?;
    let (changes, last, _) =
        engine.store.read_durable(|r| page(r, Table::Changes, partner_id, after, PAGE_LIMIT))?;
    let changes = changes.into_iter().map(|(_, c)| c).collect();
    Ok(StatusPage { new_pointer: engine.pointers.encode(partner_id, last), changes })
}

/// A page of the merchant's events.
pub(crate) fn events_page(
    engine: &Engine,
    caller: &Caller,
    pointer: Option<&str>,
) -> Result<EventsPage, Refusal> {
    let Caller::Merchant { merchant_id, .. } = caller else {
        return Err(Refusal::Authentication);
    };
    let after = match pointer {
        None => 0,
        Some(p) => position(engine, merchant_id, p)?,
    };
    let (events, last, more) = engine
        .store
        .read_durable(|r| page_of(r, Table::Events, merchant_id, after, PAGE_LIMIT, decode_event))?;
    Ok(EventsPage {
        events: events.into_iter().map(|(seq, e)| event_of(engine, seq, e)).collect(),
        new_pointer: engine.pointers.encode(merchant_id, last),
        exists_more_events: more,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::storage::Store;

    fn change(n: u64) -> Vec<u8> {
        let c = StatusChange {
            transaction_id: format!("txn_{n}"),
            change_timestamp: "2026-11-23 18:00:00".into(),
            origination_date: None,
            effective_date: None,
            settlement_date: None,
            return_date: None,
            return_code: None,
            status: crate::model::Status::B,
            reason: None,
        };
        crate::storage::encode(Table::Changes, &c).unwrap()
    }

    /// Rows of one entry and packed rows of several, of two scopes: a page
    /// after any position, of any size, is exactly the entries after it.
    #[test]
    fn pages_read_single_and_packed_rows_from_any_position() {
        let store = Store::in_memory().unwrap();
        // par_a: 1-3 single, 4-8 packed, 9 single, 10-11 packed; par_b packed 1-4.
        let packs: [(&str, &[u64]); 3] =
            [("par_a", &[4, 5, 6, 7, 8]), ("par_a", &[10, 11]), ("par_b", &[1, 2, 3, 4])];
        store
            .write(|w| {
                for n in [1, 2, 3, 9] {
                    w.put_raw(Table::Changes, &row_keys::seq("par_a", n), &change(n))?;
                }
                for (scope, positions) in packs {
                    let mut rows = feed_rows::FeedRows::default();
                    for &n in positions {
                        let id = if scope == "par_b" { 100 + n } else { n };
                        rows.push(w, Table::Changes, scope, n, &change(id))?;
                    }
                    rows.write(w)?;
                }
                Ok(())
            })
            .unwrap();
        store
            .read_durable(|r| {
                for after in 0..=12 {
                    for limit in 1..=13 {
                        let (items, last, more) = page(r, Table::Changes, "par_a", after, limit)?;
                        let want: Vec<u64> = (after + 1..=11).take(limit).collect();
                        let got: Vec<u64> = items.iter().map(|(p, _)| *p).collect();
                        assert_eq!(got, want, "after {after}, limit {limit}");
                        for (p, c) in &items {
                            assert_eq!(c.transaction_id, format!("txn_{p}"));
                        }
                        assert_eq!(last, want.last().copied().unwrap_or(after));
                        assert_eq!(more, after + (limit as u64) < 11, "after {after}, limit {limit}");
                    }
                }
                let (items, last, more) = page(r, Table::Changes, "par_b", 1, 10)?;
                let ids: Vec<&str> = items.iter().map(|(_, c)| c.transaction_id.as_str()).collect();
                assert_eq!((ids, last, more), (vec!["txn_102", "txn_103", "txn_104"], 4, false));
                Ok(())
            })
            .unwrap();
    }
}
