//! A sandbox world for engine tests: an engine on a manual clock, an operator,
//! and short-hands for partners, merchants, customers and transactions.

use ach_core::calendar;
use ach_core::engine::{Caller, Engine, EngineOptions, Operation, Outcome, Refusal};
use ach_core::limits::Limits;
use ach_core::model::{Event, StatusChange};
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

/// [`transaction`] as a partner sends it: with its `partner_id`.
pub fn partner_transaction(partner_id: &str, merchant_id: &str, kind: &str, amount: &str) -> Value {
    let mut v = transaction(merchant_id, kind, amount);
    v["partner_id"] = json!(partner_id);
    v
}

/// An outside account validation, as a WEB debit carries it when its account
/// was not validated before (Nacha Rules 2.5.17.4).
pub fn outside_validation() -> Value {
    json!({"method": "outside", "provider": "Test Verifier", "reference": "test-1"})
}

/// Turn every screening rule off on `engine`: for tests of volume, not of
/// fraud monitoring (a test of many entries to one account trips `velocity`).
pub fn screening_off(engine: &Engine) {
    let update = ach_core::model::RiskRules::off().into();
    engine.execute(&Caller::Operator, Operation::SetRiskRules { update }).unwrap_or_else(|e| panic!("{e:?}"));
}

/// `PUT /admin/risk-rules` body that turns every rule off.
pub fn screening_off_body() -> Value {
    serde_json::to_value(ach_core::model::RiskRules::off()).unwrap_or_default()
}

