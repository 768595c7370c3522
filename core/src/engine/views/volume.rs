//! The volume sent to the bank per Eastern day: the origination files and
//! image cash letters of each day's cut-offs, summed.
//!
//! Both are keyed by `fil_`/`icl_` and their cut-off's Eastern date
//! (`YYYYMMDD`, `settlement/file_ids.rs::free_id`), so a period's are one
//! range read each: its cost is the period's files (a few per day), whatever
//! the history.

use std::collections::BTreeMap;

use chrono::NaiveDate;

use crate::calendar;
use crate::engine::{Engine, ImageCashLetter, OriginationFile, Refusal};
use crate::model::{DailyVolume, Volume};
use crate::money::Money;
use crate::storage::{Snapshot, StorageError, Table};

/// `[first, past)`: the keys of `table`'s rows named `prefix` and a date
/// from `from` to `to`.
fn range(prefix: &str, from: NaiveDate, to: NaiveDate) -> (Vec<u8>, Vec<u8>) {
    let first = format!("{prefix}{}", from.format("%Y%m%d")).into_bytes();
    let mut past = format!("{prefix}{}", to.format("%Y%m%d")).into_bytes();
    past.push(u8::MAX);
    (first, past)
}

/// Every row of `table` whose key is in the period, decoded.
fn summaries<T: serde::de::DeserializeOwned>(
    r: &Snapshot,
    (table, prefix): (Table, &str),
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<T>, StorageError> {
    let (first, past) = range(prefix, from, to);
    let mut out = Vec::new();
    r.scan(table, &first, &past, &mut |_, value| {
        out.push(crate::storage::decode(table, value)?);
        Ok(true)
    })?;
    Ok(out)
}

/// A day's line with nothing in it.
fn empty(date: NaiveDate) -> DailyVolume {
    DailyVolume {
        date,
        files: 0,
        entries: 0,
        total_debit: Money::default(),
        total_credit: Money::default(),
        cash_letters: 0,
        check_items: 0,
        check_total: Money::default(),
    }
}

/// `GET /admin/volume`: one line per Eastern day from `from` to `to` (the
/// caller holds the period to [`crate::model::MAX_VOLUME_DAYS`]).
pub(crate) fn volume(engine: &Engine, from: NaiveDate, to: NaiveDate) -> Result<Volume, Refusal> {
    let (files, letters) = engine.store.read_durable(|r| {
        let files: Vec<OriginationFile> = summaries(r, (Table::Files, "fil_"), from, to)?;
        let letters: Vec<ImageCashLetter> = summaries(r, (Table::CashLetters, "icl_"), from, to)?;
        Ok((files, letters))
    })?;
    let mut days: BTreeMap<NaiveDate, DailyVolume> =
        from.iter_days().take_while(|d| *d <= to).map(|d| (d, empty(d))).collect();
    for f in files {
        if let Some(day) = days.get_mut(&calendar::eastern_date(f.cutoff)) {
            day.files += 1;
            day.entries += f.entries;
            day.total_debit = day.total_debit.saturating_add(f.total_debit);
            day.total_credit = day.total_credit.saturating_add(f.total_credit);
        }
    }
    for l in letters {
        if let Some(day) = days.get_mut(&calendar::eastern_date(l.cutoff)) {
            day.cash_letters += 1;
            day.check_items += l.items;
            day.check_total = day.check_total.saturating_add(l.total);
        }
    }
    Ok(Volume { from, to, days: days.into_values().collect() })
}
