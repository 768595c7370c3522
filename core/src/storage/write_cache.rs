//! What write transactions learned of a few keys and ranges, carried to the
//! next write transaction: the values of usage counters, the last key of each
//! feed, the first key of each index. A single create reads all of them, and
//! each was a B-tree descent per transaction (a sixth of its instructions).
//!
//! Only a store that this process alone writes keeps them (redb, whose file
//! is locked to one process); never PostgreSQL, where other `achd` write too.
//!
//! What is known is always what the current write transaction sees:
//! - a read through [`Write`](super::Write) that is not known reads the
//!   transaction and learns the answer;
//! - every put and remove through `Write` moves what is known with it
//!   (a put can only raise a range's last key or lower a table's first one;
//!   removing a known last or first key makes it unknown).
//!
//! So at a commit, what is known is the committed state. A transaction that
//! does not end well (an error, a failed commit, a panic) may leave behind what
//! it saw but never committed: everything is then forgotten, at its end
//! ([`WriteCache::ended`]) or, after a panic, as the next one begins
//! ([`WriteCache::begin`]). A store reopened after a failure forgets too.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound::{Excluded, Included, Unbounded};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rustc_hash::FxBuildHasher;

use super::{StorageError, Table, Write};

/// Most values, or ranges, known per table; past it the table's are
/// forgotten and learned again as they are read.
const MOST: usize = 1 << 16;

type FxHashMap<K, V> = HashMap<K, V, FxBuildHasher>;

/// A known range: its end, and the last key in it (`None`: it is empty).
type KnownRange = (Vec<u8>, Option<Vec<u8>>);

/// What [`Write::visit_known_in`] calls with each key and its raw value.
type Visit<'a> = &'a mut dyn FnMut(&[u8], Option<&[u8]>);

const TABLES: usize = Table::ALL.len();

/// What is known, under a lock that a write transaction holds for its life
/// (write transactions run one at a time: the lock is never contended).
#[derive(Default)]
pub(crate) struct WriteCache {
    known: Mutex<Known>,
}

/// Known keys and ranges, by table.
pub(crate) struct Known {
    /// A write transaction began and has not ended well (yet).
    open: bool,
    /// Key → its value (`None`: absent).
    values: [FxHashMap<Vec<u8>, Option<Vec<u8>>>; TABLES],
    /// Range start → (range end, the last key in `[start, end)`). Known
    /// ranges of a table never overlap.
    lasts: [BTreeMap<Vec<u8>, KnownRange>; TABLES],
    /// The table's first key (`Some(None)`: the table is empty).
    firsts: [Option<Option<Vec<u8>>>; TABLES],
}

impl Default for Known {
    fn default() -> Self {
        Known {
            open: false,
            values: std::array::from_fn(|_| FxHashMap::default()),
            lasts: std::array::from_fn(|_| BTreeMap::new()),
            firsts: std::array::from_fn(|_| None),
        }
    }
}

impl WriteCache {
    /// What is known, for a write transaction beginning; forgotten first if
    /// the one before did not end (it panicked).
    pub(crate) fn begin(&self) -> MutexGuard<'_, Known> {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.open {
            known.forget();
        }
        known.open = true;
        known
    }

    /// The write transaction begun last ended: committed (`ok`), or not, and
    /// then everything is forgotten.
    pub(crate) fn ended(&self, ok: bool) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if !ok {
            known.forget();
        }
        known.open = false;
    }

    /// Forget everything (the database was reopened).
    pub(crate) fn forget(&self) {
        self.known.lock().unwrap_or_else(PoisonError::into_inner).forget();
    }
}

impl Known {
    fn forget(&mut self) {
        self.values.iter_mut().for_each(FxHashMap::clear);
        self.lasts.iter_mut().for_each(BTreeMap::clear);
        self.firsts = std::array::from_fn(|_| None);
    }

    /// The value at `key`, if known (`Some(None)`: known absent).
    pub(crate) fn value(&self, table: Table, key: &[u8]) -> Option<Option<&[u8]>> {
        self.values[table as usize].get(key).map(Option::as_deref)
    }

    /// Learn the value at `key`, read in the current transaction.
    pub(crate) fn learn_value(&mut self, table: Table, key: &[u8], value: Option<&[u8]>) {
        let values = &mut self.values[table as usize];
        if values.len() >= MOST && !values.contains_key(key) {
            values.clear();
        }
        values.insert(key.to_vec(), value.map(<[u8]>::to_vec));
    }

    /// The last key in `[from, to)`, if known.
    pub(crate) fn last(&self, table: Table, from: &[u8], to: &[u8]) -> Option<Option<&[u8]>> {
        match self.lasts[table as usize].get(from) {
            Some((end, last)) if end.as_slice() == to => Some(last.as_deref()),
            _ => None,
        }
    }

