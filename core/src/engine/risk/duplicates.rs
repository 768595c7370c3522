//! Duplicate detection: the same merchant, account, amount, direction and class
//! within the duplicate window (message 17, when the merchant declines
//! duplicates), and a check number already used on the same account for the same
//! merchant (message 18, always, with no time limit; a voided transaction's check
//! is still spent). Both are lookups of keyed fingerprints: no account number is
//! ever kept in these indexes.
//!
//! The duplicate window lives in memory ([`crate::engine::risk::window`]): derived from the
//! transactions created within it, rebuilt when the engine opens ([`load`]),
//! changed by creates and voids inside their write transactions and undone if
//! those do not commit. Spent checks have no time limit and are stored (table
//! `checks`, keyed by fingerprint alone).

use chrono::{DateTime, Duration, Utc};

use crate::engine::risk::window::{self, Print, Window, WindowChange, PRINT_LEN};
use crate::engine::rows::records::TransactionRecord;
use crate::engine::{Engine, Refusal, Stop, WriteContext};
use crate::secrets::Fingerprinter;
use crate::storage::{Snapshot, StorageError, Table};
use crate::AchError;

/// The default duplicate window: 24 hours.
pub const DEFAULT_DUPLICATE_WINDOW_HOURS: i64 = 24;

/// The two fingerprints of a transaction.
pub(crate) struct Prints {
    similar: Print,
    /// The merchant's entries to the account (screening's `velocity`).
    account: Print,
    check: Option<[u8; 32]>,
}

/// The fingerprints of `t` (its account fingerprint comes from its sealed account).
pub(crate) fn prints(f: &Fingerprinter, t: &TransactionRecord) -> Prints {
    let account = t.account.fingerprint.as_bytes();
    let amount = t.amount.cents().to_be_bytes();
    let digest = f.digest(&[
        b"similar",
        t.merchant_id.as_bytes(),
        account,
        &amount,
        t.direction.as_str().as_bytes(),
        t.class.as_str().as_bytes(),
    ]);
    let mut similar = [0u8; PRINT_LEN];
    similar.copy_from_slice(&digest[..PRINT_LEN]);
    let check = t.check_number.as_ref().map(|n| {
        f.digest(&[b"check", t.merchant_id.as_bytes(), account, n.trim_start_matches('0').as_bytes()])
    });
    Prints { similar, account: account_print(f, &t.merchant_id, &t.account.fingerprint), check }
}

impl Prints {
    /// The print of the merchant's entries to the account.
    pub(crate) fn account(&self) -> Print {
        self.account
    }
}

/// The window's key of a merchant's entries to one account (by its keyed
/// fingerprint): never a similar transaction's key (another domain).
pub(crate) fn account_print(f: &Fingerprinter, merchant_id: &str, account_fingerprint: &str) -> Print {
    let digest = f.digest(&[b"account-entries", merchant_id.as_bytes(), account_fingerprint.as_bytes()]);
    let mut print = [0u8; PRINT_LEN];
    print.copy_from_slice(&digest[..PRINT_LEN]);
    print
}

/// Refuse `t` if it repeats a check (always) or, when the merchant declines
/// duplicates, a similar transaction within the window.
pub(crate) fn check(
    cx: &WriteContext<'_, '_>,
    t: &TransactionRecord,
    p: &Prints,
    decline_duplicates: bool,
) -> Result<(), Stop> {
    if let (Some(key), Some(number)) = (&p.check, &t.check_number) {
        if cx.write.get_raw(Table::Checks, key)?.is_some() {
            let e = AchError::DuplicateCheck { check_number: number.clone() };
            return Err(Refusal::conflict(e, "check_number", "this check was already used").into());
        }
    }
    if !decline_duplicates {
        return Ok(());
    }
    let Some(at) = cx.window.latest(&p.similar) else { return Ok(()) };
    let accepted = window::instant(at);
    if cx.now - accepted < cx.engine.duplicate_window {
        let msg = format!(
            "the same transaction was accepted at {}",
            crate::calendar::format_eastern_timestamp(accepted)
        );
        return Err(Refusal::conflict(AchError::DuplicateTransaction, "", msg).into());
    }
    Ok(())
}

/// Remember an accepted transaction's fingerprints (letting go of the window's
/// entries no window can reach any more).
pub(crate) fn record(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    p: &Prints,
) -> Result<(), StorageError> {
    cx.window.expire(window::micros(window_start(cx.now, cx.engine.duplicate_window)), cx.window_log);
    let at = window::micros(t.created_at);
    for print in [p.similar, p.account] {
        cx.window.add(print, at);
        cx.window_log.push(WindowChange::Added(print, at));
        crate::engine::multiprocess::window_log::added(cx, &print, at)?;
    }
    if let Some(key) = &p.check {
        cx.write.put_raw(Table::Checks, key, t.id.as_bytes())?;
    }
    Ok(())
}

/// A voided transaction is no one's duplicate: remove its entry (an older alike
/// transaction's entry, if any, counts again). Its check stays spent.
pub(crate) fn forget(cx: &mut WriteContext<'_, '_>, t: &TransactionRecord) -> Result<(), StorageError> {
    let p = prints(&cx.engine.fingerprints, t);
    let at = window::micros(t.created_at);
    for print in [p.similar, p.account] {
        if cx.window.remove(&print, at) {
            cx.window_log.push(WindowChange::Removed(print, at));
            crate::engine::multiprocess::window_log::removed(cx, &print, at)?;
        }
    }
    Ok(())
}

