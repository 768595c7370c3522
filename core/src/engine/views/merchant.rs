//! A merchant as a read shows it: its status, its company's name (opened
//! from the sealed application), its classes and the limits in force; never
//! a tax id, an SSN, a bank account or an image.

use base64::Engine as _;

use crate::calendar;
use crate::engine::rows::records::{MerchantRecord, MerchantStatus};
use crate::engine::Engine;
use crate::model::{MerchantApplication, MerchantState, MerchantView};
use crate::storage::{Snapshot, StorageError, Table};

/// The view of `m`, read on `r`.
pub(crate) fn view(engine: &Engine, r: &Snapshot, m: MerchantRecord) -> Result<MerchantView, StorageError> {
    let suspended = r.get_raw(Table::Suspensions, m.id.as_bytes())?.is_some();
    view_of(engine, m, suspended)
}

/// The view of `m`, suspended or not.
pub(crate) fn view_of(
    engine: &Engine,
    m: MerchantRecord,
    suspended: bool,
) -> Result<MerchantView, StorageError> {
    let unreadable = || StorageError(format!("the application of merchant {} does not open", m.id));
    let sealed =
        base64::engine::general_purpose::STANDARD.decode(&m.application_sealed).map_err(|_| unreadable())?;
    let json = engine.cipher.decrypt(&sealed, m.id.as_bytes()).map_err(|_| unreadable())?;
    let app: MerchantApplication = serde_json::from_slice(&json).map_err(|_| unreadable())?;
    let status = match (suspended, m.status) {
        (true, _) => MerchantState::Suspended,
        (false, MerchantStatus::Approved) => MerchantState::Approved,
        (false, MerchantStatus::Underwriting) => MerchantState::Submitted,
    };
    Ok(MerchantView {
        id: m.id,
        partner_id: m.partner_id,
        status,
        company_name: app.company_info.name,
        dba: app.company_info.dba,
        standard_entry_classes: m.classes,
        limits: m.limits,
        created_at: calendar::format_eastern_timestamp(m.submitted_at),
        approved_at: m.approved_at.map(calendar::format_eastern_timestamp),
    })
}
