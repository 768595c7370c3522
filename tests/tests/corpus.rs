//! The shared JSON case corpus, run through the Rust validation layer.
#![allow(clippy::unwrap_used)]

use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use chrono::NaiveDate;

#[test]
fn every_corpus_case_gives_its_expected_verdict() {
    let cases = ach_tests::corpus();
    assert!(cases.len() >= 60, "corpus has only {} cases", cases.len());
    let directory = RoutingDirectory::embedded();
    let ctx = Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: &directory };
    let mut failures = Vec::new();
    for case in &cases {
        let kind = Kind::parse(&case.kind).unwrap();
        let verdict = check_bytes(kind, &case.body(), &ctx);
        let fields: Vec<(String, String)> = verdict
            .errors
            .iter()
            .map(|e| (e.field.clone(), serde_json::to_value(e.code).unwrap().as_str().unwrap().to_owned()))
            .collect();
        if verdict.valid != case.valid || verdict.message != case.message || fields != case.fields {
            failures.push(format!(
                "{} / {}: got valid={} message={:?} fields={fields:?}; expected valid={} message={:?} fields={:?}",
                case.kind, case.name, verdict.valid, verdict.message, case.valid, case.message, case.fields
            ));
        }
        // The printed form parses back to the same verdict.
        let printed: serde_json::Value = serde_json::from_str(&verdict.to_json()).unwrap();
        assert_eq!(printed["valid"], serde_json::Value::Bool(case.valid));
    }
    assert!(failures.is_empty(), "{} corpus failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn corpus_covers_every_kind_and_both_verdicts() {
    let cases = ach_tests::corpus();
    for kind in ["transaction", "customer", "merchant"] {
        assert!(cases.iter().any(|c| c.kind == kind && c.valid), "no valid {kind} case");
        assert!(cases.iter().any(|c| c.kind == kind && !c.valid), "no invalid {kind} case");
    }
}
