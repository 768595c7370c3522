//! A stored customer as a read shows it: the holder's name (opened), the
//! routing number, the account number's last four digits.

use crate::calendar;
use crate::echo::echo;
use crate::engine::rows::records::CustomerRecord;
use crate::engine::views::reader::Reader;
use crate::engine::{Engine, Refusal};
use crate::model::CustomerView;

/// The view of `c` for `reader`: refused as unknown unless the reader may
/// use it (a merchant's key: only the customers stored for its merchant),
/// and as gone once deleted (message 10, 404).
pub(crate) fn view(
    engine: &Engine,
    reader: Reader<'_>,
    c: Option<CustomerRecord>,
    id: &str,
) -> Result<CustomerView, Refusal> {
    let unknown = || Refusal::not_found("customer_id", format!("no customer '{}'", echo(id)));
    let Some(c) = c.filter(|c| reader.sees(&c.partner_id, &c.scope)) else { return Err(unknown()) };
    let (Some(account), None) = (c.account, c.deleted_at) else {
        let when = c.deleted_at.map(|t| calendar::eastern_date(t).to_string()).unwrap_or_default();
        return Err(Refusal::not_found("customer_id", format!("customer '{}' was deleted on {when}", c.id)));
    };
    let (_, name) =
        engine.unseal_account(&account).map_err(|_| Refusal::refused(crate::AchError::SystemUnable))?;
    Ok(CustomerView {
        id: c.id,
        merchant_id: c.scope,
        name,
        routing_number: account.routing_number,
        account_number_last4: account.account_last4,
        account_type: account.account_type,
        created_at: calendar::format_eastern_timestamp(c.created_at),
    })
}
