//! Two engines over one PostgreSQL database, as two `achd` processes over it:
//! each with its own memory (duplicate window, caches), racing on one
//! merchant's limits and on duplicates from many threads. Afterwards the
//! totals equal a serial run's: no duplicate accepted twice, no limit
//! exceeded, every acknowledged transaction in the partner's feed exactly
//! once, an idempotency key answered the same by both. Runs only on
//! PostgreSQL (`ACH_TEST_POSTGRES`, feature `postgres`: tests/postgres/suites.sh);
//! on redb one process owns the file, so there is nothing to share.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::Arc;

use ach_core::engine::{Caller, Engine, Operation, Outcome, Refusal};
use ach_core::limits::Limits;
use ach_tests::world::{
    body, et, one_record_directory, open_application, options, partner_transaction, roomy_limits,
    transaction, World,
};
use serde_json::json;

const START: &str = "2026-11-23 10:00";

/// A partner and a merchant (declining duplicates, these limits) made through
/// `a`; the callers work on either engine.
fn tenant(a: &World, limits: Limits) -> (String, Caller, String) {
    let (partner_id, partner) = a.partner();
    let mut app = open_application(&["PPD", "WEB"]);
    app["velocities"]["decline_duplicates"] = json!(true);
    let (merchant_id, _) = a.merchant_with(&partner_id, &partner, &app, limits);
    (partner_id, partner, merchant_id)
}

/// Two engines over one shared store, screening off (these tests are of
/// the processes' coordination; one account takes many entries).
fn pair() -> Option<(World, World)> {
    let (a, b) = ach_tests::store::two_engines(|| options(START))?;
    let (a, b) = (World::with(a), World::with(b));
    a.screening_off();
    Some((a, b))
}

/// Create the transaction `v` through `w`: its id, or the refusal's message.
fn create(w: &World, partner_id: &str, partner: &Caller, v: &serde_json::Value) -> Result<String, String> {
    w.create(partner_id, partner, v).map_err(|r| r.message())
}

#[test]
fn a_duplicate_made_through_the_other_process_is_refused_and_a_void_frees_it() {
    let Some((a, b)) = pair() else { return };
    let (p, pc, m) = tenant(&a, roomy_limits());
    let t = transaction(&m, "debit", "12.34");
    let first = create(&a, &p, &pc, &t).unwrap();
    let again = create(&b, &p, &pc, &t).unwrap_err();
    assert_eq!(again, "This is a duplicate transaction");
    // Voided through A: B accepts it again, once.
    a.run(&pc, Operation::VoidTransaction { partner_id: p.clone(), transaction_id: first }).unwrap();
    create(&b, &p, &pc, &t).unwrap();
    let thrice = create(&a, &p, &pc, &t).unwrap_err();
    assert_eq!(thrice, "This is a duplicate transaction");
}

#[test]
fn racing_on_one_merchant_from_two_processes_gives_a_serial_runs_totals() {
    let Some((a, b)) = pair() else { return };
    let mut limits = roomy_limits();
    limits.daily_count = Some(40);
    let (p, pc, m) = tenant(&a, limits);
    let worlds = [Arc::new(a), Arc::new(b)];
    // 8 threads, 4 on each engine: 15 distinct amounts each, every amount sent
    // twice (by two threads on different engines): 120 distinct transactions
    // asked for, 240 requests; the daily count allows 40.
    let mut threads = Vec::new();
    for thread in 0..8usize {
        let world = Arc::clone(&worlds[thread % 2]);
        let (p, pc, m) = (p.clone(), pc.clone(), m.clone());
        threads.push(std::thread::spawn(move || {
            let mut out = Vec::new();
            for i in 0..30usize {
                let n = (thread / 2) * 30 + i;
                let amount = format!("{}.{:02}", 1 + n / 2, n % 2);
                out.push((amount.clone(), create(&world, &p, &pc, &transaction(&m, "debit", &amount))));
            }
            out
        }));
    }
    let mut accepted: HashMap<String, Vec<String>> = HashMap::new();
    let mut refusals: HashMap<String, usize> = HashMap::new();
    for thread in threads {
        for (amount, result) in thread.join().unwrap() {
            match result {
                Ok(id) => accepted.entry(amount).or_default().push(id),
                Err(message) => *refusals.entry(message).or_default() += 1,
            }
        }
    }
    let total: usize = accepted.values().map(Vec::len).sum();
    assert_eq!(total, 40, "the daily count admits exactly 40: {refusals:?}");
    assert!(accepted.values().all(|ids| ids.len() == 1), "an amount was accepted twice");
    assert_eq!(refusals.values().sum::<usize>(), 240 - 40, "{refusals:?}");
    // Each acknowledged transaction is in the feed exactly once, through either engine.
    let worlds = worlds.map(|w| Arc::into_inner(w).unwrap());
    for w in &worlds {
        let changes = w.changes(&p, &pc);
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for c in &changes {
            *seen.entry(c.transaction_id.as_str()).or_default() += 1;
        }
        assert_eq!(seen.len(), 40);
        for ids in accepted.values() {
            assert_eq!(seen.get(ids[0].as_str()), Some(&1), "{}", ids[0]);
        }
    }
}

