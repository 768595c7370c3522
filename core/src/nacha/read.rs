//! The reader: any bytes to a typed file and the problems found on the way.
//!
//! Records may end with LF or CRLF, or follow each other with no line ends at
//! all (94 bytes each). Trailing `9`-filled blocking records are skipped. The
//! reader never panics and never gives up after the file header: a record of the
//! wrong length is padded or cut to 94 characters and read anyway, a record out
//! of place or of an unknown type is skipped, and each of these, like every
//! control (counts, entry hash, totals, batch count, block count) that does not
//! match what the file holds, is a [`Problem`] with its record number and field.
//! Only input that is no NACHA file at all (empty, or not starting with a file
//! header) is a [`ReadError`].

use super::fields::Fields;
use super::file::{Batch, FileHeader, NachaFile};
use super::records::{
    decode_addenda, decode_batch_control, decode_batch_header, decode_entry, decode_file_control,
    decode_file_header, BatchControl, FileControl, Totals,
};
use super::text::Text;
use super::{BLOCKING_FACTOR, RECORD_LEN};
use crate::money::Money;
use crate::record_problem::Problem;

/// Input that is not a NACHA file at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// No records.
    #[error("the file is empty")]
    Empty,
    /// The first record is not a file header (type `1`).
    #[error("the first record is not a file header (record type 1)")]
    NoFileHeader,
}

/// Where each part of a file read is: 1-based record numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// One per batch of [`Parsed::file`], in order.
    pub batches: Vec<BatchLocation>,
    /// The file control record, if any.
    pub file_control: Option<usize>,
}

/// Where one batch's records are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchLocation {
    /// The batch header.
    pub header: usize,
    /// Each entry detail, in order.
    pub entries: Vec<usize>,
    /// The batch control, if any.
    pub control: Option<usize>,
}

/// A file read: the typed file, its controls as written in it, where everything
/// is, and every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The file header and batches (with their entries and addenda).
    pub file: NachaFile,
    /// Each batch's control record as read (`None` when missing), one per batch.
    pub batch_controls: Vec<Option<BatchControl>>,
    /// The file control as read (`None` when missing).
    pub file_control: Option<FileControl>,
    /// Record numbers of every batch and entry.
    pub locations: Locations,
    /// The number of records, blocking records included.
    pub records: usize,
    /// Layout, order and control problems, in file order.
    pub problems: Vec<Problem>,
}

impl Parsed {
    /// Number of entry detail records.
    pub fn entry_count(&self) -> usize {
        self.file.batches.iter().map(|b| b.entries.len()).sum()
    }

    /// Total of the debit entries (computed from the entries, not the controls).
    pub fn total_debit(&self) -> Money {
        Money::from_cents(i64::try_from(self.totals().total_debit).unwrap_or(i64::MAX))
    }

    /// Total of the credit entries (computed from the entries, not the controls).
    pub fn total_credit(&self) -> Money {
        Money::from_cents(i64::try_from(self.totals().total_credit).unwrap_or(i64::MAX))
    }

    fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for b in &self.file.batches {
            t.add(&Totals::of(b));
        }
        t
    }
}

/// The records of the input: by line ends (LF or CRLF) when it has any,
/// otherwise every 94 bytes.
#[derive(Clone)]
struct Records<'a> {
    rest: &'a [u8],
    lines: bool,
}

impl<'a> Iterator for Records<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let rest: &'a [u8] = self.rest;
        let (record, after) = if self.lines {
            match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &rest[rest.len()..]),
            }
        } else {
            rest.split_at(RECORD_LEN.min(rest.len()))
        };
        self.rest = after;
        Some(record.strip_suffix(b"\r").unwrap_or(record))
    }
}

fn is_padding(record: &[u8]) -> bool {
    record.len() == RECORD_LEN && record.iter().all(|&b| b == b'9')
}

struct RecordReader {
    header: Option<FileHeader>,
    batches: Vec<Batch>,
    controls: Vec<Option<BatchControl>>,
    locations: Locations,
    file_control: Option<FileControl>,
    problems: Vec<Problem>,
    /// A batch is open (its header read, its control not yet).
    open: bool,
    /// The last entry read in the open batch: its record and addenda indicator.
    entry: Option<(usize, bool)>,
    padding_seen: bool,
    /// Entry records ahead of the batch header being read.
    batch_entries: usize,
    /// The open batch's controls so far.
    open_totals: Totals,
    /// Each closed batch's controls, computed from its entries.
    totals: Vec<Totals>,
}

