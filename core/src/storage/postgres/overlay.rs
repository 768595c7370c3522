//! A write transaction's changes, held in memory until its commit: a create
//! writes a dozen rows, and one statement at the commit (per kind of change)
//! costs one round trip instead of a dozen. Reads see them: a key put or
//! removed here answers from here; a key in a range removed here is gone;
//! anything else is the database's.

use std::collections::BTreeMap;
use std::ops::Bound;

/// The changes of one transaction.
#[derive(Default)]
pub(crate) struct Overlay {
    /// By (table, key): the value put, or `None` if removed.
    entries: BTreeMap<(&'static str, Vec<u8>), Option<Vec<u8>>>,
    /// Ranges removed, `[from, to)` per table, in the order they were.
    ranges: Vec<(&'static str, Vec<u8>, Vec<u8>)>,
}

/// What the overlay says of one key.
pub(crate) enum Seen<'a> {
    /// Put here: this value.
    Put(&'a [u8]),
    /// Removed here (by key or by range).
    Gone,
    /// Not touched here: the database's.
    Untouched,
}

impl Overlay {
    /// What this transaction did to `key`.
    pub(crate) fn seen(&self, table: &'static str, key: &[u8]) -> Seen<'_> {
        match self.entries.get(&(table, key.to_vec())) {
            Some(Some(v)) => Seen::Put(v),
            Some(None) => Seen::Gone,
            None if self.in_removed_range(table, key) => Seen::Gone,
            None => Seen::Untouched,
        }
    }

    fn in_removed_range(&self, table: &'static str, key: &[u8]) -> bool {
        self.ranges.iter().any(|(t, from, to)| *t == table && from.as_slice() <= key && key < to.as_slice())
    }

    /// Whether a database row at `key` is hidden (changed here, or removed).
    pub(crate) fn hides(&self, table: &'static str, key: &[u8]) -> bool {
        !matches!(self.seen(table, key), Seen::Untouched)
    }

    /// Put `value` at `key`.
    pub(crate) fn put(&mut self, table: &'static str, key: &[u8], value: &[u8]) {
        self.entries.insert((table, key.to_vec()), Some(value.to_vec()));
    }

    /// Remove `key`.
    pub(crate) fn remove(&mut self, table: &'static str, key: &[u8]) {
        self.entries.insert((table, key.to_vec()), None);
    }

    /// Remove every key in `[from, to)`: the changes made here in it go, and
    /// the database's rows in it are hidden until the commit removes them.
    pub(crate) fn remove_range(&mut self, table: &'static str, from: &[u8], to: &[u8]) {
        let keys: Vec<_> = self
            .entries
            .range((Bound::Included((table, from.to_vec())), Bound::Excluded((table, to.to_vec()))))
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            self.entries.remove(&k);
        }
        self.ranges.push((table, from.to_vec(), to.to_vec()));
    }

    /// The values put here with keys in `[from, to)` (`to` `None`: to the
    /// table's end), in key order.
    pub(crate) fn puts_in(&self, table: &'static str, from: &[u8], to: Option<&[u8]>) -> Vec<(&[u8], &[u8])> {
        // Without an end: to the last entry of `table` (the next tables'
        // entries follow it, and `take_while` stops there).
        let end = to.map_or(Bound::Unbounded, |to| Bound::Excluded((table, to.to_vec())));
        self.entries
            .range((Bound::Included((table, from.to_vec())), end))
            .take_while(|((t, _), _)| *t == table)
            .filter_map(|((_, k), v)| v.as_deref().map(|v| (k.as_slice(), v)))
            .collect()
    }

    /// The values put here, in the order [`Overlay::into_changes`] gives
    /// them: (table, key, value).
    pub(crate) fn puts(&self) -> impl Iterator<Item = (&'static str, &[u8], &[u8])> {
        self.entries.iter().filter_map(|((t, k), v)| v.as_deref().map(|v| (*t, k.as_slice(), v)))
    }

    /// The changes to send at the commit: the ranges removed (first), then
    /// the keys removed, then the values put (their columns: tables, keys,
    /// values).
    #[allow(clippy::type_complexity)]
    pub(crate) fn into_changes(
        self,
    ) -> (
        Vec<(&'static str, Vec<u8>, Vec<u8>)>,
        (Vec<&'static str>, Vec<Vec<u8>>),
        (Vec<&'static str>, Vec<Vec<u8>>, Vec<Vec<u8>>),
    ) {
        let mut removed = (Vec::new(), Vec::new());
        let mut put = (Vec::new(), Vec::new(), Vec::new());
        for ((t, k), v) in self.entries {
            match v {
                Some(v) => {
                    put.0.push(t);
                    put.1.push(k);
                    put.2.push(v);
                }
                None => {
                    removed.0.push(t);
                    removed.1.push(k);
                }
            }
        }
        (self.ranges, removed, put)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_shadow_the_database_in_the_order_they_were_made() {
        let mut o = Overlay::default();
        o.put("t", b"a", b"1");
        o.put("t", b"b", b"2");
        o.put("u", b"a", b"x");
        o.remove_range("t", b"a", b"b");
        o.put("t", b"a2", b"3");
        o.remove("t", b"c");
        assert!(matches!(o.seen("t", b"a"), Seen::Gone));
        assert!(matches!(o.seen("t", b"a2"), Seen::Put(b"3")));
        assert!(matches!(o.seen("t", b"b"), Seen::Put(b"2")));
        assert!(matches!(o.seen("t", b"c"), Seen::Gone));
        assert!(matches!(o.seen("t", b"d"), Seen::Untouched));
        assert!(matches!(o.seen("u", b"a"), Seen::Put(b"x")));
        assert_eq!(o.puts_in("t", b"", None), vec![(&b"a2"[..], &b"3"[..]), (&b"b"[..], &b"2"[..])]);
        assert_eq!(o.puts_in("t", b"a3", Some(b"z")), vec![(&b"b"[..], &b"2"[..])]);
        assert_eq!(o.puts_in("u", b"", None), vec![(&b"a"[..], &b"x"[..])]);
        let (ranges, removed, put) = o.into_changes();
        assert_eq!(ranges, vec![("t", b"a".to_vec(), b"b".to_vec())]);
        assert_eq!(removed, (vec!["t"], vec![b"c".to_vec()]));
        assert_eq!(put.0, vec!["t", "t", "u"]);
    }
}
