//! API keys over their life: issued to a holder (a partner, a merchant, the
//! operator), rotated with a grace window, revoked; partners and merchants
//! suspended and resumed; and the check every request's key goes through.
//!
//! A key is stored only as its hash (`Table::Keys`), indexed by its holder
//! (`Table::HolderKeys`) so that a holder's keys are found without a scan. A
//! retired key keeps its record with `expires_at` (the end of its grace window)
//! or `revoked`; a partner's or a merchant's dead records are dropped at its
//! next rotation or revocation. The operator's are kept: the host passes its
//! configured operator key again at every open, and only its record says that
//! a rotation retired it.

pub(crate) mod authenticate;
pub(crate) mod authorize;
pub(crate) mod cache;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::engine::rows::records::{
    KeyOwner, KeyRecord, MerchantStatus, PartnerRecord, SuspensionRecord, OPERATOR_HOLDER,
};
use crate::engine::tenancy::tenant_lookup;
use crate::engine::{Caller, Outcome, Refusal, Stop, WriteContext};
use crate::secrets::{ApiKey, KeyHash, KeyKind};
use crate::storage::{row_keys, Snapshot, StorageError, Table, Write};
use crate::validation::ProblemCode;
use crate::AchError;

/// How long a rotated-out key keeps working when the request names no window: 24 hours.
pub const DEFAULT_GRACE_SECONDS: u32 = 24 * 60 * 60;

/// The longest grace window a rotation may give the old keys: 30 days.
pub const MAX_GRACE_SECONDS: u32 = 30 * 24 * 60 * 60;

/// Who holds API keys, as an operation names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "holder", rename_all = "snake_case")]
pub enum KeyHolder {
    /// The operator.
    Operator,
    /// A partner.
    Partner {
        /// The partner.
        partner_id: String,
    },
    /// A merchant.
    Merchant {
        /// The merchant.
        merchant_id: String,
    },
}

impl KeyHolder {
    /// The holder's id (`operator` for the operator).
    pub fn id(&self) -> &str {
        match self {
            KeyHolder::Operator => OPERATOR_HOLDER,
            KeyHolder::Partner { partner_id } => partner_id,
            KeyHolder::Merchant { merchant_id } => merchant_id,
        }
    }
}

/// Store `record` for the key `hash`, with its holder index entry.
fn store(w: &mut Write<'_>, hash: &KeyHash, record: &KeyRecord) -> Result<(), StorageError> {
    w.put(Table::Keys, hash.as_bytes(), record)?;
    w.put_raw(Table::HolderKeys, &row_keys::holder_key(record.owner.holder_id(), hash.as_bytes()), &[])
}

/// Drop the key `hash` of `holder` entirely (it is then unknown).
fn forget(w: &mut Write<'_>, holder: &str, hash: &[u8]) -> Result<(), StorageError> {
    w.remove(Table::Keys, hash)?;
    w.remove(Table::HolderKeys, &row_keys::holder_key(holder, hash)).map(drop)
}

/// A new key for `owner`, stored (only its hash). The text is the caller's to
/// hand out once.
pub(crate) fn issue(cx: &mut WriteContext<'_, '_>, owner: KeyOwner) -> Result<ApiKey, StorageError> {
    let kind = match owner {
        KeyOwner::Partner { .. } => KeyKind::Partner,
        KeyOwner::Merchant { .. } => KeyKind::Merchant,
        KeyOwner::Operator => KeyKind::Operator,
    };
    let key = ApiKey::generate(kind);
    store(cx.write, &key.hash(), &KeyRecord::live(owner))?;
    Ok(key)
}

/// The owner new keys of `holder` get; refuses an unknown holder, and a
/// merchant that is not approved (it has no key to rotate).
fn owner_of(cx: &WriteContext<'_, '_>, holder: &KeyHolder) -> Result<KeyOwner, Stop> {
    Ok(match holder {
        KeyHolder::Operator => KeyOwner::Operator,
        KeyHolder::Partner { partner_id } => {
            tenant_lookup::load_partner(cx, partner_id)?;
            KeyOwner::Partner { partner_id: partner_id.clone() }
        }
        KeyHolder::Merchant { merchant_id } => {
            let m = tenant_lookup::load_merchant(cx, merchant_id)?;
            if m.status != MerchantStatus::Approved {
                let msg = "this merchant is not approved yet: it has no key (approve it instead)";
                return Err(Refusal::conflict(AchError::FailedToAccept, "merchant_id", msg).into());
            }
            KeyOwner::Merchant { partner_id: m.partner_id.clone(), merchant_id: m.id.clone() }
        }
    })
}

