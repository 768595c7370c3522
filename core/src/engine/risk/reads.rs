//! The operator's reads of fraud monitoring: the rules, the open reviews,
//! the risk report, a merchant's exposure.

use chrono::NaiveDate;

use super::{exposure, reviews, rules};
use crate::echo::echo;
use crate::engine::rows::records::MerchantRecord;
use crate::engine::{Engine, Refusal};
use crate::model::{Exposure, Review, RiskReport, RiskRules};
use crate::storage::Table;

impl Engine {
    /// The screening rules in force.
    pub fn risk_rules(&self) -> Result<RiskRules, Refusal> {
        Ok(self.store.read_durable(|r| rules::read(r, &self.default_risk_rules))?)
    }

    /// The entries held for review, oldest first (at most
    /// [`reviews::REVIEWS_PAGE`]).
    pub fn reviews(&self) -> Result<Vec<Review>, Refusal> {
        Ok(self.store.read_durable(reviews::open)?)
    }

    /// How many entries wait for review (all of them; [`Engine::reviews`]
    /// lists a page).
    pub fn held_count(&self) -> Result<u64, Refusal> {
        Ok(self.store.read_durable(reviews::held_count)?)
    }

    /// Per rule, what screening did to the entries created from `from` to
    /// `to` (Eastern dates, both included).
    pub fn risk_report(&self, from: NaiveDate, to: NaiveDate) -> Result<RiskReport, Refusal> {
        Ok(self.store.read_durable(|r| reviews::report(r, from, to))?)
    }

    /// A merchant's exposure now and its parts (404: no such merchant).
    pub fn exposure(&self, merchant_id: &str) -> Result<Exposure, Refusal> {
        let now = self.now();
        let found = self.store.read_durable(|r| {
            let Some(m) = r.get::<MerchantRecord>(Table::Merchants, merchant_id.as_bytes())? else {
                return Ok(None);
            };
            exposure::read(r, merchant_id, m.limits.exposure_limit, now).map(Some)
        })?;
        found.ok_or_else(|| Refusal::not_found("merchant_id", format!("no merchant '{}'", echo(merchant_id))))
    }
}