/// The body bytes of a JSON value.
pub fn body(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

impl World {
    /// A world in memory starting at `start` (Eastern, `YYYY-MM-DD HH:MM`).
    pub fn new(start: &str) -> World {
        World { engine: crate::store::engine(options(start)).unwrap_or_else(|e| panic!("{e}")) }
    }

    /// A world over an existing engine.
    pub fn with(engine: Engine) -> World {
        World { engine }
    }

    /// Run an operation as `caller`.
    pub fn run(&self, caller: &Caller, op: Operation) -> Result<Outcome, Refusal> {
        self.engine.execute(caller, op)
    }

    /// Turn every screening rule off ([`screening_off`]).
    pub fn screening_off(&self) {
        screening_off(&self.engine);
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
        let (merchant_id, _, caller) = self.roomy_merchant(partner_id, partner, classes);
        (merchant_id, caller)
    }

    /// A new partner and a new approved merchant of it for `classes`: the
    /// partner's id and caller, and the merchant's id.
    pub fn tenant(&self, classes: &[&str]) -> (String, Caller, String) {
        let (partner_id, partner) = self.partner();
        let (merchant_id, _) = self.merchant(&partner_id, &partner, classes);
        (partner_id, partner, merchant_id)
    }

    /// A new merchant from this application, approved with these limits: its id
    /// and caller.
    pub fn merchant_with(
        &self,
        partner_id: &str,
        partner: &Caller,
        app: &Value,
        limits: Limits,
    ) -> (String, Caller) {
        let merchant_id = self.submit(partner_id, partner, app);
        let (_, caller) = self.approve(&merchant_id, limits);
        (merchant_id, caller)
    }

    /// Create a transaction; its id or the failure.
    pub fn create(&self, partner_id: &str, partner: &Caller, v: &Value) -> Result<String, Refusal> {
        let answer =
            self.run(partner, Operation::CreateTransaction { partner_id: partner_id.into(), body: body(v) });
        match answer.map_err(|r| r.first().clone())?.first() {
            Outcome::TransactionCreated { transaction_id } => Ok(transaction_id.clone()),
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

/// Limits loose enough that no merchant limit refuses a test's volume (fields not
/// named here, including any added later, stay unlimited).
pub fn roomy_limits() -> Limits {
    let big = ach_core::Money::from_cents(9_999_999_999);
    Limits {
        max_transaction_amount: Some(big),
        min_transaction_amount: Some(ach_core::Money::from_cents(1)),
        daily_count: Some(1_000_000_000),
        daily_amount: Some(big),
        period_count: Some(1_000_000_000),
        period_amount: Some(big),
        monthly_count: Some(1_000_000_000),
        monthly_amount: Some(big),
        monthly_average_amount: Some(big),
        ..Limits::default()
    }
}

/// [`application`] that does not decline similar transactions.
pub fn open_application(classes: &[&str]) -> Value {
    let mut v = application(classes);
    v["velocities"]["decline_duplicates"] = json!(false);
    v
}

/// An amount text (`12.34`) for a number of cents.
pub fn amount(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A customer body (`merchant_id` is a merchant id or `global`).
pub fn customer_body(scope: &str, account_number: &str) -> Value {
    json!({"merchant_id": scope, "name": "Grace Hopper", "routing_number": "026009593",
           "account_number": account_number, "account_type": "savings"})
}

/// The feed position a pointer stands for: its first 8 bytes (URL-safe base64,
/// big-endian), per the documented pointer layout. `None` if it is not base64.
pub fn pointer_position(pointer: &str) -> Option<u64> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits: u128 = 0;
    for c in pointer.bytes().take(11) {
        bits = (bits << 6) | ALPHABET.iter().position(|&a| a == c)? as u128;
    }
    // 11 characters are 66 bits: the first 64 are the sequence number.
    Some((bits >> 2) as u64)
}

impl World {
    /// A new partner: its id, API key and caller.
    pub fn partner_with_key(&self) -> (String, String, Caller) {
        match self.run(&Caller::Operator, Operation::CreatePartner { name: "Test Partner".into() }) {
            Ok(Outcome::PartnerCreated { partner_id, api_key }) => {
                let caller = self.engine.authenticate(&api_key).unwrap_or_else(|e| panic!("{e:?}"));
                (partner_id, api_key, caller)
            }
            other => panic!("{other:?}"),
        }
    }

    /// Submit an application; the merchant's id (in underwriting).
    pub fn submit(&self, partner_id: &str, partner: &Caller, application: &Value) -> String {
        let op = Operation::SubmitMerchant { partner_id: partner_id.into(), body: body(application) };
        match self.run(partner, op) {
            Ok(Outcome::MerchantSubmitted { merchant_id }) => merchant_id,
            other => panic!("{other:?}"),
        }
    }

    /// Approve a merchant with these limits: its API key and caller.
    pub fn approve(&self, merchant_id: &str, limits: Limits) -> (String, Caller) {
        let op = Operation::ApproveMerchant { merchant_id: merchant_id.into(), limits };
        match self.run(&Caller::Operator, op) {
            Ok(Outcome::MerchantApproved { api_key, .. }) => {
                let caller = self.engine.authenticate(&api_key).unwrap_or_else(|e| panic!("{e:?}"));
                (api_key, caller)
            }
            other => panic!("{other:?}"),
        }
    }

    /// A new approved merchant that declines no duplicates and has [`roomy_limits`]:
    /// its id, API key and caller.
    pub fn roomy_merchant(
        &self,
        partner_id: &str,
        partner: &Caller,
        classes: &[&str],
    ) -> (String, String, Caller) {
        let merchant_id = self.submit(partner_id, partner, &open_application(classes));
        let (key, caller) = self.approve(&merchant_id, roomy_limits());
        (merchant_id, key, caller)
    }

    /// Store a customer; its token.
    pub fn customer(&self, partner_id: &str, partner: &Caller, scope: &str, account_number: &str) -> String {
        let op = Operation::CreateCustomer {
            partner_id: partner_id.into(),
            body: body(&customer_body(scope, account_number)),
        };
        match self.run(partner, op) {
            Ok(Outcome::CustomerCreated { customer_id }) => customer_id,
            other => panic!("{other:?}"),
        }
    }

    /// Void as the partner.
    pub fn void(&self, partner_id: &str, partner: &Caller, id: &str) -> Result<Outcome, Refusal> {
        self.run(
            partner,
            Operation::VoidTransaction { partner_id: partner_id.into(), transaction_id: id.into() },
        )
    }

    /// Reverse as the partner.
    pub fn reverse(&self, partner_id: &str, partner: &Caller, id: &str) -> Result<Outcome, Refusal> {
        let op = Operation::ReverseTransaction { partner_id: partner_id.into(), transaction_id: id.into() };
        self.run(partner, op)
    }

    /// Record a return as the operator (return date: today).
    pub fn return_(&self, id: &str, code: &str) -> Result<Outcome, Refusal> {
        let op = Operation::RecordReturn {
            transaction_id: id.into(),
            return_code: code.into(),
            return_date: None,
        };
        self.run(&Caller::Operator, op)
    }

    /// Move the sandbox clock to `now`, running everything due.
    pub fn set_clock(&self, now: DateTime<Utc>) {
        self.run(&Caller::Operator, Operation::SetClock { now }).unwrap_or_else(|e| panic!("{e:?}"));
    }

    /// Every event of a merchant (by its caller), following pointers to the end.
    pub fn events(&self, merchant: &Caller) -> Vec<Event> {
        let mut page = self.engine.events(merchant, None).unwrap_or_else(|e| panic!("{e:?}"));
        let mut all = Vec::new();
        loop {
            all.append(&mut page.events);
            if !page.exists_more_events {
                return all;
            }
            page = self.engine.events(merchant, Some(&page.new_pointer)).unwrap_or_else(|e| panic!("{e:?}"));
        }
    }
}

/// A FedACH file of one record (routing 011000015), in the fixed-width layout.
pub fn one_record_directory() -> String {
    let mut s = format!(
        "011000015O0110000150122415{:<9}{:<36}{:<36}{:<20}GA303094470877372245711",
        "000000000", "FEDERAL RESERVE BANK", "1 MAIN ST", "ATLANTA"
    );
    while s.len() < ach_core::routing::RECORD_LEN {
        s.push(' ');
    }
    s.push_str("\r\n");
    s
}