/// Retire every key of `holder` that still works: valid until `until`, or
/// revoked now (`None`). Dead records of a partner or merchant are dropped.
/// Answers how many working keys were retired.
fn retire(
    cx: &mut WriteContext<'_, '_>,
    holder: &str,
    until: Option<DateTime<Utc>>,
) -> Result<u32, StorageError> {
    if holder == OPERATOR_HOLDER {
        // The configured key has no record until its first rotation.
        if let Some(configured) = cx.engine.operator {
            if cx.write.get_raw(Table::Keys, configured.as_bytes())?.is_none() {
                store(cx.write, &configured, &KeyRecord::live(KeyOwner::Operator))?;
            }
        }
    }
    let (from, to) = row_keys::holder_range(holder);
    let mut retired = 0;
    for (entry, _) in cx.write.range(Table::HolderKeys, &from, &to, usize::MAX)? {
        let hash = &entry[from.len()..];
        let Some(mut record) = cx.write.get::<KeyRecord>(Table::Keys, hash)? else {
            cx.write.remove(Table::HolderKeys, &entry)?;
            continue;
        };
        let working = record.valid_at(cx.now);
        retired += u32::from(working);
        match until {
            Some(t) if working => record.expires_at = Some(record.expires_at.map_or(t, |e| e.min(t))),
            None if working => record.revoked = true,
            _ => {}
        }
        if holder != OPERATOR_HOLDER && !record.valid_at(cx.now) {
            forget(cx.write, holder, hash)?;
        } else if working {
            cx.write.put(Table::Keys, hash, &record)?;
        }
    }
    Ok(retired)
}

/// Operator: a new key for `holder`; its other keys keep working for
/// `grace_seconds` (0: refused at once).
pub(crate) fn rotate(
    cx: &mut WriteContext<'_, '_>,
    holder: &KeyHolder,
    grace_seconds: u32,
) -> Result<Outcome, Stop> {
    let owner = owner_of(cx, holder)?;
    let grace = grace_seconds.min(MAX_GRACE_SECONDS);
    let until = (grace > 0).then(|| cx.now + chrono::Duration::seconds(i64::from(grace)));
    let previous_keys = retire(cx, holder.id(), until)?;
    let key = issue(cx, owner)?;
    Ok(Outcome::KeysRotated {
        id: holder.id().to_owned(),
        api_key: key.as_str().to_owned(),
        previous_keys,
        previous_keys_valid_until: until,
    })
}

/// Operator: every key of a partner or a merchant refused from now on; no new
/// one (a rotation issues one).
pub(crate) fn revoke(cx: &mut WriteContext<'_, '_>, holder: &KeyHolder) -> Result<Outcome, Stop> {
    tenant_exists(cx, holder)?;
    let revoked = retire(cx, holder.id(), None)?;
    Ok(Outcome::KeysRevoked { id: holder.id().to_owned(), revoked })
}

/// Refuses the operator (it is rotated, never revoked or suspended) and an
/// unknown partner or merchant.
fn tenant_exists(cx: &WriteContext<'_, '_>, holder: &KeyHolder) -> Result<(), Stop> {
    match holder {
        KeyHolder::Operator => {
            let msg =
                "the operator key is rotated (POST /admin/operator-key/rotate), not revoked or suspended";
            Err(Refusal::problem(AchError::FailedToAccept, "holder", ProblemCode::InvalidValue, msg).into())
        }
        KeyHolder::Partner { partner_id } => tenant_lookup::load_partner(cx, partner_id).map(drop),
        KeyHolder::Merchant { merchant_id } => tenant_lookup::load_merchant(cx, merchant_id).map(drop),
    }
}

/// Operator: suspend a partner or a merchant (its keys, and a partner's
/// merchants' keys, are refused; a suspended merchant's transactions too) or
/// resume it. Suspending twice keeps the first instant.
pub(crate) fn set_suspended(
    cx: &mut WriteContext<'_, '_>,
    holder: &KeyHolder,
    suspended: bool,
) -> Result<Outcome, Stop> {
    tenant_exists(cx, holder)?;
    let id = holder.id().as_bytes();
    let since = match (suspended, cx.write.get::<SuspensionRecord>(Table::Suspensions, id)?) {
        (true, Some(record)) => Some(record.since),
        (true, None) => {
            cx.write.put(Table::Suspensions, id, &SuspensionRecord { since: cx.now })?;
            Some(cx.now)
        }
        (false, _) => {
            cx.write.remove(Table::Suspensions, id)?;
            None
        }
    };
    Ok(Outcome::SuspensionSet { id: holder.id().to_owned(), suspended, since })
}

