//! Origination files: what each cut-off sends to the bank.
//!
//! When a cut-off moves a transaction to B Originated, the same write transaction
//! adds an outgoing row keyed by (cut-off instant, batch, transaction id): the
//! file in progress, already in file order. Once no transaction of that cut-off
//! is left pending, [`assemble`] writes the file from its rows in one write
//! transaction: trace numbers assigned in file order from the originator's
//! sequence (which never restarts), the NACHA writer (which refuses anything a
//! bank would reject), the text sealed at rest, the file listed. A crash between
//! chunks leaves rows and transitions committed together; a file is listed only
//! when complete. ICL transactions are check images, not NACHA entries: they
//! originate without a row (see `docs/decisions.md`).

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use super::batch_kind::{self, BatchKind};
use super::records::{MerchantRecord, TransactionRecord};
use super::{originator, Cx};
use crate::model::{EntryClass, MerchantApplication};
use crate::money::Money;
use crate::nacha::{self, Batch, NachaFile, Originator, Text};
use crate::storage::{keys, StorageError, Table};
use crate::{calendar, lifecycle};

/// A written origination file, as `GET /admin/origination-files` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginationFile {
    /// `fil_` + creation date (YYYYMMDD) + the file id modifier.
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

/// A transaction left out of its cut-off's file, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldEntry {
    /// The transaction.
    pub transaction_id: String,
    /// What the NACHA writer objected to.
    pub problem: String,
}

/// Take the entry the writer objected to out of `file` (and its batch, if that
/// leaves it empty), recording it in `held`. A problem that is not one entry's
/// (the header, a batch's totals) cannot be held: `Err`.
fn hold(
    file: &mut NachaFile,
    traces: &mut Vec<(Text, String)>,
    held: &mut Vec<HeldEntry>,
    e: nacha::WriteError,
) -> Result<(), StorageError> {
    let nacha::Place::Entry { batch, entry } = e.place else {
        return Err(StorageError(format!("an origination file could not be written: {e}")));
    };
    let Some(b) = file.batches.get_mut(batch) else { return Err(StorageError(e.to_string())) };
    if entry >= b.entries.len() {
        return Err(StorageError(e.to_string()));
    }
    let removed = b.entries.remove(entry);
    if b.entries.is_empty() {
        file.batches.remove(batch);
        for (n, b) in file.batches.iter_mut().enumerate() {
            b.batch_number = u32::try_from(n + 1).unwrap_or(u32::MAX);
        }
    }
    if let Some(at) = traces.iter().position(|(t, _)| *t == removed.trace_number) {
        let (_, transaction_id) = traces.remove(at);
        held.push(HeldEntry { transaction_id, problem: e.to_string() });
    }
    Ok(())
}

/// The key of a written file's sealed text in the blobs table.
fn blob_key(id: &str) -> Vec<u8> {
    format!("file/{id}").into_bytes()
}

/// An outgoing row's key: cut-off, batch (merchant, class, description), id.
fn row_key(cutoff: DateTime<Utc>, merchant_id: &str, kind: &BatchKind, id: &str) -> Vec<u8> {
    let mut k = keys::instant(cutoff).to_vec();
    for part in [merchant_id, kind.sec_code, kind.description, id] {
        k.extend_from_slice(part.as_bytes());
        k.push(0);
    }
    k
}

/// The parts of a row key after its instant.
fn row_parts(key: &[u8]) -> Option<(&str, &str, &str, &str)> {
    let text = std::str::from_utf8(key.get(8..)?).ok()?;
    let mut parts = text.split('\0');
    Some((parts.next()?, parts.next()?, parts.next()?, parts.next()?))
}

/// Add an originated transaction to its cut-off's file in progress.
pub(crate) fn enqueue(
    cx: &mut Cx<'_, '_>,
    t: &TransactionRecord,
    cutoff: DateTime<Utc>,
) -> Result<(), StorageError> {
    if t.class == EntryClass::ICL {
        return Ok(());
    }
    let original = match &t.reversal_of {
        Some(id) => cx.w.get::<TransactionRecord>(Table::Transactions, id.as_bytes())?,
        None => None,
    };
    let kind = batch_kind::of(t, original.as_ref(), calendar::eastern_date(cutoff));
    cx.w.put_raw(Table::Outgoing, &row_key(cutoff, &t.merchant_id, &kind, &t.id), &[])
}

/// The cut-off of the oldest file in progress, if any.
pub(crate) fn next_due(r: &impl FirstKey) -> Result<Option<DateTime<Utc>>, StorageError> {
    Ok(r.first(Table::Outgoing)?.and_then(|k| keys::decode_instant(&k)))
}