    /// Learn the last key in `[from, to)`, read in the current transaction
    /// (not kept if the range overlaps one known).
    pub(crate) fn learn_last(&mut self, table: Table, from: &[u8], to: &[u8], last: Option<&[u8]>) {
        let lasts = &mut self.lasts[table as usize];
        let before = lasts.range::<[u8], _>((Unbounded, Excluded(to))).next_back();
        if before.is_some_and(|(start, (end, _))| start.as_slice() != from && end.as_slice() > from) {
            return;
        }
        if lasts.len() >= MOST {
            lasts.clear();
        }
        lasts.insert(from.to_vec(), (to.to_vec(), last.map(<[u8]>::to_vec)));
    }

    /// The table's first key, if known.
    pub(crate) fn first(&self, table: Table) -> Option<Option<&[u8]>> {
        self.firsts[table as usize].as_ref().map(Option::as_deref)
    }

    /// Learn the table's first key, read in the current transaction.
    pub(crate) fn learn_first(&mut self, table: Table, first: Option<&[u8]>) {
        self.firsts[table as usize] = Some(first.map(<[u8]>::to_vec));
    }

    /// The current transaction put `value` at `key`.
    pub(crate) fn put(&mut self, table: Table, key: &[u8], value: &[u8]) {
        let t = table as usize;
        if let Some(known) = self.values[t].get_mut(key) {
            *known = Some(value.to_vec());
        }
        if let Some((_, (end, last))) =
            self.lasts[t].range_mut::<[u8], _>((Unbounded, Included(key))).next_back()
        {
            if key < end.as_slice() && last.as_deref().is_none_or(|l| l < key) {
                *last = Some(key.to_vec());
            }
        }
        if let Some(first) = &mut self.firsts[t] {
            if first.as_deref().is_none_or(|f| key < f) {
                *first = Some(key.to_vec());
            }
        }
    }

    /// The current transaction removed `key` (whether or not it was there).
    pub(crate) fn removed(&mut self, table: Table, key: &[u8]) {
        let t = table as usize;
        if let Some(known) = self.values[t].get_mut(key) {
            *known = None;
        }
        let lasts = &mut self.lasts[t];
        let hit = lasts.range::<[u8], _>((Unbounded, Included(key))).next_back();
        if let Some((start, (_, Some(_)))) = hit.filter(|(_, (_, last))| last.as_deref() == Some(key)) {
            let start = start.clone();
            lasts.remove(&start);
        }
        if self.firsts[t].as_ref().is_some_and(|first| first.as_deref() == Some(key)) {
            self.firsts[t] = None;
        }
    }

    /// The current transaction removed every key in `[from, to)`: what the
    /// table's known values, ranges and first key were is forgotten (a rare
    /// operation: a cut-off's processed index rows).
    pub(crate) fn removed_range(&mut self, table: Table) {
        let t = table as usize;
        self.values[t].clear();
        self.lasts[t].clear();
        self.firsts[t] = None;
    }
}

