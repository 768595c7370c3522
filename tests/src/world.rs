//! A sandbox world for engine tests: an engine on a manual clock, an operator,
//! and short-hands for partners, merchants, customers and transactions.

use ach_core::calendar;
use ach_core::engine::{Caller, Engine, EngineOptions, Failure, Operation, Outcome};
use ach_core::limits::Limits;
use ach_core::model::StatusChange;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

/// The operator key of every test world.
pub const OPERATOR_KEY: &str = "ok_test_operator_key_0123456789abcdef";

/// An engine on a manual clock with helpers.
pub struct World {
    /// The engine under test.
    pub engine: Engine,
}

/// An instant from `YYYY-MM-DD HH:MM` Eastern time.
pub fn et(text: &str) -> DateTime<Utc> {
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M")
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let local = naive.and_local_timezone(chrono_tz::America::New_York).earliest();
    local.unwrap_or_else(|| panic!("{text} does not exist in Eastern time")).with_timezone(&Utc)
}

/// Sandbox options on a manual clock starting at `start` (Eastern).
pub fn options(start: &str) -> EngineOptions {
    EngineOptions::manual(et(start)).with_operator_key(OPERATOR_KEY).sandbox()
}

/// A complete merchant application for these classes.
pub fn application(classes: &[&str]) -> Value {
    let text = std::fs::read_to_string(crate::repo_root().join("examples/requests/merchant.json"))
        .unwrap_or_default();
    let mut v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    v["standard_entry_classes"] = json!(classes);
    v
}

/// A PPD transaction body with an inline customer.
pub fn transaction(merchant_id: &str, kind: &str, amount: &str) -> Value {
    json!({
        "merchant_id": merchant_id, "amount": amount, "description": "test", "type": kind,
        "standard_entry_class": "PPD",
        "customer": {"name": "Ada Lovelace", "routing_number": "021000021", "account_number": "987654321", "account_type": "checking"}
    })
}

/// The body bytes of a JSON value.
pub fn body(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

impl World {
    /// A world in memory starting at `start` (Eastern, `YYYY-MM-DD HH:MM`).
    pub fn new(start: &str) -> World {
        World { engine: Engine::in_memory(options(start)).unwrap_or_else(|e| panic!("{e}")) }
    }

    /// A world over an existing engine.
    pub fn with(engine: Engine) -> World {
        World { engine }
    }

    /// Run an operation as `caller`.
    pub fn run(&self, caller: &Caller, op: Operation) -> Result<Outcome, Failure> {
        self.engine.execute(caller, op)
    }

    /// Move the sandbox clock to `when` (Eastern), running everything due.
    pub fn at(&self, when: &str) {
        self.run(&Caller::Operator, Operation::SetClock { now: et(when) })
            .unwrap_or_else(|e| panic!("{e:?}"));
    }

    /// A new partner: its id and caller.
    pub fn partner(&self) -> (String, Caller) {
        match self.run(&Caller::Operator, Operation::CreatePartner { name: "Test Partner".into() }) {
            Ok(Outcome::PartnerCreated { partner_id, api_key }) => {
                let caller = self.engine.authenticate(&api_key).unwrap_or_else(|e| panic!("{e:?}"));
                (partner_id, caller)
            }
            other => panic!("{other:?}"),
        }
    }

    /// A new approved merchant of `partner` for `classes`: its id and caller.
    pub fn merchant(&self, partner_id: &str, partner: &Caller, classes: &[&str]) -> (String, Caller) {
        let op =
            Operation::SubmitMerchant { partner_id: partner_id.into(), body: body(&application(classes)) };
        let Ok(Outcome::MerchantSubmitted { merchant_id }) = self.run(partner, op) else {
            panic!("submit failed")
        };
        let op = Operation::ApproveMerchant { merchant_id: merchant_id.clone(), limits: Limits::default() };
        match self.run(&Caller::Operator, op) {
            Ok(Outcome::MerchantApproved { api_key, .. }) => {
                (merchant_id, self.engine.authenticate(&api_key).unwrap_or_else(|e| panic!("{e:?}")))
            }
            other => panic!("{other:?}"),
        }
    }

    /// Create a transaction; its id or the failure.
    pub fn create(&self, partner_id: &str, partner: &Caller, v: &Value) -> Result<String, Failure> {
        match self
            .run(partner, Operation::CreateTransaction { partner_id: partner_id.into(), body: body(v) })?
        {
            Outcome::TransactionCreated { transaction_id } => Ok(transaction_id),
            other => panic!("{other:?}"),
        }
    }

    /// Create a debit of `amount` (dollars text) and return its id.
    pub fn debit(&self, partner_id: &str, partner: &Caller, merchant_id: &str, amount: &str) -> String {
        self.create(partner_id, partner, &transaction(merchant_id, "debit", amount))
            .unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// Every status change of the partner, following pointers from `0` to the end.
    pub fn changes(&self, partner_id: &str, partner: &Caller) -> Vec<StatusChange> {
        let mut pointer = "0".to_owned();
        let mut all = Vec::new();
        loop {
            let page =
                self.engine.status_changes(partner, partner_id, &pointer).unwrap_or_else(|e| panic!("{e:?}"));
            if page.changes.is_empty() {
                return all;
            }
            all.extend(page.changes);
            pointer = page.new_pointer;
        }
    }

    /// The changes of one transaction: `(status, timestamp)`.
    pub fn history(&self, partner_id: &str, partner: &Caller, id: &str) -> Vec<StatusChange> {
        self.changes(partner_id, partner).into_iter().filter(|c| c.transaction_id == id).collect()
    }

    /// Today's date in Eastern time by the engine's clock.
    pub fn today(&self) -> chrono::NaiveDate {
        calendar::eastern_date(self.engine.now())
    }
}
