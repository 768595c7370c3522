//! Both feeds: exactly once and in commit order under interleaved operations and
//! concurrent writers, paging past 10,000 entries, and pointers that cannot be forged.
#![allow(clippy::unwrap_used)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ach_core::engine::{Caller, Engine, Operation, Outcome, Refusal, PAGE_LIMIT};
use ach_core::model::{Status, StatusChange};
use ach_tests::world::{amount, body, options, pointer_position, transaction, World};

/// A 64-bit linear congruential generator (Knuth's MMIX constants): a fixed,
/// reproducible sequence without a `rand` dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One partner as the interleaving sees it.
struct Tenant {
    id: String,
    caller: Caller,
    merchants: Vec<(String, Caller)>,
    /// Where incremental reading has got to, and what it read.
    cursor: String,
    read: Vec<StatusChange>,
    /// Changes made by operations (not by the clock), in the order they committed,
    /// with the number of clock moves before each.
    direct: Vec<(String, Status, Option<String>, usize)>,
}

impl Tenant {
    /// Read one page after the cursor (a small step: usually a few changes).
    fn step(&mut self, w: &World) -> usize {
        let page = w.engine.status_changes(&self.caller, &self.id, &self.cursor).unwrap();
        let n = page.changes.len();
        if n == 0 {
            assert_eq!(page.new_pointer, self.cursor, "an empty page keeps the position");
        }
        self.read.extend(page.changes);
        assert_eq!(pointer_position(&page.new_pointer), Some(self.read.len() as u64), "no gaps");
        self.cursor = page.new_pointer;
        n
    }
}

struct Txn {
    partner: usize,
    merchant: usize,
    reversal_of: Option<String>,
    reversed_by: Option<String>,
    credit: bool,
}

/// Whether a credit settled on the date the feed reported last is still within
/// the reversal window at the next cut-off (a debit always is).
fn within_window(read: &[StatusChange], id: &str, credit: bool, now: chrono::DateTime<chrono::Utc>) -> bool {
    let settled = read.iter().rev().find(|c| c.transaction_id == id).and_then(|c| c.settlement_date.clone());
    let Some(settled) = settled.and_then(|d| d.parse().ok()) else { return true };
    let (next_cutoff, _) = ach_core::calendar::next_cutoff_after(now);
    !credit || next_cutoff <= ach_core::lifecycle::reversal_window_end(settled)
}

/// The current status of a transaction by what the feed reported last, and whether
/// the R is a void.
fn current(read: &[StatusChange], id: &str) -> Option<(Status, bool)> {
    read.iter()
        .rev()
        .find(|c| c.transaction_id == id)
        .map(|c| (c.status, c.reason.as_deref() == Some("Voided")))
}

fn allowed(from: Status, to: Status) -> bool {
    matches!(
        (from, to),
        (Status::A, Status::B | Status::R) | (Status::B, Status::S | Status::R) | (Status::S, Status::R)
    )
}

