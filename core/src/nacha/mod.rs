//! NACHA files: the ACH network's own format, written and read as pure code.
//!
//! A NACHA file is a sequence of 94-character records: a file header (`1`),
//! batches (a batch header `5`, entry details `6` each followed by its addenda
//! `7`, a batch control `8`), a file control (`9`), and `9`-filled records that
//! pad the file to a multiple of ten records (the blocking factor). Alphanumeric
//! fields are left-justified and space-filled, numeric fields right-justified and
//! zero-filled.
//!
//! - [`file`](mod@file): the typed file ([`NachaFile`], [`Batch`], [`Entry`], [`Addenda`])
//!   that the writer takes and the reader gives back, and the [`Originator`].
//! - [`write()`]: the writer. It computes every control (counts, entry hash,
//!   totals, block count) and refuses, with a typed [`WriteError`], anything a bank
//!   would reject.
//! - [`read()`]: the reader. It takes any bytes, never panics, and reports each
//!   layout or control problem with its record number and field.
//! - [`inbound()`]: what a bank sent back (returns, notifications of change),
//!   typed for the engine to apply.
//! - [`check()`]: the rules beyond layout (banking days, trace prefixes, check
//!   serial numbers, POP terminals, WEB/TEL payment types, credits in debit-only
//!   batches), shared by the writer and by the reader's callers.
//!
//! Nothing here touches storage or reads a clock: dates come in as values.

mod check;
mod fields;
pub mod file;
mod inbound;
mod read;
mod records;
mod stream;
mod text;
mod write;

#[cfg(test)]
mod inbound_tests;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

pub use crate::record_problem::Problem;
pub use check::{check, findings, Finding, Place, Rule};
pub use fields::FieldProblem;
pub use file::{
    default_same_day_cutoffs, pop_identification, prenote_code, service_class_for, transaction_code, Addenda,
    Batch, ChangeEntry, Entry, FileHeader, NachaFile, Originator, PopTerminal, ReturnEntry,
};
pub use inbound::{inbound, Correction, Inbound, InboundNotice, InboundReturn};
pub use read::{read, BatchLocation, Locations, Parsed, ReadError};
pub use records::{BatchControl, FileControl};
pub use stream::Stream;
pub use text::Text;
pub use write::{write, WriteError, WriteIssue};

/// Length of every record, without its line ending.
pub const RECORD_LEN: usize = 94;

/// Records per block: a file's record count is padded to a multiple of this with
/// `9`-filled records.
pub const BLOCKING_FACTOR: usize = 10;

/// Service class code of a batch of credits only.
pub const CREDITS_ONLY: u16 = 220;
/// Service class code of a batch of debits only.
pub const DEBITS_ONLY: u16 = 225;
/// Service class code of a batch mixing debits and credits.
pub const MIXED: u16 = 200;

/// Whether a transaction code moves money to the receiver (a credit): codes whose
/// second digit is 1 to 4 (21 return, 22 credit, 23 prenote, 24 zero-dollar…).
pub const fn is_credit_code(code: u8) -> bool {
    matches!(code % 10, 1..=4)
}

/// Whether a transaction code takes money from the receiver (a debit): codes whose
/// second digit is 5 to 9 (26 return, 27 debit, 28 prenote, 29 zero-dollar…).
pub const fn is_debit_code(code: u8) -> bool {
    matches!(code % 10, 5..=9)
}

/// Whether a transaction code exists in the Nacha rules: checking (21–29), savings
/// (31–39), general ledger (41–49) and loan (51–56) accounts, without the unused
/// x0 and x5 (except loan 55, a loan reversal debit).
pub const fn is_known_transaction_code(code: u8) -> bool {
    match code / 10 {
        2..=4 => !matches!(code % 10, 0 | 5),
        5 => matches!(code % 10, 1..=6),
        _ => false,
    }
}

/// The SEC codes that carry debits only (a credit is valid only in a reversal
/// batch): telephone, check conversions (ARC, BOC, POP) and re-presented checks.
pub fn is_debit_only_class(sec_code: &str) -> bool {
    matches!(sec_code, "TEL" | "BOC" | "POP" | "ARC" | "RCK")
}