/// Whether a stored transaction has its place in the window (if recent enough):
/// one a create accepted (a reversal is made by the service, not created, and is
/// never a duplicate), and not voided ([`forget`]).
fn counts(t: &TransactionRecord) -> bool {
    t.reversal_of.is_none() && t.state != crate::lifecycle::State::Voided
}

/// The window of an engine opening at `now`: every transaction created since the
/// window's start (and its margin), not voided and not a reversal. One range read
/// from the first transaction id that can have been made then.
pub(crate) fn load(
    r: &Snapshot,
    f: &Fingerprinter,
    now: DateTime<Utc>,
    duplicate_window: Duration,
) -> Result<Window, StorageError> {
    let start = window_start(now, duplicate_window);
    let from = crate::ids::transaction_floor(start);
    let mut w = Window::default();
    w.followed = crate::engine::multiprocess::window_log::last_position(r)?;
    for (_, v) in r.range(Table::Transactions, from.as_bytes(), &[0xff], usize::MAX)? {
        let t: TransactionRecord = crate::storage::decode(Table::Transactions, &v)?;
        if counts(&t) && t.created_at >= start {
            let p = prints(f, &t);
            w.add(p.similar, window::micros(t.created_at));
            w.add(p.account, window::micros(t.created_at));
        }
    }
    Ok(w)
}

/// The first instant the window keeps: its [`window::horizon`] and the margin
/// before `now` (the calendar's first instant for a longer window).
fn window_start(now: DateTime<Utc>, duplicate_window: Duration) -> DateTime<Utc> {
    now.checked_sub_signed(window::horizon(duplicate_window) + window::margin())
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
        .max(calendar_start())
}

/// 0000-01-01T00:00:00Z, the engine clock's first instant.
fn calendar_start() -> DateTime<Utc> {
    DateTime::from_timestamp(-62_167_219_200, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// The window as a duration.
pub(crate) fn default_window() -> Duration {
    Duration::hours(DEFAULT_DUPLICATE_WINDOW_HOURS)
}

/// The UTC days (days since 1970-01-01) the window holds entries of, oldest
/// first, with how many each (for the simulation audit and tests).
#[cfg(feature = "simulation")]
pub(crate) fn days(w: &Window) -> Vec<(i64, usize)> {
    let mut days = std::collections::BTreeMap::new();
    for (_, at) in w.instants() {
        *days.entry(at.div_euclid(86_400 * 1_000_000)).or_insert(0) += 1;
    }
    days.into_iter().collect()
}

/// Problems with the window: an entry that is not a live transaction's
/// fingerprint and creation instant, or a live transaction created within the
/// duplicate window (by `now`) that the window misses.
#[cfg(feature = "simulation")]
pub(crate) fn audit(
    w: &Window,
    f: &Fingerprinter,
    txns: &std::collections::BTreeMap<String, TransactionRecord>,
    now: DateTime<Utc>,
    duplicate_window: Duration,
    problems: &mut Vec<String>,
) {
    use std::collections::BTreeMap;
    let mut live: BTreeMap<(Print, i64), usize> = BTreeMap::new();
    let mut due: BTreeMap<(Print, i64), usize> = BTreeMap::new();
    for t in txns.values().filter(|t| counts(t)) {
        let p = prints(f, t);
        for print in [p.similar, p.account] {
            let entry = (print, window::micros(t.created_at));
            *live.entry(entry).or_insert(0) += 1;
            if now - t.created_at < duplicate_window {
                *due.entry(entry).or_insert(0) += 1;
            }
        }
    }
    let mut held: BTreeMap<(Print, i64), usize> = BTreeMap::new();
    for (p, at) in w.instants() {
        *held.entry((*p, at)).or_insert(0) += 1;
    }
    for (entry, n) in &held {
        if live.get(entry).copied().unwrap_or(0) < *n {
            problems.push(format!("a duplicate-window entry at {} is no live transaction's", entry.1));
        }
    }
    for (entry, n) in &due {
        if held.get(entry).copied().unwrap_or(0) < *n {
            problems.push(format!("the duplicate window misses a transaction created at {}", entry.1));
        }
    }
}

impl Engine {
    /// The duplicate window as the stored transactions give it now.
    pub(in crate::engine) fn load_window(&self) -> Result<window::Window, StorageError> {
        self.store.read_durable(|r| load(r, &self.fingerprints, self.now(), self.duplicate_window))
    }

    /// Lock the duplicate window for a write transaction. If a panic ever left
    /// it poisoned (a change half made), or a failed write left it stale
    /// ([`Engine::after_failed_write`]), it is rebuilt from storage first.
    pub(in crate::engine) fn lock_window(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, window::Window>, StorageError> {
        let mut guard = match self.window.lock() {
            Ok(guard) => guard,
            Err(poisoned) => {
                let mut guard = poisoned.into_inner();
                *guard = self.load_window()?;
                self.window.clear_poison();
                guard
            }
        };
        if guard.stale {
            *guard = self.load_window()?;
        }
        Ok(guard)
    }

    /// After a write transaction failed: what it changed in the window is
    /// taken back (`log`). On a shared store the window is rebuilt instead
    /// before its next use: the commit may have landed after all, and the
    /// changes of other processes the transaction applied may be lost with
    /// a failed primary (visible before they were durable; see
    /// `storage/postgres`), so only the database knows.
    pub(in crate::engine) fn after_failed_write(
        &self,
        window: &mut window::Window,
        log: &[window::WindowChange],
    ) {
        if self.store.multiprocess() {
            window.stale = true;
        } else {
            window.undo(log);
        }
    }
}
