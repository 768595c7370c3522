//! The duplicate window when several processes write one database
//! (PostgreSQL): each process keeps the window in memory, as on redb, and
//! the database keeps its changes in order (`window_log`). A create or void
//! that changes the window appends its change in the same write
//! transaction; every write transaction first applies the changes the
//! other processes appended since this one last looked. A transaction's
//! changes are one row, keyed by the position of its LAST change, its value
//! the changes in order ([`ENTRY_LEN`] bytes each: positions up to the
//! key's). The store's write
//! lock runs write transactions one at a time across processes, so none is
//! missed or applied twice, and a duplicate made through another process is
//! refused as one made through this one.
//!
//! On redb (one process) nothing is appended or read.

use crate::engine::risk::window::{self, Print, Window, WindowChange, PRINT_LEN};
use crate::engine::WriteContext;
use crate::storage::{key_after, Snapshot, StorageError, Table};

const ADDED: u8 = 1;
const REMOVED: u8 = 2;

/// Changes kept: older ones are removed (their entries have left every
/// window) this often, a bounded run at a time.
const PRUNE_EVERY: u64 = 1024;

/// The bytes of one change: added or removed, the fingerprint, the instant.
const ENTRY_LEN: usize = 1 + PRINT_LEN + 8;

fn position_key(position: u64) -> [u8; 8] {
    position.to_be_bytes()
}

fn encode(op: u8, print: &Print, at: i64) -> [u8; ENTRY_LEN] {
    let mut v = [0u8; ENTRY_LEN];
    v[0] = op;
    v[1..=PRINT_LEN].copy_from_slice(print);
    v[1 + PRINT_LEN..].copy_from_slice(&at.to_be_bytes());
    v
}

fn unreadable() -> StorageError {
    StorageError("a window log entry is unreadable".into())
}

fn position_of(key: &[u8]) -> Result<u64, StorageError> {
    Ok(u64::from_be_bytes(key.try_into().map_err(|_| unreadable())?))
}

/// The changes of a row keyed `key`, each with its position, oldest first.
fn decode(key: &[u8], value: &[u8]) -> Result<Vec<(u64, u8, Print, i64)>, StorageError> {
    let last = position_of(key)?;
    if value.is_empty() || !value.len().is_multiple_of(ENTRY_LEN) {
        return Err(unreadable());
    }
    let count = (value.len() / ENTRY_LEN) as u64;
    let first = (last + 1).checked_sub(count).ok_or_else(unreadable)?;
    value
        .chunks_exact(ENTRY_LEN)
        .zip(first..)
        .map(|(entry, position)| {
            if !matches!(entry[0], ADDED | REMOVED) {
                return Err(unreadable());
            }
            let mut print = [0u8; PRINT_LEN];
            print.copy_from_slice(&entry[1..=PRINT_LEN]);
            let at = i64::from_be_bytes(entry[1 + PRINT_LEN..].try_into().map_err(|_| unreadable())?);
            Ok((position, entry[0], print, at))
        })
        .collect()
}

/// The log's last position in `r` (0: empty), where a window loaded from the
/// same snapshot stands.
pub(crate) fn last_position(r: &Snapshot) -> Result<u64, StorageError> {
    match r.last_key(Table::WindowLog, &[], &[0xff; 9])? {
        Some(key) => position_of(&key),
        None => Ok(0),
    }
}

/// Before a write transaction on a shared store: have its [`follow`] scan
/// read ahead with its BEGIN (no round trip of its own).
pub(crate) fn read_ahead(engine: &crate::engine::Engine, window: &Window) {
    if engine.store.multiprocess() {
        engine.store.scan_next(Table::WindowLog, &position_key(window.followed + 1), &[0xff; 9]);
    }
}

