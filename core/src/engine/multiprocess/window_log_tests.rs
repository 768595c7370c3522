//! The window log on PostgreSQL (run when `ACH_TEST_POSTGRES` names a
//! database): changes no window can reach any more are pruned, and an engine
//! opened afterwards, and one that was following, still refuse exactly the
//! duplicates still in the window; after a write whose outcome is unknown,
//! a process's window is the database's, whatever the database kept.
#![allow(clippy::unwrap_used)]

use chrono::{DateTime, Duration, Utc};

use crate::clock::{Clock as _, ManualClock};
use crate::engine::tenancy::test_tenant;
use crate::engine::{Caller, Engine, EngineClock, EngineOptions, Operation};
use crate::secrets::EncryptionKey;
use crate::storage::{StorageError, Table};

fn url() -> Option<String> {
    let url = std::env::var("ACH_TEST_POSTGRES").ok().filter(|u| !u.is_empty())?;
    let schema = format!("ach_w_{}", crate::ids::random_alphanumeric(16).to_lowercase());
    let join = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{join}options=-csearch_path%3D{schema}"))
}

fn open(url: &str, clock: &ManualClock, key: &EncryptionKey) -> Engine {
    let options = EngineOptions {
        clock: EngineClock::Manual(clock.clone()),
        duplicate_window: Some(Duration::minutes(10)),
        ..EngineOptions::manual(clock.now())
    };
    Engine::open_postgres(url, options.with_encryption_key(key.clone())).unwrap()
}

fn debit(merchant_id: &str, i: usize) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "merchant_id": merchant_id, "amount": "1.00", "description": "rent",
        "type": "debit", "standard_entry_class": "PPD",
        "customer": {"name": "Ada", "routing_number": "021000021",
                     "account_number": format!("77889900{i}"), "account_type": "checking"}}))
    .unwrap()
}

fn create(engine: &Engine, caller: &Caller, partner_id: &str, body: Vec<u8>) -> Result<(), String> {
    let op = Operation::CreateTransaction { partner_id: partner_id.to_owned(), body };
    engine.execute(caller, op).map(drop).map_err(|r| r.message())
}

/// The positions in the window log.
fn positions(engine: &Engine) -> Vec<u64> {
    let rows = engine.store.read_durable(|r| r.range(Table::WindowLog, &[], &[0xff; 9], usize::MAX)).unwrap();
    rows.iter().map(|(k, _)| u64::from_be_bytes(k.as_slice().try_into().unwrap())).collect()
}

/// A partner and an approved merchant declining duplicates, its month's
/// count (the one limit of the velocities' defaults 1,100 creates reach) out
/// of the way.
fn tenant(engine: &Engine) -> (String, Caller, String) {
    let mut app: serde_json::Value = serde_json::from_slice(&test_tenant::application(&["PPD"])).unwrap();
    app["velocities"]["decline_duplicates"] = serde_json::json!(true);
    let limits = crate::limits::Limits { monthly_count: Some(1_000_000_000), ..Default::default() };
    test_tenant::tenant_with(engine, serde_json::to_vec(&app).unwrap(), limits)
}

fn at(text: &str) -> DateTime<Utc> {
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap();
    naive.and_local_timezone(chrono_tz::America::New_York).earliest().unwrap().with_timezone(&Utc)
}

/// Two engines over one new schema, as two processes, on one manual clock
/// and one key (and what opens a third).
struct Pair {
    url: String,
    clock: ManualClock,
    key: EncryptionKey,
    a: Engine,
    b: Engine,
}

fn pair() -> Option<Pair> {
    let url = url()?;
    let clock = ManualClock::new(at("2026-11-23 09:00"));
    let key = EncryptionKey::generate();
    let a = open(&url, &clock, &key);
    let b = open(&url, &clock, &key);
    Some(Pair { url, clock, key, a, b })
}

#[test]
fn changes_no_window_reaches_are_pruned_and_the_windows_stay_exact() {
    let Some(Pair { url, clock, key, a, b }) = pair() else { return };
    let (partner_id, partner, merchant_id) = tenant(&a);
    // 500 creates, then (past the window's 24 hours and its margin) 600
    // more; each create is one row of two changes (its similar-transaction
    // and its account print): the 1,024th change prunes every row older
    // than the window, in one run.
    for i in 0..1100 {
        if i == 500 {
            clock.advance(Duration::hours(26));
        }
        create(&a, &partner, &partner_id, debit(&merchant_id, i)).unwrap();
    }
    let kept = positions(&a);
    assert_eq!(kept.first(), Some(&1002), "the first 500 creates' rows are pruned, no more");
    assert_eq!(kept.last(), Some(&2200));
    assert_eq!(kept.len(), 600);
    // B follows from where it last looked; C opens afterwards. Both refuse a
    // duplicate of a recent create and accept one of a pruned (old) one.
    let c = open(&url, &clock, &key);
    for engine in [&b, &c] {
        assert_eq!(
            create(engine, &partner, &partner_id, debit(&merchant_id, 1099)).unwrap_err(),
            "This is a duplicate transaction"
        );
    }
    create(&b, &partner, &partner_id, debit(&merchant_id, 5)).unwrap();
    assert_eq!(
        create(&c, &partner, &partner_id, debit(&merchant_id, 5)).unwrap_err(),
        "This is a duplicate transaction"
    );
}

