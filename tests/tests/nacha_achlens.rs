//! Files the engine's NACHA writer makes, checked by an independent reader: the
//! PyPI package `achlens` (`achlens validate FILE`, exit 1 on errors).
//!
//! The executable is `$ACHLENS`, or else `target/achlens-venv/bin/achlens`
//! (which `scripts/test-all` installs). Without either the test fails: it never
//! skips silently.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;

use ach_core::model::{AccountType, Direction};
use ach_core::nacha::{
    pop_identification, transaction_code, write, Addenda, Entry, NachaFile, Originator, Text,
};
use ach_core::Money;
use ach_tests::nacha_sample;

fn achlens() -> PathBuf {
    if let Some(path) = std::env::var_os("ACHLENS") {
        return PathBuf::from(path);
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/achlens-venv/bin/achlens");
    assert!(
        path.exists(),
        "achlens is not installed: run `python3 -m venv target/achlens-venv && \
         target/achlens-venv/bin/pip install achlens==0.1.7` (scripts/test-all does it), \
         or point ACHLENS at the executable"
    );
    path
}

fn originator() -> Originator {
    Originator {
        odfi_routing_number: "121042882".into(),
        immediate_destination: "231380104".into(),
        immediate_destination_name: "Federal Reserve Bank".into(),
        immediate_origin: "121042882".into(),
        immediate_origin_name: "My Bank Name".into(),
        same_day_cutoffs: ach_core::nacha::default_same_day_cutoffs(),
    }
}

/// Receivers at real routing numbers.
const RECEIVERS: [&str; 3] = ["231380104", "026009593", "091000019"];

/// A batch's entries: account type, direction and cents each.
type Entries = Vec<(AccountType, Direction, i64)>;

struct Spec {
    sec: &'static str,
    description: &'static str,
    entries: Entries,
}

fn build(specs: &[Spec]) -> NachaFile {
    let o = originator();
    let mut sequence = 0;
    let batches = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let entries: Vec<Entry> = spec
                .entries
                .iter()
                .enumerate()
                .map(|(j, &(account, direction, cents))| {
                    sequence += 1;
                    let routing = RECEIVERS[j % RECEIVERS.len()];
                    let mut e = Entry {
                        transaction_code: transaction_code(account, direction),
                        receiving_dfi: routing[..8].into(),
                        check_digit: char::from(routing.as_bytes()[8]),
                        account_number: format!("{}", 10_000_000 + sequence * 7919).into(),
                        amount: Money::from_cents(cents),
                        identification: format!("CUST{sequence:04}").into(),
                        name: format!("Receiver {sequence}").into(),
                        discretionary_data: Text::new(),
                        trace_number: o.trace_number(sequence),
                        addenda: Vec::new(),
                    };
                    match spec.sec {
                        "BOC" => e.identification = format!("{}", 1000 + sequence).into(),
                        "POP" => {
                            e.identification =
                                pop_identification(&format!("{}", 5000 + sequence), "Philadelphia", "PA")
                                    .unwrap()
                        }
                        "WEB" | "TEL" => e.discretionary_data = if j % 2 == 0 { "S" } else { "R" }.into(),
                        _ => {}
                    }
                    if spec.sec == "WEB" && j == 0 {
                        e.addenda.push(Addenda::Payment("Order 1234".into()));
                    }
                    e
                })
                .collect();
            nacha_sample::batch(&o, "Acme Widgets", (spec.sec, spec.description), i as u32 + 1, entries)
        })
        .collect();
    nacha_sample::file(&o, batches)
}

use AccountType::{Checking as C, Savings as S};
use Direction::{Credit as Cr, Debit as Dr};

fn spec(sec: &'static str, description: &'static str, entries: Entries) -> Spec {
    Spec { sec, description, entries }
}

/// A file of one batch.
fn one(sec: &'static str, description: &'static str, entries: Entries) -> NachaFile {
    build(&[spec(sec, description, entries)])
}

fn files() -> Vec<(&'static str, NachaFile)> {
    vec![
        ("ppd-debits", one("PPD", "UTILITY", vec![(C, Dr, 12_345), (S, Dr, 1)])),
        ("ppd-payroll", one("PPD", "PAYROLL", vec![(C, Cr, 250_000), (S, Cr, 9_999_999_999)])),
        ("ppd-retry", one("PPD", "RETRY PYMT", vec![(C, Dr, 2_500), (S, Dr, 9_900)])),
        ("ccd-mixed", one("CCD", "VENDOR PAY", vec![(C, Cr, 500_000), (C, Dr, 125), (S, Dr, 77)])),
        ("web", one("WEB", "PURCHASE", vec![(C, Dr, 4_999), (S, Dr, 10_000), (C, Cr, 300)])),
        ("tel", one("TEL", "PAYMENT", vec![(C, Dr, 5_000), (S, Dr, 6_000)])),
        ("boc", one("BOC", "CHECK PYMT", vec![(C, Dr, 2_500_000), (C, Dr, 100)])),
        ("pop", one("POP", "PURCHASE", vec![(C, Dr, 250_500)])),
        (
            "several-batches",
            build(&[
                spec("PPD", "PAYROLL", vec![(C, Cr, 100), (S, Cr, 200)]),
                spec("PPD", "UTILITY", vec![(C, Dr, 300)]),
                spec("WEB", "PURCHASE", (0..25).map(|i| (C, Dr, 1_000 + i)).collect()),
                spec("CCD", "VENDOR PAY", vec![(C, Cr, 42), (S, Dr, 43)]),
            ]),
        ),
    ]
}