#[test]
fn interleaved_operations_appear_exactly_once_in_commit_order() {
    let w = World::new("2026-01-12 09:00");
    let mut rng = Lcg(0x5eed_ac4f_eed5);
    let mut tenants: Vec<Tenant> = (0..3)
        .map(|_| {
            let (id, caller) = w.partner();
            let merchants = (0..2)
                .map(|_| {
                    let (m, _, mc) = w.roomy_merchant(&id, &caller, &["PPD"]);
                    (m, mc)
                })
                .collect();
            Tenant { id, caller, merchants, cursor: "0".into(), read: Vec::new(), direct: Vec::new() }
        })
        .collect();
    let mut txns: HashMap<String, Txn> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut moves = 0;
    let mut done = HashMap::<&str, usize>::new();
    for step in 0..600u64 {
        let roll = rng.below(100);
        if roll < 30 || order.is_empty() {
            let p = rng.below(tenants.len());
            let m = rng.below(2);
            let t = &mut tenants[p];
            let kind = if rng.below(3) == 0 { "credit" } else { "debit" };
            let v = transaction(&t.merchants[m].0, kind, &amount(100 + step));
            let id = w.create(&t.id, &t.caller, &v).unwrap();
            t.direct.push((id.clone(), Status::A, None, moves));
            let txn = Txn {
                partner: p,
                merchant: m,
                reversal_of: None,
                reversed_by: None,
                credit: kind == "credit",
            };
            txns.insert(id.clone(), txn);
            order.push(id);
            *done.entry("create").or_default() += 1;
        } else if roll < 70 {
            // Void, reverse or return a transaction; the feed read up to date first
            // predicts whether the lifecycle allows it.
            let id = order[rng.below(order.len())].clone();
            let p = txns[&id].partner;
            while tenants[p].step(&w) > 0 {}
            let t = &mut tenants[p];
            let (status, voided) = current(&t.read, &id).unwrap();
            match roll % 3 {
                0 => {
                    let result = w.void(&t.id, &t.caller, &id);
                    assert_eq!(result.is_ok(), status == Status::A, "void {id} in {status:?}: {result:?}");
                    if result.is_ok() {
                        t.direct.push((id, Status::R, Some("Voided".into()), moves));
                        *done.entry("void").or_default() += 1;
                    }
                }
                1 => {
                    let txn = &txns[&id];
                    let reversal_state = txn.reversed_by.as_ref().and_then(|r| current(&t.read, r));
                    let may = status == Status::S
                        && txn.reversal_of.is_none()
                        && reversal_state.is_none_or(|(s, _)| s == Status::R)
                        && within_window(&t.read, &id, txn.credit, w.engine.now());
                    let result = w.reverse(&t.id, &t.caller, &id);
                    assert_eq!(result.is_ok(), may, "reverse {id} in {status:?} ({voided}): {result:?}");
                    if let Ok(Outcome::TransactionReversed { reversal_id, .. }) = result {
                        t.direct.push((reversal_id.clone(), Status::A, None, moves));
                        let (partner, merchant) = (txns[&id].partner, txns[&id].merchant);
                        txns.get_mut(&id).unwrap().reversed_by = Some(reversal_id.clone());
                        let credit = !txns[&id].credit;
                        let txn = Txn { partner, merchant, reversal_of: Some(id), reversed_by: None, credit };
                        txns.insert(reversal_id.clone(), txn);
                        order.push(reversal_id);
                        *done.entry("reverse").or_default() += 1;
                    }
                }
                _ => {
                    let code = ["R01", "R02", "R03"][rng.below(3)];
                    let result = w.return_(&id, code);
                    let may = matches!(status, Status::B | Status::S);
                    assert_eq!(result.is_ok(), may, "return {id} in {status:?}: {result:?}");
                    if result.is_ok() {
                        t.direct.push((id, Status::R, Some(code.into()), moves));
                        *done.entry("return").or_default() += 1;
                    }
                }
            }
        } else if roll < 82 {
            let hours = 1 + rng.below(30) as i64;
            w.set_clock(w.engine.now() + chrono::Duration::hours(hours));
            moves += 1;
        } else {
            let p = rng.below(tenants.len());
            tenants[p].step(&w);
            if rng.below(4) == 0 {
                // A fresh read from "0" starts with everything read so far.
                let t = &tenants[p];
                let full = w.changes(&t.id, &t.caller);
                assert_eq!(&full[..t.read.len()], &t.read[..]);
            }
        }
    }
    for (p, t) in tenants.iter_mut().enumerate() {
        while t.step(&w) > 0 {}
        let full = w.engine.status_changes(&t.caller, &t.id, "0").unwrap();
        assert_eq!(full.changes, t.read, "pages read in small steps equal one read from 0");
        assert_eq!(full.new_pointer, t.cursor);
        check_feed(t, p, &txns);
        for (m, (merchant, merchant_caller)) in t.merchants.iter().enumerate() {
            let events = w.events(merchant_caller);
            let expected: Vec<&StatusChange> =
                t.read.iter().filter(|c| txns[&c.transaction_id].merchant == m).collect();
            assert_eq!(events.iter().map(|e| &e.change).collect::<Vec<_>>(), expected, "{merchant}");
            for (i, e) in events.iter().enumerate() {
                assert_eq!(e.id, format!("evt_{}", i + 1));
                assert_eq!(e.occurred_at, e.change.change_timestamp);
            }
        }
    }
    // Every transaction has its A exactly once, in exactly its partner's feed.
    let total: usize = tenants.iter().map(|t| t.read.iter().filter(|c| c.status == Status::A).count()).sum();
    assert_eq!(total, order.len());
    for kind in ["create", "void", "reverse", "return"] {
        assert!(done.get(kind).copied().unwrap_or(0) >= 5, "too few {kind}s to mean anything: {done:?}");
    }
    assert_eq!(w.engine.audit_usage(), Ok(Ok(())), "usage counters agree with the transactions");
    let settled = tenants.iter().flat_map(|t| &t.read).filter(|c| c.status == Status::S).count();
    assert!(settled >= 20, "{settled}");
}

