//! Duplicate detection: the same merchant, account, amount, direction and class
//! within the duplicate window (message 17, when the merchant declines
//! duplicates), and a check number already used on the same account for the same
//! merchant (message 18, always, with no time limit; a voided transaction's check
//! is still spent). Both are point lookups of keyed fingerprints: no account
//! number is ever stored in these indexes.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::records::TransactionRecord;
use super::{Cx, Fail, Failure};
use crate::lifecycle::State;
use crate::storage::{StorageError, Table};
use crate::validation::ProblemCode;
use crate::AchError;

/// The default duplicate window: 24 hours.
pub const DEFAULT_DUPLICATE_WINDOW_HOURS: i64 = 24;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Seen {
    transaction_id: String,
    at: DateTime<Utc>,
}

/// The two fingerprints of a transaction.
pub(crate) struct Prints {
    similar: [u8; 32],
    check: Option<[u8; 32]>,
}

/// The fingerprints of `t` (its account fingerprint comes from its sealed account).
pub(crate) fn prints(cx: &Cx<'_, '_>, t: &TransactionRecord) -> Prints {
    let f = &cx.engine.fingerprints;
    let account = t.account.fingerprint.as_bytes();
    let amount = t.amount.cents().to_be_bytes();
    let similar = f.digest(&[
        b"similar",
        t.merchant_id.as_bytes(),
        account,
        &amount,
        t.direction.as_str().as_bytes(),
        t.class.as_str().as_bytes(),
    ]);
    let check = t.check_number.as_ref().map(|n| {
        f.digest(&[b"check", t.merchant_id.as_bytes(), account, n.trim_start_matches('0').as_bytes()])
    });
    Prints { similar, check }
}

/// Refuse `t` if it repeats a check (always) or, when the merchant declines
/// duplicates, a similar transaction within the window.
pub(crate) fn check(
    cx: &Cx<'_, '_>,
    t: &TransactionRecord,
    p: &Prints,
    decline_duplicates: bool,
) -> Result<(), Fail> {
    if let (Some(key), Some(number)) = (&p.check, &t.check_number) {
        if cx.w.get_raw(Table::Checks, key)?.is_some() {
            let e = AchError::DuplicateCheck { check_number: number.clone() };
            return Err(Failure::problem(
                e,
                "check_number",
                ProblemCode::Conflict,
                "this check was already used",
            )
            .into());
        }
    }
    if !decline_duplicates {
        return Ok(());
    }
    let Some(seen) = cx.w.get::<Seen>(Table::Fingerprints, &p.similar)? else { return Ok(()) };
    if cx.now - seen.at >= cx.engine.duplicate_window {
        return Ok(());
    }
    let earlier: Option<TransactionRecord> = cx.w.get(Table::Transactions, seen.transaction_id.as_bytes())?;
    if earlier.is_some_and(|e| e.state != State::Voided) {
        let msg = format!(
            "the same transaction was accepted at {}",
            crate::calendar::format_eastern_timestamp(seen.at)
        );
        return Err(Failure::problem(AchError::DuplicateTransaction, "", ProblemCode::Conflict, msg).into());
    }
    Ok(())
}

/// Remember an accepted transaction's fingerprints.
pub(crate) fn record(cx: &mut Cx<'_, '_>, t: &TransactionRecord, p: &Prints) -> Result<(), StorageError> {
    cx.w.put(Table::Fingerprints, &p.similar, &Seen { transaction_id: t.id.clone(), at: t.created_at })?;
    if let Some(key) = &p.check {
        cx.w.put_raw(Table::Checks, key, t.id.as_bytes())?;
    }
    Ok(())
}

/// The window as a duration.
pub(crate) fn default_window() -> Duration {
    Duration::hours(DEFAULT_DUPLICATE_WINDOW_HOURS)
}
