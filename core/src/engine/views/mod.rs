//! The reads a partner or a merchant makes of its own data: one transaction,
//! one merchant, one customer, and pages of transactions and merchants; and
//! the operator's: pages of partners and of a partner's merchants, and the
//! volume per day. Each reads one snapshot of durable data; none shows a full
//! account number, a tax id, a key or an image.

pub(crate) mod customer;
pub(crate) mod history;
pub(crate) mod list;
pub(crate) mod merchant;
pub(crate) mod partner;
pub(crate) mod reader;
pub(crate) mod transaction;
pub(crate) mod volume;

use serde::de::DeserializeOwned;

use crate::echo::echo;
use crate::engine::rows::records::{CustomerRecord, MerchantRecord, TransactionRecord};
use crate::engine::tenancy::tenant_lookup::no_merchant;
use crate::engine::{Caller, Engine, Refusal};
use crate::model::{
    CustomerView, MerchantPage, MerchantView, PageRequest, PartnerPage, TransactionFilter, TransactionPage,
    TransactionView, Volume,
};
use crate::storage::{Snapshot, StorageError, Table};
use reader::Reader;

impl Engine {
    /// `GET /transactions/{id}`: the caller's transaction `id` (`partner_id`:
    /// the one the request names). Another's answers as unknown.
    pub fn transaction(
        &self,
        caller: &Caller,
        partner_id: Option<&str>,
        id: &str,
    ) -> Result<TransactionView, Refusal> {
        let reader = Reader::of(caller, partner_id)?;
        self.read_one(
            Table::Transactions,
            id,
            |t: &TransactionRecord| reader.sees(&t.partner_id, &t.merchant_id),
            || Refusal::not_found("transaction_id", format!("no transaction '{}'", echo(id))),
            transaction::view,
        )
    }

    /// `GET /transactions`: a page of the caller's transactions, newest first.
    pub fn transactions(
        &self,
        caller: &Caller,
        partner_id: Option<&str>,
        filter: &TransactionFilter,
    ) -> Result<TransactionPage, Refusal> {
        list::transactions(self, Reader::of(caller, partner_id)?, filter)
    }

    /// `GET /merchants/{id}`: the caller's merchant (a merchant's key: itself).
    pub fn merchant(
        &self,
        caller: &Caller,
        partner_id: Option<&str>,
        id: &str,
    ) -> Result<MerchantView, Refusal> {
        let reader = Reader::of(caller, partner_id)?;
        self.read_one(
            Table::Merchants,
            id,
            |m: &MerchantRecord| reader.sees(&m.partner_id, &m.id),
            || no_merchant(id),
            merchant::view,
        )
    }

    /// `GET /merchants`: a page of the caller's merchants, newest first.
    pub fn merchants(
        &self,
        caller: &Caller,
        partner_id: Option<&str>,
        page: &PageRequest,
    ) -> Result<MerchantPage, Refusal> {
        list::merchants(self, Reader::of(caller, partner_id)?, page)
    }

    /// `GET /customers/{id}`: the caller's stored customer.
    pub fn customer(
        &self,
        caller: &Caller,
        partner_id: Option<&str>,
        id: &str,
    ) -> Result<CustomerView, Refusal> {
        let reader = Reader::of(caller, partner_id)?;
        let record = self.store.read_durable(|r| r.get::<CustomerRecord>(Table::Customers, id.as_bytes()))?;
        customer::view(self, reader, record, id)
    }

    /// `GET /admin/partners`: a page of every partner, in id order (the
    /// operator's read).
    pub fn partners(&self, page: &PageRequest) -> Result<PartnerPage, Refusal> {
        list::partners(self, page)
    }

    /// `GET /admin/partners/{id}/merchants`: a page of the partner's
    /// merchants, newest first, as the partner's own list answers it (the
    /// operator's read; 404: no such partner).
    pub fn partner_merchants(&self, partner_id: &str, page: &PageRequest) -> Result<MerchantPage, Refusal> {
        // A partner is never removed: one known here is still there when its
        // page is read, on a snapshot of its own.
        let known = self.store.read_durable(|r| r.get_raw(Table::Partners, partner_id.as_bytes()))?.is_some();
        if !known {
            return Err(Refusal::not_found("partner_id", format!("no partner '{}'", echo(partner_id))));
        }
        list::merchants(self, Reader::Partner(partner_id), page)
    }

    /// `GET /admin/volume`: what the cut-offs of each Eastern day from `from`
    /// to `to` sent to the bank (the operator's read; the caller holds the
    /// period to [`crate::model::MAX_VOLUME_DAYS`]).
    pub fn volume(&self, from: chrono::NaiveDate, to: chrono::NaiveDate) -> Result<Volume, Refusal> {
        volume::volume(self, from, to)
    }

    /// Row `id` of `table` made into its view on one durable snapshot, when
    /// the caller `sees` it; else the refusal `unknown` (another's row answers
    /// as one that does not exist).
    fn read_one<R: DeserializeOwned, V>(
        &self,
        table: Table,
        id: &str,
        sees: impl FnOnce(&R) -> bool,
        unknown: impl FnOnce() -> Refusal,
        view: impl FnOnce(&Engine, &Snapshot, R) -> Result<V, StorageError>,
    ) -> Result<V, Refusal> {
        self.store
            .read_durable(|r| match r.get::<R>(table, id.as_bytes())? {
                Some(row) if sees(&row) => view(self, r, row).map(Ok),
                _ => Ok(Err(unknown())),
            })
            .map_err(Refusal::from)?
    }
}