fn check_feed(t: &Tenant, partner: usize, txns: &HashMap<String, Txn>) {
    // The changes operations made, in the order they committed.
    let direct: Vec<(String, Status, Option<String>)> = t
        .read
        .iter()
        .filter(|c| matches!(c.status, Status::A | Status::R))
        .map(|c| (c.transaction_id.clone(), c.status, c.return_code.clone().or(c.reason.clone())))
        .collect();
    let expected: Vec<_> = t.direct.iter().map(|(id, s, why, _)| (id.clone(), *s, why.clone())).collect();
    assert_eq!(direct, expected);
    // The clock's changes (B, S) sit between operations of different clock epochs.
    let mut last_epoch = None;
    let mut clock_since = false;
    let mut epochs = t.direct.iter().map(|d| d.3);
    for c in &t.read {
        if matches!(c.status, Status::A | Status::R) {
            let epoch = epochs.next();
            assert!(!(clock_since && last_epoch == epoch), "a clock change between two operations: {c:?}");
            last_epoch = epoch;
            clock_since = false;
        } else {
            clock_since = true;
        }
    }
    // Per transaction: no status twice, only allowed edges, starting from A.
    let mut seen: HashMap<&str, Vec<Status>> = HashMap::new();
    for c in &t.read {
        assert_eq!(txns[&c.transaction_id].partner, partner, "another partner's change");
        seen.entry(&c.transaction_id).or_default().push(c.status);
    }
    for (id, statuses) in &seen {
        assert_eq!(statuses[0], Status::A, "{id}: {statuses:?}");
        assert!(statuses.windows(2).all(|p| allowed(p[0], p[1])), "{id}: {statuses:?}");
    }
    // Eastern wall time never goes back (no DST fall-back in the window).
    assert!(t.read.windows(2).all(|p| p[0].change_timestamp <= p[1].change_timestamp));
}

