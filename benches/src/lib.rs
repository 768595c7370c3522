//! Shared fixtures for the criterion benches in `benches/`.

/// A typical transaction request body: a PPD debit with an inline customer.
pub const TYPICAL_TRANSACTION: &str = r#"{"partner_id":"par_0123456789abcdefghijKL","merchant_id":"mer_0123456789abcdefghijKL","amount":"125.50","description":"Invoice 42","type":"debit","standard_entry_class":"PPD","customer":{"name":"Ada Lovelace","routing_number":"021000021","account_number":"123456789","account_type":"checking"}}"#;

pub mod cpu;
pub mod paired;

use std::path::Path;

use ach_core::engine::{Caller, Engine, EngineOptions, Operation, Outcome};
use ach_core::limits::Limits;
use chrono::{DateTime, Utc};

/// The operator key of every bench engine.
pub const OPERATOR_KEY: &str = "ok_bench_operator_key_0123456789abcdef";

/// Where every bench engine's clock stands: Monday 2026-11-23 10:00 ET (15:00 UTC),
/// a banking day before its cut-off, and the clock never moves, so no cut-off or
/// settlement runs while a bench measures.
pub fn start() -> DateTime<Utc> {
    DateTime::from_timestamp(1_795_446_000, 0).unwrap_or_default()
}

/// Sandbox options (manual clock at [`start`], operator key [`OPERATOR_KEY`]).
pub fn sandbox_options() -> EngineOptions {
    EngineOptions::manual(start()).with_operator_key(OPERATOR_KEY).sandbox()
}

/// The example merchant application (`examples/requests/merchant.json`), PPD and
/// WEB, without duplicate declining (the benches create many alike transactions).
pub fn merchant_application() -> Vec<u8> {
    let mut v: serde_json::Value =
        serde_json::from_str(include_str!("../../examples/requests/merchant.json")).unwrap_or_default();
    v["velocities"]["decline_duplicates"] = serde_json::Value::Bool(false);
    serde_json::to_vec(&v).unwrap_or_default()
}

/// Limits far above anything a bench creates, so that no limit refuses a create:
/// counts of a trillion, and amounts at the largest a stored limit holds
/// ($99,999,999.99, [`ach_core::money::NACHA_MAX`]; the bench amounts are $1 to
/// $10, so a million of them stay below it).
pub fn generous_limits() -> Limits {
    let lots = ach_core::money::NACHA_MAX;
    Limits {
        max_transaction_amount: Some(lots),
        daily_count: Some(1_000_000_000_000),
        daily_amount: Some(lots),
        period_count: Some(1_000_000_000_000),
        period_amount: Some(lots),
        monthly_count: Some(1_000_000_000_000),
        monthly_amount: Some(lots),
        monthly_average_amount: Some(lots),
        ..Limits::default()
    }
}

/// The body of a typical transaction (PPD debit, inline customer, ~330 bytes) of
/// `merchant_id` of `partner_id`; `n` varies the description and the amount ($1.00
/// to $9.99). What [`Sandbox::transaction_body`] and the HTTPS load client send.
pub fn transaction_body(partner_id: &str, merchant_id: &str, n: u64) -> Vec<u8> {
    transaction_body_from(partner_id, merchant_id, n, "123456789")
}

/// [`transaction_body`] from the customer's account `account_number` (the limits
/// bench gives every create its own account, so that none is a duplicate).
pub fn transaction_body_from(partner_id: &str, merchant_id: &str, n: u64, account_number: &str) -> Vec<u8> {
    format!(
        r#"{{"partner_id":"{partner_id}","merchant_id":"{merchant_id}","amount":"{}.{:02}","description":"Invoice {n}","type":"debit","standard_entry_class":"PPD","customer":{{"name":"Ada Lovelace","routing_number":"021000021","account_number":"{account_number}","account_type":"checking"}}}}"#,
        1 + n % 9,
        n % 100,
    )
    .into_bytes()
}

/// A sandbox engine with one partner and one approved merchant (as the operator and
/// the partner would set them up through the API), ready to create transactions.
pub struct Sandbox {
    /// The engine.
    pub engine: Engine,
    /// The partner.
    pub partner_id: String,
    /// The partner, authenticated by its key.
    pub partner: Caller,
    /// The partner's approved merchant (PPD, WEB).
    pub merchant_id: String,
}

