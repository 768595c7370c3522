//! The entries a file leaves out, and the ids files take: one per day and
//! modifier, the same for origination files and image cash letters.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::engine::WriteContext;
use crate::storage::{StorageError, Table};

/// A transaction left out of its cut-off's file, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldEntry {
    /// The transaction.
    pub transaction_id: String,
    /// What the NACHA writer objected to.
    pub problem: String,
}

/// The first id `{prefix}YYYYMMDD{modifier}` free in `table` on `date`, with
/// its file id modifier: `A`–`Z`, then `0`–`9`; past 36 files in a day the
/// modifiers repeat and the id gains `-1`, `-2`, … so a file is never refused.
pub(crate) fn free_id(
    cx: &WriteContext<'_, '_>,
    (prefix, table): (&str, Table),
    date: NaiveDate,
) -> Result<(String, char), StorageError> {
    let modifiers: Vec<char> = ('A'..='Z').chain('0'..='9').collect();
    let day = date.format("%Y%m%d");
    for n in 0usize.. {
        let modifier = modifiers[n % modifiers.len()];
        let round = n / modifiers.len();
        let id = if round == 0 {
            format!("{prefix}{day}{modifier}")
        } else {
            format!("{prefix}{day}{modifier}-{round}")
        };
        if cx.write.get_raw(table, id.as_bytes())?.is_none() {
            return Ok((id, modifier));
        }
    }
    Err(StorageError(format!("no {prefix} id is free on {date}")))
}
