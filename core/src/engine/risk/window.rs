//! The duplicate window, held in memory: for each keyed fingerprint of (merchant,
//! account, amount, direction, class), and of (merchant, account) for
//! screening's `velocity`, the creation instants of the live (not voided)
//! transactions that still fall within reach of the window (at least 24
//! hours).
//!
//! It is derived data, never stored: [`Window::load`] rebuilds it when the engine
//! opens, from the transactions created within the window (transaction ids begin
//! with their creation time, so that is one range read of the transactions table).
//! A create that passes the duplicate check adds its instant, a void removes its
//! own, and every create first lets go of the entries older than the window (with
//! an hour's margin, in case the host's clock steps back). Changes made inside a
//! write transaction (expiries too) are logged and undone if the transaction does
//! not commit, and
//! the engine holds the window's lock from before its write transaction begins
//! until the outcome is applied, so two writers never see each other's uncommitted
//! entries or miss each other's committed ones.
//!
//! Against a redb index keyed by fingerprint this saves a create the random page
//! writes of a B-tree holding a day of fingerprints (hundreds of dirty pages per
//! batch at 50,000 creates a day) and one more table in every commit.

use std::collections::{HashMap, VecDeque};

use chrono::{DateTime, Duration, Utc};

/// Bytes of a keyed fingerprint kept per entry (128 bits: no collision in any
/// window's worth of transactions).
pub(crate) const PRINT_LEN: usize = 16;

/// A transaction's key in the window.
pub(crate) type Print = [u8; PRINT_LEN];

/// How far back the window keeps entries: the duplicate window, or the 24
/// hours screening's `velocity` counts if longer.
pub(crate) fn horizon(duplicate_window: Duration) -> Duration {
    duplicate_window.max(Duration::hours(24))
}

/// Extra time entries are kept past the window, so that a host clock stepping back
/// by up to this much still finds them.
pub(crate) fn margin() -> Duration {
    Duration::hours(1)
}

/// One change to the window, for undoing it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum WindowChange {
    /// An entry was added.
    Added(Print, i64),
    /// An entry was removed.
    Removed(Print, i64),
    /// [`Window::followed`] moved on from this position (a shared database's
    /// change log: `window_log.rs`).
    Followed(u64),
}

/// The window's entries (instants as [`micros`]).
#[derive(Debug, Default)]
pub(crate) struct Window {
    /// Fingerprint → the instants of its live transactions, oldest first.
    by_print: HashMap<Print, Instants, BuildPrintHasher>,
    /// (instant, fingerprint) in the order added: entries expire from the front.
    order: VecDeque<(i64, Print)>,
    /// Live entries.
    len: usize,
    /// On a shared database: the last position of its window log applied
    /// (others' changes and this engine's own).
    pub(crate) followed: u64,
    /// Built from what a write whose outcome is unknown saw: rebuilt from
    /// storage before its next use ([`crate::engine::Engine::lock_window`]).
    pub(crate) stale: bool,
}