#[test]
fn concurrent_writers_and_readers_see_each_acknowledged_change_once() {
    let dir = tempfile::tempdir().unwrap();
    let w = World::with(Engine::open(&dir.path().join("ach.redb"), options("2026-03-16 10:00")).unwrap());
    let tenants: Vec<(String, Caller, Vec<String>)> = (0..2)
        .map(|_| {
            let (p, pc) = w.partner();
            let merchants = (0..2).map(|_| w.roomy_merchant(&p, &pc, &["PPD"]).0).collect();
            (p, pc, merchants)
        })
        .collect();
    let engine = Arc::new(w.engine);
    let writing = Arc::new(AtomicBool::new(true));
    let readers: Vec<_> = tenants
        .iter()
        .map(|(p, pc, _)| {
            let (engine, writing, p, pc) = (engine.clone(), writing.clone(), p.clone(), pc.clone());
            std::thread::spawn(move || {
                let (mut cursor, mut read) = ("0".to_owned(), Vec::new());
                loop {
                    let last = !writing.load(Ordering::SeqCst);
                    let page = engine.status_changes(&pc, &p, &cursor).unwrap();
                    read.extend(page.changes);
                    cursor = page.new_pointer;
                    if last {
                        return read;
                    }
                    std::thread::yield_now();
                }
            })
        })
        .collect();
    let writers: Vec<_> = (0..8)
        .map(|i| {
            let (p, pc, merchants) = tenants[i % 2].clone();
            let engine = engine.clone();
            std::thread::spawn(move || {
                (0..25u64)
                    .map(|n| {
                        let v = transaction(&merchants[i / 2 % 2], "debit", &amount(1000 * i as u64 + n + 1));
                        let op = Operation::CreateTransaction { partner_id: p.clone(), body: body(&v) };
                        match engine.execute(&pc, op) {
                            Ok(Outcome::TransactionCreated { transaction_id }) => transaction_id,
                            other => panic!("{other:?}"),
                        }
                    })
                    .collect::<Vec<String>>()
            })
        })
        .collect();
    let acknowledged: Vec<Vec<String>> = writers.into_iter().map(|h| h.join().unwrap()).collect();
    writing.store(false, Ordering::SeqCst);
    let read: Vec<Vec<StatusChange>> = readers.into_iter().map(|h| h.join().unwrap()).collect();
    let w = World::with(Arc::try_unwrap(engine).unwrap());
    assert_eq!(w.engine.audit_usage(), Ok(Ok(())));
    for (t, (p, pc, _)) in tenants.iter().enumerate() {
        let feed = w.changes(p, pc);
        assert_eq!(read[t], feed, "the concurrent reader saw the same feed, each change once");
        assert!(feed.iter().all(|c| c.status == Status::A));
        let ids: Vec<&String> = feed.iter().map(|c| &c.transaction_id).collect();
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "no duplicates");
        let mine: Vec<&Vec<String>> = acknowledged.iter().skip(t).step_by(2).collect();
        assert_eq!(ids.len(), mine.iter().map(|v| v.len()).sum::<usize>());
        for writer in mine {
            // Each writer's transactions appear in the order it was answered.
            let positions: Vec<usize> =
                writer.iter().map(|id| ids.iter().position(|x| *x == id).unwrap()).collect();
            assert!(positions.windows(2).all(|p| p[0] < p[1]), "{positions:?}");
        }
    }
}

/// 5,501 transactions created through batches of 1,000 (5,001 for one merchant, 500
/// for another), then the first merchant's 5,001 voided: 10,502 changes for the
/// partner, 10,002 events for the first merchant. Answers what the feed must hold.
/// Also answers an events pointer of the first merchant at position 2 (so exactly
/// 10,000 events follow it).
fn many() -> Many {
    let w = World::new("2026-03-16 10:00");
    w.screening_off();
    let (p, pc) = w.partner();
    let (m1, _, mc1) = w.roomy_merchant(&p, &pc, &["PPD"]);
    let (m2, _, mc2) = w.roomy_merchant(&p, &pc, &["PPD"]);
    let creates: Vec<(Caller, Operation)> = (0..5_501u64)
        .map(|n| {
            let m = if n < 5_001 { &m1 } else { &m2 };
            let v = transaction(m, "debit", &amount(100 + n));
            (pc.clone(), Operation::CreateTransaction { partner_id: p.clone(), body: body(&v) })
        })
        .collect();
    let mut ids = Vec::new();
    let mut at_two = String::new();
    let (head, rest) = creates.split_at(2);
    for batch in std::iter::once(head).chain(rest.chunks(1_000)) {
        if ids.len() == 2 {
            at_two = w.engine.events(&mc1, None).unwrap().new_pointer;
        }
        for r in w.engine.execute_batch(batch.to_vec()) {
            match r {
                Ok(Outcome::TransactionCreated { transaction_id }) => ids.push(transaction_id),
                other => panic!("{other:?}"),
            }
        }
    }
    let voids: Vec<(Caller, Operation)> = ids[..5_001]
        .iter()
        .map(|id| {
            (pc.clone(), Operation::VoidTransaction { partner_id: p.clone(), transaction_id: id.clone() })
        })
        .collect();
    for (batch, voided) in voids.chunks(1_000).zip(ids[..5_001].chunks(1_000)) {
        let want: Vec<Result<Outcome, Refusal>> =
            voided.iter().map(|id| Ok(Outcome::TransactionVoided { transaction_id: id.clone() })).collect();
        assert_eq!(w.engine.execute_batch(batch.to_vec()), want);
    }
    let mut expected: Vec<(String, Status)> = ids.iter().map(|id| (id.clone(), Status::A)).collect();
    expected.extend(ids[..5_001].iter().map(|id| (id.clone(), Status::R)));
    Many { w, p, pc, merchants: [mc1, mc2], expected, at_two }
}

