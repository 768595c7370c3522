//! The record layouts (Nacha Operating Rules, Appendix Three): each record type's
//! fields at their 1-based positions, encoded into and decoded from 94 bytes.
//!
//! Encoding assumes the writer has checked every field; decoding is lenient and
//! reports each malformed field as a problem with the record's number.

use super::fields::{put_alpha, put_date, put_num, put_right, put_time, Fields};
use super::file::{Addenda, Batch, ChangeEntry, Entry, FileHeader, ReturnEntry};
use super::text::Text;
use crate::money::Money;

/// A batch control record (`8`) as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchControl {
    /// Service class code (must equal the header's).
    pub service_class_code: u16,
    /// Entries plus addenda in the batch.
    pub entry_addenda_count: u64,
    /// Sum of the entries' receiving DFI identifications, last 10 digits.
    pub entry_hash: u64,
    /// Total debit amount.
    pub total_debit: Money,
    /// Total credit amount.
    pub total_credit: Money,
    /// Company identification (must equal the header's).
    pub company_identification: Text,
    /// Message authentication code (≤ 19), usually blank.
    pub message_authentication_code: Text,
    /// ODFI identification (must equal the header's).
    pub odfi_identification: Text,
    /// Batch number (must equal the header's).
    pub batch_number: u32,
}

/// A file control record (`9`) as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileControl {
    /// Number of batches.
    pub batch_count: u64,
    /// Number of blocks of ten records, padding included.
    pub block_count: u64,
    /// Entries plus addenda in the file.
    pub entry_addenda_count: u64,
    /// Sum of the batches' entry hashes, last 10 digits.
    pub entry_hash: u64,
    /// Total debit amount.
    pub total_debit: Money,
    /// Total credit amount.
    pub total_credit: Money,
}

fn cents(value: u64) -> Money {
    Money::from_cents(i64::try_from(value).unwrap_or(i64::MAX))
}

fn amount(money: Money) -> u64 {
    u64::try_from(money.cents()).unwrap_or(0)
}

pub(crate) fn encode_file_header(h: &FileHeader, out: &mut Vec<u8>) {
    out.extend_from_slice(b"101");
    put_right(out, &h.immediate_destination, 10);
    put_right(out, &h.immediate_origin, 10);
    put_date(out, h.creation_date);
    put_time(out, h.creation_time);
    let mut modifier = [0u8; 4];
    put_alpha(out, h.file_id_modifier.encode_utf8(&mut modifier), 1);
    out.extend_from_slice(b"094101");
    put_alpha(out, &h.immediate_destination_name, 23);
    put_alpha(out, &h.immediate_origin_name, 23);
    put_alpha(out, &h.reference_code, 8);
}

pub(crate) fn decode_file_header(r: &mut Fields<'_>) -> FileHeader {
    r.num(2, 2, "priority_code");
    if r.raw(35, 3) != b"094" {
        r.problems.push(super::Problem::new(r.number, "record_size", "record size is not 094"));
    }
    if r.raw(38, 2) != b"10" {
        r.problems.push(super::Problem::new(r.number, "blocking_factor", "blocking factor is not 10"));
    }
    if r.raw(40, 1) != b"1" {
        r.problems.push(super::Problem::new(r.number, "format_code", "format code is not 1"));
    }
    FileHeader {
        immediate_destination: r.trimmed(4, 10, "immediate_destination"),
        immediate_origin: r.trimmed(14, 10, "immediate_origin"),
        creation_date: r.date(24, "file_creation_date"),
        creation_time: r.time(30, "file_creation_time"),
        file_id_modifier: r.char(34, "file_id_modifier"),
        immediate_destination_name: r.text(41, 23, "immediate_destination_name"),
        immediate_origin_name: r.text(64, 23, "immediate_origin_name"),
        reference_code: r.text(87, 8, "reference_code"),
    }
}

pub(crate) fn encode_batch_header(b: &Batch, out: &mut Vec<u8>) {
    out.push(b'5');
    put_num(out, u64::from(b.service_class_code), 3);
    put_alpha(out, &b.company_name, 16);
    put_alpha(out, &b.company_discretionary_data, 20);
    put_alpha(out, &b.company_identification, 10);
    put_alpha(out, &b.sec_code, 3);
    put_alpha(out, &b.company_entry_description, 10);
    put_alpha(out, &b.company_descriptive_date, 6);
    put_date(out, b.effective_entry_date);
    put_alpha(out, &b.settlement_date, 3);
    let mut status = [0u8; 4];
    put_alpha(out, b.originator_status_code.encode_utf8(&mut status), 1);
    put_alpha(out, &b.odfi_identification, 8);
    put_num(out, u64::from(b.batch_number), 7);
}

