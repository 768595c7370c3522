//! Unit tests' set-up: a partner with one approved merchant.
#![allow(clippy::unwrap_used)]

use crate::engine::{Caller, Engine, Operation, Outcome};
use crate::limits::Limits;

/// The example merchant application, for `classes`, without duplicate declining.
pub(in crate::engine) fn application(classes: &[&str]) -> Vec<u8> {
    let mut app: serde_json::Value =
        serde_json::from_str(include_str!("../../../../examples/requests/merchant.json")).unwrap();
    app["standard_entry_classes"] = serde_json::json!(classes);
    app["velocities"]["decline_duplicates"] = serde_json::json!(false);
    serde_json::to_vec(&app).unwrap()
}

/// A new partner and an approved merchant of it for `classes` (no limits set):
/// the partner's id and caller, and the merchant's id.
pub(in crate::engine) fn tenant(engine: &Engine, classes: &[&str]) -> (String, Caller, String) {
    tenant_with(engine, application(classes), Limits::default())
}

/// A new partner and a merchant of it that applied with `body` (an
/// application's JSON), approved with `limits`: the partner's id and caller,
/// and the merchant's id.
pub(in crate::engine) fn tenant_with(
    engine: &Engine,
    body: Vec<u8>,
    limits: Limits,
) -> (String, Caller, String) {
    let run = |caller: &Caller, op| engine.execute(caller, op).unwrap();
    let Outcome::PartnerCreated { partner_id, api_key } =
        run(&Caller::Operator, Operation::CreatePartner { name: "P".into() })
    else {
        panic!("no partner")
    };
    let partner = engine.authenticate(&api_key).unwrap();
    let Outcome::MerchantSubmitted { merchant_id } =
        run(&partner, Operation::SubmitMerchant { partner_id: partner_id.clone(), body })
    else {
        panic!("no merchant")
    };
    run(&Caller::Operator, Operation::ApproveMerchant { merchant_id: merchant_id.clone(), limits });
    (partner_id, partner, merchant_id)
}

/// Create the transaction `body` as `partner`: its id.
pub(in crate::engine) fn create(
    engine: &Engine,
    partner: &Caller,
    partner_id: &str,
    body: &serde_json::Value,
) -> String {
    let op = Operation::CreateTransaction {
        partner_id: partner_id.to_owned(),
        body: serde_json::to_vec(body).unwrap(),
    };
    match engine.execute(partner, op).unwrap() {
        Outcome::TransactionCreated { transaction_id } => transaction_id,
        other => panic!("{other:?}"),
    }
}
