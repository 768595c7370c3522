//! The writer the SIGKILL test kills (`sim-writer`, `sim/tests/sigkill.rs`): a
//! file engine on a manual clock (nothing originates), opened exactly as
//! `Engine::open` opens it in production otherwise.

use std::io::Write;
use std::path::Path;

use crate::driver::OPERATOR_KEY;
use crate::rng::Rng;
use crate::workload::app_body;
use ach_core::engine::{Caller, Engine, EngineOptions, Operation, Outcome};
use ach_core::limits::Limits;
use ach_core::Money;
use chrono::{TimeZone, Utc};
use serde_json::json;

/// The options of every open, the child's and the checking parent's.
pub fn options() -> EngineOptions {
    let start = Utc.with_ymd_and_hms(2026, 11, 23, 15, 0, 0).single().unwrap_or_default();
    EngineOptions::manual(start)
        .with_operator_key(OPERATOR_KEY)
        .sandbox()
        .with_risk_rules(ach_core::model::RiskRules::off())
}

/// Open the database file.
pub fn open(db: &str) -> Result<Engine, String> {
    Engine::open(Path::new(db), options()).map_err(|e| format!("open {db}: {e}"))
}

/// A partner and an approved merchant that takes any amount; prints
/// `partner ID` and `merchant ID`.
pub fn setup(db: &str) -> Result<(), String> {
    let (partner_id, merchant_id) = tenant(&open(db)?)?;
    println!("partner {partner_id}");
    println!("merchant {merchant_id}");
    Ok(())
}

/// A partner and an approved PPD merchant of `engine` that takes any amount
/// and any number: their ids.
pub fn tenant(engine: &Engine) -> Result<(String, String), String> {
    let (partner_id, _) =
        match engine.execute(&Caller::Operator, Operation::CreatePartner { name: "Writer".into() }) {
            Ok(Outcome::PartnerCreated { partner_id, api_key }) => (partner_id, api_key),
            other => return Err(format!("create partner: {other:?}")),
        };
    let app = crate::oracle::AppSpec {
        classes: vec!["PPD".into()],
        checks_per_year: 1_000_000,
        average: 10_000,
        highest: 9_999_999_999,
        lowest: None,
        decline_duplicates: false,
        no_website: false,
    };
    let caller = Caller::Partner { partner_id: partner_id.clone() };
    let body = serde_json::to_vec(&app_body(&app)).map_err(|e| e.to_string())?;
    let merchant_id =
        match engine.execute(&caller, Operation::SubmitMerchant { partner_id: partner_id.clone(), body }) {
            Ok(Outcome::MerchantSubmitted { merchant_id }) => merchant_id,
            other => return Err(format!("submit merchant: {other:?}")),
        };
    let big = Some(Money::from_cents(9_999_999_999));
    let limits = Limits {
        monthly_count: Some(1_000_000_000),
        monthly_amount: big,
        monthly_average_amount: big,
        ..Limits::default()
    };
    let op = Operation::ApproveMerchant { merchant_id: merchant_id.clone(), limits };
    if let Err(f) = engine.execute(&Caller::Operator, op) {
        return Err(format!("approve: {f:?}"));
    }
    Ok((partner_id, merchant_id))
}

/// `count` distinct PPD debits of `merchant_id` (amounts and accounts from
/// `rng`), as operations for one batch.
pub fn debits(partner_id: &str, merchant_id: &str, rng: &mut Rng, count: usize) -> Vec<(Caller, Operation)> {
    let caller = Caller::Partner { partner_id: partner_id.to_owned() };
    (0..count)
        .map(|_| {
            let cents = rng.range(100, 500_000);
            let body = json!({
                "merchant_id": merchant_id, "amount": format!("{}.{:02}", cents / 100, cents % 100),
                "description": "sigkill", "type": "debit", "standard_entry_class": "PPD",
                "customer": {"name": "Ada Lovelace", "routing_number": "021000021",
                             "account_number": format!("{}", 10_000_000 + rng.below(1_000_000)), "account_type": "checking"}
            });
            let op = Operation::CreateTransaction {
                partner_id: partner_id.to_owned(),
                body: serde_json::to_vec(&body).unwrap_or_default(),
            };
            (caller.clone(), op)
        })
        .collect()
}

/// Create transactions until killed, in batches of 1 to 4 (one commit each),
/// printing `ack ID` for each only after `execute_batch` returned (durable).
pub fn write(db: &str, partner_id: &str, merchant_id: &str, seed: u64) -> Result<(), String> {
    let engine = open(db)?;
    let mut rng = Rng::new(seed);
    let mut out = std::io::stdout().lock();
    loop {
        let n = 1 + rng.below(4);
        let batch = debits(partner_id, merchant_id, &mut rng, n);
        for answer in engine.execute_batch(batch) {
            match answer {
                Ok(Outcome::TransactionCreated { transaction_id }) => {
                    writeln!(out, "ack {transaction_id}").map_err(|e| e.to_string())?;
                }
                other => return Err(format!("create: {other:?}")),
            }
        }
        out.flush().map_err(|e| e.to_string())?;
    }
}
