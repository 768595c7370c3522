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