/// Microseconds since the Unix epoch: exact enough for a window of hours, and
/// within an `i64` for the whole calendar (years 0000 to 9999).
pub(crate) fn micros(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

/// The instant of [`micros`].
pub(crate) fn instant(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(micros).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// A fingerprint's instants, oldest first: one inline (nearly always), more in a
/// vector (alike transactions of a merchant that does not decline duplicates).
#[derive(Debug)]
enum Instants {
    One(i64),
    Many(Vec<i64>),
}

impl Instants {
    fn as_slice(&self) -> &[i64] {
        match self {
            Instants::One(t) => std::slice::from_ref(t),
            Instants::Many(v) => v,
        }
    }

    /// Add `at`, keeping the order (a clock set back may add an older instant
    /// after a newer one).
    fn insert(&mut self, at: i64) {
        let mut all = match self {
            Instants::One(t) => vec![*t],
            Instants::Many(v) => std::mem::take(v),
        };
        let i = all.partition_point(|&t| t <= at);
        all.insert(i, at);
        *self = Instants::Many(all);
    }

    /// Remove one `at`: `None` if absent, else whether none is left.
    fn remove(&mut self, at: i64) -> Option<bool> {
        match self {
            Instants::One(t) => (*t == at).then_some(true),
            Instants::Many(v) => {
                // Sorted: the first of the instants equal to `at`, found by halving.
                let i = v.partition_point(|&t| t < at);
                if v.get(i) != Some(&at) {
                    return None;
                }
                v.remove(i);
                Some(v.is_empty())
            }
        }
    }
}

/// Hashes a fingerprint by its first 8 bytes: they are HMAC output, uniformly
/// distributed and unknown to anyone without the engine's key, so SipHash's
/// protection against chosen keys buys nothing here.
#[derive(Debug, Default, Clone, Copy)]
struct PrintHasher(u64);

impl std::hash::Hasher for PrintHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut first = [0u8; 8];
        let n = bytes.len().min(8);
        first[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(first);
    }

    fn write_usize(&mut self, _length: usize) {}

    fn finish(&self) -> u64 {
        self.0
    }
}

type BuildPrintHasher = std::hash::BuildHasherDefault<PrintHasher>;

impl Window {
    /// The newest instant of `print`, if any.
    pub(crate) fn latest(&self, print: &Print) -> Option<i64> {
        self.by_print.get(print).and_then(|v| v.as_slice().last().copied())
    }

    /// How many entries of `print` are at or after `since` (the instants
    /// are sorted: found by halving, so an account paid thousands of times a
    /// day costs a create no more than one paid once).
    pub(crate) fn count_since(&self, print: &Print, since: i64) -> usize {
        self.by_print.get(print).map_or(0, |v| {
            let all = v.as_slice();
            all.len() - all.partition_point(|&at| at < since)
        })
    }

    /// Add an entry.
    pub(crate) fn add(&mut self, print: Print, at: i64) {
        match self.by_print.entry(print) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Instants::One(at));
            }
            std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().insert(at),
        }
        self.order.push_back((at, print));
        self.len += 1;
    }

    /// Remove one entry `(print, at)`; whether there was one.
    pub(crate) fn remove(&mut self, print: &Print, at: i64) -> bool {
        let Some(instants) = self.by_print.get_mut(print) else { return false };
        let Some(empty) = instants.remove(at) else { return false };
        if empty {
            self.by_print.remove(print);
        }
        self.len -= 1;
        true
    }

    /// Let go of the entries added before `before` (from the front of the order
    /// they were added in), logging each in `log`: a transaction that moved the
    /// sandbox clock forward and then did not commit gives them back.
    pub(crate) fn expire(&mut self, before: i64, log: &mut Vec<WindowChange>) {
        while let Some(&(at, print)) = self.order.front() {
            if at >= before {
                break;
            }
            self.order.pop_front();
            if self.remove(&print, at) {
                log.push(WindowChange::Removed(print, at));
            }
        }
        // Voided entries leave stale positions behind; keep the queue in proportion.
        if self.order.len() > 2 * self.len + 1024 {
            let by_print = &self.by_print;
            self.order.retain(|(at, p)| by_print.get(p).is_some_and(|v| v.as_slice().contains(at)));
        }
    }

    /// Undo `log` (newest change first).
    pub(crate) fn undo(&mut self, log: &[WindowChange]) {
        for change in log.iter().rev() {
            match *change {
                WindowChange::Added(p, at) => {
                    self.remove(&p, at);
                }
                WindowChange::Removed(p, at) => self.add(p, at),
                WindowChange::Followed(position) => self.followed = position,
            }
        }
    }

    /// Live entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every live entry's instant (any order).
    #[cfg(feature = "simulation")]
    pub(crate) fn instants(&self) -> impl Iterator<Item = (&Print, i64)> + '_ {
        self.by_print.iter().flat_map(|(p, v)| v.as_slice().iter().map(move |&t| (p, t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(n: u8) -> Print {
        [n; PRINT_LEN]
    }

    #[test]
    fn the_latest_instant_of_a_print_survives_removing_a_newer_one() {
        let mut w = Window::default();
        w.add(p(1), 10);
        w.add(p(1), 30);
        w.add(p(1), 20);
        w.add(p(2), 5);
        assert_eq!(w.latest(&p(1)), Some(30));
        assert!(w.remove(&p(1), 30));
        assert_eq!(w.latest(&p(1)), Some(20));
        assert!(!w.remove(&p(1), 30), "already gone");
        assert!(!w.remove(&p(3), 1), "never there");
        assert_eq!(w.len(), 3);
    }

    #[test]
    fn entries_expire_in_the_order_they_were_added() {
        let mut w = Window::default();
        for t in 0..100 {
            w.add(p((t % 7) as u8), t);
        }
        let mut log = Vec::new();
        w.expire(60, &mut log);
        assert_eq!((w.len(), log.len()), (40, 60));
        assert_eq!(w.latest(&p(0)), Some(98));
        w.expire(1_000, &mut log);
        assert_eq!(w.len(), 0);
        assert_eq!(w.latest(&p(0)), None);
        // A transaction that expired them and did not commit gives them back.
        w.undo(&log);
        assert_eq!((w.len(), w.latest(&p(0)), w.latest(&p(3))), (100, Some(98), Some(94)));
    }

    #[test]
    fn undoing_a_log_restores_the_window() {
        let mut w = Window::default();
        w.add(p(1), 10);
        w.add(p(2), 11);
        let log =
            [WindowChange::Added(p(3), 12), WindowChange::Removed(p(1), 10), WindowChange::Added(p(1), 13)];
        w.add(p(3), 12);
        w.remove(&p(1), 10);
        w.add(p(1), 13);
        w.undo(&log);
        assert_eq!(
            (w.latest(&p(1)), w.latest(&p(2)), w.latest(&p(3)), w.len()),
            (Some(10), Some(11), None, 2)
        );
    }

    proptest::proptest! {
        /// Counts and removals by halving agree with a plain list of what
        /// was added and removed, instants equal, out of order or repeated.
        #[test]
        fn counts_since_an_instant_match_a_plain_list(
            ops in proptest::collection::vec((0u8..2, 0u8..3, 0i64..20), 0..200),
            since in 0i64..21,
        ) {
            let mut w = Window::default();
            let mut plain: Vec<(u8, i64)> = Vec::new();
            for (op, who, at) in ops {
                if op == 0 {
                    w.add(p(who), at);
                    plain.push((who, at));
                } else {
                    let there = plain.iter().position(|e| *e == (who, at));
                    proptest::prop_assert_eq!(w.remove(&p(who), at), there.is_some());
                    if let Some(i) = there {
                        plain.remove(i);
                    }
                }
            }
            for who in 0..3 {
                let expected = plain.iter().filter(|(w, at)| *w == who && *at >= since).count();
                proptest::prop_assert_eq!(w.count_since(&p(who), since), expected);
            }
        }
    }

    #[test]
    fn removed_entries_do_not_keep_the_queue_growing() {
        let mut w = Window::default();
        for t in 0..10_000 {
            w.add(p(1), t);
            w.remove(&p(1), t);
            w.expire(0, &mut Vec::new());
        }
        assert_eq!(w.len(), 0);
        assert!(w.order.len() <= 1024 + 1, "{}", w.order.len());
    }
}