/// Either transaction kind's first key (the catch-up runs in both).
pub(crate) trait FirstKey {
    /// The first key of `table`.
    fn first(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError>;
}

impl FirstKey for crate::storage::Read {
    fn first(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError> {
        self.first_key(table)
    }
}

impl FirstKey for crate::storage::Write<'_> {
    fn first(&self, table: Table) -> Result<Option<Vec<u8>>, StorageError> {
        self.first_key(table)
    }
}

/// Write the file of `cutoff` from its outgoing rows, if an originator is set.
/// Returns the entries written (0 when no originator is set yet: the rows wait).
pub(crate) fn assemble(cx: &mut Cx<'_, '_>, cutoff: DateTime<Utc>) -> Result<u64, StorageError> {
    let Some(originator) = originator::current(cx)? else { return Ok(0) };
    let from = keys::instant(cutoff);
    let to = keys::instant(cutoff + chrono::Duration::microseconds(1));
    let rows = cx.w.range(Table::Outgoing, &from, &to, usize::MAX)?;
    let mut builder = Builder::new(cx, &originator, cutoff)?;
    for (key, _) in &rows {
        let (merchant_id, sec, description, id) =
            row_parts(key).ok_or_else(|| StorageError("an outgoing row is unreadable".into()))?;
        let Some(t) = cx.w.get::<TransactionRecord>(Table::Transactions, id.as_bytes())? else { continue };
        builder.add(cx, merchant_id, sec, description, &t)?;
    }
    for (key, _) in &rows {
        cx.w.remove(Table::Outgoing, key)?;
    }
    builder.finish(cx)
}

/// A file being assembled.
struct Builder<'o> {
    originator: &'o Originator,
    cutoff: DateTime<Utc>,
    effective: NaiveDate,
    sequence: u64,
    batches: Vec<Batch>,
    /// The open batch's (merchant, class, description).
    open: Option<(String, String, String)>,
    companies: HashMap<String, Company>,
    traces: Vec<(Text, String)>,
}

/// A merchant as its batches name it.
#[derive(Clone)]
struct Company {
    name: Text,
    identification: Text,
    city: String,
    state: String,
}

impl<'o> Builder<'o> {
    fn new(cx: &Cx<'_, '_>, originator: &'o Originator, cutoff: DateTime<Utc>) -> Result<Self, StorageError> {
        let (_, effective) = lifecycle::origination(calendar::eastern_date(cutoff));
        let sequence = cx.w.get::<u64>(Table::Meta, keys::META_TRACE_SEQUENCE)?.unwrap_or(0);
        Ok(Builder {
            originator,
            cutoff,
            effective,
            sequence,
            batches: Vec::new(),
            open: None,
            companies: HashMap::new(),
            traces: Vec::new(),
        })
    }

    fn company(&mut self, cx: &Cx<'_, '_>, merchant_id: &str) -> Result<Company, StorageError> {
        if let Some(c) = self.companies.get(merchant_id) {
            return Ok(c.clone());
        }
        let merchant: Option<MerchantRecord> = cx.w.get(Table::Merchants, merchant_id.as_bytes())?;
        let app = merchant.and_then(|m| application(cx, &m));
        let company = match app {
            Some(app) => Company {
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
            },
        };
        self.companies.insert(merchant_id.to_owned(), company.clone());
        Ok(company)
    }

    fn add(
        &mut self,
        cx: &Cx<'_, '_>,
        merchant_id: &str,
        sec: &str,
        description: &str,
        t: &TransactionRecord,
    ) -> Result<(), StorageError> {
        let company = self.company(cx, merchant_id)?;
        let batch_id = (merchant_id.to_owned(), sec.to_owned(), description.to_owned());
        if self.open.as_ref() != Some(&batch_id) {
            self.batches.push(Batch {
                service_class_code: nacha::MIXED,
                company_name: company.name.clone(),
                company_discretionary_data: Text::new(),
                company_identification: company.identification.clone(),
                sec_code: Text::from(sec),
                company_entry_description: Text::from(description),
                company_descriptive_date: Text::new(),
                effective_entry_date: self.effective,
                settlement_date: Text::new(),
                originator_status_code: '1',
                odfi_identification: Text::from(self.originator.odfi_identification()),
                batch_number: u32::try_from(self.batches.len() + 1).unwrap_or(u32::MAX),
                entries: Vec::new(),
            });
            self.open = Some(batch_id);
        }
        self.sequence += 1;
        let trace = self.originator.trace_number(u32::try_from(self.sequence % 10_000_000).unwrap_or(0));
        let account = cx.engine.unseal_account(&t.account).map_err(|e| StorageError(e.to_string()))?;
        let entry = batch_kind::entry(t, sec, &account, trace.clone(), (&company.city, &company.state));
        self.traces.push((trace, t.id.clone()));
        if let Some(batch) = self.batches.last_mut() {
            batch.entries.push(entry);
        }
        Ok(())
    }

