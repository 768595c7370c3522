//! The partner each row of `ach_kv` belongs to: the first column of its
//! primary key `(p, t, k)`, so that the table can be distributed by partner
//! (`docs/design.md`, "Sharding by partner"). Reads do not need it (a
//! unique index on `(t, k)` answers them: ids are unique across partners);
//! a write works it out from what it writes, at its commit, when every row
//! the transaction wrote is in its overlay:
//!
//! - a partner's own record: its key; a merchant's or customer's: its
//!   `partner_id`; a transaction's: its record's second field (postcard: the
//!   id, then the partner's id, each a varint length and the bytes);
//! - status changes, idempotency keys, account validations and validated
//!   accounts: the partner's id their keys begin with; events, usage counters, suspensions and a holder's keys: the
//!   partner or merchant id they begin with (a merchant's partner read once
//!   per process: it never changes);
//! - screening's counters: the merchant they begin with;
//! - check images, used check numbers and reviews: their transaction's partner;
//! - everything else (`''`): rows of the whole service (meta, keys, the
//!   routing directory, files, traces, the scheduling indexes a cut-off
//!   reads across partners, the window log).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::storage::kv::KvRead;
use crate::storage::{StorageError, Table};

/// What the rows of the whole service carry.
pub(crate) const SERVICE: &str = "";

/// Merchants' partners, as read (a merchant never changes partner).
#[derive(Default)]
pub(crate) struct Owners(Mutex<HashMap<String, String>>);

impl Owners {
    /// The partner of the row `key` → `value` of `table`, reading through
    /// `tx` (the writing transaction) what the row itself does not say.
    pub(crate) fn of(
        &self,
        tx: &dyn KvRead,
        table: &str,
        key: &[u8],
        value: &[u8],
    ) -> Result<String, StorageError> {
        Ok(match table {
            "partners" => text(key)?.to_owned(),
            "merchants" | "customers" => partner_field(value)?,
            "transactions" => transaction_partner(value)?.to_owned(),
            "changes" | "idempotency" | "validations" | "validated_accounts" => {
                text(before_zero(key))?.to_owned()
            }
            "events" | "usage" | "holder_keys" | "risk_counters" => {
                self.of_holder(tx, text(before_zero(key))?)?
            }
            "suspensions" => self.of_holder(tx, text(key)?)?,
            "images" => {
                let id = key.split(|&b| b == b'/').next().unwrap_or_default();
                of_transaction(tx, id)?
            }
            "checks" => of_transaction(tx, value)?,
            "reviews" => of_transaction(tx, key)?,
            _ => SERVICE.to_owned(),
        })
    }

    /// The partner of a holder id: a partner's own, a merchant's partner, or
    /// none (the operator).
    fn of_holder(&self, tx: &dyn KvRead, id: &str) -> Result<String, StorageError> {
        if id.starts_with("par_") {
            return Ok(id.to_owned());
        }
        if !id.starts_with("mer_") {
            return Ok(SERVICE.to_owned());
        }
        if let Some(partner) = self.0.lock().unwrap_or_else(PoisonError::into_inner).get(id) {
            return Ok(partner.clone());
        }
        let mut partner = None;
        tx.get_with(Table::Merchants, id.as_bytes(), &mut |v| {
            partner = Some(partner_field(v)?);
            Ok(())
        })?;
        let Some(partner) = partner else { return Ok(SERVICE.to_owned()) };
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_owned(), partner.clone());
        Ok(partner)
    }
}

fn unreadable(what: &str) -> StorageError {
    StorageError(format!("a stored {what} does not say its partner"))
}

fn text(bytes: &[u8]) -> Result<&str, StorageError> {
    std::str::from_utf8(bytes).map_err(|_| unreadable("key"))
}

/// The bytes before the first 0 (all of them if none).
fn before_zero(key: &[u8]) -> &[u8] {
    key.split(|&b| b == 0).next().unwrap_or_default()
}

/// The `partner_id` of a JSON record.
fn partner_field(value: &[u8]) -> Result<String, StorageError> {
    #[derive(serde::Deserialize)]
    struct Owned {
        partner_id: String,
    }
    serde_json::from_slice::<Owned>(value).map(|o| o.partner_id).map_err(|_| unreadable("record"))
}

/// The partner's id in a stored transaction record: its second field.
pub(crate) fn transaction_partner(value: &[u8]) -> Result<&str, StorageError> {
    let (_, rest) = postcard_str(value)?;
    Ok(postcard_str(rest)?.0)
}

/// A postcard string at the start of `bytes` (a varint length, the bytes)
/// and what follows it.
fn postcard_str(bytes: &[u8]) -> Result<(&str, &[u8]), StorageError> {
    let mut len = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        len |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let start = i + 1;
            let end = usize::try_from(len).ok().and_then(|l| start.checked_add(l));
            let field = end.and_then(|end| bytes.get(start..end)).ok_or_else(|| unreadable("transaction"))?;
            let rest = &bytes[start + field.len()..];
            return Ok((text(field)?, rest));
        }
    }
    Err(unreadable("transaction"))
}

/// The partner of the transaction with id `id` (written in this
/// transaction or before), or none if there is no such transaction.
fn of_transaction(tx: &dyn KvRead, id: &[u8]) -> Result<String, StorageError> {
    let mut partner = None;
    tx.get_with(Table::Transactions, id, &mut |v| {
        partner = Some(transaction_partner(v)?.to_owned());
        Ok(())
    })?;
    Ok(partner.unwrap_or_else(|| SERVICE.to_owned()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_record_gives_its_second_field() {
        let long = "p".repeat(200);
        let v = postcard::to_allocvec(&("txn_1", long.as_str(), 7u32)).unwrap();
        assert_eq!(transaction_partner(&v).unwrap(), long);
        let unreadable = Err(StorageError("a stored transaction does not say its partner".into()));
        assert_eq!(transaction_partner(&v[..3]), unreadable, "cut short");
        assert_eq!(transaction_partner(&[0x80; 12]), unreadable, "a length that never ends");
        assert_eq!(before_zero(b"par_a\0\x01"), b"par_a");
        assert_eq!(partner_field(br#"{"id":"mer_1","partner_id":"par_9","x":[1]}"#).unwrap(), "par_9");
    }
}