/// Read a NACHA file from any bytes. See the module documentation for what is a
/// [`Problem`] and what a [`ReadError`].
pub fn read(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut bytes = bytes;
    while let [rest @ .., b'\n' | b'\r'] = bytes {
        bytes = rest;
    }
    match bytes.first() {
        None => return Err(ReadError::Empty),
        Some(b'1') => {}
        Some(_) => return Err(ReadError::NoFileHeader),
    }
    let mut r = RecordReader::new();
    let mut padded = [b' '; RECORD_LEN];
    let mut last_real = 0;
    let mut records = 0;
    let lines = memchr::memchr(b'\n', bytes).is_some();
    let mut input = Records { rest: bytes, lines };
    while let Some(raw) = input.next() {
        if raw.first() == Some(&b'5') {
            // Size the batch's entries exactly: count them ahead (one cheap pass
            // over line ends) rather than copy a growing vector.
            r.batch_entries = input
                .clone()
                .take_while(|rec| !matches!(rec.first(), Some(b'5' | b'8' | b'9')))
                .filter(|rec| rec.first() == Some(&b'6'))
                .count();
        }
        records += 1;
        let number = records;
        let record: &[u8] = if raw.len() == RECORD_LEN {
            raw
        } else {
            r.problems.push(Problem::new(
                number,
                "record",
                format!("record is {} characters, not {RECORD_LEN}", raw.len()),
            ));
            padded.fill(b' ');
            let n = raw.len().min(RECORD_LEN);
            padded[..n].copy_from_slice(&raw[..n]);
            &padded
        };
        if is_padding(record) {
            if r.file_control.is_none() && !r.padding_seen {
                r.problems.push(Problem::new(number, "record", "blocking record before the file control"));
            }
            r.padding_seen = true;
            continue;
        }
        last_real = number;
        r.record(number, record);
    }
    Ok(r.finish(last_real, records))
}

impl RecordReader {
    /// A reader before the file's first record.
    fn new() -> RecordReader {
        RecordReader {
            header: None,
            batches: Vec::new(),
            controls: Vec::new(),
            locations: Locations::default(),
            file_control: None,
            problems: Vec::new(),
            open: false,
            entry: None,
            padding_seen: false,
            open_totals: Totals::default(),
            totals: Vec::new(),
            batch_entries: 0,
        }
    }

    /// After the last of `records` records (`last_real`: the last that is not
    /// padding): the open entry and batch closed, the file control and the
    /// blocking checked, the file as read.
    fn finish(mut self, last_real: usize, records: usize) -> Parsed {
        self.finish_entry();
        if self.open {
            self.problems.push(Problem::new(last_real, "record", "the last batch has no batch control"));
            self.close_batch(None, last_real);
        }
        match &self.file_control {
            None => self.problems.push(Problem::new(last_real, "record", "no file control record")),
            Some(control) => {
                let control = control.clone();
                self.check_file_control(&control);
            }
        }
        if !records.is_multiple_of(BLOCKING_FACTOR) {
            self.problems.push(Problem::new(
                records,
                "block_count",
                format!("{records} records: not a multiple of the blocking factor {BLOCKING_FACTOR}"),
            ));
        }
        let header = self.header.unwrap_or_else(unreachable_header);
        Parsed {
            file: NachaFile { header, batches: self.batches },
            batch_controls: self.controls,
            file_control: self.file_control,
            locations: self.locations,
            records,
            problems: self.problems,
        }
    }
}

/// The header when the first record could not give one (never: the first record
/// is always a type 1 and decoded leniently), kept panic-free.
fn unreachable_header() -> FileHeader {
    FileHeader {
        immediate_destination: Text::new(),
        immediate_origin: Text::new(),
        creation_date: chrono::NaiveDate::default(),
        creation_time: None,
        file_id_modifier: ' ',
        immediate_destination_name: Text::new(),
        immediate_origin_name: Text::new(),
        reference_code: Text::new(),
    }
}

impl RecordReader {
    fn problem(&mut self, record: usize, field: &'static str, message: impl Into<String>) {
        self.problems.push(Problem::new(record, field, message));
    }

    fn record(&mut self, number: usize, record: &[u8]) {
        let kind = record[0];
        if self.file_control.is_some() {
            self.problem(number, "record_type_code", "record after the file control");
            return;
        }
        if kind != b'7' {
            self.finish_entry();
        }
        let mut f = Fields::new(record, number, &mut self.problems);
        match kind {
            b'1' if number == 1 => self.header = Some(decode_file_header(&mut f)),
            b'1' => self.problem(number, "record_type_code", "a second file header"),
            b'5' => {
                let mut batch = decode_batch_header(&mut f);
                batch.entries.reserve_exact(self.batch_entries);
                if self.open {
                    self.problem(
                        number,
                        "record_type_code",
                        "batch header before the previous batch's control",
                    );
                    self.close_batch(None, number);
                }
                self.batches.push(batch);
                self.locations.batches.push(BatchLocation { header: number, ..BatchLocation::default() });
                self.open = true;
            }
            b'6' => {
                let (entry, indicator) = decode_entry(&mut f);
                if !self.open {
                    self.problem(number, "record_type_code", "entry detail outside a batch");
                    return;
                }
                if let (Some(batch), Some(loc)) = (self.batches.last_mut(), self.locations.batches.last_mut())
                {
                    self.open_totals.add_entry(&entry);
                    batch.entries.push(entry);
                    loc.entries.push(number);
                }
                self.entry = Some((number, indicator));
            }
            b'7' => self.addenda(number, record),
            b'8' => {
                let control = decode_batch_control(&mut f);
                if !self.open {
                    self.problem(number, "record_type_code", "batch control without a batch header");
                    return;
                }
                self.close_batch(Some(control), number);
            }
            b'9' => {
                let control = decode_file_control(&mut f);
                if self.open {
                    self.problem(number, "record_type_code", "file control before the last batch's control");
                    self.close_batch(None, number);
                }
                self.locations.file_control = Some(number);
                self.file_control = Some(control);
            }
            other => {
                let shown = String::from_utf8_lossy(&[other]).into_owned();
                self.problem(number, "record_type_code", format!("unknown record type {shown:?}"));
            }
        }
    }

