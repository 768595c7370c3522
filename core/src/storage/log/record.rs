//! One redo-log record: what a write transaction changed, checksummed.
//!
//! ```text
//! offset  size  field
//!      0     4  payload length n (u32, little-endian)
//!      4     8  sequence number (u64 LE; 1, 2, 3… over the database's life)
//!     12     8  synced: the log's length a completed fdatasync covered when
//!               this record was appended (u64 LE; never past the record's start)
//!     20     4  CRC-32C of the payload (u32 LE)
//!     24     4  CRC-32C of bytes 0..24 (u32 LE)
//!     28     n  payload: the transaction's operations, in order
//! ```
//!
//! The header has a checksum of its own so that a reader can find the next
//! whole record after a damaged one byte by byte, at the cost of a 24-byte
//! checksum per offset (see `replay::scan`). Both checksums start from the
//! database's log salt (4 random bytes in `meta`, `log_salt`), so a record of
//! another database's log never checks out.
//!
//! An operation is `1 ‖ table ‖ key length (u32 LE) ‖ key ‖ value length
//! (u32 LE) ‖ value` (a put), `2 ‖ table ‖ key length ‖ key` (a remove) or
//! `3 ‖ table ‖ from length ‖ from ‖ to length ‖ to` (every key in
//! `[from, to)` removed: a catch-up's processed index rows);
//! `table` is the table's position in `Table::ALL`. Every length is checked
//! against what is there: a damaged record is an error, never a panic.

use super::super::Table;

/// Bytes before the payload.
pub(super) const HEADER: usize = 28;

/// The largest payload a record may claim (a larger length field is damage).
pub(super) const MAX_PAYLOAD: usize = 1 << 30;

const PUT: u8 = 1;
const REMOVE: u8 = 2;
const REMOVE_RANGE: u8 = 3;

/// A transaction's operations, encoded as they are made; or, for a
/// transaction that will never be logged (a chunk of a catch-up, committed by
/// redb itself), only whether it made any.
#[derive(Debug, Default)]
pub(crate) struct Payload {
    bytes: Vec<u8>,
    /// Operations are not encoded: the commit is redb's own.
    unrecorded: bool,
    /// An operation was made (kept when unrecorded).
    changed: bool,
}

impl Payload {
    /// A payload that encodes nothing: its transaction is committed without
    /// a record (deferred, or durably by redb as a checkpoint).
    pub(crate) fn unrecorded() -> Payload {
        Payload { unrecorded: true, ..Payload::default() }
    }

    /// Whether its operations are encoded (a record can be written of it).
    pub(crate) fn is_recorded(&self) -> bool {
        !self.unrecorded
    }