/// Reads that use and add to what is known (each reads the transaction as
/// [`Write::get_raw`], [`Write::last_key`] and [`Write::first_key`] do on a
/// store that keeps nothing).
impl Write<'_> {
    /// The raw value at `key`.
    pub(crate) fn get_known(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        let Some(known) = &self.write_cache else { return self.get_raw(table, key) };
        if let Some(value) = known.borrow().value(table, key) {
            return Ok(value.map(<[u8]>::to_vec));
        }
        let value = self.get_raw(table, key)?;
        known.borrow_mut().learn_value(table, key, value.as_deref());
        Ok(value)
    }

    /// Call `visit` with each of `count` keys and its raw value, key `i`
    /// written by `key_of(i, buffer)` (the keys are every key that can lie
    /// in `[from, to)`, in order): from what is known if every one is, or
    /// else read in one range read and learned.
    pub(crate) fn visit_known_in(
        &self,
        table: Table,
        (from, to): (&[u8], &[u8]),
        count: usize,
        key_of: &mut dyn FnMut(usize, &mut Vec<u8>),
        visit: Visit<'_>,
    ) -> Result<(), StorageError> {
        let mut key = Vec::with_capacity(from.len());
        let mut nth = |i: usize, key: &mut Vec<u8>| {
            key.clear();
            key_of(i, key);
        };
        if let Some(known) = &self.write_cache {
            let known = known.borrow();
            if (0..count).all(|i| {
                nth(i, &mut key);
                known.value(table, &key).is_some()
            }) {
                for i in 0..count {
                    nth(i, &mut key);
                    visit(&key, known.value(table, &key).flatten());
                }
                return Ok(());
            }
        }
        let found: BTreeMap<Vec<u8>, Vec<u8>> =
            self.range(table, from, to, usize::MAX)?.into_iter().collect();
        for i in 0..count {
            nth(i, &mut key);
            let value = if from <= key.as_slice() && key.as_slice() < to {
                found.get(&key).cloned()
            } else {
                self.get_raw(table, &key)?
            };
            if let Some(known) = &self.write_cache {
                known.borrow_mut().learn_value(table, &key, value.as_deref());
            }
            visit(&key, value.as_deref());
        }
        Ok(())
    }

    /// The last key in `[from, to)`, if any.
    pub(crate) fn last_key_known(
        &self,
        table: Table,
        from: &[u8],
        to: &[u8],
    ) -> Result<Option<Vec<u8>>, StorageError> {
        let Some(known) = &self.write_cache else { return self.last_key(table, from, to) };
        if let Some(last) = known.borrow().last(table, from, to) {
            return Ok(last.map(<[u8]>::to_vec));
        }
        let last = self.last_key(table, from, to)?;
        known.borrow_mut().learn_last(table, from, to, last.as_deref());
        Ok(last)
    }

    /// The table's first key, if any.
    pub(crate) fn first_key_known(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError> {
        let Some(known) = &self.write_cache else { return self.first_key(table) };
        if let Some(first) = known.borrow().first(table) {
            return Ok(first.map(<[u8]>::to_vec));
        }
        let first = self.first_key(table)?;
        known.borrow_mut().learn_first(table, first.as_deref());
        Ok(first)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const T: Table = Table::Usage;

    #[test]
    fn a_put_raises_a_known_last_key_only_inside_its_range() {
        let mut k = Known::default();
        k.learn_last(T, b"a\x00", b"a\x01", Some(b"a\x005"));
        k.put(T, b"a\x003", b"v");
        assert_eq!(k.last(T, b"a\x00", b"a\x01"), Some(Some(&b"a\x005"[..])));
        k.put(T, b"a\x007", b"v");
        k.put(T, b"b\x009", b"v");
        assert_eq!(k.last(T, b"a\x00", b"a\x01"), Some(Some(&b"a\x007"[..])));
        // Another end is another range: unknown.
        assert_eq!(k.last(T, b"a\x00", b"a\x02"), None);
        k.removed(T, b"a\x003");
        assert!(k.last(T, b"a\x00", b"a\x01").is_some());
        k.removed(T, b"a\x007");
        assert_eq!(k.last(T, b"a\x00", b"a\x01"), None);
    }

    #[test]
    fn an_empty_range_learns_its_first_put() {
        let mut k = Known::default();
        k.learn_last(T, b"m\x00", b"m\x01", None);
        k.put(T, b"m", b"v");
        k.put(T, b"m\x01", b"v");
        assert_eq!(k.last(T, b"m\x00", b"m\x01"), Some(None));
        k.put(T, b"m\x00\x01", b"v");
        assert_eq!(k.last(T, b"m\x00", b"m\x01"), Some(Some(&b"m\x00\x01"[..])));
    }

    #[test]
    fn overlapping_ranges_are_not_both_known() {
        let mut k = Known::default();
        k.learn_last(T, b"a", b"c", Some(b"b"));
        k.learn_last(T, b"b", b"d", Some(b"b"));
        assert_eq!(k.last(T, b"b", b"d"), None);
        k.learn_last(T, b"c", b"d", None);
        assert_eq!(k.last(T, b"c", b"d"), Some(None));
    }

    #[test]
    fn first_keys_and_values_follow_puts_and_removes() {
        let mut k = Known::default();
        k.learn_first(T, None);
        k.put(T, b"k", b"1");
        assert_eq!(k.first(T), Some(Some(&b"k"[..])));
        k.put(T, b"j", b"1");
        k.put(T, b"l", b"1");
        assert_eq!(k.first(T), Some(Some(&b"j"[..])));
        k.removed(T, b"l");
        assert_eq!(k.first(T), Some(Some(&b"j"[..])));
        k.removed(T, b"j");
        assert_eq!(k.first(T), None);

        assert_eq!(k.value(T, b"x"), None);
        k.put(T, b"x", b"1");
        assert_eq!(k.value(T, b"x"), None, "a put does not make a key known");
        k.learn_value(T, b"x", Some(b"1"));
        k.put(T, b"x", b"2");
        assert_eq!(k.value(T, b"x"), Some(Some(&b"2"[..])));
        k.removed(T, b"x");
        assert_eq!(k.value(T, b"x"), Some(None));
        k.learn_first(T, Some(b"x"));
        k.removed_range(T);
        assert_eq!((k.value(T, b"x"), k.first(T)), (None, None));
    }

    #[test]
    fn a_transaction_that_did_not_end_is_forgotten_by_the_next() {
        let c = WriteCache::default();
        c.begin().learn_value(T, b"x", Some(b"1"));
        c.ended(true);
        assert!(c.begin().value(T, b"x").is_some());
        // That one never ended (a panic): the next forgets.
        assert!(c.begin().value(T, b"x").is_none());
        c.begin().learn_value(T, b"x", Some(b"1"));
        c.ended(false);
        assert!(c.begin().value(T, b"x").is_none());
    }
}
