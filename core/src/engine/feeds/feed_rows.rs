//! How feed entries are stored: the rows of the `changes` and `events` tables.
//!
//! A row is keyed by its scope (partner or merchant) and the position of its
//! LAST entry. A row of one entry holds its stored bytes as they are. A
//! write transaction of requests (a group commit's batch: tens of creates)
//! and a catch-up (a cut-off or a day's settlements: hundreds of changes at
//! once) pack each scope's run of entries into one row:
//! [`PACKED`], the count (u32 LE), then each entry length-prefixed (u32 LE),
//! positions `last - count + 1 ..= last`. One insert per run and scope instead
//! of one per entry.
//!
//! Keying by the last position keeps both ways of reading a feed one range
//! read: the next position is the last key's plus one, and the row holding
//! position `p` is the first at or after `p`.

use crate::engine::request::fast_map::FastMap;
use crate::storage::{row_keys, StorageError, Table, Write};

/// The first byte of a packed row. A single entry never starts with it: a
/// status change starts with its transaction id's length (a varint under 128)
/// and a notification of change with 0.
const PACKED: u8 = 0xFE;

/// Most entries in one packed row (a page reads a row whole).
const MOST_PER_ROW: u32 = 1_000;

/// The entries of a stored row whose last position is `last`, each with its
/// position, oldest first.
pub(crate) fn entries(last: u64, value: &[u8]) -> Result<Vec<(u64, &[u8])>, StorageError> {
    let Some(rest) = value.strip_prefix(&[PACKED]) else { return Ok(vec![(last, value)]) };
    let unreadable = || StorageError("a packed feed row is unreadable".into());
    let (count, mut rest) = rest.split_first_chunk::<4>().ok_or_else(unreadable)?;
    let count = u64::from(u32::from_le_bytes(*count));
    let first = (last + 1).checked_sub(count).ok_or_else(unreadable)?;
    let mut out = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for position in first..=last {
        let (len, tail) = rest.split_first_chunk::<4>().ok_or_else(unreadable)?;
        let len = usize::try_from(u32::from_le_bytes(*len)).map_err(|_| unreadable())?;
        let (entry, tail) = tail.split_at_checked(len).ok_or_else(unreadable)?;
        out.push((position, entry));
        rest = tail;
    }
    if !rest.is_empty() || count == 0 {
        return Err(unreadable());
    }
    Ok(out)
}

/// What [`rewrite`] makes of one entry: `Some` its new bytes.
pub(crate) type Rewrite<'a> = dyn FnMut(&[u8]) -> Result<Option<Vec<u8>>, StorageError> + 'a;

