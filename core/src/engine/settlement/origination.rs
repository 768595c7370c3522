//! Origination files: what each cut-off sends to the bank.
//!
//! When a cut-off moves a transaction to B Originated, the same write transaction
//! adds an outgoing row keyed by (cut-off instant, batch, transaction id): the
//! file in progress, already in file order, with one summary row per batch
//! (whether it has credits, debits or both) sorting just before its entries.
//! Once no transaction of that cut-off is left pending, [`assemble`] writes the
//! file from its rows in chunks, each its own write transaction: trace numbers
//! assigned in file order from the originator's sequence (which never restarts),
//! the records appended by the streaming writer ([`nacha::Stream`], which checks
//! every field as the writer does) as one sealed part per chunk, the writer's
//! state kept in the metadata between chunks. The last chunk writes the file
//! control, and only then is the file listed. A crash between chunks leaves rows,
//! parts and state committed together. ICL transactions are check images, not
//! NACHA entries: they leave in the cut-off's image cash letter
//! (`cash_letters.rs`).

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::engine::request::fast_map::FastMap;
use crate::engine::rows::id_list;
use crate::engine::rows::record_parts::Head;
use crate::engine::rows::records::{MerchantRecord, TransactionRecord};
use crate::engine::settlement::batch_kind::{self, BatchKind, EntrySource};
use crate::engine::settlement::file_ids::{free_id, HeldEntry};
use crate::engine::settlement::originator;
use crate::engine::settlement::traces::TraceRows;
use crate::engine::WriteContext;
use crate::model::{Direction, EntryClass, MerchantApplication};
use crate::money::Money;
use crate::nacha::{self, Batch, Originator, Stream, Text};
use crate::storage::{row_keys, StorageError, Table};
use crate::{calendar, lifecycle};

/// A written origination file, as `GET /admin/origination-files` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginationFile {
    /// `fil_` + creation date (YYYYMMDD) + the file id modifier (and `-N` past
    /// 36 files in a day).
    pub id: String,
    /// The cut-off it carries.
    pub cutoff: DateTime<Utc>,
    /// The effective entry date of its batches.
    pub effective_date: NaiveDate,
    /// Entry detail records.
    pub entries: u64,
    /// Batches.
    pub batches: u64,
    /// Sum of its debit entries.
    pub total_debit: Money,
    /// Sum of its credit entries.
    pub total_credit: Money,
    /// SHA-256 (hex) of the file's bytes.
    pub sha256: String,
    /// First and last trace numbers.
    pub first_trace: String,
    /// Last trace number.
    pub last_trace: String,
    /// Transactions the writer would not put in the file (a field a bank would
    /// reject): each with why. They stay Originated and need the operator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<HeldEntry>,
}

/// The blobs key prefix of a written file's parts (each sealed, bound to its key).
fn part_prefix(id: &str) -> String {
    format!("file/{id}/")
}

fn part_key(id: &str, part: u32) -> String {
    format!("file/{id}/{part:06}")
}

/// A batch's summary row key: cut-off, merchant, class, description. Its
/// entries' rows are the same key followed by the transaction id (and a `0`),
/// so the summary sorts first.
fn summary_key(cutoff: DateTime<Utc>, merchant_id: &str, kind: &BatchKind) -> Vec<u8> {
    let parts = merchant_id.len() + kind.sec_code.len() + kind.description.len() + 3;
    let mut k = Vec::with_capacity(8 + parts + 1 + 32);
    k.extend_from_slice(&row_keys::instant(cutoff));
    for part in [merchant_id, kind.sec_code, kind.description] {
        k.extend_from_slice(part.as_bytes());
        k.push(0);
    }
    k
}

/// The parts of a row key after its instant: merchant, class, description and
/// the transaction id (empty for a batch's summary row).
fn row_parts(key: &[u8]) -> Option<(&str, &str, &str, &str)> {
    let text = std::str::from_utf8(key.get(8..)?).ok()?;
    let mut parts = text.split('\0');
    Some((parts.next()?, parts.next()?, parts.next()?, parts.next()?))
}

/// A batch summary's flags.
const HAS_CREDITS: u8 = 1;
const HAS_DEBITS: u8 = 2;

/// The last part of a packed outgoing row's key starts with this.
const PACKED_ROW: char = '+';

