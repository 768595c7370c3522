//! A merchant's exposure (Nacha Rules 2.2.3): its credits not yet settled,
//! plus its debits not yet settled or settled within the last two banking
//! days.
//!
//! Kept as one row per merchant of amounts by (settlement instant,
//! direction): an entry's settlement instant is known from its cut-off the
//! moment it is accepted (the calendar decides it), so a cut-off or a
//! settlement changes nothing here; only what adds or removes an entry does
//! (accept, release from review, void, return). An entry held for review is
//! outside its merchant's exposure until released, and so are an account
//! validation's entries. Buckets that no longer
//! count are dropped whenever the row is written.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::calendar;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::WriteContext;
use crate::lifecycle;
use crate::model::{Direction, Exposure};
use crate::money::Money;
use crate::storage::{Snapshot, StorageError, Table};

/// The debits a merchant settled count for this many banking days after.
const SETTLED_DEBIT_DAYS: u32 = 2;

/// One merchant's amounts by when they settle.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ExposureRow {
    /// (settlement instant in seconds, debit?, cents), ordered by instant.
    buckets: Vec<(i64, bool, i64)>,
}

/// The row's key: `merchant`, 0, `x`.
fn key(merchant_id: &str) -> Vec<u8> {
    super::counters::counter_key(merchant_id, super::counters::EXPOSURE, &[])
}

/// When `t` settles: its settlement instant once originated, or the one its
/// cut-off gives it.
fn settles_at(t: &TransactionRecord) -> DateTime<Utc> {
    t.settles_at.unwrap_or_else(|| lifecycle::settlement_at(t.direction, t.cutoff_at).1)
}

impl ExposureRow {
    /// Whether the bucket `(at, debit)` still counts at `now` (`today` its Eastern date).
    fn counts(at: i64, debit: bool, now: DateTime<Utc>, today: NaiveDate) -> bool {
        if at > now.timestamp() {
            return true;
        }
        let settled = DateTime::from_timestamp(at, 0).map(calendar::eastern_date);
        debit && settled.is_some_and(|d| calendar::add_banking_days(d, SETTLED_DEBIT_DAYS) >= today)
    }

    /// The figure's parts at `now`: unsettled credits, unsettled debits,
    /// recently settled debits (cents).
    fn parts(&self, now: DateTime<Utc>) -> [i64; 3] {
        let today = calendar::eastern_date(now);
        let mut parts = [0i64; 3];
        for &(at, debit, cents) in &self.buckets {
            let part = match (debit, at > now.timestamp()) {
                (false, true) => 0,
                (true, true) => 1,
                (true, false) if Self::counts(at, debit, now, today) => 2,
                _ => continue,
            };
            parts[part] = parts[part].saturating_add(cents);
        }
        parts
    }

    /// Add `cents` (negative: remove) to the bucket of `t`, dropping the
    /// buckets that no longer count at `now`.
    fn add(&mut self, t: &TransactionRecord, cents: i64, now: DateTime<Utc>) {
        let today = calendar::eastern_date(now);
        self.buckets.retain(|&(at, debit, _)| Self::counts(at, debit, now, today));
        let at = settles_at(t).timestamp();
        let debit = t.direction == Direction::Debit;
        if !Self::counts(at, debit, now, today) {
            return;
        }
        match self.buckets.binary_search_by(|b| (b.0, b.1).cmp(&(at, debit))) {
            Ok(i) => {
                let bucket = &mut self.buckets[i];
                bucket.2 = bucket.2.saturating_add(cents).max(0);
            }
            Err(i) if cents > 0 => self.buckets.insert(i, (at, debit, cents)),
            Err(_) => {}
        }
    }
}

/// The merchant's exposure at `now` as a figure (cents), in a write transaction.
pub(crate) fn current(cx: &mut WriteContext<'_, '_>, merchant_id: &str) -> Result<i64, StorageError> {
    let row: ExposureRow = cx.counter_row(Table::RiskCounters, &key(merchant_id))?;
    Ok(row.parts(cx.now).iter().fold(0i64, |a, b| a.saturating_add(*b)))
}

/// Count `t` in its merchant's exposure (`true`) or take it out.
pub(crate) fn apply(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    add: bool,
) -> Result<(), StorageError> {
    // An account validation's entries (a prenote, micro-entries) are the
    // engine's own, never the merchant's exposure.
    if t.validation_of.is_some() {
        return Ok(());
    }
    let now = cx.now;
    let row: &mut ExposureRow = cx.counter_row_mut(Table::RiskCounters, &key(&t.merchant_id))?;
    row.add(t, if add { t.amount.cents() } else { -t.amount.cents() }, now);
    Ok(())
}

/// `GET /admin/merchants/{id}/exposure`, on a snapshot at `now`.
pub(crate) fn read(
    r: &Snapshot,
    merchant_id: &str,
    limit: Option<Money>,
    now: DateTime<Utc>,
) -> Result<Exposure, StorageError> {
    let row: ExposureRow = r.get(Table::RiskCounters, &key(merchant_id))?.unwrap_or_default();
    let [credits, debits, settled] = row.parts(now);
    Ok(Exposure {
        merchant_id: merchant_id.to_owned(),
        exposure_limit: limit,
        exposure: Money::from_cents(credits.saturating_add(debits).saturating_add(settled)),
        unsettled_credits: Money::from_cents(credits),
        unsettled_debits: Money::from_cents(debits),
        recently_settled_debits: Money::from_cents(settled),
    })
}
