//! A transaction as a read shows it: its record with the description and
//! the holder's name opened, the account number cut to its last four digits,
//! and its history.

use crate::calendar;
use crate::engine::feeds::changes::date;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::tenancy::sealed_text;
use crate::engine::views::history;
use crate::engine::Engine;
use crate::lifecycle::State;
use crate::model::{CustomerPart, Links, ReturnPart, TransactionView};
use crate::storage::{Snapshot, StorageError};

/// The view of `t`, read on `r`.
pub(crate) fn view(
    engine: &Engine,
    r: &Snapshot,
    t: TransactionRecord,
) -> Result<TransactionView, StorageError> {
    let unreadable = |what: &str| StorageError(format!("the {what} of transaction {} does not open", t.id));
    let description =
        sealed_text::open(&engine.cipher, sealed_text::DESCRIPTION, &t.id, &t.description_sealed)
            .map_err(|_| unreadable("description"))?;
    let (_, name) = engine.unseal_account(&t.account).map_err(|_| unreadable("account"))?;
    let history = history::of(r, &t)?;
    let returned = match (t.state, t.return_code) {
        (State::Returned, Some(code)) => {
            Some(ReturnPart { code, date: date(t.return_date), reason: t.return_reason })
        }
        _ => None,
    };
    Ok(TransactionView {
        status: t.state.feed_status(),
        customer: CustomerPart {
            id: t.customer_id,
            name,
            routing_number: t.account.routing_number,
            account_number_last4: t.account.account_last4,
            account_type: t.account.account_type,
        },
        check_number: t.check_number,
        created_at: calendar::format_eastern_timestamp(t.created_at),
        origination_date: date(t.origination_date),
        effective_date: date(t.effective_date),
        settlement_date: date(t.settlement_date),
        same_day: calendar::is_same_day_cutoff(t.cutoff_at),
        returned,
        links: Links {
            reversal_of: t.reversal_of,
            reversed_by: t.reversed_by,
            reinitiation_of: t.reinitiation_of,
            reinitiated_by: t.reinitiated_by,
            validation_of: t.validation_of,
            validated_by: t.validated_by,
        },
        history,
        id: t.id,
        merchant_id: t.merchant_id,
        amount: t.amount,
        kind: t.direction,
        standard_entry_class: t.class,
        description,
    })
}
