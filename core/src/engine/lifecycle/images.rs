//! Check images (BOC, POP, ICL): sealed at rest, kept for Nacha's two years.
//!
//! A check's MICR line carries the routing and account numbers, so an image is
//! account data: it is stored only sealed with the account-number AEAD
//! ([`crate::secrets::Cipher`]), its associated data the image's key
//! (`{transaction id}/{side}`), so an image moved to another transaction or to the
//! other side of the same check does not open. A stored image is the byte
//! [`SEALED`] followed by the AEAD output over the base64 text as submitted.
//!
//! Retention: a voided transaction's images are dropped with the void (it never
//! became an entry). An originated one's are kept until two years after it
//! settles ([`RETENTION_MONTHS`], Nacha's record retention for BOC source
//! documents), then deleted: the cut-off indexes them in `image_expiry` and the
//! catch-up of the clock ([`expire`]) deletes what is due.

use chrono::{DateTime, Months, Utc};

use crate::engine::host::sealing_keys::SealingKeys;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::WriteContext;
use crate::storage::{row_keys, StorageError, Table, Write};

/// The first byte of a sealed image (base64 text never starts with it).
pub(crate) const SEALED: u8 = 1;

/// How long an image is kept after its transaction settles.
pub const RETENTION_MONTHS: u32 = 24;

/// A side of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckSide {
    /// The front (the MICR line: routing and account numbers, check number).
    Front,
    /// The back (endorsements).
    Back,
}

impl CheckSide {
    /// Both sides.
    pub const BOTH: [CheckSide; 2] = [CheckSide::Front, CheckSide::Back];

    /// `front` or `back`, as in the request's `check_image_front` / `_back`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CheckSide::Front => "front",
            CheckSide::Back => "back",
        }
    }
}

/// `text` (an image's base64) sealed for transaction `id`, side `side`.
fn seal(cipher: &SealingKeys, id: &str, side: CheckSide, text: &[u8]) -> Vec<u8> {
    let key = row_keys::image(id, side.as_str());
    let mut out = vec![SEALED];
    out.extend_from_slice(&cipher.encrypt(text, &key));
    out
}

/// Store a new transaction's image, sealed.
pub(crate) fn store(
    cx: &mut WriteContext<'_, '_>,
    id: &str,
    side: CheckSide,
    text: &str,
) -> Result<(), StorageError> {
    let sealed = seal(&cx.engine.cipher, id, side, text.as_bytes());
    cx.write.put_raw(Table::Images, &row_keys::image(id, side.as_str()), &sealed)
}

/// A stored image opened: its base64 text. A value that does not open (another
/// transaction's or side's, altered, or under another key) is a storage error.
pub(crate) fn open(
    cipher: &SealingKeys,
    id: &str,
    side: CheckSide,
    stored: &[u8],
) -> Result<String, StorageError> {
    let unreadable = || StorageError(format!("the {} image of {id} does not decrypt", side.as_str()));
    let Some((&SEALED, sealed)) = stored.split_first() else { return Err(unreadable()) };
    let plain = cipher.decrypt(sealed, &row_keys::image(id, side.as_str())).map_err(|_| unreadable())?;
    String::from_utf8(plain).map_err(|_| unreadable())
}

/// Delete both images of a transaction (a void: it never became an entry).
pub(crate) fn drop_all(cx: &mut WriteContext<'_, '_>, t: &TransactionRecord) -> Result<(), StorageError> {
    if t.has_images {
        for side in CheckSide::BOTH {
            cx.write.remove(Table::Images, &row_keys::image(&t.id, side.as_str()))?;
        }
    }
    Ok(())
}

/// When the images of a transaction settling at `settles_at` are deleted.
pub(crate) fn expires_at(settles_at: DateTime<Utc>) -> DateTime<Utc> {
    settles_at.checked_add_months(Months::new(RETENTION_MONTHS)).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// An originated transaction `id`, settling at `settles_at`: index its
/// images for deletion two years after it settles.
pub(crate) fn keep_for(
    w: &mut Write<'_>,
    id: &str,
    has_images: bool,
    settles_at: DateTime<Utc>,
) -> Result<(), StorageError> {
    if !has_images {
        return Ok(());
    }
    w.put_raw(Table::ImageExpiry, &row_keys::at(expires_at(settles_at), id), &[])
}

/// Whether any image is due for deletion by `now` (a read-only check).
pub(crate) fn anything_due(r: &crate::storage::Snapshot, now: DateTime<Utc>) -> Result<bool, StorageError> {
    Ok(r.first_key(Table::ImageExpiry)?
        .and_then(|k| row_keys::decode_instant(&k))
        .is_some_and(|at| at <= now))
}

/// Delete the images whose retention ended by `now`, at most `budget`
/// transactions' worth; whether none is left due.
pub(crate) fn expire(
    cx: &mut WriteContext<'_, '_>,
    now: DateTime<Utc>,
    budget: u64,
) -> Result<bool, StorageError> {
    let to = row_keys::instant(now + chrono::Duration::microseconds(1));
    let limit = usize::try_from(budget.max(1)).unwrap_or(usize::MAX);
    let due = cx.write.range(Table::ImageExpiry, &[], &to, limit.saturating_add(1))?;
    let done = due.len() <= limit;
    for (key, _) in due.into_iter().take(limit) {
        cx.write.remove(Table::ImageExpiry, &key)?;
        let id = row_keys::at_id(&key).ok_or_else(|| StorageError("an index key is unreadable".into()))?;
        for side in CheckSide::BOTH {
            cx.write.remove(Table::Images, &row_keys::image(id, side.as_str()))?;
        }
    }
    Ok(done)
}
