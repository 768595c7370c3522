//! Over random histories of entries, reviews, voids and days: an entry held
//! for review never originates while held and never after a rejection, every
//! entry not held originates at its cut-off, and the origination files hold
//! exactly the entries the feeds report originated.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};

use ach_core::model::Status;
use ach_tests::router;
use ach_tests::world::{transaction, World, OPERATOR_KEY};
use proptest::prelude::*;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
enum Step {
    /// An entry to account `i`: credit or debit, of one of a few amounts.
    Entry(usize, bool, u32),
    /// Release (`true`) or reject the `n`-th open review, if any.
    Decide(usize, bool),
    /// The partner voids its `n`-th entry.
    Void(usize),
    /// The clock `h` hours on (cut-offs due run).
    Hours(u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => ((0..3usize), any::<bool>(), prop::sample::select(vec![1_000u32, 2_500, 150_000]))
            .prop_map(|(i, credit, cents)| Step::Entry(i, credit, cents)),
        2 => ((0..4usize), any::<bool>()).prop_map(|(n, release)| Step::Decide(n, release)),
        1 => (0..40usize).prop_map(Step::Void),
        2 => (1..30u32).prop_map(Step::Hours),
    ]
}

fn admin(w: &World, method: &str, path: &str) -> (u16, Value) {
    router::call(&w.engine, method, path, Some(OPERATOR_KEY), None)
}

/// The open reviews' transaction ids, oldest first.
fn open_reviews(w: &World) -> Vec<String> {
    let (status, v) = admin(w, "GET", "/admin/reviews");
    assert_eq!(status, 200, "{v}");
    v["payload"]["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["transaction_id"].as_str().unwrap().to_owned())
        .collect()
}

/// How many entries the origination files hold.
fn entries_in_files(w: &World) -> usize {
    let (_, list) = admin(w, "GET", "/admin/origination-files");
    list["payload"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let (_, file) =
                admin(w, "GET", &format!("/admin/origination-files/{}", f["id"].as_str().unwrap()));
            let text = file["payload"]["text"].as_str().unwrap().to_owned();
            ach_core::nacha::read(text.as_bytes())
                .unwrap()
                .file
                .batches
                .iter()
                .map(|b| b.entries.len())
                .sum::<usize>()
        })
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_held_entry_never_originates_until_released(steps in prop::collection::vec(step(), 1..40)) {
        let w = World::new("2026-11-23 09:00");
        // Tight rules, so that random histories hold often.
        let (status, v) = router::call(&w.engine, "PUT", "/admin/risk-rules", Some(OPERATOR_KEY),
            Some(&json!({"velocity": {"max_per_day": 2}, "amount_outlier": {"min_history": 2, "factor": 2}})));
        prop_assert_eq!(status, 200, "{}", v);
        let (p, pc) = w.partner();
        let (m, _) = w.merchant(&p, &pc, &["PPD"]);
        let mut made: Vec<String> = Vec::new();
        let mut created: BTreeMap<String, chrono::DateTime<chrono::Utc>> = BTreeMap::new();
        // Per entry: released (when), rejected, voided.
        let mut released: BTreeMap<String, chrono::DateTime<chrono::Utc>> = BTreeMap::new();
        let mut ended: BTreeSet<String> = BTreeSet::new();
        let mut ever_held: BTreeSet<String> = BTreeSet::new();
        for s in steps {
            match s {
                Step::Entry(i, credit, cents) => {
                    let kind = if credit { "credit" } else { "debit" };
                    let mut t = transaction(&m, kind, &format!("{}.{:02}", cents / 100, cents % 100));
                    t["customer"]["account_number"] = json!(format!("8000000{i}"));
                    t["customer"]["name"] = json!(format!("Payee {i}"));
                    let id = w.create(&p, &pc, &t).unwrap();
                    created.insert(id.clone(), w.engine.now());
                    made.push(id);
                    ever_held.extend(open_reviews(&w));
                }
                Step::Decide(n, release) => {
                    let open = open_reviews(&w);
                    if let Some(id) = open.get(n) {
                        let how = if release { "release" } else { "reject" };
                        let (status, v) = admin(&w, "POST", &format!("/admin/reviews/{id}/{how}"));
                        prop_assert_eq!(status, 200, "{}", v);
                        if release {
                            released.insert(id.clone(), w.engine.now());
                        } else {
                            ended.insert(id.clone());
                        }
                    }
                }
                Step::Void(n) => {
                    if let Some(id) = made.get(n) {
                        if w.void(&p, &pc, id).is_ok() {
                            ended.insert(id.clone());
                        }
                    }
                }
                Step::Hours(h) => {
                    let to = w.engine.now() + chrono::Duration::hours(i64::from(h));
                    w.set_clock(to);
                }
            }
        }
        let open: BTreeSet<String> = open_reviews(&w).into_iter().collect();
        let mut originated = 0usize;
        for id in &made {
            let history = w.history(&p, &pc, id);
            let b = history.iter().find(|c| c.status == Status::B);
            if let Some(b) = b {
                originated += 1;
                prop_assert!(!open.contains(id), "{id} originated while held");
                if ever_held.contains(id) {
                    let at = released.get(id);
                    prop_assert!(at.is_some(), "{id} was held and originated unreleased");
                    let stamp = ach_core::calendar::format_eastern_timestamp(*at.unwrap());
                    prop_assert!(b.change_timestamp >= stamp, "{id} originated before its release");
                }
                prop_assert!(!ended.contains(id) || history.iter().any(|c| c.status == Status::R), "{id}");
            } else if !open.contains(id) && !ended.contains(id) {
                // Neither held nor ended: no cut-off came since it could go.
                let eligible = released.get(id).unwrap_or(&created[id]);
                let (_, cutoff) = ach_core::calendar::next_cutoff_after(*eligible);
                prop_assert!(cutoff > w.engine.now(), "{id} missed the cut-off of {cutoff}: {history:?}");
            }
        }
        prop_assert_eq!(entries_in_files(&w), originated);
    }
}
