//! Unit tests: each record layout, the writer's refusals, the reader's problems.

#![allow(clippy::unwrap_used)]

use chrono::{NaiveDate, NaiveTime};

use super::*;
use crate::money::Money;

pub(super) fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

pub(super) fn originator() -> Originator {
    Originator {
        odfi_routing_number: "121042882".into(),
        immediate_destination: "231380104".into(),
        immediate_destination_name: "FEDERAL RESERVE BANK".into(),
        immediate_origin: "121042882".into(),
        immediate_origin_name: "MY BANK NAME".into(),
        same_day_cutoffs: crate::nacha::default_same_day_cutoffs(),
    }
}

pub(super) fn entry(code: u8, amount: i64, sequence: u32) -> Entry {
    Entry {
        transaction_code: code,
        receiving_dfi: "23138010".into(),
        check_digit: '4',
        account_number: "12345678".into(),
        amount: Money::from_cents(amount),
        identification: "ID-1".into(),
        name: "RECEIVER ACCOUNT NAME".into(),
        discretionary_data: Text::new(),
        trace_number: originator().trace_number(sequence),
        addenda: Vec::new(),
    }
}

pub(super) fn batch(sec: &str, entries: Vec<Entry>) -> Batch {
    Batch {
        service_class_code: service_class_for(&entries),
        company_name: "NAME ON ACCOUNT".into(),
        company_discretionary_data: Text::new(),
        company_identification: "1234567890".into(),
        sec_code: sec.into(),
        company_entry_description: "PURCHASE".into(),
        company_descriptive_date: Text::new(),
        // A Monday.
        effective_entry_date: d(2026, 11, 30),
        settlement_date: Text::new(),
        originator_status_code: '1',
        odfi_identification: "12104288".into(),
        batch_number: 1,
        entries,
    }
}

pub(super) fn file(batches: Vec<Batch>) -> NachaFile {
    NachaFile {
        header: originator().file_header(d(2026, 11, 27), NaiveTime::from_hms_opt(18, 5, 0), 'A'),
        batches,
    }
}

fn lines(bytes: &[u8]) -> Vec<String> {
    std::str::from_utf8(bytes).unwrap().lines().map(str::to_string).collect()
}

fn written(f: &NachaFile) -> Vec<String> {
    lines(&write(f).unwrap())
}

#[test]
fn file_header_layout() {
    let l = written(&file(vec![batch("PPD", vec![entry(27, 100, 1)])]));
    assert_eq!(
        l[0],
        "101 231380104 1210428822611271805A094101FEDERAL RESERVE BANK   MY BANK NAME                   "
    );
}

#[test]
fn batch_header_and_control_layout() {
    let mut b = batch("PPD", vec![entry(27, 100_000_000, 1)]);
    b.company_entry_description = "REG.SALARY".into();
    let l = written(&file(vec![b]));
    assert_eq!(
        l[1],
        "5225NAME ON ACCOUNT                     1234567890PPDREG.SALARY      261130   1121042880000001"
    );
    assert_eq!(
        l[3],
        "822500000100231380100001000000000000000000001234567890                         121042880000001"
    );
}

#[test]
fn entry_layout_matches_a_real_ppd_debit() {
    let mut e = entry(27, 100_000_000, 1);
    e.identification = Text::new();
    let l = written(&file(vec![batch("PPD", vec![e])]));
    // ppd-debit.ach's entry, byte for byte.
    assert_eq!(
        l[2],
        "62723138010412345678         0100000000               RECEIVER ACCOUNT NAME   0121042880000001"
    );
}

#[test]
fn file_control_and_blocking() {
    let l = written(&file(vec![batch("PPD", vec![entry(27, 100_000_000, 1), entry(37, 5, 2)])]));
    assert_eq!(l.len(), 10);
    assert_eq!(l[5], format!("9000001000001000000020046276020000100000005000000000000{}", " ".repeat(39)));
    assert!(l[6..].iter().all(|r| r == &"9".repeat(94)));
    assert!(l.iter().all(|r| r.len() == RECORD_LEN));
}