#[test]
fn achlens_finds_no_errors_in_written_files() {
    let achlens = achlens();
    let dir = tempfile::tempdir().unwrap();
    for (name, file) in files() {
        let path = dir.path().join(format!("{name}.ach"));
        std::fs::write(&path, write(&file).unwrap()).unwrap();
        let out = Command::new(&achlens).arg("validate").arg(&path).output().unwrap();
        assert!(
            out.status.success(),
            "achlens refused {name}: {}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["valid"], true, "{name}: {report}");
        assert_eq!(report["counts"]["error"], 0, "{name}: {report}");
        // achlens knows PPD, CCD and WEB: those files draw no finding at all; for
        // TEL, BOC and POP its only remark is that it does not know the class.
        let knows = file.batches.iter().all(|b| matches!(b.sec_code.as_str(), "PPD" | "CCD" | "WEB"));
        let findings = report["findings"].as_array().unwrap();
        if knows {
            assert!(findings.is_empty(), "{name}: {report}");
        } else {
            assert!(findings.iter().all(|f| f["rule_id"] == "BH004"), "{name}: {report}");
        }
    }
}

#[test]
fn achlens_does_refuse_a_broken_file() {
    // The check has teeth: a tampered amount breaks the controls.
    let achlens = achlens();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.ach");
    let (_, file) = files().remove(0);
    let text = String::from_utf8(write(&file).unwrap()).unwrap().replacen("0000012345", "0000012346", 1);
    std::fs::write(&path, text).unwrap();
    let out = Command::new(&achlens).arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
}

/// The files the engine itself writes at its cut-offs (a mix of classes,
/// directions, account types, a reversal, a prenote and micro-entries) pass
/// achlens with no error.
#[test]
fn achlens_finds_no_errors_in_the_engines_own_files() {
    use ach_tests::world::{transaction, World};
    let achlens = achlens();
    let dir = tempfile::tempdir().unwrap();
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, m) = w.tenant(&["PPD", "CCD", "WEB", "TEL", "BOC", "POP"]);
    let mut first = None;
    for (n, class) in ["PPD", "CCD", "WEB", "TEL", "BOC", "POP"].iter().enumerate() {
        for (k, kind) in ["debit", "credit"].iter().enumerate() {
            if *kind == "credit" && matches!(*class, "TEL" | "BOC" | "POP") {
                continue;
            }
            let mut v = transaction(&m, kind, &format!("{}.{k}{n}", 10 + n));
            v["standard_entry_class"] = serde_json::json!(class);
            v["account_validation"] = ach_tests::world::outside_validation();
            v["customer"]["account_type"] =
                serde_json::json!(if n % 2 == 0 { "checking" } else { "savings" });
            if matches!(*class, "BOC" | "POP") {
                v["check_number"] = serde_json::json!(format!("{}", 2000 + n));
                v["state"] = serde_json::json!("NY");
                v["check_image_front"] = serde_json::json!("iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
                v["check_image_back"] = serde_json::json!("SUkqAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
            }
            let id = w.create(&partner_id, &partner, &v).unwrap_or_else(|e| panic!("{class} {kind}: {e:?}"));
            first.get_or_insert(id);
        }
    }
    // Same Day ACH entries (none held by screening): the 14:15 cut-off's own file.
    w.screening_off();
    for (n, (kind, class)) in [("debit", "PPD"), ("credit", "CCD"), ("debit", "WEB")].into_iter().enumerate()
    {
        let mut v = transaction(&m, kind, &format!("77.7{n}"));
        v["standard_entry_class"] = serde_json::json!(class);
        v["account_validation"] = ach_tests::world::outside_validation();
        v["same_day"] = serde_json::json!(true);
        w.create(&partner_id, &partner, &v).unwrap_or_else(|e| panic!("same day {class}: {e:?}"));
    }
    // An account validated by prenote, another by micro-entries.
    for (method, account) in [("prenote", "1234567"), ("micro_entries", "7654321")] {
        let customer = w.customer(&partner_id, &partner, &m, account);
        let body = serde_json::json!({"merchant_id": m, "method": method});
        let op = ach_core::engine::Operation::CreateValidation {
            partner_id: partner_id.clone(),
            customer_id: customer,
            body: body.to_string().into_bytes(),
        };
        w.run(&partner, op).unwrap_or_else(|e| panic!("{method}: {e:?}"));
    }
    w.at("2026-11-27 09:00");
    w.reverse(&partner_id, &partner, first.as_deref().unwrap()).unwrap();
    w.at("2026-11-27 18:00");
    let files = w.engine.origination_files().unwrap();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(
        files.iter().any(|f| f.entries == 3 && f.effective_date.to_string() == "2026-11-23"),
        "{files:?}"
    );
    for summary in files {
        let (_, bytes) = w.engine.origination_file(&summary.id).unwrap().unwrap();
        let path = dir.path().join(format!("{}.ach", summary.id));
        std::fs::write(&path, &bytes).unwrap();
        let out = Command::new(&achlens).arg("validate").arg(&path).output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(out.status.success(), "achlens refused {}: {report}", summary.id);
        assert_eq!(report["counts"]["error"], 0, "{}: {report}", summary.id);
    }
}
