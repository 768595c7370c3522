//! Usage counters: incremental aggregates per merchant and per partner, by
//! Eastern day and month, updated in the same write transaction as the
//! transactions they count. A limit check reads a fixed number of counters (a day,
//! a month, and the days of the rolling period): never a scan of history.
//!
//! What counts: every accepted transaction except reversals (a refund is not new
//! business), on the Eastern day and month of its creation. A void gives its usage
//! back; a return does not (the entry went to the bank).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::calendar;
use crate::engine::request::fast_map::FastMap;
use crate::engine::rows::records::{MerchantRecord, PartnerRecord, TransactionRecord};
use crate::engine::WriteContext;
use crate::limits::{Usage, Windows, DEFAULT_PERIOD_DAYS, MAX_PERIOD_DAYS};
use crate::storage::{row_keys, Snapshot, StorageError, Table, Write};

fn decode(bytes: &[u8]) -> Usage {
    let count = bytes.get(..8).and_then(|b| b.try_into().ok()).map_or(0, u64::from_be_bytes);
    let amount = bytes.get(8..16).and_then(|b| b.try_into().ok()).map_or(0, i64::from_be_bytes);
    Usage { count, amount }
}

fn encode(u: Usage) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&u.count.to_be_bytes());
    out[8..].copy_from_slice(&u.amount.to_be_bytes());
    out
}

/// The usage counters a write transaction has read or changed: each counter is
/// read from storage at most once per transaction and written back once, by
/// [`Counters::write_back`] before the commit (a batch of creates by one merchant
/// reads and writes three counters, not three per create). Rolling-period sums are
/// kept too, and moved by every change of a day they cover.
#[derive(Default)]
pub(crate) struct Counters {
    /// Counter key → its value as this transaction sees it, and whether it changed.
    values: BTreeMap<Vec<u8>, (Usage, bool)>,
    /// Rolling-period sums by (scope, last day, days).
    periods: FastMap<(String, NaiveDate, u32), Usage>,
}

impl Counters {
    /// A counter as this transaction sees it.
    fn get(&mut self, w: &Write<'_>, key: &[u8]) -> Result<Usage, StorageError> {
        if let Some((usage, _)) = self.values.get(key) {
            return Ok(*usage);
        }
        let usage = w.get_known(Table::Usage, key)?.map(|b| decode(&b)).unwrap_or_default();
        self.values.insert(key.to_vec(), (usage, false));
        Ok(usage)
    }

    /// The usage of `scope` over the `days` Eastern days ending on `last`: one range
    /// read of at most `days` stored counters (with this transaction's changes
    /// over them), then kept for the rest of the transaction.
    fn period(
        &mut self,
        w: &Write<'_>,
        scope: &str,
        last: NaiveDate,
        days: u32,
    ) -> Result<Usage, StorageError> {
        let id = (scope.to_owned(), last, days);
        if let Some(sum) = self.periods.get(&id) {
            return Ok(*sum);
        }
        let first = last - Duration::days(i64::from(days) - 1);
        let from = row_keys::usage_day(scope, first);
        let to = row_keys::usage_day(scope, last + Duration::days(1));
        let sum = if days <= DAYS_KNOWN {
            // Day by day, as earlier transactions came to know them, each
            // as this transaction sees it.
            let mut sum = Usage::default();
            let first = row_keys::day_number(first);
            let mut key_of =
                |i: usize, key: &mut Vec<u8>| row_keys::usage_day_into(key, scope, first + i as u32);
            w.visit_known_in(Table::Usage, (&from, &to), days as usize, &mut key_of, &mut |key, stored| {
                let usage = match self.values.get(key) {
                    Some((usage, _)) => *usage,
                    None => stored.map(decode).unwrap_or_default(),
                };
                sum = sum.plus(usage);
            })?;
            sum
        } else {
            let stored = w.range(Table::Usage, &from, &to, days as usize)?;
            let mut by_day: BTreeMap<Vec<u8>, Usage> =
                stored.into_iter().map(|(k, v)| (k, decode(&v))).collect();
            for (k, (usage, _)) in self.values.range(from..to) {
                by_day.insert(k.clone(), *usage);
            }
            by_day.values().fold(Usage::default(), |acc, u| acc.plus(*u))
        };
        self.periods.insert(id, sum);
        Ok(sum)
    }

    /// Add `delta` (`add`) or take it away from the counter `key`, which counts
    /// `day` of `scope` (`None`: a month counter).
    fn change(
        &mut self,
        w: &Write<'_>,
        key: Vec<u8>,
        scope: &str,
        day: Option<NaiveDate>,
        delta: Usage,
        add: bool,
    ) -> Result<(), StorageError> {
        let now = self.get(w, &key)?;
        let next = if add { now.plus(delta) } else { now.minus(delta) };
        self.values.insert(key, (next, true));
        let Some(day) = day else { return Ok(()) };
        for ((s, last, days), sum) in &mut self.periods {
            let covers = *last >= day && (*last - day).num_days() < i64::from(*days);
            if covers && s == scope {
                *sum = if add { sum.plus(delta) } else { sum.minus(delta) };
            }
        }
        Ok(())
    }