    fn addenda(&mut self, number: usize, record: &[u8]) {
        let mut f = Fields::new(record, number, &mut self.problems);
        let (addenda, sequence) = decode_addenda(&mut f);
        let Some((_, indicator)) = self.entry else {
            self.problem(number, "record_type_code", "addenda without an entry detail");
            return;
        };
        let Some(entry) = self.batches.last_mut().and_then(|b| b.entries.last_mut()) else {
            return;
        };
        entry.addenda.push(addenda);
        self.open_totals.entry_addenda_count += 1;
        let expected = entry.addenda.len() as u64;
        let trace_tail = entry.trace_number.get(8..).unwrap_or("").to_string();
        if !indicator && expected == 1 {
            self.problem(number, "addenda_record_indicator", "addenda follows an entry whose indicator is 0");
        }
        if let Some((seq, entry_seq)) = sequence {
            if seq != expected {
                self.problem(number, "addenda_sequence_number", format!("{seq}, expected {expected}"));
            }
            if entry_seq != trace_tail {
                self.problem(
                    number,
                    "entry_detail_sequence_number",
                    format!("{entry_seq:?} is not the entry's trace sequence {trace_tail:?}"),
                );
            }
        }
    }

    /// The entry just finished: an indicator of 1 needs at least one addenda.
    fn finish_entry(&mut self) {
        if let Some((record, true)) = self.entry.take() {
            let has =
                self.batches.last().and_then(|b| b.entries.last()).is_some_and(|e| !e.addenda.is_empty());
            if !has {
                self.problem(record, "addenda_record_indicator", "indicator is 1 but no addenda follows");
            }
        }
    }

    fn close_batch(&mut self, control: Option<BatchControl>, number: usize) {
        self.open = false;
        let t = std::mem::take(&mut self.open_totals);
        self.totals.push(t);
        let Some(batch) = self.batches.last() else { return };
        if batch.entries.is_empty() {
            let header = self.locations.batches.last().map_or(number, |l| l.header);
            self.problems.push(Problem::new(header, "record", "batch without entries"));
        }
        if let Some(c) = &control {
            let mut found = Vec::new();
            let mut compare = |field: &'static str, written: String, actual: String| {
                if written != actual {
                    found.push(Problem::new(number, field, format!("{written}, but the batch has {actual}")));
                }
            };
            compare(
                "service_class_code",
                c.service_class_code.to_string(),
                batch.service_class_code.to_string(),
            );
            compare(
                "entry_addenda_count",
                c.entry_addenda_count.to_string(),
                t.entry_addenda_count.to_string(),
            );
            compare("entry_hash", c.entry_hash.to_string(), t.entry_hash.to_string());
            compare(
                "total_debit_entry_dollar_amount",
                c.total_debit.cents().to_string(),
                t.total_debit.to_string(),
            );
            compare(
                "total_credit_entry_dollar_amount",
                c.total_credit.cents().to_string(),
                t.total_credit.to_string(),
            );
            compare(
                "company_identification",
                c.company_identification.trim().to_string(),
                batch.company_identification.trim().to_string(),
            );
            compare(
                "odfi_identification",
                c.odfi_identification.to_string(),
                batch.odfi_identification.to_string(),
            );
            compare("batch_number", c.batch_number.to_string(), batch.batch_number.to_string());
            self.problems.extend(found);
            if let Some(loc) = self.locations.batches.last_mut() {
                loc.control = Some(number);
            }
        }
        self.controls.push(control);
    }

    fn check_file_control(&mut self, c: &FileControl) {
        let number = self.locations.file_control.unwrap_or(0);
        let mut t = Totals::default();
        for b in &self.totals {
            t.add(b);
        }
        let real_records = self.locations.file_control.unwrap_or(0) as u64;
        let blocks = real_records.div_ceil(BLOCKING_FACTOR as u64);
        let checks = [
            ("batch_count", c.batch_count, self.batches.len() as u64),
            ("block_count", c.block_count, blocks),
            ("entry_addenda_count", c.entry_addenda_count, t.entry_addenda_count),
            ("entry_hash", c.entry_hash, t.entry_hash),
            (
                "total_debit_entry_dollar_amount",
                u64::try_from(c.total_debit.cents()).unwrap_or(0),
                t.total_debit,
            ),
            (
                "total_credit_entry_dollar_amount",
                u64::try_from(c.total_credit.cents()).unwrap_or(0),
                t.total_credit,
            ),
        ];
        for (field, written, actual) in checks {
            if written != actual {
                self.problem(number, field, format!("{written}, but the file has {actual}"));
            }
        }
    }
}
