//! A partner as the operator's list shows it: its name (opened from its
//! seal), its limits and whether it is suspended; never a key.

use crate::calendar;
use crate::engine::rows::records::PartnerRecord;
use crate::engine::tenancy::sealed_text;
use crate::engine::Engine;
use crate::model::PartnerView;
use crate::storage::{Snapshot, StorageError, Table};

/// The view of `p`, read on `r`.
pub(crate) fn view(engine: &Engine, r: &Snapshot, p: PartnerRecord) -> Result<PartnerView, StorageError> {
    let suspended = r.get_raw(Table::Suspensions, p.id.as_bytes())?.is_some();
    let name = sealed_text::open(&engine.cipher, sealed_text::PARTNER_NAME, &p.id, &p.name_sealed)
        .map_err(|_| StorageError(format!("the name of partner {} does not open", p.id)))?;
    Ok(PartnerView {
        id: p.id,
        name,
        created_at: calendar::format_eastern_timestamp(p.created_at),
        limits: p.limits,
        suspended,
    })
}