/// A run of originations' outgoing rows, gathered per batch: each batch's
/// entries in one row (its transaction records, length-prefixed, the bytes
/// stored in the transactions table), written when the run ends or the row
/// holds [`id_list::PER_ROW`] entries. The file is then assembled without
/// reading each transaction again, and one row is inserted and removed per
/// batch and chunk instead of one per transaction.
#[derive(Default)]
pub(crate) struct Outgoing {
    /// By batch summary key: the row's key, its records, how many.
    rows: FastMap<Vec<u8>, (Vec<u8>, Vec<u8>, u64)>,
}

impl Outgoing {
    /// Add an originated transaction to its cut-off's file in progress
    /// (`source`: its [`EntrySource`], encoded).
    pub(crate) fn add(
        &mut self,
        cx: &mut WriteContext<'_, '_>,
        t: &Head<'_>,
        reversal_of: Option<&str>,
        source: &[u8],
        cutoff: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        if t.class == EntryClass::ICL {
            return super::cash_letters::add(cx, t.id, cutoff);
        }
        let original = match reversal_of {
            Some(id) => cx.write.get::<TransactionRecord>(Table::Transactions, id.as_bytes())?,
            None => None,
        };
        let reversal = reversal_of.map(|_| original.as_ref());
        let kind = batch_kind::of(t, reversal, calendar::eastern_date(cutoff));
        let summary = summary_key(cutoff, t.merchant_id, &kind);
        let flag = if t.direction == Direction::Credit { HAS_CREDITS } else { HAS_DEBITS };
        // A batch's flags are read once per write transaction, not once per entry.
        let flags = match cx.batch_flags.get(&summary) {
            Some(flags) => *flags,
            None => {
                cx.write.get_raw(Table::Outgoing, &summary)?.and_then(|v| v.first().copied()).unwrap_or(0)
            }
        };
        if flags & flag == 0 {
            cx.write.put_raw(Table::Outgoing, &summary, &[flags | flag])?;
        }
        if cx.batch_flags.get(&summary) != Some(&(flags | flag)) {
            cx.batch_flags.insert(summary.clone(), flags | flag);
        }
        let len = u32::try_from(source.len()).map_err(|_| StorageError("an entry over 4 GiB".into()))?;
        let row = self.rows.entry(summary).or_insert_with_key(|summary| {
            let mut key = summary.clone();
            key.extend_from_slice(PACKED_ROW.encode_utf8(&mut [0; 4]).as_bytes());
            key.extend_from_slice(t.id.as_bytes());
            key.push(0);
            (key, Vec::with_capacity(256 * 64), 0)
        });
        row.1.extend_from_slice(&len.to_le_bytes());
        row.1.extend_from_slice(source);
        row.2 += 1;
        if row.2 >= id_list::PER_ROW {
            let (key, records, _) = std::mem::take(row);
            self.rows.retain(|_, (_, _, n)| *n > 0);
            cx.write.put_raw(Table::Outgoing, &key, &records)?;
        }
        Ok(())
    }

    /// Write every row still gathered.
    pub(crate) fn write(self, cx: &mut WriteContext<'_, '_>) -> Result<(), StorageError> {
        for (key, records, _) in self.rows.into_values() {
            cx.write.put_raw(Table::Outgoing, &key, &records)?;
        }
        Ok(())
    }
}

/// The entries of a packed outgoing row, in order.
fn packed_entries(value: &[u8]) -> Result<Vec<EntrySource<'_>>, StorageError> {
    let unreadable = || StorageError("an outgoing row is unreadable".into());
    let mut out = Vec::new();
    let mut rest = value;
    while !rest.is_empty() {
        let (len, tail) = rest.split_first_chunk::<4>().ok_or_else(unreadable)?;
        let len = usize::try_from(u32::from_le_bytes(*len)).map_err(|_| unreadable())?;
        let (source, tail) = tail.split_at_checked(len).ok_or_else(unreadable)?;
        out.push(postcard::from_bytes(source).map_err(|_| unreadable())?);
        rest = tail;
    }
    Ok(out)
}

/// The cut-off of the oldest file in progress, if any.
pub(crate) fn next_due(r: &impl FirstKey) -> Result<Option<DateTime<Utc>>, StorageError> {
    Ok(r.first(Table::Outgoing)?.and_then(|k| row_keys::decode_instant(&k)))
}

