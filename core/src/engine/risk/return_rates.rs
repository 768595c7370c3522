//! Nacha return-rate monitoring: per merchant, the share of its debit entries
//! originated in the last [`WINDOW_DAYS`] Eastern days that came back with an
//! unauthorized, an administrative, or any return code, against Nacha's
//! thresholds (0.5 %, 3 %, 15 %).
//!
//! A read on a snapshot. Transaction ids sort by creation time, so the scan
//! starts at the first id that can have been made early enough to originate in
//! the window ([`crate::ids::transaction_floor`]) instead of at the start of
//! history: its cost is the window's transactions, whatever the history.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::calendar;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::{Engine, Refusal, WriteContext};
use crate::model::Direction;
use crate::storage::{StorageError, Table};

/// The monitoring window: the Eastern days ending today (today included).
pub const WINDOW_DAYS: u32 = 60;

/// How much earlier than the window's first day a transaction of the window can
/// have been created: it originates at the first cut-off after its creation, a
/// few days later at most (a weekend and a holiday); ten is plenty.
const CREATION_MARGIN_DAYS: i64 = 10;

/// Return codes Nacha counts as unauthorized.
const UNAUTHORIZED: [&str; 6] = ["R05", "R07", "R10", "R11", "R29", "R51"];

/// Return codes Nacha counts as administrative.
const ADMINISTRATIVE: [&str; 3] = ["R02", "R03", "R04"];

/// A group of return codes whose rate Nacha monitors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReturnGroup {
    /// R05, R07, R10, R11, R29, R51: threshold 0.5 %.
    Unauthorized,
    /// R02, R03, R04: threshold 3 %.
    Administrative,
    /// Every return code: threshold 15 %.
    Overall,
}

impl ReturnGroup {
    /// The three groups, in the answer's order.
    pub const ALL: [ReturnGroup; 3] =
        [ReturnGroup::Unauthorized, ReturnGroup::Administrative, ReturnGroup::Overall];

    /// Whether a return with this code counts in the group.
    pub fn contains(self, code: &str) -> bool {
        match self {
            ReturnGroup::Unauthorized => UNAUTHORIZED.contains(&code),
            ReturnGroup::Administrative => ADMINISTRATIVE.contains(&code),
            ReturnGroup::Overall => true,
        }
    }

    /// The threshold in thousandths, so that comparisons stay exact.
    const fn per_mille(self) -> u64 {
        match self {
            ReturnGroup::Unauthorized => 5,
            ReturnGroup::Administrative => 30,
            ReturnGroup::Overall => 150,
        }
    }

    /// The threshold as a fraction (0.005 is 0.5 %).
    pub fn threshold(self) -> f64 {
        self.per_mille() as f64 / 1000.0
    }

    /// Whether `count` returns of `debits` debits exceed the threshold: strictly
    /// more (Nacha: a rate that "exceeds"), computed on integers. No debits: no.
    pub fn exceeded(self, count: u64, debits: u64) -> bool {
        u128::from(count) * 1000 > u128::from(self.per_mille()) * u128::from(debits)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// `count / debits` (0 without debits).
fn rate(count: u64, debits: u64) -> f64 {
    if debits == 0 {
        0.0
    } else {
        count as f64 / debits as f64
    }
}

/// One group's figures for a merchant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GroupRate {
    /// The window's debits returned with a code of the group.
    pub count: u64,
    /// `count / debits` as a fraction (0 without debits).
    pub rate: f64,
    /// The group's threshold as a fraction.
    pub threshold: f64,
    /// Whether `rate` is strictly above `threshold`.
    pub exceeded: bool,
}

impl GroupRate {
    fn of(group: ReturnGroup, count: u64, debits: u64) -> GroupRate {
        GroupRate {
            count,
            rate: rate(count, debits),
            threshold: group.threshold(),
            exceeded: group.exceeded(count, debits),
        }
    }
}

/// A merchant's return rates over the window (`GET /admin/return-rates`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReturnRates {
    /// The merchant.
    pub merchant_id: String,
    /// Its partner.
    pub partner_id: String,
    /// The window's length in Eastern days ([`WINDOW_DAYS`]).
    pub window_days: u32,
    /// The merchant's debit entries originated in the window: the denominator.
    pub debits: u64,
    /// Unauthorized returns (R05, R07, R10, R11, R29, R51) of those debits.
    pub unauthorized: GroupRate,
    /// Administrative returns (R02, R03, R04) of those debits.
    pub administrative: GroupRate,
    /// Returns with any code of those debits.
    pub overall: GroupRate,
}