/// A stored row with each entry passed through `f` (`Some`: its new bytes),
/// the row's layout kept; `None` when `f` changed no entry.
pub(crate) fn rewrite(value: &[u8], f: &mut Rewrite<'_>) -> Result<Option<Vec<u8>>, StorageError> {
    let Some(rest) = value.strip_prefix(&[PACKED]) else { return f(value) };
    let unreadable = || StorageError("a packed feed row is unreadable".into());
    let (count, rest) = rest.split_first_chunk::<4>().ok_or_else(unreadable)?;
    let entries = entries(u64::from(u32::from_le_bytes(*count)).saturating_sub(1), value)?;
    let mut changed = false;
    let mut out = Vec::with_capacity(value.len());
    out.push(PACKED);
    out.extend_from_slice(count);
    for (_, entry) in entries {
        let new = f(entry)?;
        changed |= new.is_some();
        let bytes = new.as_deref().unwrap_or(entry);
        let len = u32::try_from(bytes.len()).map_err(|_| unreadable())?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let _ = rest;
    Ok(changed.then_some(out))
}

/// The entries a catch-up appends, gathered per feed and scope, written as
/// packed rows by [`FeedRows::write`] (or as soon as a row is full).
#[derive(Default)]
pub(crate) struct FeedRows {
    /// Per feed (status changes, events), by scope: the row being gathered.
    rows: [FastMap<String, Row>; 2],
}

impl FeedRows {
    /// Append `entry` at `position` of `scope`'s feed in `table` (positions of
    /// one scope come in order, one after another).
    pub(crate) fn push(
        &mut self,
        w: &mut Write<'_>,
        table: Table,
        scope: &str,
        position: u64,
        entry: &[u8],
    ) -> Result<(), StorageError> {
        let len = u32::try_from(entry.len()).map_err(|_| StorageError("a feed entry over 4 GiB".into()))?;
        let rows = &mut self.rows[usize::from(table == Table::Events)];
        if !rows.contains_key(scope) {
            rows.insert(scope.to_owned(), (0, 0, Vec::with_capacity(64 * 128)));
        }
        let Some(row) = rows.get_mut(scope) else { return Ok(()) };
        row.0 = position;
        row.1 += 1;
        row.2.extend_from_slice(&len.to_le_bytes());
        row.2.extend_from_slice(entry);
        if row.1 >= MOST_PER_ROW {
            if let Some(row) = rows.remove(scope) {
                put(w, table, scope, row)?;
            }
        }
        Ok(())
    }

    /// Write every row still gathered.
    pub(crate) fn write(self, w: &mut Write<'_>) -> Result<(), StorageError> {
        let [changes, events] = self.rows;
        for (table, rows) in [(Table::Changes, changes), (Table::Events, events)] {
            for (scope, row) in rows {
                put(w, table, &scope, row)?;
            }
        }
        Ok(())
    }
}

/// A row being gathered: its last position, its count, its entries.
type Row = (u64, u32, Vec<u8>);

fn put(
    w: &mut Write<'_>,
    table: Table,
    scope: &str,
    (last, count, entries): Row,
) -> Result<(), StorageError> {
    let key = row_keys::seq(scope, last);
    if count == 1 {
        // One entry: stored as a request stores it.
        return w.put_raw(table, &key, entries.get(4..).unwrap_or_default());
    }
    let mut value = Vec::with_capacity(5 + entries.len());
    value.push(PACKED);
    value.extend_from_slice(&count.to_le_bytes());
    value.extend_from_slice(&entries);
    w.put_raw(table, &key, &value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn packed(entries: &[&[u8]]) -> Vec<u8> {
        let mut value = vec![PACKED];
        value.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        for e in entries {
            value.extend_from_slice(&(e.len() as u32).to_le_bytes());
            value.extend_from_slice(e);
        }
        value
    }

    #[test]
    fn a_rewrite_keeps_the_rows_layout_and_changes_only_what_it_is_told() {
        let mut upper = |e: &[u8]| -> Result<Option<Vec<u8>>, StorageError> {
            Ok(e.starts_with(b"n").then(|| e.to_ascii_uppercase()))
        };
        let value = packed(&[b"a", b"note", b"", b"nb"]);
        let again = rewrite(&value, &mut upper).unwrap().unwrap();
        assert_eq!(again, packed(&[b"a", b"NOTE", b"", b"NB"]));
        assert_eq!(entries(9, &again).unwrap().len(), 4);
        assert_eq!(rewrite(&packed(&[b"a", b"b"]), &mut upper).unwrap(), None, "nothing changed");
        assert_eq!(rewrite(b"note", &mut upper).unwrap(), Some(b"NOTE".to_vec()), "a row of one entry");
        let damaged = rewrite(&[PACKED, 2, 0, 0, 0, 9], &mut upper);
        assert_eq!(damaged, Err(StorageError("a packed feed row is unreadable".into())));
    }

    #[test]
    fn a_packed_row_gives_its_entries_at_the_positions_up_to_its_key() {
        let value = packed(&[b"a", b"", b"ccc"]);
        let got = entries(12, &value).unwrap();
        assert_eq!(got, vec![(10, &b"a"[..]), (11, &b""[..]), (12, &b"ccc"[..])]);
        assert_eq!(entries(7, b"\x1btxn").unwrap(), vec![(7, &b"\x1btxn"[..])]);
        assert_eq!(entries(7, &[0, 1, 2]).unwrap(), vec![(7, &[0u8, 1, 2][..])]);
    }

    #[test]
    fn a_damaged_packed_row_is_an_error_not_a_panic() {
        let unreadable = || Err(StorageError("a packed feed row is unreadable".into()));
        let value = packed(&[b"a", b"bb"]);
        for bad in [&value[..value.len() - 1], &value[..3], &packed(&[])[..], &[PACKED][..]] {
            assert_eq!(entries(5, bad), unreadable(), "{bad:?}");
        }
        assert_eq!(entries(0, &value), unreadable(), "positions below 1");
        let mut longer = value.clone();
        longer.push(0);
        assert_eq!(entries(5, &longer), unreadable());
    }
}
