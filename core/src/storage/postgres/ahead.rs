//! Reads ahead: a write transaction asks, in its first round trip, for what
//! the previous write transaction of this process asked the database for
//! (its gets and its short scans: a merchant, its suspension, its usage
//! counters, the feeds' last positions, the indexes' first keys). A batch of
//! creates is much like the one before it, so most of its reads are then
//! answered from memory instead of one round trip each.
//!
//! The rows read ahead are the database's state when the transaction began,
//! and stay it until the transaction commits: it holds the write lock, so no
//! other writer changes them, and its own changes wait in the overlay (which
//! every read consults first). A read not read ahead goes to the database as
//! before; a row read ahead and not needed costs only its bytes.

use std::collections::HashMap;

use tokio_postgres::Row;

use crate::storage::StorageError;

/// One question to the database: the first `rows` rows of `table` in
/// `[from, to)` (`to` `None`: to the table's end), from the last if
/// `reverse`. A get is the one row in `[key, key ‖ 0)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Ask {
    pub(crate) table: &'static str,
    pub(crate) from: Vec<u8>,
    pub(crate) to: Option<Vec<u8>>,
    pub(crate) reverse: bool,
    pub(crate) rows: i64,
}

impl Ask {
    /// The get of `key`.
    pub(crate) fn get(table: &'static str, key: &[u8]) -> Ask {
        let mut to = Vec::with_capacity(key.len() + 1);
        to.extend_from_slice(key);
        to.push(0);
        Ask { table, from: key.to_vec(), to: Some(to), reverse: false, rows: 1 }
    }
}

/// Asks read ahead are at most this long (gets, first and last keys), and at
/// most [`MOST`] of them are kept from one transaction for the next.
pub(crate) const SHORT: i64 = 16;

/// Asks kept for the next transaction.
pub(crate) const MOST: usize = 256;

/// Rows of a page, as (key, value).
pub(crate) type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// The answers read ahead, by ask, each with whether a read used it.
pub(crate) type Answers = HashMap<Ask, (Rows, bool)>;

/// The statement answering many asks at once: each group of arrays is one
/// kind (ascending or descending, with an end or without), each ask a
/// lateral page of its own, tagged with its group and position.
pub(crate) const SQL: &str = "\
SELECT 0::int4, r.i, f.k, f.v FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::int8[]) \
  WITH ORDINALITY AS r(t, lo, hi, n, i) CROSS JOIN LATERAL (SELECT ach_kv.k, ach_kv.v FROM ach_kv \
  WHERE ach_kv.t = r.t AND ach_kv.k >= r.lo AND ach_kv.k < r.hi ORDER BY ach_kv.k LIMIT r.n) f \
UNION ALL \
SELECT 1, r.i, f.k, f.v FROM unnest($5::text[], $6::bytea[], $7::int8[]) \
  WITH ORDINALITY AS r(t, lo, n, i) CROSS JOIN LATERAL (SELECT ach_kv.k, ach_kv.v FROM ach_kv \
  WHERE ach_kv.t = r.t AND ach_kv.k >= r.lo ORDER BY ach_kv.k LIMIT r.n) f \
UNION ALL \
SELECT 2, r.i, f.k, f.v FROM unnest($8::text[], $9::bytea[], $10::bytea[], $11::int8[]) \
  WITH ORDINALITY AS r(t, lo, hi, n, i) CROSS JOIN LATERAL (SELECT ach_kv.k, ach_kv.v FROM ach_kv \
  WHERE ach_kv.t = r.t AND ach_kv.k >= r.lo AND ach_kv.k < r.hi ORDER BY ach_kv.k DESC LIMIT r.n) f \
UNION ALL \
SELECT 3, r.i, f.k, f.v FROM unnest($12::text[], $13::bytea[], $14::int8[]) \
  WITH ORDINALITY AS r(t, lo, n, i) CROSS JOIN LATERAL (SELECT ach_kv.k, ach_kv.v FROM ach_kv \
  WHERE ach_kv.t = r.t AND ach_kv.k >= r.lo ORDER BY ach_kv.k DESC LIMIT r.n) f";

/// The asks split into the statement's four groups, as its parameters.
#[derive(Default)]
pub(crate) struct Params {
    groups: [Vec<Ask>; 4],
}

impl Params {
    /// The parameters of [`SQL`] for `asks`.
    pub(crate) fn of(asks: &[Ask]) -> Params {
        let mut p = Params::default();
        for ask in asks {
            let group = usize::from(ask.to.is_none()) + 2 * usize::from(ask.reverse);
            p.groups[group].push(ask.clone());
        }
        p
    }

    /// Run `send` with the statement's fourteen parameters.
    pub(crate) fn with<T>(&self, send: impl FnOnce(&[&(dyn tokio_postgres::types::ToSql + Sync)]) -> T) -> T {
        let tables = |g: usize| self.groups[g].iter().map(|a| a.table).collect::<Vec<_>>();
        let froms = |g: usize| self.groups[g].iter().map(|a| a.from.as_slice()).collect::<Vec<_>>();
        let tos =
            |g: usize| self.groups[g].iter().map(|a| a.to.as_deref().unwrap_or_default()).collect::<Vec<_>>();
        let rows = |g: usize| self.groups[g].iter().map(|a| a.rows).collect::<Vec<_>>();
        let (t0, f0, h0, n0) = (tables(0), froms(0), tos(0), rows(0));
        let (t1, f1, n1) = (tables(1), froms(1), rows(1));
        let (t2, f2, h2, n2) = (tables(2), froms(2), tos(2), rows(2));
        let (t3, f3, n3) = (tables(3), froms(3), rows(3));
        send(&[&t0, &f0, &h0, &n0, &t1, &f1, &n1, &t2, &f2, &h2, &n2, &t3, &f3, &n3])
    }

    /// The answers of [`SQL`]'s `rows`: every ask's rows in its order (an
    /// ask without rows answered with none).
    pub(crate) fn answers(self, rows: &[Row]) -> Result<Answers, StorageError> {
        let unreadable =
            |e: tokio_postgres::Error| StorageError(format!("a PostgreSQL row is unreadable: {e}"));
        let mut pages: [Vec<Rows>; 4] = std::array::from_fn(|g| vec![Vec::new(); self.groups[g].len()]);
        for row in rows {
            let group = usize::try_from(row.try_get::<_, i32>(0).map_err(unreadable)?).unwrap_or(usize::MAX);
            let i = usize::try_from(row.try_get::<_, i64>(1).map_err(unreadable)?).unwrap_or(0);
            let page = pages
                .get_mut(group)
                .and_then(|g| g.get_mut(i.wrapping_sub(1)))
                .ok_or_else(|| StorageError("PostgreSQL answered an ask never made".into()))?;
            page.push((
                row.try_get::<_, Vec<u8>>(2).map_err(unreadable)?,
                row.try_get::<_, Vec<u8>>(3).map_err(unreadable)?,
            ));
        }
        let mut out = Answers::new();
        for (g, (asks, pages)) in self.groups.into_iter().zip(pages).enumerate() {
            for (ask, mut page) in asks.into_iter().zip(pages) {
                // A union's rows come in no promised order: each page in its own.
                if g >= 2 {
                    page.sort_by(|a, b| b.0.cmp(&a.0));
                } else {
                    page.sort_by(|a, b| a.0.cmp(&b.0));
                }
                out.insert(ask, (page, false));
            }
        }
        Ok(out)
    }
}