/// A recorded return that put its merchant over a group's threshold: the rate
/// exceeds it now and did not without this return.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThresholdCrossing {
    /// The merchant.
    pub merchant_id: String,
    /// Its partner.
    pub partner_id: String,
    /// The group whose threshold was crossed.
    pub group: ReturnGroup,
    /// The group's returns in the window, this one included.
    pub count: u64,
    /// The merchant's debits in the window.
    pub debits: u64,
}

impl ThresholdCrossing {
    /// The rate now, as a fraction.
    pub fn rate(&self) -> f64 {
        rate(self.count, self.debits)
    }

    /// The threshold crossed, as a fraction.
    pub fn threshold(&self) -> f64 {
        self.group.threshold()
    }
}

/// The window at `now`: its first origination date, and the id every
/// transaction that can have originated in it sorts at or after.
struct RateWindow {
    first: NaiveDate,
    floor: String,
}

impl RateWindow {
    fn at(now: DateTime<Utc>) -> RateWindow {
        let back = Duration::days(i64::from(WINDOW_DAYS) - 1);
        let first = calendar::eastern_date(now).checked_sub_signed(back).unwrap_or(NaiveDate::MIN);
        let created = now
            .checked_sub_signed(Duration::days(i64::from(WINDOW_DAYS) + CREATION_MARGIN_DAYS))
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        RateWindow { first, floor: crate::ids::transaction_floor(created) }
    }

    /// Whether `t` is a debit entry originated in the window.
    fn holds(&self, t: &TransactionRecord) -> bool {
        t.direction == Direction::Debit && t.origination_date.is_some_and(|d| d >= self.first)
    }
}

/// One merchant's counts.
#[derive(Debug, Default)]
struct Tally {
    debits: u64,
    returned: [u64; 3],
}

impl Tally {
    fn add(&mut self, t: &TransactionRecord) {
        self.debits += 1;
        if let Some(code) = t.return_code.as_deref().filter(|_| t.state == crate::lifecycle::State::Returned)
        {
            for group in ReturnGroup::ALL {
                if group.contains(code) {
                    self.returned[group.index()] += 1;
                }
            }
        }
    }

    fn count(&self, group: ReturnGroup) -> u64 {
        self.returned[group.index()]
    }
}

/// Visits every stored transaction value from a key on (a read or a write
/// transaction's range).
type Scan<'s> =
    dyn FnMut(&[u8], &mut dyn FnMut(&[u8]) -> Result<(), StorageError>) -> Result<(), StorageError> + 's;

/// The window's tallies by (partner, merchant), of one merchant only if given.
fn tally(
    window: &RateWindow,
    merchant: Option<&str>,
    scan: &mut Scan<'_>,
) -> Result<BTreeMap<(String, String), Tally>, StorageError> {
    let mut out: BTreeMap<(String, String), Tally> = BTreeMap::new();
    scan(window.floor.as_bytes(), &mut |bytes| {
        let t: TransactionRecord = crate::storage::decode(Table::Transactions, bytes)?;
        if window.holds(&t) && merchant.is_none_or(|m| m == t.merchant_id) {
            out.entry((t.partner_id.clone(), t.merchant_id.clone())).or_default().add(&t);
        }
        Ok(())
    })?;
    Ok(out)
}

impl Engine {
    /// Nacha return-rate monitoring (`GET /admin/return-rates`): for every
    /// merchant with debit entries originated in the last [`WINDOW_DAYS`] Eastern
    /// days (by the engine's clock), how many of them are now Returned with an
    /// unauthorized, an administrative or any code, as counts and rates against
    /// the thresholds. Sorted by partner, then merchant. A read on a snapshot:
    /// no write transaction.
    pub fn return_rates(&self) -> Result<Vec<ReturnRates>, Refusal> {
        let window = RateWindow::at(self.now());
        let tallies = self.store.read_durable(|r| {
            tally(&window, None, &mut |from, visit| {
                r.for_each_value(Table::Transactions, from, &[u8::MAX], visit)
            })
        })?;
        Ok(tallies
            .into_iter()
            .map(|((partner_id, merchant_id), t)| {
                let group = |g: ReturnGroup| GroupRate::of(g, t.count(g), t.debits);
                ReturnRates {
                    merchant_id,
                    partner_id,
                    window_days: WINDOW_DAYS,
                    debits: t.debits,
                    unauthorized: group(ReturnGroup::Unauthorized),
                    administrative: group(ReturnGroup::Administrative),
                    overall: group(ReturnGroup::Overall),
                }
            })
            .collect())
    }
}

