//! The limits bench's set-up (`benches/benches/limits.rs`), shared with the
//! `limits_loop` example that profiles it: a partner with every overall limit and
//! its approved merchant with every merchant limit (none binding) and duplicate
//! declining on, creating PPD debits each from its own account.
// A bench set-up that cannot be built has nothing to measure: it panics.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, Engine, Operation, Outcome};
use ach_core::limits::Limits;
use ach_core::money::Money;

use ach_benches::{generous_limits, sandbox_options, transaction_body_from};

/// Creates per measured `execute_batch`.
pub const BATCH: usize = 1_000;

/// Creates per `execute_batch` while building a history.
const HISTORY_BATCH: usize = 10_000;

/// Creates per simulated day while building a history.
const PER_DAY: usize = 50_000;

/// Every limit set, none binding for the bench's creates ($1.00 to $9.99 each, at
/// most a few million of them).
pub fn every_limit() -> Limits {
    Limits {
        min_transaction_amount: Some(Money::from_cents(1)),
        max_credit_amount: Some(ach_core::money::NACHA_MAX),
        period_days: Some(30),
        ..generous_limits()
    }
}

/// A partner (its overall limits set) and its approved merchant (its limits set,
/// duplicate declining on) on an engine over a file in a fresh directory.
pub struct Fixture {
    /// The engine.
    pub engine: Engine,
    partner: Caller,
    partner_id: String,
    merchant_id: String,
    next: std::cell::Cell<u64>,
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    /// A fresh engine (in memory when `memory`), its risk screening off: with
    /// `checks`, every limit set (none binding) and duplicates declined; else
    /// the fewest checks a merchant has: no overall limits, the merchant's
    /// approval limits only (set out of reach), duplicates allowed.
    pub fn new(checks: bool, memory: bool) -> Fixture {
        let f = Fixture::screened(checks, memory);
        let update = ach_core::model::RiskRules::off().into();
        let off = f.engine.execute(&Caller::Operator, Operation::SetRiskRules { update });
        assert!(matches!(off, Ok(Outcome::RiskRulesSet { .. })), "{off:?}");
        f
    }

    /// [`Fixture::new`] with every risk rule on (the default).
    pub fn screened(checks: bool, memory: bool) -> Fixture {
        let (engine, dir) = if memory {
            (Engine::in_memory(sandbox_options()).unwrap(), None)
        } else {
            let dir = tempfile::tempdir().unwrap();
            (Engine::open(&dir.path().join("engine.redb"), sandbox_options()).unwrap(), Some(dir))
        };
        let operator = Caller::Operator;
        let Ok(Outcome::PartnerCreated { partner_id, api_key }) =
            engine.execute(&operator, Operation::CreatePartner { name: "Limits Bench".into() })
        else {
            panic!("create partner")
        };
        let partner = engine.authenticate(&api_key).unwrap();
        let overall = if checks { every_limit() } else { Limits::default() };
        let set = Operation::SetPartnerLimits { partner_id: partner_id.clone(), limits: overall };
        assert!(matches!(engine.execute(&operator, set), Ok(Outcome::LimitsSet { .. })));
        let mut application: serde_json::Value =
            serde_json::from_str(include_str!("../../../examples/requests/merchant.json")).unwrap();
        application["partner_id"] = partner_id.clone().into();
        application["velocities"]["decline_duplicates"] = checks.into();
        let submit = Operation::SubmitMerchant {
            partner_id: partner_id.clone(),
            body: serde_json::to_vec(&application).unwrap(),
        };
        let Ok(Outcome::MerchantSubmitted { merchant_id }) = engine.execute(&partner, submit) else {
            panic!("submit merchant")
        };
        let limits = if checks { every_limit() } else { generous_limits() };
        let approve = Operation::ApproveMerchant { merchant_id: merchant_id.clone(), limits };
        assert!(matches!(engine.execute(&operator, approve), Ok(Outcome::MerchantApproved { .. })));
        Fixture { engine, partner, partner_id, merchant_id, next: std::cell::Cell::new(0), _dir: dir }
    }

    /// The next `count` creates: PPD debits of $1.00 to $9.99 with an inline
    /// customer, each from its own account (so that none is a duplicate).
    pub fn creates(&self, count: usize) -> Vec<(Caller, Operation)> {
        let first = self.next.get();
        self.next.set(first + count as u64);
        (first..first + count as u64)
            .map(|n| {
                let account = (100_000_000 + n).to_string();
                let body = transaction_body_from(&self.partner_id, &self.merchant_id, n, &account);
                let op = Operation::CreateTransaction { partner_id: self.partner_id.clone(), body };
                (self.partner.clone(), op)
            })
            .collect()
    }

    /// Apply `ops` in one `execute_batch`, panicking if any is refused.
    pub fn run(&self, ops: Vec<(Caller, Operation)>) -> usize {
        let answers = self.engine.execute_batch(ops);
        if let Some(refused) = answers.iter().find(|a| a.is_err()) {
            panic!("a create was refused: {refused:?}");
        }
        answers.len()
    }

    /// One measured batch: [`BATCH`] fresh creates.
    pub fn batch(&self) -> usize {
        let ops = self.creates(BATCH);
        self.run(ops)
    }

    /// A fixture (checks on) whose merchant already has `prior` transactions,
    /// made `PER_DAY` (50,000) a day on consecutive days (each day's cut-off and, later,
    /// settlement run as the clock passes them), then a day later: the measured
    /// creates happen on a day of their own, as they would for a merchant with a
    /// long history.
    pub fn with_history(prior: usize, memory: bool) -> Fixture {
        let f = Fixture::screened(true, memory);
        let mut done = 0;
        while done < prior {
            let mut today = 0;
            while today < PER_DAY && done < prior {
                let n = HISTORY_BATCH.min(prior - done).min(PER_DAY - today);
                let ops = f.creates(n);
                f.run(ops);
                done += n;
                today += n;
            }
            f.next_day();
        }
        f
    }

    /// Turn every risk rule on (the defaults) or off.
    pub fn screening(&self, on: bool) {
        let rules =
            if on { ach_core::model::RiskRules::default() } else { ach_core::model::RiskRules::off() };
        let set = Operation::SetRiskRules { update: rules.into() };
        let done = self.engine.execute(&Caller::Operator, set);
        assert!(matches!(done, Ok(Outcome::RiskRulesSet { .. })), "{done:?}");
    }

    /// Move the sandbox clock a day ahead (running every cut-off and settlement due).
    pub fn next_day(&self) {
        let now = self.engine.now() + chrono::Duration::days(1);
        let clock = self.engine.execute(&Caller::Operator, Operation::SetClock { now });
        assert!(matches!(clock, Ok(Outcome::ClockSet { .. })), "{clock:?}");
    }
}
