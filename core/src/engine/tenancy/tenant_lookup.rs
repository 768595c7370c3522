//! Partners and merchants read inside the write transaction (decoded once per
//! transaction), with the refusal an unknown one gets: what every operation on
//! a tenant's behalf looks up first.

use std::sync::Arc;

use crate::echo::echo;
use crate::engine::rows::records::{MerchantRecord, PartnerRecord};
use crate::engine::{Refusal, Stop, WriteContext};
use crate::storage::Table;
use crate::validation::ProblemCode;
use crate::AchError;

/// The partner `partner_id` (decoded once per write transaction).
pub(crate) fn load_partner(cx: &WriteContext<'_, '_>, partner_id: &str) -> Result<Arc<PartnerRecord>, Stop> {
    cx.write
        .get_decoded(Table::Partners, partner_id.as_bytes())?
        .ok_or_else(|| Refusal::not_found("partner_id", format!("no partner '{}'", echo(partner_id))).into())
}

/// Message 11 for a merchant id the caller may not use (unknown, or another
/// partner's: the two answers are identical).
fn unknown_merchant(merchant_id: &str) -> Stop {
    no_merchant(merchant_id).into()
}

/// The refusal of [`unknown_merchant`].
pub(crate) fn no_merchant(merchant_id: &str) -> Refusal {
    let e = AchError::InvalidMerchantId { value: echo(merchant_id) };
    Refusal::problem(e.clone(), "merchant_id", ProblemCode::NotFound, e.to_string())
}

/// The merchant `merchant_id` (decoded once per write transaction).
pub(crate) fn load_merchant(
    cx: &WriteContext<'_, '_>,
    merchant_id: &str,
) -> Result<Arc<MerchantRecord>, Stop> {
    cx.write
        .get_decoded(Table::Merchants, merchant_id.as_bytes())?
        .ok_or_else(|| unknown_merchant(merchant_id))
}

/// The partner's approved merchant `merchant_id`, as a transaction needs it.
/// Another partner's merchant answers exactly like an unknown one (message 11).
pub(crate) fn merchant_of(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    merchant_id: &str,
) -> Result<Arc<MerchantRecord>, Stop> {
    let m = load_merchant(cx, merchant_id)?;
    if m.partner_id != partner_id {
        return Err(unknown_merchant(merchant_id));
    }
    Ok(m)
}
