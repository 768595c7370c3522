//! Reading the log back: where its whole records end, whether what follows
//! is a torn tail (dropped) or damage (refused), and applying the records the
//! database does not hold yet.

use redb::Database;

use super::record::{self, Op, Parsed, Record};
use crate::storage::{fail, row_keys, StorageError, Table, Write};

/// The whole records at the start of `log`, each numbered one after the
/// previous, up to the first that is not (torn, cut short, damaged, or left
/// from before the log was last emptied).
///
/// What follows them is dropped as a torn tail unless it proves damage: a
/// later whole record that the database does not hold (`seq > applied`) and
/// that was appended once the bytes where the records stop had been synced
/// (its `synced` field is past them). A crash can tear or lose only records
/// that no completed sync covered, and every record appended after those
/// carries a `synced` short of them; a record appended after a completed sync
/// that covered them proves they were whole on disk. Later records are found
/// byte by byte (a damaged length field does not hide them): a header's own
/// checksum rejects a wrong offset at the cost of 24 bytes.
pub(super) fn scan(log: &[u8], applied: u64, salt: u32) -> Result<Vec<Record<'_>>, String> {
    let mut records: Vec<Record<'_>> = Vec::new();
    let mut at = 0;
    while at < log.len() {
        if let Parsed::Valid { record, next } = record::parse(log, at, salt) {
            if records.last().is_none_or(|prev| record.seq == prev.seq + 1) {
                records.push(record);
                at = next;
                continue;
            }
        }
        prove_torn(log, at, applied, salt)?;
        break;
    }
    Ok(records)
}

/// `Err` if a whole record after `at` shows that the bytes at `at` were synced.
fn prove_torn(log: &[u8], at: usize, applied: u64, salt: u32) -> Result<(), String> {
    let mut p = at + 1;
    while p < log.len() {
        p = match record::parse(log, p, salt) {
            Parsed::Valid { record, next } => {
                if record.seq > applied && record.synced > at as u64 {
                    return Err(format!(
                        "the redo log is damaged at byte {at}: record {} at byte {p}, appended once \
                         {} bytes were on disk, follows it; restore the database and its log from \
                         a backup",
                        record.seq, record.synced
                    ));
                }
                next
            }
            Parsed::Invalid => p + 1,
        };
    }
    Ok(())
}

/// The log sequence number `w`'s database holds (0: none yet).
pub(crate) fn applied(w: &Write<'_>) -> Result<u64, StorageError> {
    match w.get_raw(Table::Meta, row_keys::META_LOG_SEQUENCE)? {
        None => Ok(0),
        Some(b) => b
            .try_into()
            .map(u64::from_be_bytes)
            .map_err(|_| StorageError("the stored log sequence number is unreadable".into())),
    }
}

/// Apply `record`'s operations in `w` (the same bytes, in the same order:
/// applying a run of records twice leaves what applying it once does).
pub(super) fn apply(w: &mut Write<'_>, record: &Record<'_>) -> Result<(), StorageError> {
    let ops = record::ops(record.payload)
        .map_err(|e| StorageError(format!("the redo log's record {} is damaged: {e}", record.seq)))?;
    for op in ops {
        match op {
            Op::Put { table, key, value } => w.put_raw(table, key, value)?,
            Op::Remove { table, key } => drop(w.remove(table, key)?),
            Op::RemoveRange { table, from, to } => w.remove_range(table, from, to)?,
        }
    }
    Ok(())
}

/// Apply a record's payload in `w` (a pending commit built again:
/// `storage/pending_commit.rs`).
pub(crate) fn apply_payload(w: &mut Write<'_>, payload: &[u8]) -> Result<(), StorageError> {
    apply(w, &Record { seq: 0, synced: 0, payload })
}

/// Apply the records of `log` that `db` does not hold, in one durable commit;
/// the sequence number `db` then holds, and its log salt (made, and committed
/// durably, the first time: before any record is appended with it).
pub(super) fn replay(db: &Database, log: &[u8]) -> Result<(u64, u32), StorageError> {
    let tx = db.begin_write().map_err(fail)?;
    let (last, salt, changed) = {
        let kv = crate::storage::redb_kv::RedbWrite::new(&tx);
        let mut w = Write::new(&kv, None);
        let (salt, made) = match w.get_raw(Table::Meta, row_keys::META_LOG_SALT)? {
            Some(b) => (
                b.try_into()
                    .map(u32::from_le_bytes)
                    .map_err(|_| StorageError("the stored log salt is unreadable".into()))?,
                false,
            ),
            None => {
                let mut b = [0u8; 4];
                crate::ids::random_bytes(&mut b);
                w.put_raw(Table::Meta, row_keys::META_LOG_SALT, &b)?;
                (u32::from_le_bytes(b), true)
            }
        };
        let held = applied(&w)?;
        let records = scan(log, held, salt).map_err(StorageError)?;
        let mut todo = records.iter().filter(|r| r.seq > held).peekable();
        match todo.peek() {
            None => (held, salt, made),
            Some(first) if first.seq != held + 1 => {
                return Err(StorageError(format!(
                    "the redo log starts at record {} but the database holds records up to {held} only: \
                     the log is not this database's (or the database is older than its log); \
                     restore the pair from one backup",
                    first.seq
                )))
            }
            Some(_) => {
                let mut last = held;
                for record in todo {
                    apply(&mut w, record)?;
                    last = record.seq;
                }
                w.put_raw(Table::Meta, row_keys::META_LOG_SEQUENCE, &last.to_be_bytes())?;
                (last, salt, true)
            }
        }
    };
    if changed {
        tx.commit().map_err(fail)?;
    }
    Ok((last, salt))
}