struct Many {
    w: World,
    p: String,
    pc: Caller,
    merchants: [Caller; 2],
    expected: Vec<(String, Status)>,
    at_two: String,
}

#[test]
fn pages_hold_at_most_10000_and_continue_without_loss() {
    let Many { w, p, pc, merchants: [mc1, mc2], expected, at_two } = many();
    let pairs = |changes: &[StatusChange]| -> Vec<(String, Status)> {
        changes.iter().map(|c| (c.transaction_id.clone(), c.status)).collect()
    };
    assert_eq!(PAGE_LIMIT, 10_000);
    let first = w.engine.status_changes(&pc, &p, "0").unwrap();
    assert_eq!(first.changes.len(), PAGE_LIMIT);
    assert_eq!(pointer_position(&first.new_pointer), Some(10_000));
    let second = w.engine.status_changes(&pc, &p, &first.new_pointer).unwrap();
    assert_eq!(second.changes.len(), 502);
    let third = w.engine.status_changes(&pc, &p, &second.new_pointer).unwrap();
    assert!(third.changes.is_empty());
    assert_eq!(third.new_pointer, second.new_pointer);
    let mut read = pairs(&first.changes);
    read.extend(pairs(&second.changes));
    assert_eq!(read, expected, "every change once, in the order the batches answered");

    let e1 = w.engine.events(&mc1, None).unwrap();
    assert_eq!((e1.events.len(), e1.exists_more_events), (PAGE_LIMIT, true));
    let e1b = w.engine.events(&mc1, Some(&e1.new_pointer)).unwrap();
    assert_eq!((e1b.events.len(), e1b.exists_more_events), (2, false));
    assert_eq!(e1b.events.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["evt_10001", "evt_10002"]);
    // Exactly 10,000 waiting: one full page, and nothing more to come.
    let exact = w.engine.events(&mc1, Some(&at_two)).unwrap();
    assert_eq!((exact.events.len(), exact.exists_more_events), (PAGE_LIMIT, false));
    assert_eq!(exact.new_pointer, e1b.new_pointer);
    let e1c = w.engine.events(&mc1, Some(&e1b.new_pointer)).unwrap();
    assert_eq!((e1c.events.len(), e1c.exists_more_events, &e1c.new_pointer), (0, false, &e1b.new_pointer));
    let e2 = w.engine.events(&mc2, None).unwrap();
    assert_eq!((e2.events.len(), e2.exists_more_events), (500, false));
    let changes = |page: &ach_core::engine::EventsPage| -> Vec<StatusChange> {
        page.events.iter().map(|e| e.change.clone()).collect()
    };
    let mut m1 = pairs(&changes(&e1));
    m1.extend(pairs(&changes(&e1b)));
    let in_m2: HashSet<String> = pairs(&changes(&e2)).into_iter().map(|(id, _)| id).collect();
    let expected_m1: Vec<(String, Status)> =
        expected.iter().filter(|(id, _)| !in_m2.contains(id)).cloned().collect();
    assert_eq!(m1, expected_m1);
    assert_eq!(in_m2.len(), 500);

    // A change after the end: the last pointers pick it up, and nothing else.
    let last = e2.events[499].change.transaction_id.clone();
    w.void(&p, &pc, &last).unwrap();
    let after = w.engine.status_changes(&pc, &p, &third.new_pointer).unwrap();
    assert_eq!(pairs(&after.changes), [(last.clone(), Status::R)]);
    let after = w.engine.events(&mc2, Some(&e2.new_pointer)).unwrap();
    assert_eq!(pairs(&changes(&after)), [(last, Status::R)]);
    assert!(w.engine.events(&mc1, Some(&e1c.new_pointer)).unwrap().events.is_empty());
}

