//! The review queue: entries screening held, and what becomes of them.
//!
//! A held entry stays A Pending but is outside the pending index, so no
//! cut-off originates it, and outside its merchant's exposure; `Table::Held`
//! lists it until it is decided. Released, it joins the next cut-off (and the
//! exposure); rejected, it ends as status R with no return code and the
//! reason `Rejected in review`; its partner may still void it. Every review is
//! kept in `Table::Reviews` once decided: the risk report counts, per rule and
//! per Eastern day of screening, what was screened, held, released, rejected,
//! and released then returned unauthorized (`Table::RiskDays`).

use std::collections::BTreeMap;

use chrono::NaiveDate;

use super::exposure;
use crate::calendar;
use crate::engine::feeds::changes;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::WriteContext;
use crate::model::{Review, ReviewStatus, RiskReport, Rule, RuleReport};
use crate::storage::{row_keys, Snapshot, StorageError, Table};

/// Most open reviews one answer lists (the oldest first).
pub const REVIEWS_PAGE: usize = 1000;

/// Most days one risk report covers.
pub const REPORT_DAYS: i64 = 3660;

/// Longest note a decision keeps.
pub const MAX_NOTE: usize = 500;

/// Return codes that say an entry was unauthorized (R17 counts only when
/// its addenda say `QUESTIONABLE`).
const UNAUTHORIZED: [&str; 5] = ["R05", "R07", "R10", "R11", "R29"];

/// The counts of one day of screening, per rule: screened, held, released,
/// rejected, released then returned unauthorized.
type DayCounts = BTreeMap<Rule, [u64; 5]>;

const SCREENED: usize = 0;
const HELD: usize = 1;
const RELEASED: usize = 2;
const REJECTED: usize = 3;
const RETURNED: usize = 4;

/// Add one to `column` of each rule of `rules` on `day`.
fn count(
    cx: &mut WriteContext<'_, '_>,
    day: NaiveDate,
    rules: &[Rule],
    column: usize,
) -> Result<(), StorageError> {
    if rules.is_empty() {
        return Ok(());
    }
    let key = calendar::format_date(day);
    let counts: &mut DayCounts = cx.counter_row_mut(Table::RiskDays, key.as_bytes())?;
    for rule in rules {
        let c = counts.entry(*rule).or_default();
        c[column] = c[column].saturating_add(1);
    }
    Ok(())
}

/// Record a screening of `t` (just stored): the rules that were `on`, and, if
/// it tripped any, hold it: a review, the open list, a held event. Answers
/// whether it is held. An entry not held joins its merchant's exposure.
pub(crate) fn after_screening(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    on: &[Rule],
    tripped: Vec<Rule>,
) -> Result<bool, StorageError> {
    let today = calendar::eastern_date_cached(cx.now);
    count(cx, today, on, SCREENED)?;
    if tripped.is_empty() {
        exposure::apply(cx, t, true)?;
        return Ok(false);
    }
    count(cx, today, &tripped, HELD)?;
    let review = Review {
        transaction_id: t.id.clone(),
        partner_id: t.partner_id.clone(),
        merchant_id: t.merchant_id.clone(),
        amount: t.amount,
        direction: t.direction.as_str().to_owned(),
        standard_entry_class: t.class.as_str().to_owned(),
        rules: tripped,
        held_at: cx.now,
        status: ReviewStatus::Held,
        decided_by: None,
        decided_at: None,
        note: None,
    };
    cx.write.put(Table::Reviews, t.id.as_bytes(), &review)?;
    cx.write.put_raw(Table::Held, &row_keys::at(cx.now, &t.id), &[])?;
    changes::record_review(cx, t, true, &review.rules)?;
    Ok(true)
}

/// The review of `id`, if it is held.
pub(crate) fn held(cx: &WriteContext<'_, '_>, id: &str) -> Result<Option<Review>, StorageError> {
    let review: Option<Review> = cx.write.get(Table::Reviews, id.as_bytes())?;
    Ok(review.filter(|r| r.status == ReviewStatus::Held))
}

