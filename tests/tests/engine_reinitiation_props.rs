//! Over random histories of debits, returns, retries and days: a
//! re-initiation is accepted exactly when the Rules allow it (the chain's
//! last entry, returned R01 or R09, fewer than two retries of its original
//! so far), so there is never a third retry and never one after another
//! return.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use ach_core::engine::{Operation, Outcome};
use ach_tests::world::{transaction, World};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    /// A new debit.
    Debit,
    /// The `i`-th newest entry returned with this code.
    Return(usize, &'static str),
    /// Re-initiate the `i`-th newest entry.
    Retry(usize),
    /// The clock a day on, past the cut-off.
    NextDay,
    /// A day on, then the newest entry returned with this code and retried.
    Chain(&'static str),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => Just(Step::Debit),
        3 => ((0..3usize), prop::sample::select(vec!["R01", "R09", "R01", "R09", "R02", "R10", "R08"]))
            .prop_map(|(i, code)| Step::Return(i, code)),
        3 => (0..3usize).prop_map(Step::Retry),
        2 => Just(Step::NextDay),
        4 => prop::sample::select(vec!["R01", "R09", "R01", "R02"]).prop_map(Step::Chain),
    ]
}

/// What the model knows of one entry.
#[derive(Debug, Default)]
struct Known {
    /// Its original (itself for an original).
    original: usize,
    /// Its return code, once returned.
    returned: Option<&'static str>,
    /// Whether it was retried.
    retried: bool,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_retry_is_accepted_exactly_when_the_rules_allow_it(steps in prop::collection::vec(step(), 1..60)) {
        let w = World::new("2026-11-02 10:00");
        w.screening_off();
        let (p, pc) = w.partner();
        let (m, _) = w.merchant(&p, &pc, &["PPD"]);
        let mut ids: Vec<String> = Vec::new();
        let mut known: Vec<Known> = Vec::new();
        let mut retries: BTreeMap<usize, usize> = BTreeMap::new();
        let expanded = steps.into_iter().flat_map(|s| match s {
            Step::Chain(code) => vec![Step::NextDay, Step::Return(0, code), Step::Retry(0)],
            other => vec![other],
        });
        for s in expanded {
            match s {
                Step::Debit => {
                    let id = w.create(&p, &pc, &transaction(&m, "debit", "25.00")).unwrap();
                    known.push(Known { original: ids.len(), ..Known::default() });
                    ids.push(id);
                }
                Step::Return(back, code) if back < ids.len() => {
                    let i = ids.len() - 1 - back;
                    if w.return_(&ids[i], code).is_ok() {
                        known[i].returned = Some(code);
                    }
                }
                Step::Return(..) => {}
                Step::Retry(back) if back < ids.len() => {
                    let i = ids.len() - 1 - back;
                    let k = &known[i];
                    let allowed = matches!(k.returned, Some("R01" | "R09"))
                        && !k.retried
                        && retries.get(&k.original).copied().unwrap_or(0) < 2;
                    let op = Operation::ReinitiateTransaction { partner_id: p.clone(), transaction_id: ids[i].clone(), same_day: false };
                    match w.run(&pc, op) {
                        Ok(Outcome::TransactionReinitiated { reinitiation_id, .. }) => {
                            prop_assert!(allowed, "entry {i} ({k:?}) was retried against the rules");
                            let original = k.original;
                            known[i].retried = true;
                            *retries.entry(original).or_default() += 1;
                            known.push(Known { original, ..Known::default() });
                            ids.push(reinitiation_id);
                        }
                        Ok(other) => prop_assert!(false, "{other:?}"),
                        Err(refusal) => {
                            prop_assert!(!allowed, "entry {i} ({k:?}) was refused: {refusal:?}");
                            prop_assert_eq!(refusal.status(), 409);
                        }
                    }
                }
                Step::Retry(_) => {}
                Step::Chain(_) => unreachable!("expanded above"),
                Step::NextDay => {
                    let to = w.engine.now() + chrono::Duration::days(1);
                    w.set_clock(to);
                }
            }
        }
        prop_assert!(retries.values().all(|n| *n <= 2), "{retries:?}");
    }
}