/// A batch header's fields, entries empty (the reader adds them).
pub(crate) fn decode_batch_header(r: &mut Fields<'_>) -> Batch {
    Batch {
        service_class_code: r.num(2, 3, "service_class_code") as u16,
        company_name: r.text(5, 16, "company_name"),
        company_discretionary_data: r.text(21, 20, "company_discretionary_data"),
        company_identification: r.text(41, 10, "company_identification"),
        sec_code: r.text(51, 3, "standard_entry_class_code"),
        company_entry_description: r.text(54, 10, "company_entry_description"),
        company_descriptive_date: r.text(64, 6, "company_descriptive_date"),
        effective_entry_date: r.date(70, "effective_entry_date"),
        settlement_date: r.text(76, 3, "settlement_date"),
        originator_status_code: r.char(79, "originator_status_code"),
        odfi_identification: r.digits(80, 8, "odfi_identification"),
        batch_number: r.num(88, 7, "batch_number") as u32,
        entries: Vec::new(),
    }
}

pub(crate) fn encode_entry(e: &Entry, out: &mut Vec<u8>) {
    out.push(b'6');
    put_num(out, u64::from(e.transaction_code), 2);
    put_alpha(out, &e.receiving_dfi, 8);
    let mut digit = [0u8; 4];
    put_alpha(out, e.check_digit.encode_utf8(&mut digit), 1);
    put_alpha(out, &e.account_number, 17);
    put_num(out, amount(e.amount), 10);
    put_alpha(out, &e.identification, 15);
    put_alpha(out, &e.name, 22);
    put_alpha(out, &e.discretionary_data, 2);
    out.push(if e.addenda.is_empty() { b'0' } else { b'1' });
    put_alpha(out, &e.trace_number, 15);
}

/// An entry's fields and its addenda indicator; addenda empty (the reader adds them).
pub(crate) fn decode_entry(r: &mut Fields<'_>) -> (Entry, bool) {
    let entry = Entry {
        transaction_code: r.num(2, 2, "transaction_code") as u8,
        receiving_dfi: r.digits(4, 8, "receiving_dfi_identification"),
        check_digit: r.char(12, "check_digit"),
        account_number: r.text(13, 17, "dfi_account_number"),
        amount: cents(r.num(30, 10, "amount")),
        identification: r.text(40, 15, "individual_identification_number"),
        name: r.text(55, 22, "individual_name"),
        discretionary_data: r.text(77, 2, "discretionary_data"),
        trace_number: r.digits(80, 15, "trace_number"),
        addenda: Vec::new(),
    };
    let indicator = match r.raw(79, 1) {
        b"0" => false,
        b"1" => true,
        _ => {
            r.problems.push(super::Problem::new(r.number, "addenda_record_indicator", "not 0 or 1"));
            false
        }
    };
    (entry, indicator)
}

/// Encode addenda number `sequence` (1-based) of the entry whose trace is `trace`.
pub(crate) fn encode_addenda(a: &Addenda, sequence: u64, trace: &str, out: &mut Vec<u8>) {
    out.push(b'7');
    match a {
        Addenda::Payment(info) => {
            out.extend_from_slice(b"05");
            put_alpha(out, info, 80);
            put_num(out, sequence, 4);
            put_alpha(out, trace.get(8..).unwrap_or(""), 7);
        }
        Addenda::Change(c) => {
            out.extend_from_slice(b"98");
            put_alpha(out, &c.change_code, 3);
            put_alpha(out, &c.original_trace, 15);
            put_alpha(out, "", 6);
            put_alpha(out, &c.original_receiving_dfi, 8);
            put_alpha(out, &c.corrected_data, 29);
            put_alpha(out, "", 15);
            put_alpha(out, &c.trace_number, 15);
        }
        Addenda::Return(x) => {
            out.extend_from_slice(b"99");
            put_alpha(out, &x.return_code, 3);
            put_alpha(out, &x.original_trace, 15);
            put_alpha(out, &x.date_of_death, 6);
            put_alpha(out, &x.original_receiving_dfi, 8);
            put_alpha(out, &x.information, 44);
            put_alpha(out, &x.trace_number, 15);
        }
        Addenda::Other { type_code, content } => {
            put_alpha(out, type_code, 2);
            put_alpha(out, content, 91);
        }
    }
}

/// An addenda record, with its sequence numbers for a `05` (addenda sequence,
/// entry detail sequence).
pub(crate) fn decode_addenda(r: &mut Fields<'_>) -> (Addenda, Option<(u64, Text)>) {
    let type_code = r.text(2, 2, "addenda_type_code");
    match type_code.as_str() {
        "05" => {
            let info = r.text(4, 80, "payment_related_information");
            let sequence = r.num(84, 4, "addenda_sequence_number");
            let entry_sequence = r.digits(88, 7, "entry_detail_sequence_number");
            (Addenda::Payment(info), Some((sequence, entry_sequence)))
        }
        "98" => {
            let change = ChangeEntry {
                change_code: r.text(4, 3, "change_code"),
                original_trace: r.digits(7, 15, "original_entry_trace_number"),
                original_receiving_dfi: r.digits(28, 8, "original_receiving_dfi_identification"),
                corrected_data: r.text(36, 29, "corrected_data"),
                trace_number: r.digits(80, 15, "trace_number"),
            };
            (Addenda::Change(change), None)
        }
        "99" => {
            let ret = ReturnEntry {
                return_code: r.text(4, 3, "return_reason_code"),
                original_trace: r.digits(7, 15, "original_entry_trace_number"),
                date_of_death: r.text(22, 6, "date_of_death"),
                original_receiving_dfi: r.digits(28, 8, "original_receiving_dfi_identification"),
                information: r.text(36, 44, "addenda_information"),
                trace_number: r.digits(80, 15, "trace_number"),
            };
            (Addenda::Return(ret), None)
        }
        _ => {
            let content = r.text(4, 91, "addenda");
            (Addenda::Other { type_code, content }, None)
        }
    }
}

