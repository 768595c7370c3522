//! The rules beyond layout: what a well-formed file can still get wrong.
//!
//! One implementation for both directions: the writer refuses a file with any
//! [`Finding`], and [`check`] turns the findings of a file read into problems
//! with record numbers. The rules: effective entry dates on banking days, trace
//! numbers prefixed by the batch's ODFI, ascending and unique in the file, receiving routing numbers
//! with a good check digit, known SEC, service class and transaction codes, a
//! check serial number on BOC, ARC and RCK entries, a check serial, terminal city
//! and state on POP entries, a payment type code (`S` or `R`) on WEB and TEL
//! entries, and no credits in debit-only batches (service class 225, or a
//! debit-only SEC code outside a reversal batch) nor debits in credit-only ones.

use std::fmt;

use super::file::{Batch, Entry, NachaFile};
use super::read::Parsed;
use super::{is_debit_only_class, is_known_transaction_code, CREDITS_ONLY, DEBITS_ONLY, MIXED};
use crate::calendar::is_banking_day;
use crate::record_problem::Problem;
use crate::routing::is_valid_routing_number;

/// The SEC codes of the Nacha rules.
const SEC_CODES: [&str; 24] = [
    "ACK", "ADV", "ARC", "ATX", "BOC", "CCD", "CIE", "COR", "CTX", "DNE", "ENR", "IAT", "MTE", "POP", "POS",
    "PPD", "RCK", "SHR", "TEL", "TRC", "TRX", "WEB", "XCK", "CBR",
];

/// A rule a file breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// The effective entry date is a weekend or a Federal Reserve holiday.
    NotBankingDay,
    /// The trace number does not start with the batch's ODFI identification.
    TracePrefixNotOdfi,
    /// The trace number is not above the previous entry's in the batch.
    TraceNotAscending,
    /// The trace number is another entry's in the same file.
    TraceNotUnique,
    /// The receiving DFI identification and check digit are not a routing number.
    BadRoutingNumber,
    /// Not a Nacha SEC code (ICL, for one, is not).
    UnknownSecCode,
    /// Not 200, 220 or 225.
    UnknownServiceClass,
    /// Not a Nacha transaction code.
    UnknownTransactionCode,
    /// A BOC, ARC or RCK entry without its check serial number.
    MissingCheckSerial,
    /// A POP entry without its check serial, terminal city or 2-letter state.
    MissingPopTerminal,
    /// A WEB or TEL entry without payment type code `S` or `R`.
    MissingPaymentType,
    /// A credit in a batch of service class 225 (debits only).
    CreditInDebitOnlyBatch,
    /// A debit in a batch of service class 220 (credits only).
    DebitInCreditOnlyBatch,
    /// A credit in a debit-only class (TEL, BOC, POP, ARC, RCK) outside a
    /// reversal batch.
    CreditInDebitOnlyClass,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::NotBankingDay => "not a banking day",
            Rule::TracePrefixNotOdfi => "trace number does not start with the batch's ODFI identification",
            Rule::TraceNotAscending => "trace number not ascending within the batch",
            Rule::TraceNotUnique => "trace number used by another entry of the file",
            Rule::BadRoutingNumber => "receiving DFI and check digit are not a valid routing number",
            Rule::UnknownSecCode => "not a Nacha standard entry class code",
            Rule::UnknownServiceClass => "service class code is not 200, 220 or 225",
            Rule::UnknownTransactionCode => "not a Nacha transaction code",
            Rule::MissingCheckSerial => "check serial number missing",
            Rule::MissingPopTerminal => "POP check serial, terminal city or state missing",
            Rule::MissingPaymentType => "payment type code must be S or R",
            Rule::CreditInDebitOnlyBatch => "credit in a debits-only batch (service class 225)",
            Rule::DebitInCreditOnlyBatch => "debit in a credits-only batch (service class 220)",
            Rule::CreditInDebitOnlyClass => "credit in a debit-only class outside a reversal batch",
        })
    }
}

/// Where in the model a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The file header.
    FileHeader,
    /// Batch (0-based index in the file).
    Batch(usize),
    /// Entry `entry` (0-based) of batch `batch` (0-based).
    Entry {
        /// The batch's index.
        batch: usize,
        /// The entry's index within its batch.
        entry: usize,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::FileHeader => f.write_str("file header"),
            Place::Batch(b) => write!(f, "batch {}", b + 1),
            Place::Entry { batch, entry } => write!(f, "batch {}, entry {}", batch + 1, entry + 1),
        }
    }
}

/// One broken rule: where, which field, which rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    /// Where.
    pub place: Place,
    /// The field, by its Nacha name in snake case.
    pub field: &'static str,
    /// The rule.
    pub rule: Rule,
}

/// Every rule `file` breaks, in file order.
pub fn findings(file: &NachaFile) -> Vec<Finding> {
    let mut out = Vec::new();
    for (b, batch) in file.batches.iter().enumerate() {
        batch_findings(b, batch, &mut out);
    }
    duplicate_traces(file, &mut out);
    out
}

