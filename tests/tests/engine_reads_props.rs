//! Walking a list's cursors while transactions are created: a walk lists
//! exactly the transactions that existed when it began, newest first, each
//! once; creates between its pages (in the same process, or on another
//! thread while it walks) are never repeated or skipped into it.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ach_core::engine::Caller;
use ach_core::model::{PageRequest, TransactionFilter};
use ach_tests::world::World;
use proptest::prelude::*;

fn filter(merchant: Option<&str>, limit: usize) -> TransactionFilter {
    TransactionFilter {
        merchant_id: merchant.map(str::to_owned),
        status: None,
        created_from: None,
        created_to: None,
        page: PageRequest { limit, after: None },
    }
}

/// The ids a walk lists, and the ids of every page's first entry.
fn walk_with(
    w: &World,
    (p, pc): (&str, &Caller),
    mut f: TransactionFilter,
    mut between: impl FnMut(usize),
) -> Vec<String> {
    let mut ids = Vec::new();
    for page_number in 0.. {
        let page = w.engine.transactions(pc, Some(p), &f).unwrap();
        assert!(page.transactions.len() <= f.page.limit);
        ids.extend(page.transactions.into_iter().map(|t| t.id));
        match page.next_cursor {
            Some(c) => f.page.after = Some(c),
            None => break,
        }
        between(page_number);
    }
    ids
}

/// What a walk must list: `owner`'s transactions among `existing`, newest first.
fn expected(existing: &[(String, usize)], merchant: Option<usize>) -> Vec<String> {
    let mut ids: Vec<String> =
        existing.iter().filter(|(_, m)| merchant.is_none_or(|x| x == *m)).map(|(id, _)| id.clone()).collect();
    ids.sort();
    ids.reverse();
    ids
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_walk_lists_what_existed_when_it_began_once_each(
        before in prop::collection::vec(0..2usize, 0..30),
        during in prop::collection::vec(prop::collection::vec(0..2usize, 0..4), 0..12),
        limit in 1..8usize,
        by_merchant in prop::option::of(0..2usize),
    ) {
        let w = World::new("2026-11-23 10:00");
        w.screening_off();
        let (p, pc) = w.partner();
        let merchants = [w.merchant(&p, &pc, &["PPD"]).0, w.merchant(&p, &pc, &["PPD"]).0];
        let create = |m: usize| (w.debit(&p, &pc, &merchants[m], "1.00"), m);
        let existing: Vec<(String, usize)> = before.iter().map(|&m| create(m)).collect();
        let f = filter(by_merchant.map(|m| merchants[m].as_str()), limit);
        let listed = walk_with(&w, (&p, &pc), f, |page| {
            for &m in during.get(page).map(Vec::as_slice).unwrap_or_default() {
                create(m);
            }
        });
        prop_assert_eq!(listed, expected(&existing, by_merchant));
    }
}

#[test]
fn a_walk_while_another_thread_creates_lists_each_earlier_transaction_once() {
    let w = Arc::new(World::new("2026-11-23 10:00"));
    w.screening_off();
    let (p, pc) = w.partner();
    let (m, _) = w.merchant(&p, &pc, &["PPD"]);
    for _ in 0..300 {
        w.debit(&p, &pc, &m, "1.00");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let creator = {
        let (w, p, pc, m, stop) = (Arc::clone(&w), p.clone(), pc.clone(), m.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut made = 0;
            while !stop.load(Ordering::SeqCst) {
                w.debit(&p, &pc, &m, "1.00");
                made += 1;
            }
            made
        })
    };
    let listed = walk_with(&w, (&p, &pc), filter(None, 7), |_| std::thread::yield_now());
    stop.store(true, Ordering::SeqCst);
    let made: usize = creator.join().unwrap();
    // Every transaction there is now, up to the newest the walk's first page showed.
    let newest = listed.first().cloned().unwrap();
    let now = walk_with(&w, (&p, &pc), filter(None, 100), |_| {});
    assert_eq!(now.len(), 300 + made);
    let wanted: Vec<String> = now.into_iter().filter(|id| *id <= newest).collect();
    assert!(wanted.len() >= 300);
    assert_eq!(listed, wanted);
}

/// One create of a batch: its partner (0 or 1) and merchant (0 or 1).
fn batch_creates() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((0..2usize, 0..2usize), 1..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Creates committed in batches (rows packed per owner and batch) and
    /// one at a time (a row each), interleaved: every walk of every list
    /// gives each of its transactions once, newest first.
    #[test]
    fn walks_over_packed_and_single_rows_give_each_transaction_once(
        batches in prop::collection::vec(batch_creates(), 1..6),
        singles in prop::collection::vec((0..2usize, 0..2usize), 0..10),
        limit in 1..9usize,
    ) {
        let w = World::new("2026-11-23 10:00");
        w.screening_off();
        let partners = [w.partner(), w.partner()];
        let merchants: Vec<[String; 2]> = partners
            .iter()
            .map(|(p, pc)| [w.merchant(p, pc, &["PPD"]).0, w.merchant(p, pc, &["PPD"]).0])
            .collect();
        let mut made: Vec<(usize, usize, String)> = Vec::new();
        let op = |p: usize, m: usize| {
            let (pid, pc) = &partners[p];
            let body = ach_tests::world::partner_transaction(pid, &merchants[p][m], "debit", "1.00");
            (pc.clone(), ach_core::engine::Operation::CreateTransaction { partner_id: pid.clone(), body: ach_tests::world::body(&body) })
        };
        let mut singles = singles.into_iter();
        for batch in &batches {
            let answers = w.engine.execute_batch(batch.iter().map(|&(p, m)| op(p, m)).collect());
            for (answer, &(p, m)) in answers.iter().zip(batch) {
                match answer.as_ref().map(ach_core::engine::Outcome::first) {
                    Ok(ach_core::engine::Outcome::TransactionCreated { transaction_id }) => made.push((p, m, transaction_id.clone())),
                    other => panic!("{other:?}"),
                }
            }
            if let Some((p, m)) = singles.next() {
                made.push((p, m, w.debit(&partners[p].0, &partners[p].1, &merchants[p][m], "1.00")));
            }
        }
        for (p, (pid, pc)) in partners.iter().enumerate() {
            for merchant in [None, Some(0), Some(1)] {
                let f = filter(merchant.map(|m| merchants[p][m].as_str()), limit);
                let listed = walk_with(&w, (pid, pc), f, |_| {});
                let mut wanted: Vec<String> = made
                    .iter()
                    .filter(|(q, m, _)| *q == p && merchant.is_none_or(|x| x == *m))
                    .map(|(_, _, id)| id.clone())
                    .collect();
                wanted.sort();
                wanted.reverse();
                prop_assert_eq!(listed, wanted);
            }
        }
    }
}
