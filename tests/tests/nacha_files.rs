//! The NACHA reader and checker on the real files in `shared/data/nacha/`: what
//! each holds, and exactly which problems the reader and the checker find.

#![allow(clippy::unwrap_used)]

use ach_core::nacha::{check, read, Addenda, Parsed};
use ach_tests::real_nacha::{nacha_dir, REUSED_TRACES_20110805A};

fn parse(name: &str) -> Parsed {
    let path = nacha_dir().join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// name, batches, entries, total debit, total credit (cents), the reader's
/// problems and the checker's, as (record, field).
type Expected = (
    &'static str,
    usize,
    usize,
    i64,
    i64,
    &'static [(usize, &'static str)],
    &'static [(usize, &'static str)],
);

const FILES: &[Expected] = &[
    ("ppd-debit.ach", 1, 1, 100_000_000, 0, &[], &[]),
    ("ppd-credit.ach", 1, 1, 0, 100_000_000, &[], &[]),
    ("ccd-debit.ach", 1, 2, 500_125, 0, &[], &[]),
    ("web-credit.ach", 1, 2, 0, 10_799, &[], &[]),
    ("web-debit.ach", 3, 6, 15_000, 26_820, &[], &[]),
    // Real TEL entries often leave the payment type blank: the checker says so.
    ("tel-debit.ach", 1, 1, 50_000, 0, &[], &[(3, "payment_type_code")]),
    ("pop-debit.ach", 1, 1, 250_500, 0, &[], &[]),
    ("boc-debit.ach", 1, 1, 250_000, 0, &[], &[]),
    ("arc-debit.ach", 1, 1, 250_000, 0, &[], &[]),
    ("rck-debit.ach", 1, 1, 2_400, 0, &[], &[]),
    ("cor-read.ach", 1, 1, 0, 0, &[], &[]),
    // Effective entry date 000101: 2000-01-01, a Saturday and a holiday.
    ("return-WEB.ach", 2, 2, 12_354, 4_565, &[], &[(2, "effective_entry_date"), (6, "effective_entry_date")]),
    // The header is 91 characters (CRLF file); the WEB returns carry no payment type.
    (
        "issue702.ach",
        3,
        3,
        10_102,
        102,
        &[(1, "record")],
        &[(7, "payment_type_code"), (11, "payment_type_code")],
    ),
    ("NACHA_SAMPLE_TEL_REVERSAL.ach", 1, 2, 685_100, 685_100, &[], &[(4, "payment_type_code")]),
    // The file control claims 5 batches (there are 4) and the file stops at 93
    // records, without its blocking records. Each batch numbers its traces from
    // 0000001 again, so the later batches repeat the first's trace numbers.
    (
        "20110805A.ach",
        4,
        48,
        5_101_000,
        200,
        &[(93, "batch_count"), (93, "block_count")],
        &REUSED_TRACES_20110805A,
    ),
];

fn at(problems: &[ach_core::nacha::Problem]) -> Vec<(usize, &'static str)> {
    problems.iter().map(|p| (p.record, p.field)).collect()
}

#[test]
fn every_real_file_reads_with_exactly_the_expected_problems() {
    for &(name, batches, entries, debit, credit, read_problems, check_problems) in FILES {
        let p = parse(name);
        assert_eq!(p.file.batches.len(), batches, "{name}: batches");
        assert_eq!(p.entry_count(), entries, "{name}: entries");
        assert_eq!(p.total_debit().cents(), debit, "{name}: total debit");
        assert_eq!(p.total_credit().cents(), credit, "{name}: total credit");
        assert_eq!(at(&p.problems), read_problems, "{name}: reader {:?}", p.problems);
        assert_eq!(at(&check(&p)), check_problems, "{name}: checker");
        // The file control as written agrees with the entries, amounts and hash.
        let control = p.file_control.as_ref().unwrap();
        assert_eq!((control.total_debit.cents(), control.total_credit.cents()), (debit, credit), "{name}");
        assert!(p.batch_controls.iter().all(Option::is_some), "{name}: every batch has its control");
    }
}

#[test]
fn every_file_in_the_directory_is_covered() {
    let dir = nacha_dir();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".ach") {
            assert!(FILES.iter().any(|f| f.0 == name), "{name} has no expectations here");
        }
    }
}

#[test]
fn notification_of_change_carries_code_and_corrected_data() {
    let p = parse("cor-read.ach");
    let batch = &p.file.batches[0];
    assert_eq!(batch.sec_code, "COR");
    let noc = batch.entries[0].notice_of_change().unwrap();
    assert_eq!(noc.change_code, "C01");
    assert_eq!(noc.corrected_data, "1918171614");
    assert_eq!(noc.original_trace, "121042880000001");
    assert_eq!(noc.original_receiving_dfi, "12104288");
    assert_eq!(batch.entries[0].transaction_code, 21);
}

fn return_codes(name: &str) -> Vec<(String, String)> {
    let p = parse(name);
    p.file
        .batches
        .iter()
        .flat_map(|b| &b.entries)
        .filter_map(|e| e.return_addenda())
        .map(|r| (r.return_code.to_string(), r.original_trace.to_string()))
        .collect()
}

#[test]
fn returns_carry_their_reason_and_original_trace() {
    assert_eq!(
        return_codes("return-WEB.ach"),
        [("R01".into(), "091400600000001".into()), ("R03".into(), "091400600000003".into())]
    );
    let issue = return_codes("issue702.ach");
    let codes: Vec<&str> = issue.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(codes, ["R04", "R03", "R01"]);
    for (code, _) in &issue {
        assert!(ach_core::returns::lookup(code).is_some(), "{code} is a known return code");
    }
}

#[test]
fn class_specific_fields_of_real_entries() {
    let pop = parse("pop-debit.ach");
    let t = pop.file.batches[0].entries[0].pop_terminal();
    assert_eq!((t.check_serial.as_str(), t.city.as_str(), t.state.as_str()), ("123456", "PHIL", "PA"));
    let boc = parse("boc-debit.ach");
    assert_eq!(boc.file.batches[0].entries[0].identification, "123879654");
    let web = parse("web-credit.ach");
    let entries = &web.file.batches[0].entries;
    assert_eq!(entries[0].discretionary_data, "S");
    assert_eq!(entries[1].discretionary_data, "R");
    assert_eq!(entries[1].addenda, [Addenda::Payment("Monthly Membership Subscription".into())]);
    let reversal = parse("NACHA_SAMPLE_TEL_REVERSAL.ach");
    assert!(reversal.file.batches[0].is_reversal());
    assert_eq!(reversal.file.batches[0].service_class_code, 200);
}

#[test]
fn iat_batches_keep_their_addenda_verbatim() {
    let p = parse("20110805A.ach");
    let iat = &p.file.batches[2];
    assert_eq!(iat.sec_code, "IAT");
    let types: Vec<&str> = iat.entries[0]
        .addenda
        .iter()
        .map(|a| match a {
            Addenda::Other { type_code, .. } => type_code.as_str(),
            _ => "?",
        })
        .collect();
    assert_eq!(types, ["10", "11", "12", "13", "14", "15", "16"]);
}