/// The controls of one batch, as the writer computes them and the reader checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Totals {
    pub(crate) entry_addenda_count: u64,
    pub(crate) entry_hash: u64,
    pub(crate) total_debit: u64,
    pub(crate) total_credit: u64,
}

/// The hash is kept to its last 10 digits.
pub(crate) const HASH_MODULUS: u64 = 10_000_000_000;

impl Totals {
    pub(crate) fn of(batch: &Batch) -> Totals {
        let mut t = Totals::default();
        for e in &batch.entries {
            t.add_entry(e);
        }
        t
    }

    pub(crate) fn add_entry(&mut self, e: &Entry) {
        self.entry_addenda_count += 1 + e.addenda.len() as u64;
        let dfi = e
            .receiving_dfi
            .as_bytes()
            .iter()
            // Modulo as it goes: a field read from hostile bytes may be longer
            // than 8 digits (invalid UTF-8 becomes 3-byte replacement characters).
            .fold(0u64, |n, b| (n * 10 + u64::from(b.wrapping_sub(b'0') % 10)) % HASH_MODULUS);
        self.entry_hash = (self.entry_hash + dfi) % HASH_MODULUS;
        if e.is_credit() {
            self.total_credit = self.total_credit.saturating_add(amount(e.amount));
        } else if e.is_debit() {
            self.total_debit = self.total_debit.saturating_add(amount(e.amount));
        }
    }

    pub(crate) fn add(&mut self, other: &Totals) {
        self.entry_addenda_count += other.entry_addenda_count;
        self.entry_hash = (self.entry_hash + other.entry_hash) % HASH_MODULUS;
        self.total_debit = self.total_debit.saturating_add(other.total_debit);
        self.total_credit = self.total_credit.saturating_add(other.total_credit);
    }
}

pub(crate) fn encode_batch_control(b: &Batch, t: &Totals, out: &mut Vec<u8>) {
    out.push(b'8');
    put_num(out, u64::from(b.service_class_code), 3);
    put_num(out, t.entry_addenda_count, 6);
    put_num(out, t.entry_hash, 10);
    put_num(out, t.total_debit, 12);
    put_num(out, t.total_credit, 12);
    put_alpha(out, &b.company_identification, 10);
    put_alpha(out, "", 19 + 6);
    put_alpha(out, &b.odfi_identification, 8);
    put_num(out, u64::from(b.batch_number), 7);
}

pub(crate) fn decode_batch_control(r: &mut Fields<'_>) -> BatchControl {
    BatchControl {
        service_class_code: r.num(2, 3, "service_class_code") as u16,
        entry_addenda_count: r.num(5, 6, "entry_addenda_count"),
        entry_hash: r.num(11, 10, "entry_hash"),
        total_debit: cents(r.num(21, 12, "total_debit_entry_dollar_amount")),
        total_credit: cents(r.num(33, 12, "total_credit_entry_dollar_amount")),
        company_identification: r.text(45, 10, "company_identification"),
        message_authentication_code: r.text(55, 19, "message_authentication_code"),
        odfi_identification: r.digits(80, 8, "odfi_identification"),
        batch_number: r.num(88, 7, "batch_number") as u32,
    }
}

pub(crate) fn encode_file_control(batches: u64, blocks: u64, t: &Totals, out: &mut Vec<u8>) {
    out.push(b'9');
    put_num(out, batches, 6);
    put_num(out, blocks, 6);
    put_num(out, t.entry_addenda_count, 8);
    put_num(out, t.entry_hash, 10);
    put_num(out, t.total_debit, 12);
    put_num(out, t.total_credit, 12);
    put_alpha(out, "", 39);
}

pub(crate) fn decode_file_control(r: &mut Fields<'_>) -> FileControl {
    FileControl {
        batch_count: r.num(2, 6, "batch_count"),
        block_count: r.num(8, 6, "block_count"),
        entry_addenda_count: r.num(14, 8, "entry_addenda_count"),
        entry_hash: r.num(22, 10, "entry_hash"),
        total_debit: cents(r.num(32, 12, "total_debit_entry_dollar_amount")),
        total_credit: cents(r.num(44, 12, "total_credit_entry_dollar_amount")),
    }
}