/// Close `review` as `status`, by the operator (or, voided, by its partner).
pub(crate) fn close(
    cx: &mut WriteContext<'_, '_>,
    mut review: Review,
    status: ReviewStatus,
    by: &str,
    note: Option<String>,
) -> Result<Review, StorageError> {
    cx.write.remove(Table::Held, &row_keys::at(review.held_at, &review.transaction_id))?;
    review.status = status;
    review.decided_by = Some(by.to_owned());
    review.decided_at = Some(cx.now);
    review.note = note;
    cx.write.put(Table::Reviews, review.transaction_id.as_bytes(), &review)?;
    let column = match status {
        ReviewStatus::Released => Some(RELEASED),
        ReviewStatus::Rejected => Some(REJECTED),
        ReviewStatus::Held | ReviewStatus::Voided => None,
    };
    if let Some(column) = column {
        count(cx, calendar::eastern_date(review.held_at), &review.rules, column)?;
    }
    Ok(review)
}

/// A Pending entry `t` is being voided by its partner: close its review if
/// it is held; otherwise take it out of its merchant's exposure.
pub(crate) fn on_void(cx: &mut WriteContext<'_, '_>, t: &TransactionRecord) -> Result<(), StorageError> {
    match held(cx, &t.id)? {
        Some(review) => close(cx, review, ReviewStatus::Voided, "partner", None).map(drop),
        None => exposure::apply(cx, t, false),
    }
}

/// `t` was just returned (`information`: the return's addenda, if any): out
/// of the exposure, and counted against the rules that held it if it was
/// released and the return says it was unauthorized.
pub(crate) fn on_return(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    information: Option<&str>,
) -> Result<(), StorageError> {
    exposure::apply(cx, t, false)?;
    let code = t.return_code.as_deref().unwrap_or_default();
    let unauthorized = UNAUTHORIZED.contains(&code)
        || (code == "R17" && information.is_some_and(|i| i.to_ascii_uppercase().contains("QUESTIONABLE")));
    if !unauthorized {
        return Ok(());
    }
    let review: Option<Review> = cx.write.get(Table::Reviews, t.id.as_bytes())?;
    match review {
        Some(r) if r.status == ReviewStatus::Released => {
            count(cx, calendar::eastern_date(r.held_at), &r.rules, RETURNED)
        }
        _ => Ok(()),
    }
}

/// The open reviews, oldest first (at most [`REVIEWS_PAGE`]).
pub(crate) fn open(r: &Snapshot) -> Result<Vec<Review>, StorageError> {
    let mut out = Vec::new();
    for (key, _) in r.range(Table::Held, &[], &[0xff; 9], REVIEWS_PAGE)? {
        let id = row_keys::at_id(&key).unwrap_or_default();
        if let Some(review) = r.get::<Review>(Table::Reviews, id.as_bytes())? {
            out.push(review);
        }
    }
    Ok(out)
}

/// How many entries wait for review (every one, not a page).
pub(crate) fn held_count(r: &Snapshot) -> Result<u64, StorageError> {
    r.count(Table::Held)
}

/// `GET /admin/risk-report` over `from`..=`to`.
pub(crate) fn report(r: &Snapshot, from: NaiveDate, to: NaiveDate) -> Result<RiskReport, StorageError> {
    let mut totals: DayCounts = BTreeMap::new();
    let (start, end) = (calendar::format_date(from), calendar::format_date(to));
    let end = [end.as_bytes(), &[0xff]].concat();
    for (_, value) in r.range(Table::RiskDays, start.as_bytes(), &end, usize::MAX)? {
        let day: DayCounts = crate::storage::decode(Table::RiskDays, &value)?;
        for (rule, counts) in day {
            let total = totals.entry(rule).or_default();
            for (t, c) in total.iter_mut().zip(counts) {
                *t = t.saturating_add(c);
            }
        }
    }
    let rules = Rule::ALL
        .into_iter()
        .map(|rule| {
            let c = totals.get(&rule).copied().unwrap_or_default();
            RuleReport {
                rule,
                screened: c[SCREENED],
                held: c[HELD],
                released: c[RELEASED],
                rejected: c[REJECTED],
                returned_unauthorized: c[RETURNED],
            }
        })
        .collect();
    Ok(RiskReport { from, to, rules })
}