    fn finish(mut self, cx: &mut Cx<'_, '_>) -> Result<u64, StorageError> {
        if self.traces.is_empty() {
            return Ok(0);
        }
        for b in &mut self.batches {
            b.service_class_code = nacha::service_class_for(&b.entries);
        }
        let date = calendar::eastern_date(self.cutoff);
        let (id, modifier) = free_id(cx, date)?;
        let time = calendar::eastern_naive(self.cutoff).time();
        let mut file = NachaFile {
            header: self.originator.file_header(date, Some(time), modifier),
            batches: self.batches,
        };
        let mut held = Vec::new();
        // Every entry held (never expected): the summary lists them, with no text.
        let mut bytes = Vec::new();
        while !file.batches.is_empty() {
            match nacha::write(&file) {
                Ok(written) => {
                    bytes = written;
                    break;
                }
                Err(e) => hold(&mut file, &mut self.traces, &mut held, e)?,
            }
        }
        let (mut debit, mut credit) = (Money::from_cents(0), Money::from_cents(0));
        for e in file.batches.iter().flat_map(|b| &b.entries) {
            let total = if e.is_debit() { &mut debit } else { &mut credit };
            *total = total.saturating_add(e.amount);
        }
        let summary = OriginationFile {
            id: id.clone(),
            cutoff: self.cutoff,
            effective_date: self.effective,
            entries: self.traces.len() as u64,
            batches: file.batches.len() as u64,
            total_debit: debit,
            total_credit: credit,
            sha256: crate::secrets::hex::encode(&sha2::Sha256::digest(&bytes)),
            first_trace: self.traces.first().map(|(t, _)| t.to_string()).unwrap_or_default(),
            last_trace: self.traces.last().map(|(t, _)| t.to_string()).unwrap_or_default(),
            held,
        };
        for (trace, txn) in &self.traces {
            cx.w.put_raw(Table::Traces, trace.as_bytes(), txn.as_bytes())?;
        }
        cx.w.put(Table::Meta, keys::META_TRACE_SEQUENCE, &self.sequence)?;
        if !bytes.is_empty() {
            let sealed = cx.engine.cipher.encrypt(&bytes, id.as_bytes());
            cx.w.put_raw(Table::Blobs, &blob_key(&id), &sealed)?;
        }
        cx.w.put(Table::Files, id.as_bytes(), &summary)?;
        Ok(summary.entries + summary.held.len() as u64)
    }
}

/// The merchant's application, unsealed.
fn application(cx: &Cx<'_, '_>, m: &MerchantRecord) -> Option<MerchantApplication> {
    use base64::Engine as _;
    let sealed = base64::engine::general_purpose::STANDARD.decode(&m.application_sealed).ok()?;
    let json = cx.engine.cipher.decrypt(&sealed, m.id.as_bytes()).ok()?;
    serde_json::from_slice(&json).ok()
}

/// The first file id free on `date`, with its file id modifier (`A`–`Z`, `0`–`9`).
fn free_id(cx: &Cx<'_, '_>, date: NaiveDate) -> Result<(String, char), StorageError> {
    for modifier in ('A'..='Z').chain('0'..='9') {
        let id = format!("fil_{}{modifier}", date.format("%Y%m%d"));
        if cx.w.get_raw(Table::Files, id.as_bytes())?.is_none() {
            return Ok((id, modifier));
        }
    }
    Err(StorageError(format!("36 origination files already exist for {date}")))
}

/// Every written file's summary, oldest first.
pub(crate) fn list(r: &crate::storage::Read) -> Result<Vec<OriginationFile>, StorageError> {
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
    r: &crate::storage::Read,
    cipher: &crate::secrets::Cipher,
    id: &str,
) -> Result<Option<(OriginationFile, Vec<u8>)>, StorageError> {
    let Some(summary) = r.get::<OriginationFile>(Table::Files, id.as_bytes())? else { return Ok(None) };
    let text = match r.get_raw(Table::Blobs, &blob_key(id))? {
        Some(sealed) => cipher.decrypt(&sealed, id.as_bytes()).map_err(|e| StorageError(e.to_string()))?,
        None => Vec::new(),
    };
    Ok(Some((summary, text)))
}
