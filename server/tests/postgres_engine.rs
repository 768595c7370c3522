//! The engine on PostgreSQL inside a host's async code: opened, used and
//! dropped on a tokio worker, where a runtime of its own being dropped would
//! panic if the store did not let it go in the background. Runs when
//! `ACH_TEST_POSTGRES` names a database (tests/postgres/suites.sh).
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, Engine, EngineOptions, Operation, Outcome};
use ach_core::secrets::EncryptionKey;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_on_postgres_opened_and_dropped_in_async_code_does_not_panic() {
    let Some(url) = std::env::var("ACH_TEST_POSTGRES").ok().filter(|u| !u.is_empty()) else { return };
    let schema = format!("ach_e_{}", ach_core::ids::random_alphanumeric(12).to_lowercase());
    let join = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{join}options=-csearch_path%3D{schema}");
    let options = EngineOptions::system()
        .with_operator_key("ok_test_operator_key_0123456789abcdef")
        .with_encryption_key(EncryptionKey::generate());
    let engine = Engine::open_postgres(&url, options).unwrap();
    let made = engine.execute(&Caller::Operator, Operation::CreatePartner { name: "Async".into() }).unwrap();
    let Outcome::PartnerCreated { partner_id, api_key } = made else { panic!("{made:?}") };
    assert_eq!(engine.authenticate(&api_key), Ok(Caller::Partner { partner_id }));
    drop(engine);
    // And a second one over the same schema finds what the first stored.
    let options = EngineOptions::system().with_encryption_key(EncryptionKey::generate());
    let refused = Engine::open_postgres(&url, options).unwrap_err();
    assert_eq!(refused.to_string(), "the encryption key is not this database's key");
}
