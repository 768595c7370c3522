//! Screening a new entry against the operator's rules (Nacha Rules 2.2.4,
//! 3.1.10: entries unauthorized or authorized under false pretenses).
//!
//! Each rule but `velocity` reads and moves on one small counter row of the
//! entry's merchant in `Table::RiskCounters`, and only while the rule is on
//! (a rule turned on later judges by what it has counted since):
//! - the credits sent to an account (`a` + its keyed fingerprint), written
//!   by credits only (`new_account_credit`);
//! - a payee name's accounts (`n` + the keyed fingerprint of the name, case
//!   and spaces ignored): each account seen under it and since when
//!   (`changed_account_credit`);
//! - the entries of each type per Eastern day over 60 days (`v` + the type)
//!   (`amount_outlier`);
//! - the exposure (`x`, `exposure.rs`), kept whatever the rules say.
//!
//! `velocity` keeps no row: it counts the merchant's live entries to the
//! account in the duplicate window (`window.rs`), in memory.
//!
//! A voided or rejected entry stays in the rows' histories (it was
//! attempted); `velocity` counts live entries only.

use serde::{Deserialize, Serialize};

use super::counters::{counter_key, ACCOUNT, AVERAGE, NAME};
use super::{duplicates, exposure, rules, window};
use crate::calendar;
use crate::engine::rows::records::{MerchantRecord, TransactionRecord};
use crate::engine::WriteContext;
use crate::model::{Direction, RiskRules, Rule};
use crate::storage::{StorageError, Table};

/// How many days of history `amount_outlier` averages.
pub(crate) const AVERAGE_DAYS: i64 = 60;

/// The most accounts a payee name remembers (the latest).
const NAME_ACCOUNTS: usize = 8;

/// The accounts a merchant sent under one payee name: (account fingerprint,
/// first seen, seconds), oldest first.
#[derive(Debug, Default, Serialize, Deserialize)]
struct NameHistory {
    accounts: Vec<(String, i64)>,
}

/// A merchant's entries of one type per Eastern day: (day, count, cents),
/// oldest first, the last [`AVERAGE_DAYS`] days.
#[derive(Debug, Default, Serialize, Deserialize)]
struct DailyAmounts {
    days: Vec<(i32, u64, i64)>,
}

/// Screen `t` (about to be stored) under the rules in force: the rules it
/// trips, each rule's counters moved on. Also answers the rules that were on
/// (the risk report counts what each screened). `account_print`: the entry's
/// account print in the duplicate window, if already made (else made here,
/// when `velocity` is on).
pub(crate) fn screen(
    cx: &mut WriteContext<'_, '_>,
    merchant: &MerchantRecord,
    t: &TransactionRecord,
    account_print: Option<window::Print>,
) -> Result<(Vec<Rule>, Vec<Rule>), StorageError> {
    let rules = rules::in_force(cx)?;
    let on: Vec<Rule> = Rule::ALL.into_iter().filter(|r| rules.enabled(*r)).collect();
    let mut tripped = Vec::new();
    if on.is_empty() {
        return Ok((on, tripped));
    }
    account(cx, &rules, t, account_print, &mut tripped)?;
    if rules.changed_account_credit.enabled && changed_account(cx, &rules, t)? {
        tripped.push(Rule::ChangedAccountCredit);
    }
    if rules.amount_outlier.enabled && outlier(cx, &rules, t)? {
        tripped.push(Rule::AmountOutlier);
    }
    if rules.exposure_limit.enabled {
        if let Some(limit) = merchant.limits.exposure_limit {
            let after = exposure::current(cx, &t.merchant_id)?.saturating_add(t.amount.cents());
            if after > limit.cents() {
                tripped.push(Rule::ExposureLimit);
            }
        }
    }
    tripped.sort();
    Ok((on, tripped))
}