    /// Store every changed counter (a counter back at zero is removed).
    pub(crate) fn write_back(self, w: &mut Write<'_>) -> Result<(), StorageError> {
        for (key, (usage, changed)) in self.values {
            if !changed {
                continue;
            }
            if usage == Usage::default() {
                w.remove(Table::Usage, &key)?;
            } else {
                w.put_raw(Table::Usage, &key, &encode(usage))?;
            }
        }
        Ok(())
    }
}

/// Rolling periods of at most this many days are summed from day counters
/// known across transactions (`storage/write_cache.rs`); longer ones from one
/// range read.
const DAYS_KNOWN: u32 = 31;

/// Whether a transaction counts toward usage: every one but a reversal credit
/// (which gives back what a debit took; a reversal debit counts like any debit).
pub(crate) fn counts(t: &TransactionRecord) -> bool {
    t.reversal_of.is_none() || t.direction == crate::model::Direction::Debit
}

/// The counters a transaction created at `at` touches: (key, scope, day) for the
/// merchant's day, the partner's day and the merchant's month (day `None`).
fn counters_of<'s>(
    merchant_id: &'s str,
    partner_id: &'s str,
    at: DateTime<Utc>,
) -> [(Vec<u8>, &'s str, Option<NaiveDate>); 3] {
    let day = calendar::eastern_date(at);
    let (year, month) = calendar::eastern_month_key(at);
    [
        (row_keys::usage_day(merchant_id, day), merchant_id, Some(day)),
        (row_keys::usage_day(partner_id, day), partner_id, Some(day)),
        (row_keys::usage_month(merchant_id, year, month), merchant_id, None),
    ]
}

/// The length of a rolling period in days (1 to 366; default 7).
fn period_days(setting: Option<u32>) -> u32 {
    setting.unwrap_or(DEFAULT_PERIOD_DAYS).clamp(1, MAX_PERIOD_DAYS)
}

/// The usage a new transaction of this merchant, now, is measured against.
pub(crate) fn windows(
    cx: &mut WriteContext<'_, '_>,
    m: &MerchantRecord,
    p: &PartnerRecord,
) -> Result<Windows, StorageError> {
    let at = cx.now;
    let [(m_day, ..), (p_day, ..), (m_month, ..)] = counters_of(&m.id, &p.id, at);
    let today = calendar::eastern_date(at);
    let (c, w) = (&mut cx.usage, &*cx.write);
    Ok(Windows {
        merchant_day: c.get(w, &m_day)?,
        merchant_period: c.period(w, &m.id, today, period_days(m.limits.period_days))?,
        merchant_month: c.get(w, &m_month)?,
        overall_day: c.get(w, &p_day)?,
        overall_period: c.period(w, &p.id, today, period_days(p.limits.period_days))?,
    })
}

/// Add (`add`) or give back (a void) a transaction's usage.
pub(crate) fn apply(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    add: bool,
) -> Result<(), StorageError> {
    if !counts(t) {
        return Ok(());
    }
    let one = Usage::one(t.amount);
    for (key, scope, day) in counters_of(&t.merchant_id, &t.partner_id, t.created_at) {
        cx.usage.change(cx.write, key, scope, day, one, add)?;
    }
    Ok(())
}

/// Recompute every counter from the stored transactions and compare with the
/// stored counters (a full scan: for tests, the simulator and operators).
pub(crate) fn audit(r: &Snapshot) -> Result<Result<(), String>, StorageError> {
    let mut expected: std::collections::BTreeMap<Vec<u8>, Usage> = std::collections::BTreeMap::new();
    for (_, v) in r.range(Table::Transactions, &[], &[0xff], usize::MAX)? {
        let t: TransactionRecord = crate::storage::decode(Table::Transactions, &v)?;
        if !counts(&t) || t.state == crate::lifecycle::State::Voided {
            continue;
        }
        for (key, ..) in counters_of(&t.merchant_id, &t.partner_id, t.created_at) {
            let e = expected.entry(key).or_default();
            *e = e.plus(Usage::one(t.amount));
        }
    }
    let stored: std::collections::BTreeMap<Vec<u8>, Usage> =
        r.range(Table::Usage, &[], &[0xff], usize::MAX)?.into_iter().map(|(k, v)| (k, decode(&v))).collect();
    if stored == expected {
        return Ok(Ok(()));
    }
    let diff: Vec<String> = expected
        .keys()
        .chain(stored.keys())
        .filter(|k| expected.get(*k) != stored.get(*k))
        .take(5)
        .map(|k| {
            format!(
                "{}: stored {:?}, recomputed {:?}",
                String::from_utf8_lossy(k),
                stored.get(k),
                expected.get(k)
            )
        })
        .collect();
    Ok(Err(diff.join("; ")))
}