#[test]
fn addenda_layouts() {
    let mut e = entry(22, 10_000, 1);
    e.discretionary_data = "S".into();
    e.addenda.push(Addenda::Payment("PAY-GATE payment".into()));
    let l = written(&file(vec![batch("WEB", vec![e])]));
    assert_eq!(l[2].as_bytes()[78], b'1');
    assert_eq!(l[3], format!("705PAY-GATE PAYMENT{}00010000001", " ".repeat(64)));

    let mut noc = entry(21, 0, 1);
    noc.addenda.push(Addenda::Change(ChangeEntry {
        change_code: "C01".into(),
        original_trace: "121042880000001".into(),
        original_receiving_dfi: "12104288".into(),
        corrected_data: "1918171614".into(),
        trace_number: "091012980000088".into(),
    }));
    let mut b = batch("COR", vec![noc]);
    b.company_entry_description = "VENDOR PAY".into();
    let l = written(&file(vec![b]));
    // cor-read.ach's addenda, byte for byte.
    assert_eq!(
        l[3],
        "798C01121042880000001      121042881918171614                                  091012980000088"
    );

    let mut ret = entry(26, 12_354, 1);
    ret.discretionary_data = "S".into();
    ret.addenda.push(Addenda::Return(ReturnEntry {
        return_code: "R01".into(),
        original_trace: "091400600000001".into(),
        date_of_death: Text::new(),
        original_receiving_dfi: "09100001".into(),
        information: Text::new(),
        trace_number: "121042887611242".into(),
    }));
    let l = written(&file(vec![batch("WEB", vec![ret])]));
    assert_eq!(l[3], format!("799R01091400600000001      09100001{}121042887611242", " ".repeat(44)));
}

#[test]
fn pop_places_serial_city_and_state() {
    let mut e = entry(27, 250_500, 1);
    e.identification = pop_identification("123456", "PHILADELPHIA", "PA").unwrap();
    let l = written(&file(vec![batch("POP", vec![e])]));
    assert_eq!(&l[2][39..54], "123456   PHILPA");
    let back = read(&write(&file(vec![batch("POP", vec![entry_with_pop()])])).unwrap()).unwrap();
    let t = back.file.batches[0].entries[0].pop_terminal();
    assert_eq!((t.check_serial.as_str(), t.city.as_str(), t.state.as_str()), ("123456789", "PHIL", "PA"));
    assert_eq!(pop_identification("1234567890", "X", "PA"), None);
}

fn entry_with_pop() -> Entry {
    let mut e = entry(27, 1, 1);
    e.identification = pop_identification("123456789", "PHIL", "PA").unwrap();
    e
}

#[test]
fn service_class_follows_the_entries() {
    assert_eq!(service_class_for(&[entry(22, 1, 1), entry(32, 1, 2)]), CREDITS_ONLY);
    assert_eq!(service_class_for(&[entry(27, 1, 1), entry(37, 1, 2)]), DEBITS_ONLY);
    assert_eq!(service_class_for(&[entry(22, 1, 1), entry(37, 1, 2)]), MIXED);
    use crate::model::{AccountType, Direction};
    assert_eq!(transaction_code(AccountType::Savings, Direction::Debit), 37);
    assert_eq!(transaction_code(AccountType::Checking, Direction::Credit), 22);
}

#[test]
fn round_trip_gives_the_same_model() {
    let mut web = entry(22, 10_000, 3);
    web.discretionary_data = "R".into();
    web.addenda = vec![Addenda::Payment("MONTHLY".into()), Addenda::Payment("SECOND".into())];
    let mut b2 = batch("WEB", vec![web]);
    b2.batch_number = 2;
    let f = file(vec![batch("PPD", vec![entry(27, 1, 1), entry(22, 9_999_999_999, 2)]), b2]);
    let parsed = read(&write(&f).unwrap()).unwrap();
    assert_eq!(parsed.problems, vec![]);
    assert_eq!(parsed.file, f);
    assert_eq!(check(&parsed), vec![]);
    assert_eq!(parsed.total_debit(), Money::from_cents(1));
    assert_eq!(parsed.total_credit(), Money::from_cents(9_999_999_999 + 10_000));
}