/// `new_account_credit` (the credits sent to the account, a row written by
/// credits only) and `velocity` (the merchant's live entries to the account
/// in the duplicate window, which holds at least 24 hours: no row at all).
fn account(
    cx: &mut WriteContext<'_, '_>,
    rules: &RiskRules,
    t: &TransactionRecord,
    account_print: Option<window::Print>,
    tripped: &mut Vec<Rule>,
) -> Result<(), StorageError> {
    let first_credit = &rules.new_account_credit;
    if first_credit.enabled && t.direction == Direction::Credit {
        let key = counter_key(&t.merchant_id, ACCOUNT, t.account.fingerprint.as_bytes());
        let credits: &mut u32 = cx.counter_row_mut(Table::RiskCounters, &key)?;
        if *credits == 0 && t.amount >= first_credit.min_amount {
            tripped.push(Rule::NewAccountCredit);
        }
        *credits = credits.saturating_add(1);
    }
    if rules.velocity.enabled {
        let print = account_print.unwrap_or_else(|| {
            duplicates::account_print(&cx.engine.fingerprints, &t.merchant_id, &t.account.fingerprint)
        });
        let since = window::micros(cx.now - chrono::Duration::hours(24)) + 1;
        if cx.window.count_since(&print, since) >= rules.velocity.max_per_day as usize {
            tripped.push(Rule::Velocity);
        }
    }
    Ok(())
}

/// `changed_account_credit`: whether `t` is a credit to an account that,
/// within the rule's days, replaced another account under the same payee
/// name (compared by the keyed fingerprint of the name, case and spaces
/// ignored: the name itself is sealed). Every entry records its account
/// under its name.
fn changed_account(
    cx: &mut WriteContext<'_, '_>,
    rules: &RiskRules,
    t: &TransactionRecord,
) -> Result<bool, StorageError> {
    let key = counter_key(&t.merchant_id, NAME, t.account.name_print.as_bytes());
    let now = cx.now.timestamp();
    let h: &mut NameHistory = cx.counter_row_mut(Table::RiskCounters, &key)?;
    let account = &t.account.fingerprint;
    let position = h.accounts.iter().position(|(a, _)| a == account);
    let since = position.and_then(|i| h.accounts.get(i)).map_or(now, |(_, since)| *since);
    // The list is in the order accounts were first seen: an account after
    // the first replaced one seen before it.
    let replaced_another = position.unwrap_or(h.accounts.len()) > 0;
    let window = i64::from(rules.changed_account_credit.days) * 86_400;
    let tripped = t.direction == Direction::Credit && replaced_another && now - since <= window;
    if position.is_none() {
        h.accounts.push((account.clone(), now));
        if h.accounts.len() > NAME_ACCOUNTS {
            h.accounts.remove(0);
        }
    }
    Ok(tripped)
}

/// `amount_outlier`: whether `t` is above the rule's factor times its
/// merchant's average for its type over [`AVERAGE_DAYS`] days, once there
/// are enough of them; `t` joins the history.
fn outlier(
    cx: &mut WriteContext<'_, '_>,
    rules: &RiskRules,
    t: &TransactionRecord,
) -> Result<bool, StorageError> {
    let kind = [u8::from(t.direction == Direction::Debit)];
    let key = counter_key(&t.merchant_id, AVERAGE, &kind);
    let today = day_number(calendar::eastern_date_cached(cx.now));
    let h: &mut DailyAmounts = cx.counter_row_mut(Table::RiskCounters, &key)?;
    h.days.retain(|(day, _, _)| i64::from(today - day) < AVERAGE_DAYS);
    let (count, cents) =
        h.days.iter().fold((0u64, 0i128), |(n, c), (_, dn, dc)| (n + dn, c + i128::from(*dc)));
    let rule = &rules.amount_outlier;
    // amount > factor × (cents / count), compared without division.
    let tripped = count >= u64::from(rule.min_history)
        && i128::from(t.amount.cents()) * i128::from(count) > i128::from(rule.factor) * cents;
    match h.days.last_mut() {
        Some(last) if last.0 == today => {
            last.1 += 1;
            last.2 = last.2.saturating_add(t.amount.cents());
        }
        _ => h.days.push((today, 1, t.amount.cents())),
    }
    Ok(tripped)
}

/// Days since the Common Era of a date.
fn day_number(d: chrono::NaiveDate) -> i32 {
    chrono::Datelike::num_days_from_ce(&d)
}
