//! Batches answer exactly as single operations do.
//!
//! `execute_batch` keeps per-transaction state in memory (decoded merchants and
//! partners, usage counters and rolling-period sums, feed sequence numbers) and
//! writes it back before the commit. This model test runs the same random
//! operations twice: on engine A one `execute` each, on engine B grouped into
//! random batches, with clock moves, limit changes, voids and returns landing in
//! the middle of batches. Every answer of B must equal A's (ids aside), both
//! engines' usage counters must equal a recomputation after every batch, both
//! feeds must report the same statuses in the same order, and the records must
//! agree with each other. Half of B's batches are prepared first
//! (`Engine::prepare`, then `execute_prepared`), as the HTTPS server runs them.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, Engine, Operation, Outcome, Refusal};
use ach_core::limits::Limits;
use ach_core::Money;
use ach_tests::world::{et, open_application, options, roomy_limits, transaction, World};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Step {
    /// A debit or credit of a merchant; `account` picks one of four accounts.
    Create { merchant: usize, cents: u32, credit: bool, account: u8 },
    /// Void the `pick`-th transaction created in an earlier batch.
    Void { pick: usize },
    /// Return the `pick`-th transaction created in an earlier batch.
    Return { pick: usize },
    /// Move the sandbox clock (cut-offs and settlements run).
    Advance { hours: u32 },
    /// Change a merchant's daily count and period settings.
    Limits { merchant: usize, daily: u64, period_days: u32, period_count: u64 },
    /// Change the partner's overall daily dollar limit.
    Overall { dollars: u32 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0..2usize, 100..90_000u32, any::<bool>(), 0..4u8)
            .prop_map(|(merchant, cents, credit, account)| Step::Create { merchant, cents, credit, account }),
        2 => any::<usize>().prop_map(|pick| Step::Void { pick }),
        1 => any::<usize>().prop_map(|pick| Step::Return { pick }),
        2 => (1..40u32).prop_map(|hours| Step::Advance { hours }),
        1 => (0..2usize, 1..6u64, 1..4u32, 2..9u64).prop_map(|(merchant, daily, period_days, period_count)| {
            Step::Limits { merchant, daily, period_days, period_count }
        }),
        1 => (20..3_000u32).prop_map(|dollars| Step::Overall { dollars }),
    ]
}

/// One engine with its partner and two merchants.
struct Side {
    w: World,
    partner_id: String,
    partner: Caller,
    merchants: Vec<String>,
    created: Vec<String>,
    now: chrono::DateTime<chrono::Utc>,
}

const START: &str = "2026-11-20 09:00";

fn side() -> Side {
    let w = World::with(Engine::in_memory(options(START)).unwrap());
    let (partner_id, partner) = w.partner();
    let mut limits = roomy_limits();
    limits.daily_count = Some(4);
    limits.period_days = Some(2);
    limits.period_count = Some(6);
    let merchants = (0..2)
        .map(|_| w.merchant_with(&partner_id, &partner, &open_application(&["PPD"]), limits.clone()).0)
        .collect();
    Side { w, partner_id, partner, merchants, created: Vec::new(), now: et(START) }
}

