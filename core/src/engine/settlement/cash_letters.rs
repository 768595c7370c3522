//! Image cash letters: what each cut-off sends of its ICL items.
//!
//! When a cut-off moves an ICL transaction to B Originated, the same write
//! transaction adds a row (cut-off instant, transaction id) to
//! `icl_outgoing`. Once none of that cut-off's transactions is left pending,
//! [`assemble`] writes its letter in one write transaction: each item's
//! account opened, its two images opened and made Group 4 TIFFs
//! ([`x9::to_g4_tiff`]: a Group 4 upload as sent, a JPEG or PNG converted),
//! the file written by [`x9::write`], sealed into the blobs table and listed.
//! An item whose images do not convert is held out with why: it stays
//! Originated and needs the operator, as an origination file's held entries.

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::engine::lifecycle::images::{self, CheckSide};
use crate::engine::rows::records::TransactionRecord;
use crate::engine::settlement::file_ids::{free_id, HeldEntry};
use crate::engine::settlement::originator;
use crate::engine::WriteContext;
use crate::money::Money;
use crate::nacha::Originator;
use crate::storage::{row_keys, Snapshot, StorageError, Table};
use crate::{calendar, x9};

/// A written image cash letter, as `GET /admin/image-cash-letters` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageCashLetter {
    /// `icl_` + the cut-off's date (YYYYMMDD) + the file id modifier.
    pub id: String,
    /// The cut-off it carries.
    pub cutoff: DateTime<Utc>,
    /// Check items in the letter.
    pub items: u64,
    /// Their total.
    pub total: Money,
    /// SHA-256 (hex) of the file's bytes (empty when every item was held).
    pub sha256: String,
    /// Items left out (an image that does not convert), each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<HeldEntry>,
}

/// The blobs key of a letter's bytes (sealed, bound to the key).
fn blob_key(id: &str) -> String {
    format!("icl/{id}")
}

/// Add an originated ICL item to its cut-off's letter in progress.
pub(crate) fn add(
    cx: &mut WriteContext<'_, '_>,
    id: &str,
    cutoff: DateTime<Utc>,
) -> Result<(), StorageError> {
    cx.write.put_raw(Table::IclOutgoing, &row_keys::at(cutoff, id), &[])
}

/// The cut-off of the oldest letter in progress, if any.
pub(crate) fn next_due(cx: &WriteContext<'_, '_>) -> Result<Option<DateTime<Utc>>, StorageError> {
    Ok(cx.write.first_key_known(Table::IclOutgoing)?.and_then(|k| row_keys::decode_instant(&k)))
}

/// Write the letter of `cutoff` from its rows, list it, and clear the rows.
/// Returns how many items it took. Nothing is done while no originator is
/// set (the letter waits, as files do).
pub(crate) fn assemble(cx: &mut WriteContext<'_, '_>, cutoff: DateTime<Utc>) -> Result<u64, StorageError> {
    let Some(originator) = originator::current(cx)? else { return Ok(0) };
    let from = row_keys::instant(cutoff).to_vec();
    let to = row_keys::instant(cutoff + chrono::Duration::microseconds(1)).to_vec();
    let rows = cx.write.range(Table::IclOutgoing, &from, &to, usize::MAX)?;
    let date = calendar::eastern_date(cutoff);
    let (id, modifier) = free_id(cx, ("icl_", Table::CashLetters), date)?;
    let mut items = Vec::with_capacity(rows.len());
    let mut held = Vec::new();
    for (n, (key, _)) in rows.iter().enumerate() {
        let Some(txn) = row_keys::at_id(key) else { continue };
        let Some(t) = cx.write.get::<TransactionRecord>(Table::Transactions, txn.as_bytes())? else {
            continue;
        };
        let sequence = format!("{}{:07}", date.format("%Y%m%d"), n + 1);
        match item(cx, &t, sequence)? {
            Ok(item) => items.push((t.id.clone(), item)),
            Err(problem) => held.push(HeldEntry { transaction_id: t.id.clone(), problem }),
        }
    }
    cx.write.remove_range(Table::IclOutgoing, &from, &to)?;
    let (written, sha256) = write_letter(cx, &originator, cutoff, (&id, modifier), &mut items, &mut held)?;
    let summary = ImageCashLetter {
        id,
        cutoff,
        items: items.len() as u64,
        total: Money::from_cents(items.iter().map(|(_, i)| i.amount_cents).sum()),
        sha256,
        held,
    };
    if written || !summary.held.is_empty() {
        cx.write.put(Table::CashLetters, summary.id.as_bytes(), &summary)?;
        cx.write.require_sync();
    }
    Ok(rows.len() as u64)
}

