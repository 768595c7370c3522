//! Pages of a list, newest first, walked from a cursor (`rows/listings.rs`);
//! the operator's list of partners in id order.
//!
//! A page reads at most [`SCAN_LIMIT`] rows: a filter that matches few
//! transactions answers a short (even empty) page whose `next_cursor` goes
//! on from where the walk stopped, so no answer costs more than a bounded
//! read, whatever the history.

use chrono::{Days, NaiveDate};

use crate::calendar;
use crate::engine::rows::listings::{self, MERCHANTS, TRANSACTIONS};
use crate::engine::rows::records::{MerchantRecord, PartnerRecord, TransactionRecord};
use crate::engine::tenancy::tenant_lookup::no_merchant;
use crate::engine::views::reader::Reader;
use crate::engine::views::{merchant, partner, transaction};
use crate::engine::{Engine, Refusal};
use crate::model::{MerchantPage, PageRequest, PartnerPage, TransactionFilter, TransactionPage};
use crate::storage::{Snapshot, StorageError, Table};
use crate::validation::ProblemCode;
use crate::AchError;

/// Most rows one page reads.
pub const SCAN_LIMIT: usize = 10_000;

/// The position a cursor for `scope` carries (`None`: the first page).
fn start(engine: &Engine, scope: &str, page: &PageRequest) -> Result<Option<Vec<u8>>, Refusal> {
    let Some(cursor) = &page.after else { return Ok(None) };
    engine.pointers.decode_cursor(scope, cursor).map(Some).ok_or_else(|| {
        Refusal::problem(
            AchError::FailedToAccept,
            "after",
            ProblemCode::InvalidValue,
            "this cursor was not issued by this list (leave it out for the first page)",
        )
    })
}

/// A walk's end: the positions of the items kept, and where the walk stopped
/// early (its read budget spent), if it did.
struct Walked {
    kept: usize,
    last_kept: Option<Vec<u8>>,
    stopped_at: Option<Vec<u8>>,
    more: bool,
}