fn refusal(f: &NachaFile) -> (Place, &'static str, WriteIssue) {
    let e = write(f).unwrap_err();
    (e.place, e.field, e.issue)
}

const E0: Place = Place::Entry { batch: 0, entry: 0 };

#[test]
fn writer_refuses_fields_that_do_not_fit() {
    let mut f = file(vec![batch("PPD", vec![entry(27, 1, 1)])]);
    f.batches[0].company_name = "A NAME LONGER THAN 16".into();
    assert_eq!(
        refusal(&f),
        (Place::Batch(0), "company_name", WriteIssue::Field(FieldProblem::TooLong { max: 16 }))
    );
    let mut f = file(vec![batch("PPD", vec![entry(27, 1, 1)])]);
    f.batches[0].entries[0].account_number = "123456789012345678".into();
    assert_eq!(refusal(&f), (E0, "dfi_account_number", WriteIssue::Field(FieldProblem::TooLong { max: 17 })));
    let mut f = file(vec![batch("PPD", vec![entry(27, 10_000_000_000, 1)])]);
    assert_eq!(refusal(&f), (E0, "amount", WriteIssue::Field(FieldProblem::TooLarge { width: 10 })));
    f.batches[0].entries[0].amount = Money::from_cents(1);
    f.batches[0].entries[0].name = "JOSÉ".into();
    assert_eq!(refusal(&f), (E0, "individual_name", WriteIssue::Field(FieldProblem::NotPrintable)));
    let mut f = file(vec![batch("PPD", vec![entry(27, 1, 1)])]);
    f.header.immediate_destination = "23138010".into();
    assert_eq!(
        refusal(&f),
        (Place::FileHeader, "immediate_destination", WriteIssue::Field(FieldProblem::NotDigits { width: 9 }))
    );
}

#[test]
fn writer_refuses_what_a_bank_rejects() {
    let rule = |f: &NachaFile| match write(f).unwrap_err().issue {
        WriteIssue::Rule(r) => r,
        other => panic!("{other:?}"),
    };
    // A credit in a debit-only class…
    let mut tel = entry(22, 1, 1);
    tel.discretionary_data = "S".into();
    assert_eq!(rule(&file(vec![batch("TEL", vec![tel.clone()])])), Rule::CreditInDebitOnlyClass);
    // …is fine in a reversal batch.
    let mut reversal = batch("TEL", vec![tel]);
    reversal.company_entry_description = "REVERSAL".into();
    let f = file(vec![reversal]);
    let parsed = read(&write(&f).unwrap()).unwrap();
    assert_eq!((parsed.problems, parsed.file), (vec![], f));
    // A credit in a 225 batch.
    let mut b = batch("PPD", vec![entry(22, 1, 1)]);
    b.service_class_code = DEBITS_ONLY;
    assert_eq!(rule(&file(vec![b])), Rule::CreditInDebitOnlyBatch);
    // A Saturday, then Thanksgiving.
    let mut b = batch("PPD", vec![entry(27, 1, 1)]);
    b.effective_entry_date = d(2026, 11, 28);
    assert_eq!(rule(&file(vec![b.clone()])), Rule::NotBankingDay);
    b.effective_entry_date = d(2026, 11, 26);
    assert_eq!(rule(&file(vec![b])), Rule::NotBankingDay);
    // Trace prefix is not the ODFI.
    let mut e = entry(27, 1, 1);
    e.trace_number = "023138010000001".into();
    assert_eq!(rule(&file(vec![batch("PPD", vec![e])])), Rule::TracePrefixNotOdfi);
    // Traces must ascend.
    assert_eq!(
        rule(&file(vec![batch("PPD", vec![entry(27, 1, 2), entry(27, 1, 1)])])),
        Rule::TraceNotAscending
    );
    // Trace numbers repeated in another batch.
    let mut second = batch("PPD", vec![entry(27, 1, 1)]);
    second.batch_number = 2;
    assert_eq!(
        findings(&file(vec![batch("PPD", vec![entry(27, 1, 1), entry(27, 1, 2)]), second])),
        vec![Finding {
            place: Place::Entry { batch: 1, entry: 0 },
            field: "trace_number",
            rule: Rule::TraceNotUnique
        }]
    );
    // Batches out of order but unique: fine.
    let mut second = batch("PPD", vec![entry(27, 1, 1)]);
    second.batch_number = 2;
    let f = file(vec![batch("PPD", vec![entry(27, 1, 5)]), second]);
    let parsed = read(&write(&f).unwrap()).unwrap();
    assert_eq!((parsed.problems, parsed.file), (vec![], f));
    // BOC without check serial.
    let mut e = entry(27, 1, 1);
    e.identification = " ".into();
    assert_eq!(rule(&file(vec![batch("BOC", vec![e.clone()])])), Rule::MissingCheckSerial);
    // POP without city and state.
    e.identification = "123456".into();
    assert_eq!(rule(&file(vec![batch("POP", vec![e])])), Rule::MissingPopTerminal);
    // WEB / TEL without payment type.
    assert_eq!(rule(&file(vec![batch("WEB", vec![entry(27, 1, 1)])])), Rule::MissingPaymentType);
    assert_eq!(rule(&file(vec![batch("TEL", vec![entry(27, 1, 1)])])), Rule::MissingPaymentType);
    // ICL is no SEC code; a bad check digit.
    assert_eq!(rule(&file(vec![batch("ICL", vec![entry(27, 1, 1)])])), Rule::UnknownSecCode);
    let mut e = entry(27, 1, 1);
    e.check_digit = '5';
    assert_eq!(rule(&file(vec![batch("PPD", vec![e])])), Rule::BadRoutingNumber);
}

