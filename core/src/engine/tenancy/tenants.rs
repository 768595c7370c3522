//! Partners and merchants: creation, underwriting, approval, limits, API keys.

use std::sync::Arc;

use base64::Engine as _;

use crate::engine::rows::records::{KeyOwner, MerchantRecord, MerchantStatus, PartnerRecord};
use crate::engine::tenancy::tenant_lookup::{load_merchant, load_partner};
use crate::engine::{credentials, Outcome, Refusal, Stop, WriteContext};
use crate::ids::{self, IdKind};
use crate::limits::Limits;
use crate::model::MerchantApplication;
use crate::storage::Table;
use crate::validation::ProblemCode;
use crate::AchError;

/// Longest partner name.
pub const MAX_PARTNER_NAME: usize = 100;

fn b64() -> &'static base64::engine::GeneralPurpose {
    &base64::engine::general_purpose::STANDARD
}

/// Operator: a new partner and its API key.
pub(crate) fn create_partner(cx: &mut WriteContext<'_, '_>, name: &str) -> Result<Outcome, Stop> {
    let name = crate::validation::text::nfkc(std::borrow::Cow::Borrowed(name.trim()));
    let unseen =
        name.chars().any(char::is_control) || crate::validation::text::format_character(&name).is_some();
    if name.is_empty() || name.chars().count() > MAX_PARTNER_NAME || unseen {
        let msg =
            format!("name must be 1 to {MAX_PARTNER_NAME} characters without control or format characters");
        return Err(
            Refusal::problem(AchError::FailedToAccept, "name", ProblemCode::InvalidFormat, msg).into()
        );
    }
    let id = ids::generate(IdKind::Partner);
    let record = PartnerRecord {
        id: id.clone(),
        name_sealed: super::sealed_text::seal(
            &cx.engine.cipher,
            super::sealed_text::PARTNER_NAME,
            &id,
            &name,
        ),
        created_at: cx.now,
        limits: Limits::default(),
    };
    cx.write.put(Table::Partners, id.as_bytes(), &record)?;
    let key = credentials::issue(cx, KeyOwner::Partner { partner_id: id.clone() })?;
    Ok(Outcome::PartnerCreated { partner_id: id, api_key: key.as_str().to_owned() })
}

/// Partner: store an application; the merchant waits in underwriting.
pub(crate) fn submit_merchant(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    app: &MerchantApplication,
) -> Result<Outcome, Stop> {
    load_partner(cx, partner_id)?;
    let id = ids::generate(IdKind::Merchant);
    let json = serde_json::to_vec(app).map_err(|e| crate::storage::StorageError(e.to_string()))?;
    let sealed = cx.engine.cipher.encrypt(&json, id.as_bytes());
    let record = MerchantRecord {
        id: id.clone(),
        partner_id: partner_id.to_owned(),
        status: MerchantStatus::Underwriting,
        application_sealed: b64().encode(sealed),
        classes: app.standard_entry_classes.clone(),
        decline_duplicates: app.velocities.decline_duplicates,
        limits: Limits::from_velocities(&app.velocities),
        submitted_at: cx.now,
        approved_at: None,
        company_entry_description: None,
        web_debit_validation: Default::default(),
    };
    cx.write.put(Table::Merchants, id.as_bytes(), &record)?;
    crate::engine::rows::listings::add_merchant(cx, &record)?;
    Ok(Outcome::MerchantSubmitted { merchant_id: id })
}

/// Operator: approve a merchant: its classes enabled, its limits set (defaults
/// from its velocities, overridden by `limits`), its API key issued.
pub(crate) fn approve_merchant(
    cx: &mut WriteContext<'_, '_>,
    merchant_id: &str,
    limits: &Limits,
) -> Result<Outcome, Stop> {
    let mut m = Arc::unwrap_or_clone(load_merchant(cx, merchant_id)?);
    if m.status == MerchantStatus::Approved {
        let msg = "this merchant is already approved (change its limits instead)";
        return Err(Refusal::conflict(AchError::FailedToAccept, "merchant_id", msg).into());
    }
    m.status = MerchantStatus::Approved;
    m.approved_at = Some(cx.now);
    m.limits = m.limits.updated(limits);
    cx.write.put(Table::Merchants, m.id.as_bytes(), &m)?;
    let suspended = cx.write.get_raw(Table::Suspensions, m.id.as_bytes())?.is_some();
    let view = crate::engine::views::merchant::view_of(cx.engine, m.clone(), suspended)?;
    crate::engine::feeds::partner_events::record_approved(cx, &view)?;
    let owner = KeyOwner::Merchant { partner_id: m.partner_id.clone(), merchant_id: m.id.clone() };
    let key = credentials::issue(cx, owner)?;
    Ok(Outcome::MerchantApproved { merchant_id: m.id, api_key: key.as_str().to_owned(), limits: m.limits })
}

/// Whose limits an operator changes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LimitsOf<'a> {
    /// A partner's overall limits (across its merchants).
    Partner(&'a str),
    /// A merchant's own limits.
    Merchant(&'a str),
}

/// Operator: change a partner's overall limits or a merchant's limits.
pub(crate) fn set_limits(
    cx: &mut WriteContext<'_, '_>,
    of: LimitsOf<'_>,
    limits: &Limits,
) -> Result<Outcome, Stop> {
    let (id, limits) = match of {
        LimitsOf::Partner(partner_id) => {
            let mut partner = Arc::unwrap_or_clone(load_partner(cx, partner_id)?);
            partner.limits = partner.limits.updated(limits);
            cx.write.put(Table::Partners, partner_id.as_bytes(), &partner)?;
            (partner.id, partner.limits)
        }
        LimitsOf::Merchant(merchant_id) => {
            let mut m = Arc::unwrap_or_clone(load_merchant(cx, merchant_id)?);
            m.limits = m.limits.updated(limits);
            cx.write.put(Table::Merchants, m.id.as_bytes(), &m)?;
            (m.id, m.limits)
        }
    };
    Ok(Outcome::LimitsSet { id, limits })
}