/// Walk `owner`'s rows of `kind` in `[floor, before)`, newest first, keeping
/// those `keep` takes, until `limit` are kept (and one more is seen), or the
/// read budget is spent.
fn walk(
    r: &Snapshot,
    (owner, kind): (&str, u8),
    bounds: (Option<&[u8]>, Option<&[u8]>),
    limit: usize,
    keep: &mut dyn FnMut(&[u8]) -> Result<bool, StorageError>,
) -> Result<Walked, StorageError> {
    let mut w = Walked { kept: 0, last_kept: None, stopped_at: None, more: false };
    let mut read = 0;
    listings::walk(r, (owner, kind), bounds, limit + 1, &mut |position| {
        if w.kept == limit {
            // One more beyond the page: whether the page has a next.
            w.more = keep(position)?;
            if w.more {
                return Ok(false);
            }
        } else if keep(position)? {
            w.kept += 1;
            w.last_kept = Some(position.to_vec());
        }
        read += 1;
        if read >= SCAN_LIMIT {
            w.stopped_at = Some(position.to_vec());
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(w)
}

/// The cursor that goes on after a walk: from the last item of a full page
/// with more after it, from where a walk stopped early, or none at the end.
fn next(engine: &Engine, scope: &str, w: Walked) -> Option<String> {
    let position = if w.more { w.last_kept } else { w.stopped_at };
    position.map(|p| engine.pointers.encode_cursor(scope, &p))
}

/// The ids sorting at or after every transaction created on Eastern `day`
/// or later (ids sort by creation time: `ids::transaction_floor`).
fn floor_of(day: NaiveDate) -> Vec<u8> {
    crate::ids::transaction_floor(calendar::start_of_eastern_day(day)).into_bytes()
}

/// `GET /transactions`.
pub(crate) fn transactions(
    engine: &Engine,
    reader: Reader<'_>,
    filter: &TransactionFilter,
) -> Result<TransactionPage, Refusal> {
    let merchant_id = filter.merchant_id.as_deref();
    let owner = reader.list_owner(merchant_id).ok_or_else(|| no_merchant(merchant_id.unwrap_or_default()))?;
    let scope = format!("{owner}/t");
    let after = start(engine, &scope, &filter.page)?;
    // Ids sort by creation time, a second's margin beyond the last day
    // (an id's time may run a little ahead of its creation); the dates
    // themselves are checked on each record.
    let floor = filter.created_from.map(floor_of);
    let ceiling = filter.created_to.and_then(|d| d.checked_add_days(Days::new(1))).map(|next_day| {
        let end = calendar::start_of_eastern_day(next_day) + chrono::TimeDelta::seconds(1);
        crate::ids::transaction_floor(end).into_bytes()
    });
    let before = match (after, ceiling) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    };
    let limit = filter.page.limit;
    engine.store.read_durable(|r| {
        if let Some(m) = merchant_id {
            let record: Option<MerchantRecord> = r.get(Table::Merchants, m.as_bytes())?;
            if record.is_none_or(|rec| rec.partner_id != reader.partner()) {
                return Ok(Err(no_merchant(m)));
            }
        }
        let mut found = Vec::new();
        let walked =
            walk(r, (owner, TRANSACTIONS), (floor.as_deref(), before.as_deref()), limit, &mut |id| {
                let Some(t) = r.get::<TransactionRecord>(Table::Transactions, id)? else { return Ok(false) };
                let day = calendar::eastern_date(t.created_at);
                let wanted = reader.sees(&t.partner_id, &t.merchant_id)
                    && filter.status.is_none_or(|s| s == t.state.feed_status())
                    && filter.created_from.is_none_or(|from| day >= from)
                    && filter.created_to.is_none_or(|to| day <= to);
                if wanted && found.len() < limit {
                    found.push(t);
                }
                Ok(wanted)
            })?;
        let transactions =
            found.into_iter().map(|t| transaction::view(engine, r, t)).collect::<Result<Vec<_>, _>>()?;
        Ok(Ok(TransactionPage { transactions, next_cursor: next(engine, &scope, walked) }))
    })?
}

/// `GET /merchants`.
pub(crate) fn merchants(
    engine: &Engine,
    reader: Reader<'_>,
    page: &PageRequest,
) -> Result<MerchantPage, Refusal> {
    let owner = reader.partner();
    let scope = format!("{owner}/m");
    let before = start(engine, &scope, page)?;
    engine
        .store
        .read_durable(|r| {
            let mut found = Vec::new();
            let walked =
                walk(r, (owner, MERCHANTS), (None, before.as_deref()), page.limit, &mut |position| {
                    let Some(id) = crate::storage::row_keys::at_id(position) else { return Ok(false) };
                    let Some(m) = r.get::<MerchantRecord>(Table::Merchants, id.as_bytes())? else {
                        return Ok(false);
                    };
                    let wanted = reader.sees(&m.partner_id, &m.id);
                    if wanted && found.len() < page.limit {
                        found.push(m);
                    }
                    Ok(wanted)
                })?;
            let merchants =
                found.into_iter().map(|m| merchant::view(engine, r, m)).collect::<Result<Vec<_>, _>>()?;
            Ok(MerchantPage { merchants, next_cursor: next(engine, &scope, walked) })
        })
        .map_err(Refusal::from)
}

/// The scope of the cursors of the operator's list of partners (no partner
/// or merchant id, the owners of the other lists, can be this text).
const PARTNERS_SCOPE: &str = "operator/p";

/// `GET /admin/partners`: every partner, in id order (ids are random: the
/// order is stable, not the order of creation). Every partner is kept, so a
/// page reads at most `limit + 1` rows.
pub(crate) fn partners(engine: &Engine, page: &PageRequest) -> Result<PartnerPage, Refusal> {
    let from = start(engine, PARTNERS_SCOPE, page)?.map(|after| crate::storage::key_after(&after));
    engine
        .store
        .read_durable(|r| {
            let mut found = Vec::new();
            let mut more = false;
            r.scan(Table::Partners, from.as_deref().unwrap_or_default(), &[u8::MAX], &mut |_, value| {
                if found.len() == page.limit {
                    more = true;
                    return Ok(false);
                }
                found.push(crate::storage::decode::<PartnerRecord>(Table::Partners, value)?);
                Ok(true)
            })?;
            let next_cursor = found
                .last()
                .filter(|_| more)
                .map(|p| engine.pointers.encode_cursor(PARTNERS_SCOPE, p.id.as_bytes()));
            let partners =
                found.into_iter().map(|p| partner::view(engine, r, p)).collect::<Result<Vec<_>, _>>()?;
            Ok(PartnerPage { partners, next_cursor })
        })
        .map_err(Refusal::from)
}