/// Apply the changes appended since the window last looked (by other
/// processes: its own were applied as they were made). They are committed:
/// this transaction's failure does not take them back.
pub(crate) fn follow(cx: &mut WriteContext<'_, '_>) -> Result<(), StorageError> {
    if !cx.engine.store.multiprocess() {
        return Ok(());
    }
    let from = position_key(cx.window.followed + 1);
    let mut changes = Vec::new();
    cx.write.scan(Table::WindowLog, &from, &[0xff; 9], &mut |k, v| {
        changes.extend(decode(k, v)?);
        Ok(true)
    })?;
    for (position, op, print, at) in changes {
        apply(cx.window, op, print, at);
        cx.window.followed = position;
    }
    Ok(())
}

fn apply(w: &mut Window, op: u8, print: Print, at: i64) {
    if op == ADDED {
        w.add(print, at);
    } else {
        w.remove(&print, at);
    }
}

/// Append this transaction's own change (already made to the window).
pub(crate) fn added(cx: &mut WriteContext<'_, '_>, print: &Print, at: i64) -> Result<(), StorageError> {
    append(cx, ADDED, print, at)
}

/// Append this transaction's own removal (already made to the window).
pub(crate) fn removed(cx: &mut WriteContext<'_, '_>, print: &Print, at: i64) -> Result<(), StorageError> {
    append(cx, REMOVED, print, at)
}

fn append(cx: &mut WriteContext<'_, '_>, op: u8, print: &Print, at: i64) -> Result<(), StorageError> {
    if !cx.engine.store.multiprocess() {
        return Ok(());
    }
    cx.window_row.extend_from_slice(&encode(op, print, at));
    cx.window_log.push(WindowChange::Followed(cx.window.followed));
    cx.window.followed += 1;
    Ok(())
}

/// Write the transaction's own changes as one row (at its commit's end),
/// and prune when its positions passed a multiple of [`PRUNE_EVERY`].
pub(crate) fn write_row(cx: &mut WriteContext<'_, '_>) -> Result<(), StorageError> {
    if cx.window_row.is_empty() {
        return Ok(());
    }
    let row = std::mem::take(&mut cx.window_row);
    let last = cx.window.followed;
    cx.write.put_raw(Table::WindowLog, &position_key(last), &row)?;
    let first = last + 1 - (row.len() / ENTRY_LEN) as u64;
    if (first - 1) / PRUNE_EVERY != last / PRUNE_EVERY {
        let horizon = window::horizon(cx.engine.duplicate_window);
        prune(cx, window::micros(cx.now - horizon - window::margin()))?;
    }
    Ok(())
}

/// Remove the oldest rows whose changes' instants are all before `before`
/// (at most [`PRUNE_EVERY`] changes): no window reaches them any more.
fn prune(cx: &mut WriteContext<'_, '_>, before: i64) -> Result<(), StorageError> {
    let mut end = None;
    let mut seen = 0;
    cx.write.scan(Table::WindowLog, &[], &[0xff; 9], &mut |k, v| {
        let changes = decode(k, v)?;
        seen += changes.len() as u64;
        if changes.iter().any(|&(_, _, _, at)| at >= before) || seen > PRUNE_EVERY {
            return Ok(false);
        }
        end = Some(key_after(k));
        Ok(true)
    })?;
    match end {
        Some(end) => cx.write.remove_range(Table::WindowLog, &[], &end),
        None => Ok(()),
    }
}

/// One encoded change with a fingerprint of `print` bytes (for tests).
#[cfg(all(test, feature = "postgres"))]
pub(crate) fn test_entry(op: u8, print: u8, at: i64) -> Vec<u8> {
    encode(op, &[print; PRINT_LEN], at).to_vec()
}

/// A row's changes as (position, op, the fingerprint's first byte, instant) (for tests).
#[cfg(all(test, feature = "postgres"))]
pub(crate) fn test_decode(key: &[u8], value: &[u8]) -> Result<Vec<(u64, u8, u8, i64)>, StorageError> {
    Ok(decode(key, value)?.into_iter().map(|(p, op, print, at)| (p, op, print[0], at)).collect())
}
