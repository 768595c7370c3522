//! The writer: a [`NachaFile`] to the bytes a bank takes.
//!
//! It first checks every field against its width and kind and every rule of
//! [`findings`](super::findings), and refuses the file with a typed
//! [`WriteError`] (never a panic) at the first thing a bank would reject. Then it
//! encodes each record, computes the batch and file controls (counts, entry hash,
//! totals, block count) and pads the file with `9`-filled records to a multiple
//! of ten. Every record is followed by a line feed.

use std::fmt;

use super::check::{findings, Place, Rule};
use super::fields::{check_alpha, check_digits, check_number, FieldProblem};
use super::file::{Addenda, Batch, Entry, FileHeader, NachaFile};
use super::records::{
    encode_addenda, encode_batch_control, encode_batch_header, encode_entry, encode_file_control,
    encode_file_header, Totals,
};
use super::text::Text;
use super::{BLOCKING_FACTOR, RECORD_LEN};
use crate::money::NACHA_MAX;

/// What the writer objects to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteIssue {
    /// The value does not fit its field.
    Field(FieldProblem),
    /// The file breaks a rule beyond layout.
    Rule(Rule),
}

impl fmt::Display for WriteIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteIssue::Field(p) => p.fmt(f),
            WriteIssue::Rule(r) => r.fmt(f),
        }
    }
}

/// Why a file was not written: where, which field, what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{place}, {field}: {issue}")]
pub struct WriteError {
    /// Where in the model.
    pub place: Place,
    /// The field, by its Nacha name in snake case.
    pub field: &'static str,
    /// What is wrong.
    pub issue: WriteIssue,
}

struct Checker {
    place: Place,
}

impl Checker {
    fn fail(&self, field: &'static str, problem: FieldProblem) -> WriteError {
        WriteError { place: self.place, field, issue: WriteIssue::Field(problem) }
    }

    fn alpha(&self, field: &'static str, text: &Text, width: usize) -> Result<(), WriteError> {
        check_alpha(text.as_bytes(), width).map_err(|p| self.fail(field, p))
    }

    fn required(&self, field: &'static str, text: &Text, width: usize) -> Result<(), WriteError> {
        self.alpha(field, text, width)?;
        if text.as_bytes().iter().all(|&b| b == b' ') {
            return Err(self.fail(field, FieldProblem::Missing));
        }
        Ok(())
    }

    fn digits(&self, field: &'static str, text: &Text, width: usize) -> Result<(), WriteError> {
        check_digits(text.as_bytes(), width).map_err(|p| self.fail(field, p))
    }

    fn number(&self, field: &'static str, value: u64, width: usize) -> Result<(), WriteError> {
        check_number(value, width).map_err(|p| self.fail(field, p))
    }

    fn char(&self, field: &'static str, c: char) -> Result<(), WriteError> {
        if c.is_ascii_alphanumeric() {
            Ok(())
        } else {
            Err(self.fail(field, FieldProblem::NotPrintable))
        }
    }
}

fn check_header(h: &FileHeader) -> Result<(), WriteError> {
    let c = Checker { place: Place::FileHeader };
    c.digits("immediate_destination", &h.immediate_destination, 9)?;
    c.required("immediate_origin", &h.immediate_origin, 10)?;
    c.char("file_id_modifier", h.file_id_modifier)?;
    c.alpha("immediate_destination_name", &h.immediate_destination_name, 23)?;
    c.alpha("immediate_origin_name", &h.immediate_origin_name, 23)?;
    c.alpha("reference_code", &h.reference_code, 8)
}

fn check_batch(index: usize, b: &Batch) -> Result<(), WriteError> {
    let c = Checker { place: Place::Batch(index) };
    c.required("company_name", &b.company_name, 16)?;
    c.alpha("company_discretionary_data", &b.company_discretionary_data, 20)?;
    c.required("company_identification", &b.company_identification, 10)?;
    c.digits_or_letters("standard_entry_class_code", &b.sec_code)?;
    c.required("company_entry_description", &b.company_entry_description, 10)?;
    c.alpha("company_descriptive_date", &b.company_descriptive_date, 6)?;
    if !b.settlement_date.is_empty() {
        c.digits("settlement_date", &b.settlement_date, 3)?;
    }
    c.char("originator_status_code", b.originator_status_code)?;
    c.digits("odfi_identification", &b.odfi_identification, 8)?;
    c.number("batch_number", u64::from(b.batch_number), 7)?;
    if b.entries.is_empty() {
        return Err(c.fail("entries", FieldProblem::Missing));
    }
    for (i, e) in b.entries.iter().enumerate() {
        check_entry(&Checker { place: Place::Entry { batch: index, entry: i } }, e)?;
    }
    Ok(())
}

impl Checker {
    fn digits_or_letters(&self, field: &'static str, text: &Text) -> Result<(), WriteError> {
        if text.as_bytes().len() == 3 && text.as_bytes().iter().all(u8::is_ascii_uppercase) {
            Ok(())
        } else {
            Err(self.fail(field, FieldProblem::Missing))
        }
    }
}

/// Check one entry's fields as [`write`] does (the streaming writer's check).
pub(crate) fn check_entry_at(batch: usize, entry: usize, e: &Entry) -> Result<(), WriteError> {
    check_entry(&Checker { place: Place::Entry { batch, entry } }, e)
}

/// Check a batch header's fields as [`write`] does (entries not included).
pub(crate) fn check_batch_header(index: usize, b: &Batch) -> Result<(), WriteError> {
    check_batch(index, &Batch { entries: Vec::new(), ..b.clone() }).or_else(|e| match e.field {
        "entries" => Ok(()),
        _ => Err(e),
    })
}