fn assert_refused_pointer(result: Result<impl std::fmt::Debug, Refusal>, what: &str) {
    let f = result.unwrap_err();
    assert_eq!(f.message(), "Failed to accept this transaction", "{what}");
    assert_eq!(f.errors().len(), 1, "{what}");
    assert_eq!(f.errors()[0].field, "pointer", "{what}");
    assert!(f.errors()[0].message.len() < 200, "the pointer is not echoed back");
}

#[test]
fn forged_pointers_are_refused_and_0_restarts() {
    let w = World::new("2026-03-16 10:00");
    let (p, pc) = w.partner();
    let (m, _, mc) = w.roomy_merchant(&p, &pc, &["PPD"]);
    for n in 0..5 {
        w.debit(&p, &pc, &m, &amount(100 + n));
    }
    let page = w.engine.status_changes(&pc, &p, "0").unwrap();
    let events = w.engine.events(&mc, None).unwrap();
    let (pointer, event_pointer) = (page.new_pointer.clone(), events.new_pointer.clone());
    assert_eq!(pointer.len(), ach_core::secrets::POINTER_LEN);

    const URL_SAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut rng = Lcg(42);
    let mut forged: Vec<String> =
        (0..20).map(|_| (0..pointer.len()).map(|_| URL_SAFE[rng.below(64)] as char).collect()).collect();
    for original in [&pointer, &event_pointer] {
        for i in 0..original.len() {
            let mut bytes = original.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            forged.push(String::from_utf8(bytes).unwrap());
        }
    }
    let huge = "A".repeat(1 << 20);
    for odd in ["", "-1", "1", "00", " 0", "0 ", "+0", "null", huge.as_str()] {
        forged.push(odd.to_owned());
    }
    forged.push(format!("{pointer}="));
    forged.push(pointer.to_uppercase());
    forged.retain(|f| *f != pointer && *f != event_pointer);
    for f in &forged {
        let short = &f[..f.len().min(40)];
        assert_refused_pointer(w.engine.status_changes(&pc, &p, f), short);
        assert_refused_pointer(w.engine.events(&mc, Some(f)), short);
    }
    // Each feed's pointer is refused by the other feed.
    assert_refused_pointer(w.engine.status_changes(&pc, &p, &event_pointer), "an events pointer");
    assert_refused_pointer(w.engine.events(&mc, Some(&pointer)), "a status pointer");

    // "0" restarts from the beginning, however far a client has read.
    w.debit(&p, &pc, &m, "9.99");
    let again = w.engine.status_changes(&pc, &p, "0").unwrap();
    assert_eq!(again.changes.len(), 6);
    assert_eq!(again.changes[..5], page.changes[..]);
    assert_eq!(w.engine.status_changes(&pc, &p, &pointer).unwrap().changes, again.changes[5..]);
    let restart = w.engine.events(&mc, Some("0")).unwrap();
    assert_eq!(restart, w.engine.events(&mc, None).unwrap());
    assert_eq!(restart.events.len(), 6);
    // A genuine pointer still works after every refusal.
    assert_eq!(w.engine.events(&mc, Some(&event_pointer)).unwrap().events.len(), 1);
}
