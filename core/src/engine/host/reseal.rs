//! Re-sealing every sealed value under a new data key, while the engine
//! serves.
//!
//! It begins with one transaction: a new random data key becomes the one
//! that seals, the one it replaces is kept among the retired keys, and a
//! cursor is stored. From then on the engine seals with the new key and
//! opens with either. Then, a chunk of rows per write transaction, every
//! sealed value a retired key opens is sealed again by the new key and the
//! cursor moves on; the last chunk removes the cursor. A crash anywhere
//! leaves every value sealed by one of the kept keys (so readable), and the
//! next call goes on from the stored cursor. The retired keys stay: a value
//! the walk does not know of still opens, and [`Engine::retired_opens`]
//! counts such openings.
//!
//! Where values are sealed: the partner's name, the merchant's application,
//! the customer's account, the transaction's description and account, the
//! check images, the stored files (origination files, image cash letters),
//! the notifications of change in the events feed, the webhook secrets.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::data_key::{self, Keys};
use super::sealing_keys::{Resealed, SealingKeys};
use crate::engine::feeds::{changes, feed_rows};
use crate::engine::lifecycle::images;
use crate::engine::rows::records::{CustomerRecord, MerchantRecord, PartnerRecord, TransactionRecord};
use crate::engine::tenancy::sealed_text;
use crate::engine::webhooks::endpoints::{self, EndpointRecord};
use crate::engine::Engine;
use crate::secrets::EncryptionKey;
use crate::storage::{decode, key_after, row_keys, StorageError, Table, Write};

/// Rows read per write transaction.
const CHUNK: usize = 256;

/// The tables holding sealed values, in the order the walk takes them.
const TABLES: [Table; 8] = [
    Table::Partners,
    Table::Merchants,
    Table::Customers,
    Table::Transactions,
    Table::Images,
    Table::Blobs,
    Table::Events,
    Table::WebhookEndpoints,
];

/// What a re-seal did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResealFigures {
    /// Rows whose sealed values were sealed again by the new data key.
    pub resealed: u64,
    /// Sealed values no kept key opens (damaged): left as they are.
    pub unopened: u64,
}

/// Why a re-seal could not be done.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ResealError(String);

impl From<StorageError> for ResealError {
    fn from(e: StorageError) -> Self {
        ResealError(e.to_string())
    }
}

/// How far the walk has gone (stored in `meta` while it runs).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Cursor {
    /// The index in [`TABLES`] of the table being walked.
    table: usize,
    /// The last key done in it (base64), `None` at its start.
    after: Option<String>,
    figures: ResealFigures,
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

impl Engine {
    /// Re-seal every sealed value under a new data key (or finish the
    /// re-seal under way), a chunk of rows per write transaction, while
    /// requests go on. Not on a database shared by several processes
    /// (PostgreSQL): they would keep sealing with the key they started with.
    pub fn reseal(&self) -> Result<ResealFigures, ResealError> {
        loop {
            if let Some(figures) = self.reseal_some(usize::MAX)? {
                return Ok(figures);
            }
        }
    }

    /// [`Engine::reseal`], at most `chunks` write transactions of it (each
    /// one table's next rows): the figures once it has ended, `None` while
    /// rows remain (a later call goes on where this one stopped).
    pub fn reseal_some(&self, chunks: usize) -> Result<Option<ResealFigures>, ResealError> {
        if self.store.multiprocess() {
            return Err(ResealError(
                "a database shared by several achd is not re-sealed: stop all but one".into(),
            ));
        }
        self.begin_reseal()?;
        for _ in 0..chunks {
            if let Some(figures) = self.store.write(|w| self.reseal_chunk(w))? {
                return Ok(Some(figures));
            }
        }
        Ok(None)
    }

    /// Values a retired data key opened since the engine started (a value
    /// a re-seal did not reach).
    pub fn retired_opens(&self) -> u64 {
        self.cipher.retired_opens()
    }

    /// A new data key, unless a re-seal is under way.
    fn begin_reseal(&self) -> Result<(), ResealError> {
        let begun = self.store.write(|w| {
            if w.get_raw(Table::Meta, row_keys::META_RESEAL_CURSOR)?.is_some() {
                return Ok(None);
            }
            let Some(old) = data_key::open_or_make(w, &self.kek)? else {
                return Err(StorageError(
                    "the key this engine opened with no longer opens its database".into(),
                ));
            };
            let mut retired = old.retired;
            retired.push(old.data);
            let keys = Keys { data: EncryptionKey::generate(), index: old.index, retired };
            data_key::save(w, &self.kek, &keys)?;
            put_cursor(w, &Cursor::default())?;
            Ok(Some(keys))
        })?;
        // Sealing with the new key begins once it is stored.
        if let Some(keys) = begun {
            self.cipher.replace(&keys.data, &keys.retired);
        }
        Ok(())
    }