/// Trace numbers repeated across batches (within a batch, ascending order
/// already rules them out). When each batch's traces ascend and every batch
/// starts above the previous one's last, as the writer's callers number them,
/// none can repeat and nothing is sorted.
fn duplicate_traces(file: &NachaFile, out: &mut Vec<Finding>) {
    let mut last: Option<&[u8]> = None;
    let mut ordered = true;
    for batch in &file.batches {
        let traces = || batch.entries.iter().map(|e| e.trace_number.as_bytes());
        let ascending = traces().zip(traces().skip(1)).all(|(a, b)| a < b);
        let first = traces().next();
        if !ascending || first.zip(last).is_some_and(|(f, l)| f <= l) {
            ordered = false;
            break;
        }
        last = batch.entries.last().map(|e| e.trace_number.as_bytes()).or(last);
    }
    if ordered {
        return;
    }
    let mut all: Vec<(&[u8], usize, usize)> = file
        .batches
        .iter()
        .enumerate()
        .flat_map(|(b, batch)| {
            batch.entries.iter().enumerate().map(move |(i, e)| (e.trace_number.as_bytes(), b, i))
        })
        .collect();
    all.sort_unstable();
    let mut repeated: Vec<(usize, usize)> =
        all.windows(2).filter(|w| w[0].0 == w[1].0).map(|w| (w[1].1, w[1].2)).collect();
    repeated.sort_unstable();
    for (batch, entry) in repeated {
        out.push(Finding {
            place: Place::Entry { batch, entry },
            field: "trace_number",
            rule: Rule::TraceNotUnique,
        });
    }
}

fn batch_findings(b: usize, batch: &Batch, out: &mut Vec<Finding>) {
    let mut at = |field, rule| out.push(Finding { place: Place::Batch(b), field, rule });
    if !is_banking_day(batch.effective_entry_date) {
        at("effective_entry_date", Rule::NotBankingDay);
    }
    if !SEC_CODES.contains(&batch.sec_code.as_str()) {
        at("standard_entry_class_code", Rule::UnknownSecCode);
    }
    if !matches!(batch.service_class_code, MIXED | CREDITS_ONLY | DEBITS_ONLY) {
        at("service_class_code", Rule::UnknownServiceClass);
    }
    let class = BatchClass {
        sec: batch.sec_code.as_bytes(),
        odfi: batch.odfi_identification.as_bytes(),
        service_class: batch.service_class_code,
        credits_allowed: !is_debit_only_class(&batch.sec_code) || batch.is_reversal(),
    };
    let mut previous: Option<&[u8]> = None;
    for (i, entry) in batch.entries.iter().enumerate() {
        let place = Place::Entry { batch: b, entry: i };
        entry_rules(&class, entry, previous, &mut |field, rule| out.push(Finding { place, field, rule }));
        previous = Some(entry.trace_number.as_bytes());
    }
}

/// What the entry rules need of their batch, worked out once per batch.
struct BatchClass<'a> {
    sec: &'a [u8],
    odfi: &'a [u8],
    service_class: u16,
    /// Not a debit-only class, or a reversal batch.
    credits_allowed: bool,
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| b != b' ').unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(start, |i| i + 1);
    &bytes[start..end]
}

fn entry_rules(
    batch: &BatchClass<'_>,
    e: &Entry,
    previous: Option<&[u8]>,
    out: &mut dyn FnMut(&'static str, Rule),
) {
    if !is_known_transaction_code(e.transaction_code) {
        out("transaction_code", Rule::UnknownTransactionCode);
    }
    if e.is_credit() {
        if batch.service_class == DEBITS_ONLY {
            out("transaction_code", Rule::CreditInDebitOnlyBatch);
        }
        if !batch.credits_allowed {
            out("transaction_code", Rule::CreditInDebitOnlyClass);
        }
    }
    if e.is_debit() && batch.service_class == CREDITS_ONLY {
        out("transaction_code", Rule::DebitInCreditOnlyBatch);
    }
    let dfi = e.receiving_dfi.as_bytes();
    let mut routing = [0u8; 9];
    let routing_ok = dfi.len() == 8 && e.check_digit.is_ascii_digit() && {
        routing[..8].copy_from_slice(dfi);
        routing[8] = e.check_digit as u8;
        std::str::from_utf8(&routing).is_ok_and(is_valid_routing_number)
    };
    if !routing_ok {
        out("check_digit", Rule::BadRoutingNumber);
    }
    let trace = e.trace_number.as_bytes();
    if batch.odfi.is_empty() || !trace.starts_with(batch.odfi) {
        out("trace_number", Rule::TracePrefixNotOdfi);
    }
    if previous.is_some_and(|p| p >= trace) {
        out("trace_number", Rule::TraceNotAscending);
    }
    match batch.sec {
        b"BOC" | b"ARC" | b"RCK" if trim(e.identification.as_bytes()).is_empty() => {
            out("check_serial_number", Rule::MissingCheckSerial);
        }
        b"POP" => {
            let t = e.pop_terminal();
            let state_ok = t.state.len() == 2 && t.state.bytes().all(|b| b.is_ascii_alphabetic());
            if t.check_serial.is_empty() || t.city.is_empty() || !state_ok {
                out("individual_identification_number", Rule::MissingPopTerminal);
            }
        }
        b"WEB" | b"TEL" if !matches!(trim(e.discretionary_data.as_bytes()), b"S" | b"R") => {
            out("payment_type_code", Rule::MissingPaymentType);
        }
        _ => {}
    }
}

/// The rules beyond layout over a file read, as problems with record numbers.
pub fn check(parsed: &Parsed) -> Vec<Problem> {
    findings(&parsed.file)
        .into_iter()
        .map(|f| {
            let record = match f.place {
                Place::FileHeader => 1,
                Place::Batch(b) => parsed.locations.batches.get(b).map_or(0, |l| l.header),
                Place::Entry { batch, entry } => parsed
                    .locations
                    .batches
                    .get(batch)
                    .and_then(|l| l.entries.get(entry).copied())
                    .unwrap_or(0),
            };
            Problem::new(record, f.field, f.rule.to_string())
        })
        .collect()
}