#[test]
fn an_idempotency_key_answers_the_same_through_either_process() {
    let Some((a, b)) = pair() else { return };
    let (p, pc, m) = tenant(&a, roomy_limits());
    let t = body(&transaction(&m, "debit", "5.00"));
    let keyed = |engine: &Engine| {
        engine.execute(
            &pc,
            Operation::Idempotent {
                key: "order-77".into(),
                operation: Box::new(Operation::CreateTransaction { partner_id: p.clone(), body: t.clone() }),
            },
        )
    };
    let first = keyed(&a.engine).unwrap();
    let second = keyed(&b.engine).unwrap();
    assert!(matches!(second, Outcome::Replayed(_)), "{second:?}");
    assert_eq!(format!("{first:?}"), format!("{:?}", second.first()));
    assert_eq!(a.changes(&p, &pc).len(), 1);
    assert_eq!(b.changes(&p, &pc).len(), 1);
}

#[test]
fn a_cut_off_run_by_both_processes_at_once_originates_each_transaction_once() {
    let Some((a, b)) = pair() else { return };
    let (p, pc, m) = tenant(&a, roomy_limits());
    let mut ids = Vec::new();
    for i in 0..30u32 {
        let world = if i % 2 == 0 { &a } else { &b };
        ids.push(create(world, &p, &pc, &transaction(&m, "debit", &format!("{}.00", i + 1))).unwrap());
    }
    let (_, cutoff) = ach_core::calendar::next_cutoff_after(a.engine.now());
    let after = cutoff + chrono::Duration::seconds(1);
    let engines = [Arc::new(a.engine), Arc::new(b.engine)];
    let runs: Vec<_> = engines
        .iter()
        .map(|e| {
            let e = Arc::clone(e);
            std::thread::spawn(move || e.advance_to(after).unwrap())
        })
        .collect();
    let originated: u64 = runs.into_iter().map(|r| r.join().unwrap().originated).sum();
    assert_eq!(originated, 30, "each transaction originated by one of the two");
    for e in &engines {
        let files = e.origination_files().unwrap();
        assert_eq!(files.len(), 1, "one file for the cut-off");
        assert_eq!(files[0].entries, 30);
    }
    let w = World::with(Arc::into_inner(engines.into_iter().next().unwrap()).unwrap());
    let changes = w.changes(&p, &pc);
    for id in &ids {
        let b = changes
            .iter()
            .filter(|c| &c.transaction_id == id && c.status == ach_core::model::Status::B)
            .count();
        assert_eq!(b, 1, "{id} originated once in the feed");
    }
}

#[test]
fn a_key_suspended_or_revoked_through_one_process_is_refused_by_the_other_at_once() {
    let Some((a, b)) = pair() else { return };
    let Ok(Outcome::PartnerCreated { partner_id, api_key }) =
        a.run(&Caller::Operator, Operation::CreatePartner { name: "Shared".into() })
    else {
        panic!("no partner")
    };
    // B remembers the key (a shared store caches authentications)...
    let caller = Caller::Partner { partner_id: partner_id.clone() };
    assert_eq!(b.engine.authenticate(&api_key).unwrap(), caller);
    assert_eq!(b.engine.authenticate(&api_key).unwrap(), caller);
    // ...until A suspends the partner: refused by B on the next request.
    let holder = ach_core::engine::KeyHolder::Partner { partner_id: partner_id.clone() };
    a.run(&Caller::Operator, Operation::SetSuspended { holder: holder.clone(), suspended: true }).unwrap();
    assert_eq!(
        b.engine.authenticate(&api_key),
        Err(Refusal::Authentication),
        "suspended through A, still accepted by B"
    );
    a.run(&Caller::Operator, Operation::SetSuspended { holder: holder.clone(), suspended: false }).unwrap();
    assert_eq!(b.engine.authenticate(&api_key).unwrap(), caller);
    // Revoked through A: refused by B.
    a.run(&Caller::Operator, Operation::RevokeKeys { holder }).unwrap();
    assert_eq!(
        b.engine.authenticate(&api_key),
        Err(Refusal::Authentication),
        "revoked through A, still accepted by B"
    );
}

/// A request to B's router with `key`: its status.
fn status(engine: &Engine, key: &str, method: &str, path: &str, body: Option<&serde_json::Value>) -> u16 {
    let request = ach_core::api::Request {
        method: method.into(),
        path: path.into(),
        api_key: Some(key.into()),
        body: body.map(|b| serde_json::to_vec(b).unwrap()).unwrap_or_default(),
        ..Default::default()
    };
    ach_core::api::route(engine, &request).status
}

