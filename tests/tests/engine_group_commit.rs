//! Threads calling `Engine::execute` at once share commits (group commit in
//! the engine, what a C host's threads get through `ach_engine_request`), and
//! every rule holds as if they had called one after the other: no limit is
//! exceeded, every transaction gets its own id, the feed has each creation
//! once, the usage counters match the transactions, and each caller is
//! answered its own operation's answer (a leader may take callers into its
//! transaction as they queue).
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::sync::Arc;

use ach_core::model::Status;
use ach_tests::world::{amount, open_application, roomy_limits, transaction, World};

const THREADS: usize = 16;
const EACH: usize = 60;
/// The merchant's daily count: two thirds of what the threads try.
const DAILY: u64 = (THREADS * EACH * 2 / 3) as u64;

/// `body` with the idempotency key of thread `t`'s create `i`.
fn keyed(mut body: serde_json::Value, t: usize, i: usize) -> serde_json::Value {
    body["idempotency_key"] = format!("thread-{t}-create-{i}").into();
    body
}

#[test]
fn sixteen_threads_share_commits_and_never_pass_a_limit() {
    let w = Arc::new(World::new("2026-11-23 10:00"));
    let (partner_id, partner) = w.partner();
    let limits = ach_core::limits::Limits { daily_count: Some(DAILY), ..roomy_limits() };
    let (merchant_id, _) = w.merchant_with(&partner_id, &partner, &open_application(&["PPD"]), limits);
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (w, partner_id, partner, merchant_id) =
                (Arc::clone(&w), partner_id.clone(), partner.clone(), merchant_id.clone());
            std::thread::spawn(move || {
                (0..EACH)
                    .map(|i| {
                        let cents = 100 + (t * EACH + i) as u64;
                        let body = keyed(transaction(&merchant_id, "debit", &amount(cents)), t, i);
                        w.create(&partner_id, &partner, &body)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let answers: Vec<_> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    // Each answer is the one stored under its own request's key: a retry of
    // the request answers the same.
    for (n, answer) in answers.iter().enumerate() {
        let (t, i) = (n / EACH, n % EACH);
        let cents = 100 + n as u64;
        let body = keyed(transaction(&merchant_id, "debit", &amount(cents)), t, i);
        let again = w.create(&partner_id, &partner, &body);
        assert_eq!(format!("{again:?}"), format!("{answer:?}"), "thread {t}, create {i}");
    }
    let ids: Vec<&String> = answers.iter().filter_map(|a| a.as_ref().ok()).collect();
    assert_eq!(ids.len() as u64, DAILY, "exactly the daily count is accepted");
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "every id once");
    for refused in answers.iter().filter_map(|a| a.as_ref().err()) {
        let text = format!("{refused:?}");
        assert!(text.contains("max daily num checks for this merchant"), "{text}");
    }
    let created: Vec<_> =
        w.changes(&partner_id, &partner).into_iter().filter(|c| c.status == Status::A).collect();
    assert_eq!(created.len(), ids.len(), "one creation change each");
    assert_eq!(
        created.iter().map(|c| &c.transaction_id).collect::<HashSet<_>>(),
        ids.iter().copied().collect::<HashSet<_>>()
    );
    w.engine.audit_usage().unwrap().unwrap();
}