#[test]
fn a_packed_row_gives_its_changes_at_the_positions_up_to_its_key() {
    let row: Vec<u8> = [
        crate::engine::multiprocess::window_log::test_entry(1, 7, 100),
        crate::engine::multiprocess::window_log::test_entry(2, 8, 200),
    ]
    .concat();
    let got = crate::engine::multiprocess::window_log::test_decode(&12u64.to_be_bytes(), &row).unwrap();
    assert_eq!(got, vec![(11, 1, 7, 100), (12, 2, 8, 200)]);
    let one =
        crate::engine::multiprocess::window_log::test_decode(&3u64.to_be_bytes(), &row[..row.len() / 2])
            .unwrap();
    assert_eq!(one, vec![(3, 1, 7, 100)], "a row from before packing");
    let unreadable = Err(StorageError("a window log entry is unreadable".into()));
    assert_eq!(
        crate::engine::multiprocess::window_log::test_decode(&0u64.to_be_bytes(), &row),
        unreadable,
        "positions below 0"
    );
    assert_eq!(
        crate::engine::multiprocess::window_log::test_decode(&3u64.to_be_bytes(), &row[1..]),
        unreadable
    );
    assert_eq!(crate::engine::multiprocess::window_log::test_decode(&3u64.to_be_bytes(), &[]), unreadable);
}

#[test]
fn a_batchs_window_changes_are_one_row_that_every_process_follows() {
    let Some(Pair { url, clock, key, a, b }) = pair() else { return };
    let (partner_id, partner, merchant_id) = tenant(&a);
    create(&a, &partner, &partner_id, debit(&merchant_id, 0)).unwrap();
    let op =
        |i| Operation::CreateTransaction { partner_id: partner_id.clone(), body: debit(&merchant_id, i) };
    let answers = b.execute_batch((1..=5).map(|i| (partner.clone(), op(i))).collect());
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert_eq!(
        positions(&a),
        [2, 12],
        "one row for the first create's two changes, one for the batch's ten (two a create)"
    );
    let c = open(&url, &clock, &key);
    for engine in [&a, &c] {
        for i in 1..=5 {
            let again = create(engine, &partner, &partner_id, debit(&merchant_id, i)).unwrap_err();
            assert_eq!(again, "This is a duplicate transaction");
        }
    }
    create(&a, &partner, &partner_id, debit(&merchant_id, 6)).unwrap();
    assert_eq!(
        create(&b, &partner, &partner_id, debit(&merchant_id, 6)).unwrap_err(),
        "This is a duplicate transaction"
    );
}

/// The next write transaction through `engine` commits, yet fails.
fn lose_next_answer(engine: &Engine) {
    engine.store.postgres_store().unwrap().lose_next_answer();
}

#[test]
fn after_a_write_of_unknown_outcome_each_window_is_the_databases() {
    let Some(Pair { a, b, .. }) = pair() else { return };
    let (partner_id, partner, merchant_id) = tenant(&a);
    create(&a, &partner, &partner_id, debit(&merchant_id, 0)).unwrap();
    create(&b, &partner, &partner_id, debit(&merchant_id, 1)).unwrap();
    let before = a.store.postgres_store().unwrap().rows_with_partner().unwrap();
    // Committed, answered as failed: A's create of 2, then B's of 3, which
    // applied A's change to its window first.
    let unavailable = || Err(crate::AchError::DatabaseUnavailable.to_string());
    lose_next_answer(&a);
    let lost = create(&a, &partner, &partner_id, debit(&merchant_id, 2)).unwrap_err();
    assert_eq!(lost, crate::AchError::DatabaseUnavailable.to_string());
    lose_next_answer(&b);
    assert_eq!(create(&b, &partner, &partner_id, debit(&merchant_id, 3)), unavailable());
    // Both landed: each process refuses both again, as the database says.
    for engine in [&a, &b] {
        for i in [2, 3] {
            let again = create(engine, &partner, &partner_id, debit(&merchant_id, i)).unwrap_err();
            assert_eq!(again, "This is a duplicate transaction", "{i}");
        }
    }
    // Again, and then the primary is lost: the promoted standby has
    // neither commit (nor anything after `before`). Neither process keeps
    // a change the database does not have.
    lose_next_answer(&a);
    assert_eq!(create(&a, &partner, &partner_id, debit(&merchant_id, 4)), unavailable());
    lose_next_answer(&b);
    assert_eq!(create(&b, &partner, &partner_id, debit(&merchant_id, 5)), unavailable());
    a.store.postgres_store().unwrap().replace_rows(&before).unwrap();
    create(&b, &partner, &partner_id, debit(&merchant_id, 4)).unwrap();
    create(&a, &partner, &partner_id, debit(&merchant_id, 5)).unwrap();
    for (engine, i) in [(&a, 0), (&b, 0), (&a, 1), (&b, 1), (&a, 4), (&b, 5)] {
        let again = create(engine, &partner, &partner_id, debit(&merchant_id, i)).unwrap_err();
        assert_eq!(again, "This is a duplicate transaction", "{i}");
    }
}