    /// One chunk of the walk; the figures once it has ended.
    fn reseal_chunk(&self, w: &mut Write<'_>) -> Result<Option<ResealFigures>, StorageError> {
        let Some(stored) = w.get_raw(Table::Meta, row_keys::META_RESEAL_CURSOR)? else {
            return Ok(Some(ResealFigures::default()));
        };
        let mut cursor: Cursor = serde_json::from_slice(&stored)
            .map_err(|e| StorageError(format!("the re-seal cursor is unreadable: {e}")))?;
        let Some(&table) = TABLES.get(cursor.table) else {
            w.remove(Table::Meta, row_keys::META_RESEAL_CURSOR)?;
            return Ok(Some(cursor.figures));
        };
        let from = match &cursor.after {
            Some(after) => key_after(
                &b64().decode(after).map_err(|_| StorageError("the re-seal cursor is unreadable".into()))?,
            ),
            None => Vec::new(),
        };
        let rows = w.range_from(table, &from, CHUNK)?;
        for (key, value) in &rows {
            if let Some(again) = reseal_row(&self.cipher, table, key, value, &mut cursor.figures)? {
                w.put_raw(table, key, &again)?;
            }
        }
        match rows.last() {
            Some((last, _)) if rows.len() == CHUNK => cursor.after = Some(b64().encode(last)),
            _ => {
                cursor.table += 1;
                cursor.after = None;
            }
        }
        put_cursor(w, &cursor)?;
        Ok(None)
    }
}

fn put_cursor(w: &mut Write<'_>, cursor: &Cursor) -> Result<(), StorageError> {
    let json = serde_json::to_vec(cursor).map_err(|e| StorageError(e.to_string()))?;
    w.put_raw(Table::Meta, row_keys::META_RESEAL_CURSOR, &json)
}

/// A row's stored bytes with its sealed values sealed again, if any changed.
fn reseal_row(
    keys: &SealingKeys,
    table: Table,
    key: &[u8],
    value: &[u8],
    figures: &mut ResealFigures,
) -> Result<Option<Vec<u8>>, StorageError> {
    let mut walk = Walk { keys, figures, changed: false };
    let again = match table {
        Table::Partners => {
            let mut p: PartnerRecord = decode(table, value)?;
            walk.text(&mut p.name_sealed, &sealed_text::bound(sealed_text::PARTNER_NAME, &p.id));
            walk.changed.then(|| crate::storage::encode(table, &p)).transpose()?
        }
        Table::Merchants => {
            let mut m: MerchantRecord = decode(table, value)?;
            let aad = m.id.clone();
            walk.text(&mut m.application_sealed, aad.as_bytes());
            walk.changed.then(|| crate::storage::encode(table, &m)).transpose()?
        }
        Table::Customers => {
            let mut c: CustomerRecord = decode(table, value)?;
            if let Some(account) = &mut c.account {
                let aad = account.sealed_for.clone();
                walk.text(&mut account.account_sealed, aad.as_bytes());
            }
            walk.changed.then(|| crate::storage::encode(table, &c)).transpose()?
        }
        Table::Transactions => {
            let mut t: TransactionRecord = decode(table, value)?;
            walk.text(&mut t.description_sealed, &sealed_text::bound(sealed_text::DESCRIPTION, &t.id));
            let aad = t.account.sealed_for.clone();
            walk.text(&mut t.account.account_sealed, aad.as_bytes());
            walk.changed.then(|| crate::storage::encode(table, &t)).transpose()?
        }
        Table::Images => match value.split_first() {
            Some((&images::SEALED, sealed)) => {
                walk.bytes(sealed, key).map(|again| [&[images::SEALED][..], &again].concat())
            }
            _ => None,
        },
        // Every stored file is sealed bound to its key; the routing
        // directory is not sealed (public data).
        Table::Blobs if key == row_keys::BLOB_DIRECTORY => None,
        Table::Blobs => walk.bytes(value, key),
        Table::Events => feed_rows::rewrite(value, &mut |entry| {
            changes::reseal_event(keys, entry, &mut walk.figures.unopened)
        })?,
        Table::WebhookEndpoints => {
            let mut e: EndpointRecord = decode(table, value)?;
            let aad = endpoints::aad(&e.id);
            for secret in &mut e.secrets {
                walk.text(&mut secret.sealed, &aad);
            }
            walk.changed.then(|| crate::storage::encode(table, &e)).transpose()?
        }
        _ => None,
    };
    if again.is_some() {
        figures.resealed += 1;
    }
    Ok(again)
}

/// Re-sealing the values of one row.
struct Walk<'a> {
    keys: &'a SealingKeys,
    figures: &'a mut ResealFigures,
    changed: bool,
}

impl Walk<'_> {
    /// A sealed value in base64, sealed again in place.
    fn text(&mut self, sealed: &mut String, aad: &[u8]) {
        let Ok(bytes) = b64().decode(sealed.as_bytes()) else {
            self.figures.unopened += 1;
            return;
        };
        if let Some(again) = self.bytes(&bytes, aad) {
            *sealed = b64().encode(again);
            self.changed = true;
        }
    }

    /// A sealed value sealed again, if a retired key sealed it.
    fn bytes(&mut self, sealed: &[u8], aad: &[u8]) -> Option<Vec<u8>> {
        match self.keys.reseal(sealed, aad) {
            Resealed::Again(again) => Some(again),
            Resealed::Unopened => {
                self.figures.unopened += 1;
                None
            }
            Resealed::Current => None,
        }
    }
}
