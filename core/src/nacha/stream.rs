//! A file written piece by piece: the engine assembles a cut-off's file over
//! several write transactions, each appending the records of some entries. The
//! writer's state between pieces ([`Stream`]) is plain data the caller stores.
//!
//! The same records as [`write`](super::write()) makes for the same batches and
//! entries (a property test compares them): a batch header is written with the
//! batch's first entry (so a batch whose entries were all refused leaves no
//! trace), its control when the next batch opens or the file finishes, then the
//! file control and the `9`-filled records to a multiple of ten. Every field is
//! checked as the writer checks it; an entry that fails is refused alone.

use serde::{Deserialize, Serialize};

use super::file::{Batch, Entry, FileHeader};
use super::records::{
    encode_addenda, encode_batch_header, encode_entry, encode_file_control, encode_file_header, Totals,
};
use super::write::{check_batch_header, check_entry_at, check_file_header, WriteError};
use super::{BLOCKING_FACTOR, RECORD_LEN};

/// The state of a file being written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream {
    /// Batches written (headers out).
    batches: u64,
    /// Records written so far.
    records: u64,
    /// The file's controls so far.
    totals: Totals,
    /// The open batch: its header record (batch number filled when written),
    /// whether it is out, its controls, its entries so far.
    open: Option<OpenBatch>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct OpenBatch {
    header: String,
    written: bool,
    totals: Totals,
    entries: u64,
}

impl Stream {
    /// Begin a file: its header record into `out`.
    ///
    /// # Errors
    ///
    /// A header field the writer refuses.
    pub fn start(header: &FileHeader, out: &mut Vec<u8>) -> Result<Stream, WriteError> {
        check_file_header(header)?;
        encode_file_header(header, out);
        out.push(b'\n');
        Ok(Stream { batches: 0, records: 1, totals: Totals::default(), open: None })
    }

    /// Close the open batch (its control into `out`, if it has entries) and open
    /// `batch` (its entries are ignored; its batch number is assigned when its
    /// first entry is written).
    ///
    /// # Errors
    ///
    /// A batch header field the writer refuses (the open batch is closed anyway).
    pub fn open_batch(&mut self, batch: &Batch, out: &mut Vec<u8>) -> Result<(), WriteError> {
        self.close_batch(out);
        check_batch_header(usize::try_from(self.batches).unwrap_or(usize::MAX), batch)?;
        let mut header = Vec::with_capacity(RECORD_LEN);
        encode_batch_header(&Batch { entries: Vec::new(), ..batch.clone() }, &mut header);
        let header = String::from_utf8(header).unwrap_or_default();
        self.open = Some(OpenBatch { header, written: false, totals: Totals::default(), entries: 0 });
        Ok(())
    }

    /// Append `entry` (and its addenda) to the open batch.
    ///
    /// # Errors
    ///
    /// An entry field the writer refuses, or no open batch: nothing is written.
    pub fn entry(&mut self, entry: &Entry, out: &mut Vec<u8>) -> Result<(), WriteError> {
        let batch = usize::try_from(self.batches).unwrap_or(usize::MAX);
        let Some(open) = self.open.as_mut() else {
            return Err(WriteError {
                place: super::Place::FileHeader,
                field: "batches",
                issue: super::WriteIssue::Field(super::FieldProblem::Missing),
            });
        };
        check_entry_at(batch, usize::try_from(open.entries).unwrap_or(usize::MAX), entry)?;
        if !open.written {
            self.batches += 1;
            let mut header = std::mem::take(&mut open.header).into_bytes();
            let number = format!("{:07}", self.batches % 10_000_000);
            header.truncate(RECORD_LEN - 7);
            header.extend_from_slice(number.as_bytes());
            out.extend_from_slice(&header);
            out.push(b'\n');
            open.header = String::from_utf8(header).unwrap_or_default();
            open.written = true;
            self.records += 1;
        }
        encode_entry(entry, out);
        out.push(b'\n');
        for (n, a) in entry.addenda.iter().enumerate() {
            encode_addenda(a, n as u64 + 1, &entry.trace_number, out);
            out.push(b'\n');
        }
        open.totals.add_entry(entry);
        open.entries += 1;
        self.records += 1 + entry.addenda.len() as u64;
        Ok(())
    }

    /// Batches written so far.
    pub fn batches(&self) -> u64 {
        self.batches
    }

    /// Entry and addenda records written so far, in every batch.
    pub fn entry_addenda_count(&self) -> u64 {
        self.totals.entry_addenda_count + self.open.as_ref().map_or(0, |o| o.totals.entry_addenda_count)
    }

    fn close_batch(&mut self, out: &mut Vec<u8>) {
        let Some(open) = self.open.take() else { return };
        if !open.written {
            return;
        }
        let h = open.header.as_bytes();
        let part = |from: usize, to: usize| h.get(from..to).unwrap_or(&[]);
        let t = &open.totals;
        out.push(b'8');
        out.extend_from_slice(part(1, 4));
        super::fields::put_num(out, t.entry_addenda_count, 6);
        super::fields::put_num(out, t.entry_hash, 10);
        super::fields::put_num(out, t.total_debit, 12);
        super::fields::put_num(out, t.total_credit, 12);
        out.extend_from_slice(part(40, 50));
        out.extend_from_slice(&[b' '; 25]);
        out.extend_from_slice(part(79, 94));
        out.push(b'\n');
        self.totals.add(t);
        self.records += 1;
    }

    /// Close the open batch and write the file control and the blocking records.
    /// `false` when no entry was written at all (no valid file: discard it).
    pub fn finish(mut self, out: &mut Vec<u8>) -> bool {
        self.close_batch(out);
        if self.batches == 0 {
            return false;
        }
        let records = self.records + 1;
        let blocks = records.div_ceil(BLOCKING_FACTOR as u64);
        encode_file_control(self.batches, blocks, &self.totals, out);
        out.push(b'\n');
        for _ in records..blocks * BLOCKING_FACTOR as u64 {
            out.extend_from_slice(&[b'9'; RECORD_LEN]);
            out.push(b'\n');
        }
        true
    }
}