/// A create through B's writer path: admitted on what B remembers, confirmed
/// in the write transaction (as `achd` runs it).
fn create_admitted(
    engine: &Engine,
    key: &str,
    partner_id: &str,
    v: &serde_json::Value,
) -> Result<Outcome, String> {
    let ach_core::engine::Admission { caller, unconfirmed, .. } =
        engine.admit_key(key).map_err(|r| r.message())?;
    let op = Operation::CreateTransaction { partner_id: partner_id.into(), body: body(v) };
    let prepared = engine.prepare(op).confirming(unconfirmed);
    engine.execute_prepared(vec![(caller, prepared)]).remove(0).map_err(|r| r.message())
}

#[test]
fn a_key_admitted_from_memory_is_confirmed_before_any_answer() {
    let Some((a, b)) = pair() else { return };
    let (partner_id, key, partner) = a.partner_with_key();
    let (merchant_id, _, _) = a.roomy_merchant(&partner_id, &partner, &["PPD"]);
    let t = partner_transaction(&partner_id, &merchant_id, "debit", "5.00");
    let feed = format!("/status-changes/0?partner_id={partner_id}");
    assert_eq!(status(&b.engine, &key, "POST", "/transactions", Some(&t)), 201);
    // B now admits the key from memory, leaving it to be confirmed.
    let ach_core::engine::Admission { caller, unconfirmed, .. } = b.engine.admit_key(&key).unwrap();
    assert_eq!((caller, unconfirmed.is_some()), (partner.clone(), true));
    create_admitted(&b.engine, &key, &partner_id, &t).unwrap();

    // Suspended through A: B refuses the next create and the next read.
    let holder = ach_core::engine::KeyHolder::Partner { partner_id: partner_id.clone() };
    let suspend = |on| Operation::SetSuspended { holder: holder.clone(), suspended: on };
    a.run(&Caller::Operator, suspend(true)).unwrap();
    assert!(b.engine.admit_key(&key).unwrap().unconfirmed.is_some(), "still remembered, unconfirmed");
    assert_eq!(
        create_admitted(&b.engine, &key, &partner_id, &t).unwrap_err(),
        Refusal::Authentication.message()
    );
    assert_eq!(status(&b.engine, &key, "POST", "/transactions", Some(&t)), 401);
    assert_eq!(status(&b.engine, &key, "GET", &feed, None), 401);

    // Back again, and another partner's key made (the epoch moves on): B
    // looks the key up again and lets it in.
    a.run(&Caller::Operator, suspend(false)).unwrap();
    let _ = a.partner_with_key();
    create_admitted(&b.engine, &key, &partner_id, &t).unwrap();
    assert_eq!(status(&b.engine, &key, "GET", &feed, None), 200);

    // Suspended earlier in the same write transaction: refused too.
    let ach_core::engine::Admission { caller, unconfirmed, .. } = b.engine.admit_key(&key).unwrap();
    assert!(unconfirmed.is_some());
    let op = Operation::CreateTransaction { partner_id: partner_id.clone(), body: body(&t) };
    let answers = b.engine.execute_prepared(vec![
        (Caller::Operator, b.engine.prepare(suspend(true))),
        (caller, b.engine.prepare(op).confirming(unconfirmed)),
    ]);
    assert_eq!(
        answers[0],
        Ok(Outcome::SuspensionSet { id: partner_id.clone(), suspended: true, since: Some(et(START)) })
    );
    assert_eq!(answers[1].as_ref().unwrap_err(), &Refusal::Authentication);
    // Every create B acknowledged is in the feed; the refused ones are not.
    assert_eq!(a.changes(&partner_id, &partner).len(), 3);
}

#[test]
fn a_directory_loaded_through_one_process_decides_the_others_next_create() {
    let Some((a, b)) = pair() else { return };
    let (p, pc, m) = tenant(&a, roomy_limits());
    // The customer's bank (021000021) is in the directory both start with.
    create(&b, &p, &pc, &transaction(&m, "debit", "1.00")).unwrap();
    // A directory without it, loaded through A: B refuses it too, at once.
    let loaded = a.run(&Caller::Operator, Operation::LoadDirectory { text: one_record_directory() });
    assert!(matches!(loaded, Ok(Outcome::DirectoryLoaded { records: 1 })), "{loaded:?}");
    // A lookup through B sees it before B writes anything.
    assert_eq!(b.engine.directory_now().unwrap().len(), 1);
    assert!(b.engine.directory_now().unwrap().lookup("021000021").is_none());
    let through_a = create(&a, &p, &pc, &transaction(&m, "debit", "2.00")).unwrap_err();
    let through_b = create(&b, &p, &pc, &transaction(&m, "debit", "3.00")).unwrap_err();
    assert_eq!(through_b, through_a);
    assert_eq!(b.engine.directory().len(), 1, "B took the stored directory");
}
