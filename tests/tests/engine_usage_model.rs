//! Model test: random creates, voids, returns and clock moves; after every step
//! every usage counter equals a recomputation from the stored transactions, and
//! the engine's accept/refuse verdicts match a model of the daily count limit.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use ach_core::engine::{Caller, Operation};
use ach_tests::world::{open_application, roomy_limits, transaction, World};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Step {
    Create { merchant: usize, cents: u32, credit: bool },
    Void { pick: usize },
    Return { pick: usize },
    Advance { hours: u32 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..2usize, 100..50_000u32, any::<bool>()).prop_map(|(merchant, cents, credit)| Step::Create { merchant, cents, credit }),
        2 => any::<usize>().prop_map(|pick| Step::Void { pick }),
        1 => any::<usize>().prop_map(|pick| Step::Return { pick }),
        2 => (1..60u32).prop_map(|hours| Step::Advance { hours }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn counters_always_equal_a_recomputation(steps in prop::collection::vec(step(), 1..40)) {
        let w = World::new("2026-11-20 09:00");
        let (p, pc) = w.partner();
        let mut limits = roomy_limits();
        limits.daily_count = Some(3);
        let merchants: Vec<String> = (0..2).map(|_| w.merchant_with(&p, &pc, &open_application(&["PPD"]), limits.clone()).0).collect();
        // Model: live (not voided) transactions per (merchant, Eastern day).
        let mut live: HashMap<(usize, chrono::NaiveDate), u64> = HashMap::new();
        let mut created: Vec<(String, usize, chrono::NaiveDate)> = Vec::new();
        let mut voided: Vec<bool> = Vec::new();
        let mut now = ach_tests::world::et("2026-11-20 09:00");
        let mut n = 0u32;
        for s in steps {
            match s {
                Step::Create { merchant, cents, credit } => {
                    n += 1;
                    let amount = format!("{}.{:02}", cents / 100, cents % 100);
                    let mut t = transaction(&merchants[merchant], if credit { "credit" } else { "debit" }, &amount);
                    t["customer"]["account_number"] = json!(format!("7700{n:05}"));
                    let day = ach_core::calendar::eastern_date(now);
                    let used = live.get(&(merchant, day)).copied().unwrap_or(0);
                    match w.create(&p, &pc, &t) {
                        Ok(id) => {
                            prop_assert!(used < 3, "accepted a 4th transaction on {day}");
                            *live.entry((merchant, day)).or_default() += 1;
                            created.push((id, merchant, day));
                            voided.push(false);
                        }
                        Err(f) => {
                            prop_assert!(used >= 3, "refused below the limit: {}", f.message());
                            prop_assert_eq!(f.message(), "You have exceeded the allowed max daily num checks for this merchant");
                        }
                    }
                }
                Step::Void { pick } if !created.is_empty() => {
                    let i = pick % created.len();
                    let (id, merchant, day) = created[i].clone();
                    let op = Operation::VoidTransaction { partner_id: p.clone(), transaction_id: id };
                    if w.run(&pc, op).is_ok() {
                        prop_assert!(!voided[i]);
                        voided[i] = true;
                        *live.get_mut(&(merchant, day)).unwrap() -= 1;
                    }
                }
                Step::Return { pick } if !created.is_empty() => {
                    let i = pick % created.len();
                    let op = Operation::RecordReturn { transaction_id: created[i].0.clone(), return_code: "R01".into(), return_date: None };
                    let _ = w.run(&Caller::Operator, op);
                }
                Step::Advance { hours } => {
                    now += chrono::Duration::hours(i64::from(hours));
                    w.engine.execute(&Caller::Operator, Operation::SetClock { now }).unwrap();
                }
                _ => {}
            }
            prop_assert_eq!(w.engine.audit_usage().unwrap(), Ok(()));
        }
    }
}