/// The thresholds the returns just recorded on `returned` (stored, in the write
/// transaction: one return, or a bank file's) put their merchants over. Only a
/// debit originated in the window changes a rate; for those, the merchants'
/// windows are counted in one scan of the window's transactions.
pub(crate) fn crossings(
    cx: &WriteContext<'_, '_>,
    returned: &[&TransactionRecord],
) -> Result<Vec<ThresholdCrossing>, StorageError> {
    let window = RateWindow::at(cx.now);
    let mut codes: BTreeMap<(String, String), Vec<&str>> = BTreeMap::new();
    for t in returned {
        if let Some(code) = t.return_code.as_deref().filter(|_| window.holds(t)) {
            codes.entry((t.partner_id.clone(), t.merchant_id.clone())).or_default().push(code);
        }
    }
    if codes.is_empty() {
        return Ok(Vec::new());
    }
    let only = match codes.keys().collect::<Vec<_>>().as_slice() {
        [(_, merchant)] => Some(merchant.clone()),
        _ => None,
    };
    let tallies = tally(&window, only.as_deref(), &mut |from, visit| {
        cx.write.for_each_value(Table::Transactions, from, &[u8::MAX], visit)
    })?;
    let mut out = Vec::new();
    for ((partner_id, merchant_id), new) in codes {
        let Some(tally) = tallies.get(&(partner_id.clone(), merchant_id.clone())) else { continue };
        for group in ReturnGroup::ALL {
            let added = new.iter().filter(|c| group.contains(c)).count() as u64;
            let count = tally.count(group);
            if added > 0
                && group.exceeded(count, tally.debits)
                && !group.exceeded(count.saturating_sub(added), tally.debits)
            {
                out.push(ThresholdCrossing {
                    merchant_id: merchant_id.clone(),
                    partner_id: partner_id.clone(),
                    group,
                    count,
                    debits: tally.debits,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_exceeded_only_strictly_above() {
        // 1 of 200 is exactly 0.5 %: not exceeded; 2 of 200 is.
        assert!(!ReturnGroup::Unauthorized.exceeded(1, 200));
        assert!(ReturnGroup::Unauthorized.exceeded(2, 200));
        assert!(!ReturnGroup::Administrative.exceeded(6, 200));
        assert!(ReturnGroup::Administrative.exceeded(7, 200));
        assert!(!ReturnGroup::Overall.exceeded(30, 200));
        assert!(ReturnGroup::Overall.exceeded(31, 200));
        // No debits: rate 0, never exceeded.
        assert!(!ReturnGroup::Overall.exceeded(0, 0));
        assert_eq!(GroupRate::of(ReturnGroup::Overall, 0, 0).rate, 0.0);
        // No overflow at the extremes.
        assert!(ReturnGroup::Unauthorized.exceeded(u64::MAX, u64::MAX));
        assert_eq!(ReturnGroup::Overall.threshold(), 0.15);
    }

    #[test]
    fn codes_fall_in_their_groups() {
        for code in UNAUTHORIZED {
            assert!(ReturnGroup::Unauthorized.contains(code) && !ReturnGroup::Administrative.contains(code));
            assert!(crate::returns::lookup(code).is_some(), "{code}");
        }
        for code in ADMINISTRATIVE {
            assert!(ReturnGroup::Administrative.contains(code) && !ReturnGroup::Unauthorized.contains(code));
            assert!(crate::returns::lookup(code).is_some(), "{code}");
        }
        assert!(!ReturnGroup::Unauthorized.contains("R01") && !ReturnGroup::Administrative.contains("R01"));
        assert!(ReturnGroup::Overall.contains("R01"));
    }

    #[test]
    fn the_window_is_sixty_eastern_days_ending_today() {
        // 2027-01-21 10:00 Eastern.
        let now = DateTime::from_timestamp(1_800_543_600, 0).unwrap_or_default();
        let w = RateWindow::at(now);
        assert_eq!(calendar::eastern_date(now), NaiveDate::from_ymd_opt(2027, 1, 21).unwrap_or_default());
        assert_eq!(w.first, NaiveDate::from_ymd_opt(2026, 11, 23).unwrap_or_default());
        assert_eq!(w.floor, crate::ids::transaction_floor(now - Duration::days(70)));
        // The clock's first instant (0000-01-01) does not overflow.
        let start = DateTime::from_timestamp(-62_167_219_200, 0).unwrap_or_default();
        assert_eq!(RateWindow::at(start).floor, crate::ids::transaction_floor(DateTime::UNIX_EPOCH));
    }
}