    /// Whether no operation was made.
    pub(crate) fn is_empty(&self) -> bool {
        !self.changed
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Record a put of `value` at `key` of `table`.
    pub(crate) fn put(&mut self, table: Table, key: &[u8], value: &[u8]) {
        if self.op(PUT, table, key) {
            self.field(value);
        }
    }

    /// Record a remove of `key` from `table`.
    pub(crate) fn remove(&mut self, table: Table, key: &[u8]) {
        self.op(REMOVE, table, key);
    }

    /// Record the removal of every key in `[from, to)` of `table`.
    pub(crate) fn remove_range(&mut self, table: Table, from: &[u8], to: &[u8]) {
        if self.op(REMOVE_RANGE, table, from) {
            self.field(to);
        }
    }

    /// Start an operation; whether it is encoded (the caller adds its fields).
    fn op(&mut self, kind: u8, table: Table, key: &[u8]) -> bool {
        self.changed = true;
        if self.unrecorded {
            return false;
        }
        self.bytes.push(kind);
        self.bytes.push(table as u8);
        self.field(key);
        true
    }

    fn field(&mut self, b: &[u8]) {
        // A key or value of 4 GiB or more cannot be written to redb either; its
        // length would not fit: `encode` refuses the record.
        self.bytes.extend_from_slice(&u32::try_from(b.len()).unwrap_or(u32::MAX).to_le_bytes());
        self.bytes.extend_from_slice(b);
    }

    /// The bytes of the payload.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// One operation of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op<'a> {
    /// Store `value` at `key`.
    Put { table: Table, key: &'a [u8], value: &'a [u8] },
    /// Remove `key`.
    Remove { table: Table, key: &'a [u8] },
    /// Remove every key in `[from, to)`.
    RemoveRange { table: Table, from: &'a [u8], to: &'a [u8] },
}

/// The operations of a payload, in order; `Err` names the first malformed byte.
pub(crate) fn ops(payload: &[u8]) -> Result<Vec<Op<'_>>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    let bad = |at: usize, what: &str| format!("{what} at byte {at} of the payload");
    while at < payload.len() {
        let kind = payload[at];
        let table = *payload.get(at + 1).ok_or_else(|| bad(at, "a cut operation"))?;
        let table = *Table::ALL.get(usize::from(table)).ok_or_else(|| bad(at + 1, "an unknown table"))?;
        at += 2;
        let key = field(payload, &mut at).ok_or_else(|| bad(at, "a cut key"))?;
        match kind {
            PUT => {
                let value = field(payload, &mut at).ok_or_else(|| bad(at, "a cut value"))?;
                out.push(Op::Put { table, key, value });
            }
            REMOVE => out.push(Op::Remove { table, key }),
            REMOVE_RANGE => {
                let to = field(payload, &mut at).ok_or_else(|| bad(at, "a cut range end"))?;
                out.push(Op::RemoveRange { table, from: key, to });
            }
            _ => return Err(bad(at, "an unknown operation")),
        }
    }
    Ok(out)
}

/// A length-prefixed field at `*at`, which moves past it.
fn field<'a>(payload: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let len = payload.get(*at..at.checked_add(4)?)?;
    let len = usize::try_from(u32::from_le_bytes(len.try_into().ok()?)).ok()?;
    let start = *at + 4;
    let bytes = payload.get(start..start.checked_add(len)?)?;
    *at = start + len;
    Some(bytes)
}

/// The CRC-32C of `bytes`, started from the database's `salt`.
fn crc(salt: u32, bytes: &[u8]) -> u32 {
    crc32c::crc32c_append(salt, bytes)
}

/// The record of `payload` with sequence number `seq`, appended where the log
/// has `synced` bytes durable, for the database whose log salt is `salt`.
pub(super) fn encode(salt: u32, seq: u64, synced: u64, payload: &[u8]) -> Result<Vec<u8>, String> {
    let n = u32::try_from(payload.len())
        .ok()
        .filter(|n| *n as usize <= MAX_PAYLOAD)
        .ok_or_else(|| format!("a transaction of {} bytes is too large for one log record", payload.len()))?;
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&synced.to_le_bytes());
    out.extend_from_slice(&crc(salt, payload).to_le_bytes());
    let head = crc(salt, &out);
    out.extend_from_slice(&head.to_le_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

/// A record read back from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record<'a> {
    /// Its sequence number.
    pub(crate) seq: u64,
    /// The log's synced length when it was appended.
    pub(crate) synced: u64,
    /// Its operations, encoded.
    pub(crate) payload: &'a [u8],
}

/// What lies at an offset of the log.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Parsed<'a> {
    /// A whole record whose checksums match; the next begins at `next`.
    Valid { record: Record<'a>, next: usize },
    /// Not a whole, matching record: torn, cut short, damaged, or no record
    /// starts here.
    Invalid,
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().unwrap_or_default())
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap_or_default())
}

/// Read the record at `at` of `log` (of the database whose log salt is `salt`).
pub(super) fn parse(log: &[u8], at: usize, salt: u32) -> Parsed<'_> {
    let Some(head) = at.checked_add(HEADER).and_then(|end| log.get(at..end)) else {
        return Parsed::Invalid;
    };
    let field = |from: usize, to: usize| head.get(from..to).unwrap_or_default();
    if crc(salt, field(0, 24)) != le32(field(24, 28)) {
        return Parsed::Invalid;
    }
    let n = le32(field(0, 4)) as usize;
    let (seq, synced) = (le64(field(4, 12)), le64(field(12, 20)));
    let end = (n <= MAX_PAYLOAD).then(|| at + HEADER + n).filter(|end| *end <= log.len());
    let Some(payload) = end.and_then(|end| log.get(at + HEADER..end)) else { return Parsed::Invalid };
    if crc(salt, payload) != le32(field(20, 24)) || seq == 0 {
        return Parsed::Invalid;
    }
    Parsed::Valid { record: Record { seq, synced, payload }, next: at + HEADER + n }
}
