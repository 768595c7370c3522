//! On PostgreSQL (`ACH_TEST_POSTGRES`): every row of `ach_kv` is keyed by
//! the partner it belongs to (`storage/postgres/owner.rs`), checked against
//! the decoded records of two partners' merchants, customers, keys,
//! suspensions, idempotent creates, voids, a cut-off and a return.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use crate::engine::rows::records::TransactionRecord;
use crate::engine::{Caller, Engine, EngineOptions, KeyHolder, Operation, Outcome};
use crate::storage::Table;

fn at(text: &str) -> chrono::DateTime<chrono::Utc> {
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap();
    naive.and_local_timezone(chrono_tz::America::New_York).earliest().unwrap().with_timezone(&chrono::Utc)
}

fn engine() -> Option<Engine> {
    let url = std::env::var("ACH_TEST_POSTGRES").ok().filter(|u| !u.is_empty())?;
    let schema = format!("ach_p_{}", crate::ids::random_alphanumeric(16).to_lowercase());
    let join = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{join}options=-csearch_path%3D{schema}");
    let options = EngineOptions::manual(at("2026-11-23 10:00"));
    let key = crate::secrets::EncryptionKey::generate();
    Some(Engine::open_postgres(&url, options.with_encryption_key(key)).unwrap())
}

fn run(engine: &Engine, caller: &Caller, op: Operation) -> Outcome {
    engine.execute(caller, op).unwrap()
}

/// A partner's merchant (its keys rotated), a customer, three creates (one
/// idempotent, one with the token), a void, and the merchant suspended.
fn partner_activity(engine: &Engine) -> String {
    let (partner_id, partner, merchant_id) = crate::engine::tenancy::test_tenant::tenant(engine, &["PPD"]);
    let merchant = KeyHolder::Merchant { merchant_id: merchant_id.clone() };
    run(engine, &Caller::Operator, Operation::RotateKeys { holder: merchant.clone(), grace_seconds: 60 });
    let customer = serde_json::json!({"merchant_id": merchant_id, "name": "Ada", "routing_number": "021000021",
        "account_number": "123456789", "account_type": "checking"});
    let op = Operation::CreateCustomer {
        partner_id: partner_id.clone(),
        body: serde_json::to_vec(&customer).unwrap(),
    };
    let Outcome::CustomerCreated { customer_id, .. } = run(engine, &partner, op) else {
        panic!("no customer")
    };
    let debit = |amount: &str, customer: serde_json::Value| {
        serde_json::json!({"merchant_id": merchant_id, "amount": amount, "description": "rent",
            "type": "debit", "standard_entry_class": "PPD", "customer": customer})
    };
    let inline = serde_json::json!({"name": "Bo", "routing_number": "021000021",
        "account_number": "7788990011", "account_type": "checking"});
    let first =
        crate::engine::tenancy::test_tenant::create(engine, &partner, &partner_id, &debit("10.00", inline));
    crate::engine::tenancy::test_tenant::create(
        engine,
        &partner,
        &partner_id,
        &debit("11.00", serde_json::json!({"id": customer_id})),
    );
    let create = Operation::CreateTransaction {
        partner_id: partner_id.clone(),
        body: serde_json::to_vec(&debit("12.00", serde_json::json!({"id": customer_id}))).unwrap(),
    };
    let idempotent = Operation::Idempotent { key: "k-1".into(), operation: Box::new(create) };
    run(engine, &partner, idempotent);
    run(
        engine,
        &partner,
        Operation::VoidTransaction { partner_id: partner_id.clone(), transaction_id: first },
    );
    // A first credit of 2,500.00 to a new account: held for review (its
    // review is the partner's row; the open list is the service's).
    let credit = serde_json::json!({"merchant_id": merchant_id, "amount": "2500.00", "description": "payout",
        "type": "credit", "standard_entry_class": "PPD", "customer": {"name": "Cy", "routing_number": "021000021",
        "account_number": "5566778899", "account_type": "checking"}});
    crate::engine::tenancy::test_tenant::create(engine, &partner, &partner_id, &credit);
    run(engine, &Caller::Operator, Operation::SetSuspended { holder: merchant, suspended: true });
    partner_id
}

/// The partner a row must carry, from its decoded record or its key.
fn expected(table: &str, key: &[u8], value: &[u8], merchants: &HashMap<String, String>) -> String {
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
    let prefix = |k: &[u8]| text(k.split(|&b| b == 0).next().unwrap());
    let holder = |id: String| match id {
        id if id.starts_with("par_") => id,
        id => merchants.get(&id).cloned().unwrap_or_default(),
    };
    match table {
        "partners" => text(key),
        "merchants" | "customers" | "reviews" => {
            let v: serde_json::Value = serde_json::from_slice(value).unwrap();
            v["partner_id"].as_str().unwrap().to_owned()
        }
        "transactions" => {
            crate::storage::decode::<TransactionRecord>(Table::Transactions, value).unwrap().partner_id
        }
        "changes" | "idempotency" | "validations" | "validated_accounts" => prefix(key),
        "events" | "usage" | "holder_keys" | "risk_counters" => holder(prefix(key)),
        "suspensions" => holder(text(key)),
        _ => String::new(),
    }
}

#[test]
fn every_row_is_keyed_by_its_partner() {
    let Some(engine) = engine() else { return };
    let a = partner_activity(&engine);
    let b = partner_activity(&engine);
    let originator = crate::engine::settlement::originator::sandbox_default();
    run(&engine, &Caller::Operator, Operation::SetOriginator { originator });
    engine.advance_to(at("2026-11-23 18:01")).unwrap();
    let states =
        engine.store.read_durable(|r| r.range(Table::Transactions, &[], &[0xff; 64], usize::MAX)).unwrap();
    let originated: Vec<TransactionRecord> = states
        .iter()
        .map(|(_, v)| crate::storage::decode::<TransactionRecord>(Table::Transactions, v).unwrap())
        .filter(|t| t.state == crate::lifecycle::State::Originated)
        .collect();
    assert_eq!(originated.len(), 4, "two of each partner's three left after its void");
    let op = Operation::RecordReturn {
        transaction_id: originated[0].id.clone(),
        return_code: "R01".into(),
        return_date: None,
    };
    run(&engine, &Caller::Operator, op);

    let pg = engine.store.postgres_store().unwrap();
    let rows = pg.rows_with_partner().unwrap();
    let merchants: HashMap<String, String> = rows
        .iter()
        .filter(|(t, ..)| t == "merchants")
        .map(|(_, k, v, _)| {
            (String::from_utf8(k.clone()).unwrap(), expected("merchants", k, v, &HashMap::new()))
        })
        .collect();
    let mut partners_seen = std::collections::BTreeSet::new();
    for (t, k, v, p) in &rows {
        assert_eq!(p, &expected(t, k, v, &merchants), "row {t} {:?}", String::from_utf8_lossy(k));
        partners_seen.insert(p.clone());
    }
    let want: std::collections::BTreeSet<String> = [String::new(), a, b].into();
    assert_eq!(partners_seen, want, "the two partners' rows and the service's");
    for table in [
        "transactions",
        "changes",
        "events",
        "usage",
        "idempotency",
        "customers",
        "holder_keys",
        "suspensions",
        "risk_counters",
        "reviews",
    ] {
        assert!(rows.iter().any(|(t, _, _, p)| t == table && !p.is_empty()), "no partner row of {table}");
    }
}
