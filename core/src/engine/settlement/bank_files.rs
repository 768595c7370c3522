//! Files the bank sends back: returns (addenda 99) and notifications of change
//! (addenda 98), matched to transactions by the original trace number alone
//! (trace numbers never repeat across the originator's files) and applied
//! exactly once.
//!
//! A return moves its transaction to R Returned (also after Settled), dated by
//! the return batch's effective entry date. A notification of change updates
//! the stored customer the transaction was made with, so later files carry the
//! corrected data, and adds a `transaction.notice_of_change` event to the
//! merchant's feed (the corrected account number sealed at rest, like every
//! account number). Each applied entry is remembered in the inbound table: the
//! same file posted again changes nothing and counts everything as already
//! applied. An entry whose trace the engine never wrote is unmatched, not a
//! failure of the file.

use serde::{Deserialize, Serialize};

use crate::engine::feeds::changes;
use crate::engine::rows::records::{CustomerRecord, NoticeRecord, TransactionRecord};
use crate::engine::tenancy::customers;
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::lifecycle::State;
use crate::model::{AccountType, BankAccount};
use crate::nacha::{Correction, Inbound, InboundNotice, InboundReturn};
use crate::storage::{StorageError, Table};
use crate::validation::{FieldError, ProblemCode};
use crate::AchError;

/// What ingesting a file did, entry by entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ingested {
    /// Returns applied.
    pub returns: u64,
    /// Notifications of change applied.
    pub notices_of_change: u64,
    /// Entries whose original trace number matches no transaction of the
    /// engine's files (or that are neither a return nor a notification).
    pub unmatched: u64,
    /// Entries applied by an earlier ingestion.
    pub already_applied: u64,
}

/// Most reader problems named in a refusal.
const MAX_PROBLEMS: usize = 50;

/// Read a bank file: its entries, or why it is refused (every layout and
/// control problem, by record and field: `records[7].entry_hash`).
pub(crate) fn read(bytes: &[u8]) -> Result<Vec<Inbound>, Vec<FieldError>> {
    let refuse =
        |field: String, message: String| FieldError { field, code: ProblemCode::InvalidFormat, message };
    let parsed = crate::nacha::read(bytes).map_err(|e| vec![refuse(String::new(), e.to_string())])?;
    if !parsed.problems.is_empty() {
        return Err(parsed
            .problems
            .iter()
            .take(MAX_PROBLEMS)
            .map(|p| refuse(format!("records[{}].{}", p.record, p.field), p.message.clone()))
            .collect());
    }
    Ok(crate::nacha::inbound(&parsed.file))
}

/// Apply every entry of a file, read and checked when the operation was prepared.
pub(crate) fn ingest(cx: &mut WriteContext<'_, '_>, entries: &[Inbound]) -> Result<Outcome, Stop> {
    let now = cx.now;
    crate::engine::settlement::schedule::catch_up(cx, now, None)?;
    let mut done = Ingested::default();
    let mut returned = Vec::new();
    for entry in entries {
        let counted = match entry {
            Inbound::Return(r) => apply_return(cx, r, &mut returned)?,
            Inbound::Notice(n) => apply_notice(cx, n)?,
            Inbound::Other { .. } => Counted::Unmatched,
        };
        match counted {
            Counted::Applied if matches!(entry, Inbound::Return(_)) => done.returns += 1,
            Counted::Applied => done.notices_of_change += 1,
            Counted::Unmatched => done.unmatched += 1,
            Counted::Already => done.already_applied += 1,
        }
    }
    let crossings = crate::engine::risk::return_rates::crossings(cx, &returned.iter().collect::<Vec<_>>())?;
    Ok(Outcome::ReturnFileIngested { ingested: done, crossings })
}

enum Counted {
    Applied,
    Unmatched,
    Already,
}

/// The transaction that carried `trace`, if the engine wrote it.
fn by_trace(cx: &WriteContext<'_, '_>, trace: &str) -> Result<Option<TransactionRecord>, StorageError> {
    let Some(id) = crate::engine::settlement::traces::transaction_of(cx.write, trace)? else {
        return Ok(None);
    };
    cx.write.get(Table::Transactions, id.as_bytes())
}

/// Apply one return; the transaction returned is added to `returned`.
fn apply_return(
    cx: &mut WriteContext<'_, '_>,
    r: &InboundReturn,
    returned: &mut Vec<TransactionRecord>,
) -> Result<Counted, Stop> {
    let marker = [b"r:".as_slice(), r.original_trace.as_bytes()].concat();
    if cx.write.get_raw(Table::Inbound, &marker)?.is_some() {
        return Ok(Counted::Already);
    }
    let Some(mut t) = by_trace(cx, &r.original_trace)? else { return Ok(Counted::Unmatched) };
    match t.state {
        State::Returned => return Ok(Counted::Already),
        State::Originated | State::Settled => {}
        State::Pending | State::Voided => return Ok(Counted::Unmatched),
    }
    let before = t.state;
    t.state = State::Returned;
    t.return_reason = Some(match r.lookup() {
        Some(code) => code.reason().to_owned(),
        None => format!("Return reason {}", r.return_code),
    });
    t.return_code = Some(r.return_code.clone());
    t.return_date = Some(r.return_date);
    cx.write.put(Table::Transactions, t.id.as_bytes(), &t)?;
    cx.write.put_raw(Table::Inbound, &marker, t.id.as_bytes())?;
    let now = cx.now;
    changes::record_ending(cx, &t, now, before)?;
    crate::engine::verification::web_debit::after_return(cx, &t)?;
    crate::engine::risk::reviews::on_return(cx, &t, Some(&r.information))?;
    returned.push(t);
    Ok(Counted::Applied)
}