/// Check a file header's fields as [`write`] does.
pub(crate) fn check_file_header(h: &FileHeader) -> Result<(), WriteError> {
    check_header(h)
}

fn check_entry(c: &Checker, e: &Entry) -> Result<(), WriteError> {
    c.digits("receiving_dfi_identification", &e.receiving_dfi, 8)?;
    if !e.check_digit.is_ascii_digit() {
        return Err(c.fail("check_digit", FieldProblem::NotDigits { width: 1 }));
    }
    c.required("dfi_account_number", &e.account_number, 17)?;
    if e.amount.cents() < 0 || e.amount > NACHA_MAX {
        return Err(c.fail("amount", FieldProblem::TooLarge { width: 10 }));
    }
    c.alpha("individual_identification_number", &e.identification, 15)?;
    c.alpha("individual_name", &e.name, 22)?;
    c.alpha("discretionary_data", &e.discretionary_data, 2)?;
    c.digits("trace_number", &e.trace_number, 15)?;
    c.number("addenda_sequence_number", e.addenda.len() as u64, 4)?;
    for a in &e.addenda {
        match a {
            Addenda::Payment(info) => c.alpha("payment_related_information", info, 80)?,
            Addenda::Change(n) => {
                c.required("change_code", &n.change_code, 3)?;
                c.digits("original_entry_trace_number", &n.original_trace, 15)?;
                c.digits("original_receiving_dfi_identification", &n.original_receiving_dfi, 8)?;
                c.required("corrected_data", &n.corrected_data, 29)?;
                c.digits("trace_number", &n.trace_number, 15)?;
            }
            Addenda::Return(r) => {
                c.required("return_reason_code", &r.return_code, 3)?;
                c.digits("original_entry_trace_number", &r.original_trace, 15)?;
                c.alpha("date_of_death", &r.date_of_death, 6)?;
                c.digits("original_receiving_dfi_identification", &r.original_receiving_dfi, 8)?;
                c.alpha("addenda_information", &r.information, 44)?;
                c.digits("trace_number", &r.trace_number, 15)?;
            }
            Addenda::Other { type_code, content } => {
                c.digits("addenda_type_code", type_code, 2)?;
                c.alpha("addenda", content, 91)?;
            }
        }
    }
    Ok(())
}

/// Write `file` as NACHA records, each followed by `\n`, padded to a multiple of
/// ten records. Refuses (never panics) a file without batches, a batch without
/// entries, a field that does not fit, a total or count too large for its control
/// field, and any rule of
/// [`findings`](super::findings): an effective date that is not a banking day, a
/// trace number not prefixed by the batch's ODFI or not ascending, a credit in a
/// debit-only batch or class (outside a reversal batch), a BOC without check
/// serial, a POP without serial, city or state, a WEB or TEL entry without
/// payment type.
pub fn write(file: &NachaFile) -> Result<Vec<u8>, WriteError> {
    check_header(&file.header)?;
    if file.batches.is_empty() {
        return Err(Checker { place: Place::FileHeader }.fail("batches", FieldProblem::Missing));
    }
    let mut totals = Vec::with_capacity(file.batches.len());
    let mut file_totals = Totals::default();
    let mut records: u64 = 2;
    for (i, b) in file.batches.iter().enumerate() {
        check_batch(i, b)?;
        let t = Totals::of(b);
        let c = Checker { place: Place::Batch(i) };
        c.number("entry_addenda_count", t.entry_addenda_count, 6)?;
        c.number("total_debit_entry_dollar_amount", t.total_debit, 12)?;
        c.number("total_credit_entry_dollar_amount", t.total_credit, 12)?;
        file_totals.add(&t);
        records += 2 + t.entry_addenda_count;
        totals.push(t);
    }
    if let Some(f) = findings(file).first() {
        return Err(WriteError { place: f.place, field: f.field, issue: WriteIssue::Rule(f.rule) });
    }
    let blocks = records.div_ceil(BLOCKING_FACTOR as u64);
    let c = Checker { place: Place::FileHeader };
    c.number("batch_count", file.batches.len() as u64, 6)?;
    c.number("block_count", blocks, 6)?;
    c.number("entry_addenda_count", file_totals.entry_addenda_count, 8)?;
    c.number("total_debit_entry_dollar_amount", file_totals.total_debit, 12)?;
    c.number("total_credit_entry_dollar_amount", file_totals.total_credit, 12)?;

    let padded = blocks * BLOCKING_FACTOR as u64;
    let mut out = Vec::with_capacity(usize::try_from(padded).unwrap_or(0) * (RECORD_LEN + 1));
    encode_file_header(&file.header, &mut out);
    out.push(b'\n');
    for (b, t) in file.batches.iter().zip(&totals) {
        encode_batch_header(b, &mut out);
        out.push(b'\n');
        for e in &b.entries {
            encode_entry(e, &mut out);
            out.push(b'\n');
            for (n, a) in e.addenda.iter().enumerate() {
                encode_addenda(a, n as u64 + 1, &e.trace_number, &mut out);
                out.push(b'\n');
            }
        }
        encode_batch_control(b, t, &mut out);
        out.push(b'\n');
    }
    encode_file_control(file.batches.len() as u64, blocks, &file_totals, &mut out);
    out.push(b'\n');
    for _ in records..padded {
        out.extend_from_slice(&[b'9'; RECORD_LEN]);
        out.push(b'\n');
    }
    Ok(out)
}