#[test]
fn writer_refuses_empty_files_and_batches() {
    assert_eq!(
        refusal(&file(vec![])),
        (Place::FileHeader, "batches", WriteIssue::Field(FieldProblem::Missing))
    );
    let f = file(vec![batch("PPD", vec![entry(27, 1, 1)]), batch("PPD", vec![])]);
    assert_eq!(refusal(&f), (Place::Batch(1), "entries", WriteIssue::Field(FieldProblem::Missing)));
}

#[test]
fn writer_refuses_totals_too_large_for_the_controls() {
    let entries: Vec<Entry> = (1..=101).map(|i| entry(27, 9_999_999_999, i)).collect();
    let e = write(&file(vec![batch("PPD", entries)])).unwrap_err();
    assert_eq!(e.field, "total_debit_entry_dollar_amount");
    assert_eq!(e.issue, WriteIssue::Field(FieldProblem::TooLarge { width: 12 }));
}

#[test]
fn reader_takes_crlf_and_no_line_ends() {
    let f = file(vec![batch("PPD", vec![entry(27, 5, 1)])]);
    let bytes = write(&f).unwrap();
    let crlf: Vec<u8> =
        bytes.iter().flat_map(|&b| if b == b'\n' { vec![b'\r', b'\n'] } else { vec![b] }).collect();
    let bare: Vec<u8> = bytes.iter().copied().filter(|&b| b != b'\n').collect();
    for input in [crlf, bare] {
        let p = read(&input).unwrap();
        assert_eq!(p.problems, vec![]);
        assert_eq!(p.file, f);
    }
}

fn problems_of(text: &str) -> Vec<(usize, &'static str)> {
    read(text.as_bytes()).unwrap().problems.into_iter().map(|p| (p.record, p.field)).collect()
}