/// The parts of a correction: routing number, account number, account type,
/// and the text as sent for one the engine does not read.
type CorrectedParts<'c> = (Option<&'c str>, Option<&'c str>, Option<AccountType>, Option<&'c str>);

fn parts(c: &Correction) -> CorrectedParts<'_> {
    match c {
        Correction::Account(a) => (None, Some(a), None, None),
        Correction::Routing(r) => (Some(r), None, None, None),
        Correction::RoutingAndAccount { routing_number, account_number } => {
            (Some(routing_number), Some(account_number), None, None)
        }
        Correction::AccountType(t) => (None, None, Some(*t), None),
        Correction::AccountAndType { account_number, account_type } => {
            (None, Some(account_number), Some(*account_type), None)
        }
        Correction::RoutingAccountAndType { routing_number, account_number, account_type } => {
            (Some(routing_number), Some(account_number), Some(*account_type), None)
        }
        Correction::Other { text, .. } | Correction::Unreadable { text, .. } => {
            (None, None, None, Some(text))
        }
    }
}

fn apply_notice(cx: &mut WriteContext<'_, '_>, n: &InboundNotice) -> Result<Counted, Stop> {
    let marker = [b"n:".as_slice(), n.trace.as_bytes(), b":", n.original_trace.as_bytes()].concat();
    if cx.write.get_raw(Table::Inbound, &marker)?.is_some() {
        return Ok(Counted::Already);
    }
    let Some(t) = by_trace(cx, &n.original_trace)? else { return Ok(Counted::Unmatched) };
    notice(cx, &t, (&n.change_code, &n.correction), &n.trace)?;
    cx.write.put_raw(Table::Inbound, &marker, t.id.as_bytes())?;
    Ok(Counted::Applied)
}

/// Apply the notification of change `(change_code, correction)` to `t`
/// (`trace`: the notification's own): its customer corrected, the notice
/// event, the account validations it touches. Whether the customer changed.
fn notice(
    cx: &mut WriteContext<'_, '_>,
    t: &TransactionRecord,
    (change_code, correction): (&str, &Correction),
    trace: &str,
) -> Result<bool, Stop> {
    let (routing, account, account_type, text) = parts(correction);
    let customer_updated = match (&t.customer_id, text) {
        (Some(id), None) => update_customer(cx, id, routing, account, account_type)?,
        _ => false,
    };
    let sealed_for = format!("{}/{}", t.id, trace);
    let seal = |plain: &str| cx.engine.cipher.encrypt(plain.as_bytes(), sealed_for.as_bytes());
    let record = NoticeRecord {
        change_code: change_code.to_owned(),
        routing_number: routing.map(str::to_owned),
        account_sealed: account.map(seal),
        account_type,
        text_sealed: text.map(seal),
        customer_id: t.customer_id.clone(),
        customer_updated,
        sealed_for: sealed_for.clone(),
    };
    let now = cx.now;
    changes::record_notice(cx, t, &record, now)?;
    let corrected = match (&t.customer_id, customer_updated) {
        (Some(id), true) => crate::engine::tenancy::customers::fingerprint_of(cx, &t.partner_id, id)?,
        _ => None,
    };
    crate::engine::verification::web_debit::after_notice(cx, t, change_code, corrected.as_deref())?;
    Ok(customer_updated)
}

/// Operator, sandbox only: a notification of change for the originated
/// transaction `id`, applied as one in a bank's file would be. Its own trace
/// is `sim` and random characters (no bank file carries one).
pub(crate) fn simulate_notice(
    cx: &mut WriteContext<'_, '_>,
    id: &str,
    change_code: &str,
    corrected_data: &str,
) -> Result<Outcome, Stop> {
    crate::engine::settlement::schedule::sandbox_only(cx)?;
    let now = cx.now;
    crate::engine::settlement::schedule::catch_up(cx, now, None)?;
    let t = crate::engine::lifecycle::transactions::load(cx, None, id)?;
    if matches!(t.state, State::Pending | State::Voided) {
        let msg =
            format!("a notification of change answers an originated entry; this one is {}", t.state.name());
        return Err(Refusal::conflict(AchError::FailedToAccept, "transaction_id", msg).into());
    }
    let correction = Correction::parse(change_code, corrected_data);
    let trace = format!("sim{}", crate::ids::random_alphanumeric(12));
    let customer_updated = notice(cx, &t, (change_code, &correction), &trace)?;
    Ok(Outcome::NoticeApplied { transaction_id: t.id, customer_updated })
}

/// Apply a correction to a stored customer (not deleted): whether it changed.
fn update_customer(
    cx: &mut WriteContext<'_, '_>,
    id: &str,
    routing: Option<&str>,
    account: Option<&str>,
    account_type: Option<AccountType>,
) -> Result<bool, Stop> {
    let Some(mut c) = cx.write.get::<CustomerRecord>(Table::Customers, id.as_bytes())? else {
        return Ok(false);
    };
    let Some(current) = c.account.as_ref() else { return Ok(false) };
    let (number, name) = cx.engine.unseal_account(current).map_err(|e| StorageError(e.to_string()))?;
    let corrected = BankAccount {
        name,
        account_number: account.map_or(number, str::to_owned),
        routing_number: routing.unwrap_or(&current.routing_number).to_owned(),
        account_type: account_type.unwrap_or(current.account_type),
    };
    let fingerprint = customers::account_fingerprint(&cx.engine.fingerprints, &corrected);
    c.account = Some(customers::seal(cx, &corrected, &c.id, fingerprint));
    cx.write.put(Table::Customers, c.id.as_bytes(), &c)?;
    Ok(true)
}
