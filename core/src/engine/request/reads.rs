//! What the engine answers outside a write transaction, on a snapshot: the
//! originator, origination files, check images, both feeds, the usage audit.

use crate::engine::feeds::changes;
use crate::engine::lifecycle::images;
use crate::engine::risk::usage;
use crate::engine::settlement::originator;
use crate::engine::settlement::{cash_letters, origination};
use crate::engine::{
    Caller, CheckSide, Engine, EventsPage, ImageCashLetter, OriginationFile, Refusal, StatusPage,
};
use crate::storage::{row_keys, Table};

impl Engine {
    /// The originator files are written for (`None`: none set on a production
    /// engine; a sandbox has a default).
    pub fn originator(&self) -> Result<Option<crate::nacha::Originator>, Refusal> {
        Ok(self.store.read_durable(|r| originator::load(r, self.sandbox))?)
    }

    /// Every origination file written, oldest first.
    pub fn origination_files(&self) -> Result<Vec<OriginationFile>, Refusal> {
        Ok(self.store.read_durable(origination::list)?)
    }

    /// One origination file and its bytes (`None`: no such file).
    pub fn origination_file(&self, id: &str) -> Result<Option<(OriginationFile, Vec<u8>)>, Refusal> {
        Ok(self.store.read_durable(|r| origination::get(r, &self.cipher, id))?)
    }

    /// Every image cash letter written, oldest first.
    pub fn image_cash_letters(&self) -> Result<Vec<ImageCashLetter>, Refusal> {
        Ok(self.store.read_durable(cash_letters::list)?)
    }

    /// One image cash letter and its bytes (`None`: no such letter).
    pub fn image_cash_letter(&self, id: &str) -> Result<Option<(ImageCashLetter, Vec<u8>)>, Refusal> {
        Ok(self.store.read_durable(|r| cash_letters::get(r, &self.cipher, id))?)
    }

    /// A transaction's check image (BOC, POP, ICL) as submitted (base64), unsealed:
    /// for the host (for example to present an image cash letter); no API route
    /// answers images. `None`: no such transaction, no image, or its retention
    /// ended ([`crate::engine::RETENTION_MONTHS`] after settlement; a void deletes them at once).
    pub fn check_image(&self, transaction_id: &str, side: CheckSide) -> Result<Option<String>, Refusal> {
        let key = row_keys::image(transaction_id, side.as_str());
        let Some(stored) = self.store.read_durable(|r| r.get_raw(Table::Images, &key))? else {
            return Ok(None);
        };
        Ok(Some(images::open(&self.cipher, transaction_id, side, &stored)?))
    }

    /// The partner's status-changes feed after `pointer` (`"0"` for the first call).
    pub fn status_changes(
        &self,
        caller: &Caller,
        partner_id: &str,
        pointer: &str,
    ) -> Result<StatusPage, Refusal> {
        changes::status_page(self, caller, partner_id, pointer)
    }

    /// Recompute every usage counter from the stored transactions and compare it
    /// with the stored counters: `Err` describes the first differences. A full scan,
    /// for tests, the simulator and operators; never on a request path.
    pub fn audit_usage(&self) -> Result<Result<(), String>, Refusal> {
        Ok(self.store.read_durable(usage::audit)?)
    }

    /// The partner's account validation `id` of its customer `customer_id`,
    /// as it stands now (another partner's, or another customer's, answers as
    /// unknown).
    pub fn validation(
        &self,
        caller: &Caller,
        partner_id: &str,
        customer_id: &str,
        id: &str,
    ) -> Result<crate::model::ValidationView, Refusal> {
        crate::engine::credentials::authorize::acts_for(caller, partner_id)?;
        use crate::engine::verification::record::{self, ValidationRecord};
        let today = crate::calendar::eastern_date(self.now());
        let view = self.store.read_latest(|r| {
            let Some(v) = r.get::<ValidationRecord>(Table::Validations, &record::key(partner_id, id))? else {
                return Ok(None);
            };
            if v.customer_id.as_deref() != Some(customer_id) {
                return Ok(None);
            }
            record::view(&v, today, &mut |t| r.get(Table::Transactions, t.as_bytes())).map(Some)
        })?;
        view.ok_or_else(|| record::unknown(id))
    }

    /// The merchant's events feed after `pointer` (`None` for the first call).
    pub fn events(&self, caller: &Caller, pointer: Option<&str>) -> Result<EventsPage, Refusal> {
        changes::events_page(self, caller, pointer)
    }
}