#[test]
fn reader_reports_controls_with_record_and_field() {
    let text = String::from_utf8(write(&file(vec![batch("PPD", vec![entry(27, 5, 1)])])).unwrap()).unwrap();
    // The amount changed after the controls were written.
    let tampered = text.replacen("0000000005", "0000000007", 1);
    assert_eq!(
        problems_of(&tampered),
        vec![(4, "total_debit_entry_dollar_amount"), (5, "total_debit_entry_dollar_amount")]
    );
    // A receiving DFI changed: both hashes.
    let tampered = text.replacen("27231380104", "27231380114", 1);
    assert_eq!(problems_of(&tampered), vec![(4, "entry_hash"), (5, "entry_hash")]);
    // A letter in a numeric field.
    let tampered = text.replacen("0000000005", "00000000O5", 1);
    let got = problems_of(&tampered);
    assert_eq!(got[0], (3, "amount"));
    // A short record, an unknown record type.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2].truncate(80);
    lines.insert(3, format!("4{}", " ".repeat(93)));
    let got = problems_of(&lines.join("\n"));
    assert!(got.contains(&(3, "record")), "{got:?}");
    assert!(got.contains(&(4, "record_type_code")), "{got:?}");
}

#[test]
fn reader_reports_bad_order() {
    let text = String::from_utf8(write(&file(vec![batch("PPD", vec![entry(27, 5, 1)])])).unwrap()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    // Drop the batch control.
    lines.remove(3);
    let got = problems_of(&lines.join("\n"));
    assert!(got.contains(&(4, "record_type_code")), "{got:?}");
    // An entry before any batch.
    let mut lines: Vec<&str> = text.lines().collect();
    let entry_line = lines[2];
    lines.insert(1, entry_line);
    let got = problems_of(&lines.join("\n"));
    assert!(got.contains(&(2, "record_type_code")), "{got:?}");
    // A batch without entries.
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(2);
    let got = problems_of(&lines.join("\n"));
    assert!(got.contains(&(2, "record")), "{got:?}");
    // Addenda flagged but missing.
    let tampered = text.replacen("RECEIVER ACCOUNT NAME   0", "RECEIVER ACCOUNT NAME   1", 1);
    assert_eq!(problems_of(&tampered), vec![(3, "addenda_record_indicator")]);
}

#[test]
fn reader_refuses_what_is_no_nacha_file() {
    assert_eq!(read(b""), Err(ReadError::Empty));
    assert_eq!(read(b"\n\n"), Err(ReadError::Empty));
    assert_eq!(read(b"5225 not a header"), Err(ReadError::NoFileHeader));
}

#[test]
fn reader_survives_invalid_utf8_in_a_numeric_text_field() {
    // Found by the fuzz target: a receiving DFI of non-UTF-8 bytes read as
    // replacement characters (24 bytes) overflowed the entry hash.
    let text = String::from_utf8(write(&file(vec![batch("PPD", vec![entry(27, 5, 1)])])).unwrap()).unwrap();
    let mut bytes = text.into_bytes();
    let dfi = 94 + 1 + 94 + 1 + 3;
    bytes[dfi..dfi + 8].copy_from_slice(&[0xd4, 0xcf, 0xce, 0xcd, 0xcf, 0xc9, 0xce, 0xcf]);
    let parsed = read(&bytes).unwrap();
    assert_eq!(parsed.file.batches[0].entries[0].receiving_dfi.chars().count(), 8);
    let fields: Vec<&str> = parsed.problems.iter().map(|p| p.field).collect();
    assert!(fields.contains(&"receiving_dfi_identification"), "{fields:?}");
    assert!(fields.contains(&"entry_hash"), "{fields:?}");
    let _ = check(&parsed);
}

#[test]
fn reader_survives_garbage() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let valid = write(&file(vec![batch("PPD", vec![entry(27, 5, 1), entry(22, 6, 2)])])).unwrap();
    for round in 0..2_000 {
        let mut bytes = valid.clone();
        // Flip bytes, cut the file, or write pure noise (invalid UTF-8 included).
        let flips = (next() % 20) as usize;
        for _ in 0..flips {
            let at = (next() as usize) % bytes.len();
            bytes[at] = next() as u8;
        }
        if round % 3 == 0 {
            bytes.truncate((next() as usize) % bytes.len());
        }
        if round % 7 == 0 {
            bytes = (0..(next() % 500)).map(|_| next() as u8).collect();
            bytes.insert(0, b'1');
        }
        if let Ok(parsed) = read(&bytes) {
            let _ = check(&parsed);
        }
    }
}