/// Whether the partner or merchant `id` is suspended (read once per write
/// transaction: a batch of a merchant's creates asks once).
pub(crate) fn is_suspended(w: &Write<'_>, id: &str) -> Result<bool, StorageError> {
    Ok(w.get_decoded::<SuspensionRecord>(Table::Suspensions, id.as_bytes())?.is_some())
}

/// A caller found for a key: who, the instant its key stops working (a
/// rotation's grace) if any, and its partner's request rate if the operator
/// set one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallerUntil {
    pub caller: Caller,
    pub until: Option<DateTime<Utc>>,
    pub request_rate: Option<u32>,
}

/// What a key's caller is read from: a snapshot, or a write transaction (its
/// own changes included).
pub(crate) trait HolderReads {
    /// The stored key hashed `hash`, if any.
    fn key(&self, hash: &KeyHash) -> Result<Option<KeyRecord>, StorageError>;
    /// Whether the partner or merchant `id` is suspended.
    fn suspended(&self, id: &str) -> Result<bool, StorageError>;
    /// The request rate the operator set for the partner, if any.
    fn request_rate(&self, partner_id: &str) -> Result<Option<u32>, StorageError>;
}

impl HolderReads for Snapshot {
    fn key(&self, hash: &KeyHash) -> Result<Option<KeyRecord>, StorageError> {
        self.get::<KeyRecord>(Table::Keys, hash.as_bytes())
    }

    fn suspended(&self, id: &str) -> Result<bool, StorageError> {
        Ok(self.get_raw(Table::Suspensions, id.as_bytes())?.is_some())
    }

    fn request_rate(&self, partner_id: &str) -> Result<Option<u32>, StorageError> {
        let partner = self.get::<PartnerRecord>(Table::Partners, partner_id.as_bytes())?;
        Ok(partner.and_then(|p| p.limits.requests_per_second))
    }
}

impl HolderReads for Write<'_> {
    fn key(&self, hash: &KeyHash) -> Result<Option<KeyRecord>, StorageError> {
        self.get::<KeyRecord>(Table::Keys, hash.as_bytes())
    }

    fn suspended(&self, id: &str) -> Result<bool, StorageError> {
        is_suspended(self, id)
    }

    fn request_rate(&self, partner_id: &str) -> Result<Option<u32>, StorageError> {
        let partner = self.get_decoded::<PartnerRecord>(Table::Partners, partner_id.as_bytes())?;
        Ok(partner.and_then(|p| p.limits.requests_per_second))
    }
}

/// Who the key with this hash authenticates at `now`, read through `reads`,
/// and the instant its key stops working (a rotation's grace), if any: a
/// stored key that still works and whose holders are not suspended (an
/// operator key only while the host configures one), or else the host's
/// `configured` operator key if no rotation retired it. `None`: refused,
/// exactly like an unknown key.
pub(crate) fn caller_until(
    reads: &impl HolderReads,
    configured: Option<&KeyHash>,
    hash: &KeyHash,
    now: DateTime<Utc>,
) -> Result<Option<CallerUntil>, StorageError> {
    owner_at(reads.key(hash)?, reads, configured, hash, now)
}

/// The caller of the stored `key` record (if any) for the key hashed `hash`,
/// its holders read through `holders`.
fn owner_at(
    key: Option<KeyRecord>,
    holders: &impl HolderReads,
    configured: Option<&KeyHash>,
    hash: &KeyHash,
    now: DateTime<Utc>,
) -> Result<Option<CallerUntil>, StorageError> {
    let found = |caller, until| CallerUntil { caller, until, request_rate: None };
    let Some(record) = key else {
        return Ok(configured.filter(|op| op.ct_eq(hash)).map(|_| found(Caller::Operator, None)));
    };
    if !record.valid_at(now) {
        return Ok(None);
    }
    let until = record.expires_at;
    let (caller, partner_id) = match record.owner {
        // A host that configures no operator key has no operator plane at all.
        KeyOwner::Operator => return Ok(configured.map(|_| found(Caller::Operator, until))),
        KeyOwner::Partner { partner_id } => (Caller::Partner { partner_id: partner_id.clone() }, partner_id),
        KeyOwner::Merchant { partner_id, merchant_id } => {
            if holders.suspended(&merchant_id)? {
                return Ok(None);
            }
            (Caller::Merchant { partner_id: partner_id.clone(), merchant_id }, partner_id)
        }
    };
    if holders.suspended(&partner_id)? {
        return Ok(None);
    }
    Ok(Some(CallerUntil { request_rate: holders.request_rate(&partner_id)?, ..found(caller, until) }))
}