impl Sandbox {
    /// A sandbox on a database file (durable: redb's default `Durability::Immediate`).
    pub fn file(path: &Path) -> Sandbox {
        Sandbox::over(Engine::open(path, sandbox_options()).unwrap_or_else(|e| panic!("open: {e}")))
    }

    /// A sandbox in memory.
    pub fn in_memory() -> Sandbox {
        Sandbox::over(Engine::in_memory(sandbox_options()).unwrap_or_else(|e| panic!("open: {e}")))
    }

    /// Set up a partner and an approved merchant on `engine`.
    pub fn over(engine: Engine) -> Sandbox {
        let operator = Caller::Operator;
        let (partner_id, partner) =
            match engine.execute(&operator, Operation::CreatePartner { name: "Bench Partner".into() }) {
                Ok(Outcome::PartnerCreated { partner_id, api_key }) => {
                    let caller = engine.authenticate(&api_key).unwrap_or_else(|e| panic!("{e:?}"));
                    (partner_id, caller)
                }
                other => panic!("create partner: {other:?}"),
            };
        let op = Operation::SubmitMerchant { partner_id: partner_id.clone(), body: merchant_application() };
        let merchant_id = match engine.execute(&partner, op) {
            Ok(Outcome::MerchantSubmitted { merchant_id }) => merchant_id,
            other => panic!("submit merchant: {other:?}"),
        };
        let op = Operation::ApproveMerchant { merchant_id: merchant_id.clone(), limits: generous_limits() };
        match engine.execute(&operator, op) {
            Ok(Outcome::MerchantApproved { .. }) => {}
            other => panic!("approve merchant: {other:?}"),
        }
        Sandbox { engine, partner_id, partner, merchant_id }
    }

    /// Turn every screening rule off: the bench's creates all go to one
    /// account, which `velocity` would hold for review after the tenth.
    pub fn screening_off(&self) {
        let update = ach_core::model::RiskRules::off().into();
        if let Err(e) = self.engine.execute(&Caller::Operator, Operation::SetRiskRules { update }) {
            panic!("risk rules: {e:?}");
        }
    }

    /// The body of a typical transaction (PPD debit, inline customer) of this
    /// partner's merchant; `n` varies the description and the amount ($1.00 to
    /// $9.99).
    pub fn transaction_body(&self, n: u64) -> Vec<u8> {
        transaction_body(&self.partner_id, &self.merchant_id, n)
    }

    /// `CreateTransaction` of [`Sandbox::transaction_body`] `n`.
    pub fn create_op(&self, n: u64) -> Operation {
        Operation::CreateTransaction { partner_id: self.partner_id.clone(), body: self.transaction_body(n) }
    }

    /// `count` create operations as the partner, numbered from `first`.
    pub fn create_batch(&self, first: u64, count: usize) -> Vec<(Caller, Operation)> {
        (first..first + count as u64).map(|n| (self.partner.clone(), self.create_op(n))).collect()
    }

    /// Create `count` transactions (one status change each) in batches of
    /// `batch`, panicking if any is refused.
    pub fn create_many(&self, first: u64, count: usize, batch: usize) {
        let mut done = 0;
        while done < count {
            let n = batch.min(count - done);
            let answers = self.engine.execute_batch(self.create_batch(first + done as u64, n));
            if let Some(refused) = answers.iter().find(|a| a.is_err()) {
                panic!("a create was refused: {refused:?}");
            }
            done += n;
        }
    }

    /// The pointer after the partner's last status change (walking the feed from
    /// `"0"`), and how many changes were walked.
    pub fn pointer_at_end(&self) -> (String, usize) {
        let mut pointer = "0".to_owned();
        let mut seen = 0;
        loop {
            let page = self
                .engine
                .status_changes(&self.partner, &self.partner_id, &pointer)
                .unwrap_or_else(|e| panic!("status changes: {e:?}"));
            if page.changes.is_empty() {
                return (pointer, seen);
            }
            seen += page.changes.len();
            pointer = page.new_pointer;
        }
    }
}