impl Side {
    /// The operation for `step`, as this side names its objects; `known` is how
    /// many creates ended before the current batch.
    fn operation(&mut self, step: &Step, known: usize) -> Option<(Caller, Operation)> {
        let p = self.partner_id.clone();
        Some(match step {
            Step::Create { merchant, cents, credit, account } => {
                let amount = format!("{}.{:02}", cents / 100, cents % 100);
                let mut t = transaction(
                    &self.merchants[*merchant],
                    if *credit { "credit" } else { "debit" },
                    &amount,
                );
                t["customer"]["account_number"] = json!(format!("55500{account}"));
                (
                    self.partner.clone(),
                    Operation::CreateTransaction { partner_id: p, body: serde_json::to_vec(&t).unwrap() },
                )
            }
            Step::Void { pick } if known > 0 => {
                let transaction_id = self.created[pick % known].clone();
                (self.partner.clone(), Operation::VoidTransaction { partner_id: p, transaction_id })
            }
            Step::Return { pick } if known > 0 => {
                let transaction_id = self.created[pick % known].clone();
                let op =
                    Operation::RecordReturn { transaction_id, return_code: "R01".into(), return_date: None };
                (Caller::Operator, op)
            }
            Step::Advance { hours } => {
                self.now += chrono::Duration::hours(i64::from(*hours));
                (Caller::Operator, Operation::SetClock { now: self.now })
            }
            Step::Limits { merchant, daily, period_days, period_count } => {
                let limits = Limits {
                    daily_count: Some(*daily),
                    period_days: Some(*period_days),
                    period_count: Some(*period_count),
                    ..Limits::default()
                };
                (
                    Caller::Operator,
                    Operation::SetMerchantLimits { merchant_id: self.merchants[*merchant].clone(), limits },
                )
            }
            Step::Overall { dollars } => {
                let limits = Limits {
                    daily_amount: Some(Money::from_cents(i64::from(*dollars) * 100)),
                    ..Limits::default()
                };
                (Caller::Operator, Operation::SetPartnerLimits { partner_id: p, limits })
            }
            Step::Void { .. } | Step::Return { .. } => return None,
        })
    }

    /// Remember created ids in order.
    fn note(&mut self, answers: &[Result<Outcome, Refusal>]) {
        for a in answers {
            if let Ok(Outcome::TransactionCreated { transaction_id }) = a {
                self.created.push(transaction_id.clone());
            }
        }
    }

    /// Every status reported so far, in feed order except that changes made at the
    /// same instant are sorted (a cut-off originates its transactions in id order,
    /// and the two engines' ids differ): (time, index of the transaction in creation
    /// order, the change without its id).
    fn feed(&self) -> Vec<(String, usize, String)> {
        let mut feed: Vec<(String, usize, String)> = self
            .w
            .changes(&self.partner_id, &self.partner)
            .into_iter()
            .map(|c| {
                let i = self.created.iter().position(|id| *id == c.transaction_id).unwrap_or(usize::MAX);
                let mut v = serde_json::to_value(&c).unwrap();
                v["transaction_id"] = json!(null);
                (c.change_timestamp, i, v.to_string())
            })
            .collect();
        // Stable: the order of different instants is kept as the feed gave it.
        feed.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.cmp(&y.1)));
        feed
    }
}

