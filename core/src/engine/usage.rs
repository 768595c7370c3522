//! Usage counters: incremental aggregates per merchant and per partner, by
//! Eastern day and month, updated in the same write transaction as the
//! transactions they count. A limit check reads a fixed number of counters (a day,
//! a month, and the days of the rolling period): never a scan of history.
//!
//! What counts: every accepted transaction except reversals (a refund is not new
//! business), on the Eastern day and month of its creation. A void gives its usage
//! back; a return does not (the entry went to the bank).

use chrono::{DateTime, Duration, Utc};

use super::records::{MerchantRecord, PartnerRecord, TransactionRecord};
use super::Cx;
use crate::calendar;
use crate::limits::{Usage, Windows, DEFAULT_PERIOD_DAYS, MAX_PERIOD_DAYS};
use crate::storage::{keys, Read, StorageError, Table, Write};

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

fn get(w: &Write, key: &[u8]) -> Result<Usage, StorageError> {
    Ok(w.get_raw(Table::Usage, key)?.map(|b| decode(&b)).unwrap_or_default())
}

/// Whether a transaction counts toward usage.
pub(crate) fn counts(t: &TransactionRecord) -> bool {
    t.reversal_of.is_none()
}

/// The counter keys a transaction created at `at` touches.
fn keys_of(merchant_id: &str, partner_id: &str, at: DateTime<Utc>) -> [Vec<u8>; 3] {
    let day = calendar::eastern_date(at);
    let (year, month) = calendar::eastern_month_key(at);
    [
        keys::usage_day(merchant_id, day),
        keys::usage_day(partner_id, day),
        keys::usage_month(merchant_id, year, month),
    ]
}

/// The length of a rolling period in days (1 to 366; default 7).
fn period_days(setting: Option<u32>) -> u32 {
    setting.unwrap_or(DEFAULT_PERIOD_DAYS).clamp(1, MAX_PERIOD_DAYS)
}

/// The usage of `scope` over the `days` Eastern days ending on `last` (a range read
/// of at most `days` counters).
fn period(w: &Write, scope: &str, last: chrono::NaiveDate, days: u32) -> Result<Usage, StorageError> {
    let first = last - Duration::days(i64::from(days) - 1);
    let from = keys::usage_day(scope, first);
    let to = keys::usage_day(scope, last + Duration::days(1));
    let entries = w.range(Table::Usage, &from, &to, days as usize)?;
    Ok(entries.iter().fold(Usage::default(), |acc, (_, v)| acc.plus(decode(v))))
}

/// The usage a new transaction of this merchant at `at` is measured against.
pub(crate) fn windows(
    cx: &Cx<'_>,
    m: &MerchantRecord,
    p: &PartnerRecord,
    at: DateTime<Utc>,
) -> Result<Windows, StorageError> {
    let [m_day, p_day, m_month] = keys_of(&m.id, &p.id, at);
    let today = calendar::eastern_date(at);
    Ok(Windows {
        merchant_day: get(cx.w, &m_day)?,
        merchant_period: period(cx.w, &m.id, today, period_days(m.limits.period_days))?,
        merchant_month: get(cx.w, &m_month)?,
        overall_day: get(cx.w, &p_day)?,
        overall_period: period(cx.w, &p.id, today, period_days(p.limits.period_days))?,
    })
}

/// Add (`add`) or give back (a void) a transaction's usage.
pub(crate) fn apply(cx: &mut Cx<'_>, t: &TransactionRecord, add: bool) -> Result<(), StorageError> {
    if !counts(t) {
        return Ok(());
    }
    let one = Usage::one(t.amount);
    for key in keys_of(&t.merchant_id, &t.partner_id, t.created_at) {
        let now = get(cx.w, &key)?;
        let next = if add { now.plus(one) } else { now.minus(one) };
        if next == Usage::default() {
            cx.w.remove(Table::Usage, &key)?;
        } else {
            cx.w.put_raw(Table::Usage, &key, &encode(next))?;
        }
    }
    Ok(())
}

/// Recompute every counter from the stored transactions and compare with the
/// stored counters (a full scan: for tests, the simulator and operators).
pub(crate) fn audit(r: &Read) -> Result<Result<(), String>, StorageError> {
    let mut expected: std::collections::BTreeMap<Vec<u8>, Usage> = std::collections::BTreeMap::new();
    for (_, v) in r.range(Table::Transactions, &[], &[0xff], usize::MAX)? {
        let t: TransactionRecord = serde_json::from_slice(&v)
            .map_err(|e| StorageError(format!("a transaction is unreadable: {e}")))?;
        if !counts(&t) || t.state == crate::lifecycle::State::Voided {
            continue;
        }
        for key in keys_of(&t.merchant_id, &t.partner_id, t.created_at) {
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
