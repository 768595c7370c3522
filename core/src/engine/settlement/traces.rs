//! The trace index: which transaction carried each trace number the engine
//! wrote, for the returns and notifications of change a bank sends back.
//!
//! Trace numbers are assigned consecutively while a file is written, so each
//! chunk of the file stores ONE row: keyed by its first trace number, holding
//! the chunk's transaction ids in trace order ([`id_list`]). A trace number is
//! found by the last row at or before it, and its distance from that row's
//! first trace.

use crate::engine::rows::id_list;
use crate::storage::{key_after, StorageError, Table, Write};

/// The rows one chunk of a file adds to the trace index: each a run of
/// consecutive trace numbers.
#[derive(Default)]
pub(crate) struct TraceRows {
    /// The open run: its first trace, the last number in it, its packed ids.
    open: Option<(String, u64, Vec<u8>)>,
    done: Vec<(String, Vec<u8>)>,
}

impl TraceRows {
    /// Record that `trace` carried `id`.
    pub(crate) fn push(&mut self, trace: &str, id: &str) -> Result<(), StorageError> {
        let number = number(trace).ok_or_else(|| StorageError(format!("trace number {trace:?}")))?;
        let follows = matches!(&self.open, Some((first, last, _))
            if *last + 1 == number && first.get(..8) == trace.get(..8));
        if !follows {
            if let Some((first, _, list)) = self.open.take() {
                self.done.push((first, list));
            }
            self.open = Some((
                trace.to_owned(),
                number,
                id_list::with_capacity(crate::engine::rows::id_list::PER_ROW as usize),
            ));
        }
        if let Some((_, last, list)) = &mut self.open {
            *last = number;
            id_list::push(list, id)?;
        }
        Ok(())
    }

    /// Write the rows.
    pub(crate) fn write(mut self, w: &mut Write<'_>) -> Result<(), StorageError> {
        if let Some((first, _, list)) = self.open.take() {
            self.done.push((first, list));
        }
        for (first, list) in &self.done {
            w.put_raw(Table::Traces, first.as_bytes(), list)?;
        }
        Ok(())
    }
}

/// A trace number's value (15 digits), if it is one.
fn number(trace: &str) -> Option<u64> {
    (trace.len() == 15 && trace.bytes().all(|b| b.is_ascii_digit())).then(|| trace.parse().ok()).flatten()
}

/// The id of the transaction that carried `trace`, if the engine wrote it.
pub(crate) fn transaction_of(w: &Write<'_>, trace: &str) -> Result<Option<String>, StorageError> {
    let (Some(wanted), Some(odfi)) = (number(trace), trace.get(..8)) else { return Ok(None) };
    let Some(key) = w.last_key(Table::Traces, odfi.as_bytes(), &key_after(trace.as_bytes()))? else {
        return Ok(None);
    };
    let Some(value) = w.get_raw(Table::Traces, &key)? else { return Ok(None) };
    if !id_list::is_packed(&value) {
        return Err(StorageError("a trace row is not a packed list".into()));
    }
    let first = std::str::from_utf8(&key).ok().and_then(number);
    let Some(offset) = first.and_then(|first| usize::try_from(wanted.checked_sub(first)?).ok()) else {
        return Ok(None);
    };
    Ok(id_list::ids(&value)?.get(offset).map(|id| (*id).to_owned()))
}