/// Write the letter of `items`, sealed, under `id`: whether a file was
/// written, and its digest. Items the writer refuses move to `held`, and it
/// is tried again without them.
fn write_letter(
    cx: &mut WriteContext<'_, '_>,
    originator: &Originator,
    cutoff: DateTime<Utc>,
    (id, modifier): (&str, char),
    items: &mut Vec<(String, x9::CheckItem)>,
    held: &mut Vec<HeldEntry>,
) -> Result<(bool, String), StorageError> {
    loop {
        if items.is_empty() {
            return Ok((false, String::new()));
        }
        let letter = x9::CashLetter {
            destination_routing: originator.immediate_destination.clone(),
            destination_name: short_name(&originator.immediate_destination_name),
            origin_routing: originator.odfi_routing_number.clone(),
            origin_name: short_name(&originator.immediate_origin_name),
            created: calendar::eastern_naive(cutoff),
            file_id_modifier: modifier,
            cash_letter_id: id.trim_start_matches("icl_").chars().skip(2).take(8).collect(),
            items: items.iter().map(|(_, i)| i.clone()).collect(),
        };
        match x9::write(&letter) {
            Ok(bytes) => {
                let key = blob_key(id);
                let sealed = cx.engine.cipher.encrypt(&bytes, key.as_bytes());
                cx.write.put_raw(Table::Blobs, key.as_bytes(), &sealed)?;
                let digest = crate::secrets::hex::encode(&sha2::Sha256::digest(&bytes));
                return Ok((true, digest));
            }
            Err(e) => {
                // The error names no item: hold each the writer alone refuses, else all.
                let before = items.len();
                let mut kept = Vec::with_capacity(before);
                for (txn, item) in items.drain(..) {
                    let alone = x9::CashLetter { items: vec![item.clone()], ..letter.clone() };
                    match x9::write(&alone) {
                        Ok(_) => kept.push((txn, item)),
                        Err(why) => held.push(HeldEntry { transaction_id: txn, problem: why.to_string() }),
                    }
                }
                if kept.len() == before {
                    held.extend(
                        kept.into_iter()
                            .map(|(txn, _)| HeldEntry { transaction_id: txn, problem: e.to_string() }),
                    );
                } else {
                    *items = kept;
                }
            }
        }
    }
}

/// A bank's name as a letter's header carries it: at most 18 characters.
fn short_name(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(18)
        .collect::<String>()
        .trim_end()
        .to_owned()
}

/// The check item of ICL transaction `t`, or why it cannot be one.
fn item(
    cx: &WriteContext<'_, '_>,
    t: &TransactionRecord,
    item_sequence: String,
) -> Result<Result<x9::CheckItem, String>, StorageError> {
    let (account_number, _) = cx
        .engine
        .unseal_account_text(&t.account.account_sealed, &t.account.sealed_for)
        .map_err(|e| StorageError(e.to_string()))?;
    let mut tiffs = Vec::with_capacity(2);
    for side in CheckSide::BOTH {
        let Some(stored) = cx.write.get_raw(Table::Images, &row_keys::image(&t.id, side.as_str()))? else {
            return Ok(Err(format!("its {} image is no longer kept", side.as_str())));
        };
        let text = images::open(&cx.engine.cipher, &t.id, side, &stored)?;
        let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(compact) else {
            return Ok(Err(format!("its {} image is not base64", side.as_str())));
        };
        match x9::to_g4_tiff(&bytes) {
            Ok(tiff) => tiffs.push(tiff),
            Err(e) => {
                return Ok(Err(format!("its {} image does not convert to Group 4: {e}", side.as_str())))
            }
        }
    }
    let back = tiffs.pop().unwrap_or_default();
    let front = tiffs.pop().unwrap_or_default();
    Ok(Ok(x9::CheckItem {
        payor_routing: t.account.routing_number.clone(),
        account_number,
        check_number: t.check_number.clone().unwrap_or_default(),
        amount_cents: t.amount.cents(),
        item_sequence,
        front_tiff: front,
        back_tiff: back,
    }))
}

/// Every written letter's summary, oldest first.
pub(crate) fn list(r: &Snapshot) -> Result<Vec<ImageCashLetter>, StorageError> {
    let mut out: Vec<ImageCashLetter> = r
        .range(Table::CashLetters, b"", &[0xff], usize::MAX)?
        .into_iter()
        .map(|(_, v)| crate::storage::decode(Table::CashLetters, &v))
        .collect::<Result<_, _>>()?;
    out.sort_by(|a, b| (a.cutoff, &a.id).cmp(&(b.cutoff, &b.id)));
    Ok(out)
}

/// A written letter's summary and its bytes, unsealed.
pub(crate) fn get(
    r: &Snapshot,
    cipher: &crate::engine::host::sealing_keys::SealingKeys,
    id: &str,
) -> Result<Option<(ImageCashLetter, Vec<u8>)>, StorageError> {
    let Some(summary) = r.get::<ImageCashLetter>(Table::CashLetters, id.as_bytes())? else { return Ok(None) };
    let key = blob_key(id);
    let bytes = match r.get_raw(Table::Blobs, key.as_bytes())? {
        Some(sealed) => cipher.decrypt(&sealed, key.as_bytes()).map_err(|e| StorageError(e.to_string()))?,
        None => Vec::new(),
    };
    Ok(Some((summary, bytes)))
}
