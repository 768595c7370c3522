//! The duplicate window when several processes write one database
//! (PostgreSQL): each process keeps the window in memory, as on redb, and
//! the database keeps its changes in order (`window_log`: position → change).
//! A create or void that changes the window appends its change in the same
//! write transaction; every write transaction first applies the changes the
//! other processes appended since this one last looked. The store's write
//! lock runs write transactions one at a time across processes, so none is
//! missed or applied twice, and a duplicate made through another process is
//! refused as one made through this one.
//!
//! On redb (one process) nothing is appended or read.

use super::window::{self, Print, Window, WindowChange, PRINT_LEN};
use super::Cx;
use crate::storage::{key_after, Snapshot, StorageError, Table};

const ADDED: u8 = 1;
const REMOVED: u8 = 2;

/// Changes kept: older ones are removed (their entries have left every
/// window) this often, a bounded run at a time.
const PRUNE_EVERY: u64 = 1024;

fn position_key(position: u64) -> [u8; 8] {
    position.to_be_bytes()
}

fn encode(op: u8, print: &Print, at: i64) -> [u8; 1 + PRINT_LEN + 8] {
    let mut v = [0u8; 1 + PRINT_LEN + 8];
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

fn decode(key: &[u8], value: &[u8]) -> Result<(u64, u8, Print, i64), StorageError> {
    let position = position_of(key)?;
    if value.len() != 1 + PRINT_LEN + 8 || !matches!(value[0], ADDED | REMOVED) {
        return Err(unreadable());
    }
    let mut print = [0u8; PRINT_LEN];
    print.copy_from_slice(&value[1..=PRINT_LEN]);
    let at = i64::from_be_bytes(value[1 + PRINT_LEN..].try_into().map_err(|_| unreadable())?);
    Ok((position, value[0], print, at))
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
pub(crate) fn read_ahead(engine: &super::Engine, window: &Window) {
    if engine.store.shared() {
        engine.store.scan_next(Table::WindowLog, &position_key(window.followed + 1), &[0xff; 9]);
    }
}

/// Apply the changes appended since the window last looked (by other
/// processes: its own were applied as they were made). They are committed:
/// this transaction's failure does not take them back.
pub(crate) fn follow(cx: &mut Cx<'_, '_>) -> Result<(), StorageError> {
    if !cx.engine.store.shared() {
        return Ok(());
    }
    let from = position_key(cx.window.followed + 1);
    let mut changes = Vec::new();
    cx.w.scan(Table::WindowLog, &from, &[0xff; 9], &mut |k, v| {
        changes.push(decode(k, v)?);
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
pub(crate) fn added(cx: &mut Cx<'_, '_>, print: &Print, at: i64) -> Result<(), StorageError> {
    append(cx, ADDED, print, at)
}

/// Append this transaction's own removal (already made to the window).
pub(crate) fn removed(cx: &mut Cx<'_, '_>, print: &Print, at: i64) -> Result<(), StorageError> {
    append(cx, REMOVED, print, at)
}

fn append(cx: &mut Cx<'_, '_>, op: u8, print: &Print, at: i64) -> Result<(), StorageError> {
    if !cx.engine.store.shared() {
        return Ok(());
    }
    let position = cx.window.followed + 1;
    cx.w.put_raw(Table::WindowLog, &position_key(position), &encode(op, print, at))?;
    cx.window_log.push(WindowChange::Followed(cx.window.followed));
    cx.window.followed = position;
    if position.is_multiple_of(PRUNE_EVERY) {
        prune(cx, window::micros(cx.now - cx.engine.duplicate_window - window::margin()))?;
    }
    Ok(())
}

/// Remove the oldest changes whose instants are before `before` (at most
/// [`PRUNE_EVERY`] of them): no window reaches them any more.
fn prune(cx: &mut Cx<'_, '_>, before: i64) -> Result<(), StorageError> {
    let mut end = None;
    let mut seen = 0;
    cx.w.scan(Table::WindowLog, &[], &[0xff; 9], &mut |k, v| {
        let (_, _, _, at) = decode(k, v)?;
        seen += 1;
        if at >= before || seen > PRUNE_EVERY {
            return Ok(false);
        }
        end = Some(key_after(k));
        Ok(true)
    })?;
    match end {
        Some(end) => cx.w.remove_range(Table::WindowLog, &[], &end),
        None => Ok(()),
    }
}