/// An answer without its ids: the outcome's kind, or the refusal's status,
/// message and field problems.
fn shape(a: &Result<Outcome, Refusal>) -> String {
    match a {
        Ok(Outcome::TransactionCreated { .. }) => "created".into(),
        Ok(Outcome::TransactionVoided { .. }) => "voided".into(),
        Ok(Outcome::ReturnRecorded { .. }) => "returned".into(),
        Ok(Outcome::ClockSet { progress, .. }) => format!("clock {progress:?}"),
        Ok(Outcome::LimitsSet { limits, .. }) => format!("limits {limits:?}"),
        Ok(other) => format!("{other:?}"),
        Err(f) => format!("{} {} {:?}", f.status(), f.message(), f.errors()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn batches_answer_as_single_operations(
        steps in prop::collection::vec(step(), 1..60),
        cuts in prop::collection::vec(1..12usize, 1..60),
    ) {
        let (mut a, mut b) = (side(), side());
        let mut at = 0;
        let mut cut = cuts.iter().cycle();
        while at < steps.len() {
            let end = (at + cut.next().copied().unwrap_or(1)).min(steps.len());
            let known = b.created.len();
            let mut batch = Vec::new();
            for s in &steps[at..end] {
                let (Some(op_a), Some(op_b)) = (a.operation(s, known), b.operation(s, known)) else { continue };
                let answer_a = a.w.engine.execute(&op_a.0, op_a.1);
                a.note(std::slice::from_ref(&answer_a));
                batch.push((op_b, answer_a));
            }
            let (ops, expected): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
            // Every other batch through the server's path: each operation
            // prepared first (`Engine::prepare`), then `execute_prepared`.
            let answers = if end % 2 == 0 {
                b.w.engine.execute_batch(ops)
            } else {
                let prepared = ops.into_iter().map(|(caller, op)| (caller, b.w.engine.prepare(op))).collect();
                b.w.engine.execute_prepared(prepared)
            };
            b.note(&answers);
            prop_assert_eq!(answers.len(), expected.len());
            for (got, want) in answers.iter().zip(&expected) {
                prop_assert_eq!(shape(got), shape(want));
            }
            prop_assert_eq!(b.w.engine.audit_usage().unwrap(), Ok(()));
            prop_assert_eq!(a.w.engine.audit_usage().unwrap(), Ok(()));
            at = end;
        }
        prop_assert_eq!(a.created.len(), b.created.len());
        prop_assert_eq!(a.feed(), b.feed());
    }
}

/// A batch large enough to be prepared on several threads (`execute_batch` splits
/// batches of 256 operations and more across the cores) answers in order, exactly
/// as the same operations one by one: creates the daily and period counts refuse
/// in between, malformed bodies, clock moves and limit changes in the middle.
#[test]
fn a_large_batch_prepared_on_several_threads_answers_as_single_operations() {
    let (mut a, mut b) = (side(), side());
    let mut batch = Vec::new();
    for i in 0..900usize {
        let step = match i {
            _ if i % 97 == 96 => Step::Advance { hours: 7 },
            _ if i % 131 == 130 => {
                Step::Limits { merchant: i % 2, daily: 50, period_days: 3, period_count: 200 }
            }
            _ => Step::Create {
                merchant: i % 2,
                cents: u32::try_from((i * 7919) % 90_000 + 100).unwrap(),
                credit: i % 5 == 0,
                account: u8::try_from(i % 4).unwrap(),
            },
        };
        let (Some(op_a), Some(mut op_b)) = (a.operation(&step, 0), b.operation(&step, 0)) else {
            unreachable!()
        };
        if i % 11 == 3 {
            // A body the validator refuses (its message names the field).
            let bad = br#"{"merchant_id": 7}"#.to_vec();
            op_b.1 = Operation::CreateTransaction { partner_id: b.partner_id.clone(), body: bad.clone() };
            let bad_a = Operation::CreateTransaction { partner_id: a.partner_id.clone(), body: bad };
            let answer_a = a.w.engine.execute(&op_a.0, bad_a);
            batch.push((op_b, answer_a));
            continue;
        }
        let answer_a = a.w.engine.execute(&op_a.0, op_a.1);
        a.note(std::slice::from_ref(&answer_a));
        batch.push((op_b, answer_a));
    }
    let (ops, expected): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    let answers = b.w.engine.execute_batch(ops);
    b.note(&answers);
    assert_eq!(answers.len(), expected.len());
    let shapes: Vec<String> = answers.iter().map(shape).collect();
    let wanted: Vec<String> = expected.iter().map(shape).collect();
    assert_eq!(shapes, wanted);
    // Both kinds of answer occur, so the comparison means something.
    let count = |f: &dyn Fn(&String) -> bool| shapes.iter().filter(|s| f(s)).count();
    assert!(count(&|s| s == "created") > 50, "{} created", count(&|s| s == "created"));
    assert!(count(&|s| s.starts_with("422")) > 50, "{} malformed", count(&|s| s.starts_with("422")));
    assert!(count(&|s| s.contains("daily")) > 50, "{} over the daily count", count(&|s| s.contains("daily")));
    assert_eq!(b.w.engine.audit_usage().unwrap(), Ok(()));
    assert_eq!(a.feed(), b.feed());
}