/// Either transaction kind's first key (the catch-up runs in both).
pub(crate) trait FirstKey {
    /// The first key of `table`.
    fn first(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError>;
}

impl FirstKey for crate::storage::Snapshot {
    fn first(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError> {
        self.first_key(table)
    }
}

impl FirstKey for crate::storage::Write<'_> {
    fn first(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError> {
        self.first_key_known(table)
    }
}

/// A file being assembled, kept in the metadata between chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Assembly {
    cutoff: DateTime<Utc>,
    id: String,
    effective: NaiveDate,
    originator: Originator,
    stream: Stream,
    /// The last trace sequence used.
    sequence: u64,
    parts: u32,
    entries: u64,
    #[serde(with = "crate::money::cents")]
    total_debit: Money,
    #[serde(with = "crate::money::cents")]
    total_credit: Money,
    first_trace: String,
    last_trace: String,
    held: Vec<HeldEntry>,
    /// The open batch's (merchant, class, description), for the next chunk.
    batch: Option<(String, String, String)>,
}

/// Write up to `budget` rows of the file of `cutoff` (a chunk); when none is
/// left, finish and list it. Returns the rows done and whether the file is done.
/// Nothing is done (and `true` answered) while no originator is set.
pub(crate) fn assemble(
    cx: &mut WriteContext<'_, '_>,
    cutoff: DateTime<Utc>,
    budget: u64,
) -> Result<(u64, bool), StorageError> {
    let mut out = Vec::new();
    let mut a = match cx.write.get::<Assembly>(Table::Meta, row_keys::META_FILE_IN_PROGRESS)? {
        Some(a) if a.cutoff == cutoff => a,
        _ => match begin(cx, cutoff, &mut out)? {
            Some(a) => a,
            None => return Ok((0, true)),
        },
    };
    let limit = budget.max(1);
    let mut from = row_keys::instant(cutoff).to_vec();
    let to = row_keys::instant(cutoff + chrono::Duration::microseconds(1));
    let start = from.clone();
    let mut companies = HashMap::new();
    let mut traces = TraceRows::default();
    // Rows one at a time (a packed row holds a batch's chunk of entries), until
    // the budget is spent; the file is finished once no row is left.
    let mut done = 0u64;
    let finished = loop {
        let Some((key, value)) = cx.write.range(Table::Outgoing, &from, &to, 1)?.pop() else { break true };
        if done >= limit {
            break false;
        }
        from = crate::storage::key_after(&key);
        let (merchant_id, sec, description, id) =
            row_parts(&key).ok_or_else(|| StorageError("an outgoing row is unreadable".into()))?;
        if !companies.contains_key(merchant_id) {
            companies.insert(merchant_id.to_owned(), company(cx, merchant_id)?);
        }
        let Some(company) = companies.get(merchant_id) else { continue };
        if id.is_empty() {
            let flags = value.first().copied().unwrap_or(0);
            open_batch(&mut a, company, (sec, description), flags, &mut out);
            a.batch = Some((merchant_id.to_owned(), sec.to_owned(), description.to_owned()));
            cx.batch_flags.remove(key.as_slice());
            done += 1;
        } else if id.starts_with(PACKED_ROW) {
            let entries = packed_entries(&value)?;
            out.reserve(entries.len() * 3 * 95);
            for source in &entries {
                add_entry(cx, &mut a, company, sec, source, &mut out, &mut traces)?;
            }
            done += entries.len() as u64;
        } else {
            return Err(StorageError("an outgoing row is neither a batch summary nor packed entries".into()));
        }
    };
    cx.write.remove_range(Table::Outgoing, &start, &from)?;
    traces.write(cx.write)?;
    cx.write.put(Table::Meta, row_keys::META_TRACE_SEQUENCE, &a.sequence)?;
    if finished {
        let more = finish(cx, a, out)?;
        return Ok((done + more, true));
    }
    store_part(cx, &mut a, &out)?;
    cx.write.put(Table::Meta, row_keys::META_FILE_IN_PROGRESS, &a)?;
    Ok((done, false))
}

/// Start the file of `cutoff`: its id, its header into `out`.
fn begin(
    cx: &WriteContext<'_, '_>,
    cutoff: DateTime<Utc>,
    out: &mut Vec<u8>,
) -> Result<Option<Assembly>, StorageError> {
    let Some(originator) = originator::current(cx)? else { return Ok(None) };
    let date = calendar::eastern_date(cutoff);
    let (id, modifier) = free_id(cx, ("fil_", Table::Files), date)?;
    let time = calendar::eastern_naive(cutoff).time();
    let stream = Stream::start(&originator.file_header(date, Some(time), modifier), out)
        .map_err(|e| StorageError(format!("origination file {id}: {e}")))?;
    let (_, effective) = lifecycle::origination_at(cutoff);
    Ok(Some(Assembly {
        cutoff,
        id,
        effective,
        originator,
        stream,
        sequence: cx.write.get::<u64>(Table::Meta, row_keys::META_TRACE_SEQUENCE)?.unwrap_or(0),
        parts: 0,
        entries: 0,
        total_debit: Money::from_cents(0),
        total_credit: Money::from_cents(0),
        first_trace: String::new(),
        last_trace: String::new(),
        held: Vec::new(),
        batch: None,
    }))
}

fn open_batch(
    a: &mut Assembly,
    company: &Company,
    (sec, description): (&str, &str),
    flags: u8,
    out: &mut Vec<u8>,
) {
    let service_class_code = match flags {
        HAS_CREDITS => nacha::CREDITS_ONLY,
        HAS_DEBITS => nacha::DEBITS_ONLY,
        _ => nacha::MIXED,
    };
    let batch = Batch {
        service_class_code,
        company_name: company.name.clone(),
        company_discretionary_data: Text::new(),
        company_identification: company.identification.clone(),
        sec_code: Text::from(sec),
        company_entry_description: Text::from(match (description, &company.description) {
            (crate::engine::DEFAULT_DESCRIPTION, Some(own)) => own.as_str(),
            _ => description,
        }),
        company_descriptive_date: Text::new(),
        effective_entry_date: a.effective,
        settlement_date: Text::new(),
        originator_status_code: '1',
        odfi_identification: Text::from(a.originator.odfi_identification()),
        batch_number: 0,
        entries: Vec::new(),
    };
    // A header the writer refuses leaves no batch open: its entries are held.
    let _ = a.stream.open_batch(&batch, out);
}

/// Append `t`'s entry with the next trace number, or hold it with the reason.
fn add_entry(
    cx: &mut WriteContext<'_, '_>,
    a: &mut Assembly,
    company: &Company,
    sec: &str,
    t: &EntrySource<'_>,
    out: &mut Vec<u8>,
    traces: &mut TraceRows,
) -> Result<(), StorageError> {
    let sequence = a.sequence + 1;
    let trace = a.originator.trace_number(u32::try_from(sequence % 10_000_000).unwrap_or(0));
    let (account, name) = cx
        .engine
        .unseal_account_text(t.account_sealed, t.sealed_for)
        .map_err(|e| StorageError(e.to_string()))?;
    let entry = batch_kind::entry(t, sec, (&account, &name), trace.clone(), (&company.city, &company.state));
    if let Err(e) = a.stream.entry(&entry, out) {
        a.held.push(HeldEntry { transaction_id: t.id.to_owned(), problem: e.to_string() });
        return Ok(());
    }
    a.sequence = sequence;
    let total = if entry.is_debit() { &mut a.total_debit } else { &mut a.total_credit };
    *total = total.saturating_add(entry.amount);
    a.entries += 1;
    if a.first_trace.is_empty() {
        a.first_trace = trace.to_string();
    }
    a.last_trace = trace.to_string();
    traces.push(trace.as_str(), t.id)
}

/// Store `out` as the file's next part (sealed), if it holds anything.
fn store_part(cx: &mut WriteContext<'_, '_>, a: &mut Assembly, out: &[u8]) -> Result<(), StorageError> {
    if out.is_empty() {
        return Ok(());
    }
    let key = part_key(&a.id, a.parts);
    if !cx.engine.store.multiprocess() {
        // Another process may store the file's next parts (a shared store):
        // then the digest is always worked out from the stored parts.
        cx.engine.file_digest.part(&a.id, a.parts, out);
    }
    let sealed = cx.engine.cipher.encrypt(out, key.as_bytes());
    cx.write.put_raw(Table::Blobs, key.as_bytes(), &sealed)?;
    a.parts += 1;
    Ok(())
}

/// The last chunk: the file control, the summary listed, the state gone.
/// Returns the extra work (the parts read back for the checksum).
fn finish(cx: &mut WriteContext<'_, '_>, mut a: Assembly, mut out: Vec<u8>) -> Result<u64, StorageError> {
    let written = a.stream.clone().finish(&mut out);
    let mut sha256 = String::new();
    if written {
        store_part(cx, &mut a, &out)?;
        let digest = match cx.engine.file_digest.finish(&a.id, a.parts) {
            Some(digest) => digest,
            None => sha2::Sha256::digest(read_parts(cx.write, &cx.engine.cipher, &a.id)?).into(),
        };
        sha256 = crate::secrets::hex::encode(&digest);
    } else {
        // No entry was written (every one held): no file text at all.
        for part in 0..a.parts {
            cx.write.remove(Table::Blobs, part_key(&a.id, part).as_bytes())?;
        }
    }
    let summary = OriginationFile {
        id: a.id.clone(),
        cutoff: a.cutoff,
        effective_date: a.effective,
        entries: a.entries,
        batches: a.stream.batches(),
        total_debit: a.total_debit,
        total_credit: a.total_credit,
        sha256,
        first_trace: a.first_trace,
        last_trace: a.last_trace,
        held: a.held,
    };
    cx.write.put(Table::Files, summary.id.as_bytes(), &summary)?;
    cx.write.require_sync();
    cx.write.remove(Table::Meta, row_keys::META_FILE_IN_PROGRESS)?;
    Ok(u64::from(a.parts))
}

/// A merchant as its batches name it.
struct Company {
    name: Text,
    identification: Text,
    city: String,
    state: String,
    /// The operator's description for batches that would say `PAYMENT`.
    description: Option<String>,
}

/// The company of `merchant_id` (its application unsealed once per chunk).
fn company(cx: &WriteContext<'_, '_>, merchant_id: &str) -> Result<Company, StorageError> {
    let merchant: Option<MerchantRecord> = cx.write.get(Table::Merchants, merchant_id.as_bytes())?;
    let description = merchant.as_ref().and_then(|m| m.company_entry_description.clone());
    Ok(match merchant.and_then(|m| application(cx, &m)) {
        Some(app) => Company {
            description,
            name: batch_kind::field(&app.company_info.name, 16),
            identification: Text::from(format!("1{}", app.business_data.federal_tax_id)),
            city: app.company_info.address.city.clone(),
            state: app.company_info.address.state.clone(),
        },
        None => Company {
            name: batch_kind::field(merchant_id, 16),
            identification: batch_kind::field(merchant_id.trim_start_matches("mer_"), 10),
            city: String::new(),
            state: String::new(),
            description,
        },
    })
}

/// The merchant's application, unsealed.
fn application(cx: &WriteContext<'_, '_>, m: &MerchantRecord) -> Option<MerchantApplication> {
    use base64::Engine as _;
    let sealed = base64::engine::general_purpose::STANDARD.decode(&m.application_sealed).ok()?;
    let json = cx.engine.cipher.decrypt(&sealed, m.id.as_bytes()).ok()?;
    serde_json::from_slice(&json).ok()
}

/// A file's parts, unsealed and joined.
fn read_parts(
    r: &impl Parts,
    cipher: &crate::engine::host::sealing_keys::SealingKeys,
    id: &str,
) -> Result<Vec<u8>, StorageError> {
    let prefix = part_prefix(id);
    let mut end = prefix.clone().into_bytes();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    let mut bytes = Vec::new();
    for (key, sealed) in r.parts(prefix.as_bytes(), &end)? {
        let part = cipher.decrypt(&sealed, &key).map_err(|e| StorageError(e.to_string()))?;
        bytes.extend_from_slice(&part);
    }
    Ok(bytes)
}

/// A range of the blobs table in either transaction kind.
trait Parts {
    fn parts(&self, from: &[u8], to: &[u8]) -> Result<Vec<crate::storage::RawEntry>, StorageError>;
}

impl Parts for crate::storage::Snapshot {
    fn parts(&self, from: &[u8], to: &[u8]) -> Result<Vec<crate::storage::RawEntry>, StorageError> {
        self.range(Table::Blobs, from, to, usize::MAX)
    }
}

impl Parts for crate::storage::Write<'_> {
    fn parts(&self, from: &[u8], to: &[u8]) -> Result<Vec<crate::storage::RawEntry>, StorageError> {
        self.range(Table::Blobs, from, to, usize::MAX)
    }
}

/// Every written file's summary, oldest first.
pub(crate) fn list(r: &crate::storage::Snapshot) -> Result<Vec<OriginationFile>, StorageError> {
    let rows = r.range(Table::Files, b"", &[0xff], usize::MAX)?;
    let mut out = Vec::with_capacity(rows.len());
    for (_, v) in rows {
        out.push(crate::storage::decode(Table::Files, &v)?);
    }
    out.sort_by(|a: &OriginationFile, b| (a.cutoff, &a.id).cmp(&(b.cutoff, &b.id)));
    Ok(out)
}

/// A written file's summary and its text, unsealed.
pub(crate) fn get(
    r: &crate::storage::Snapshot,
    cipher: &crate::engine::host::sealing_keys::SealingKeys,
    id: &str,
) -> Result<Option<(OriginationFile, Vec<u8>)>, StorageError> {
    let Some(summary) = r.get::<OriginationFile>(Table::Files, id.as_bytes())? else { return Ok(None) };
    let text = if summary.sha256.is_empty() { Vec::new() } else { read_parts(r, cipher, id)? };
    Ok(Some((summary, text)))
}
