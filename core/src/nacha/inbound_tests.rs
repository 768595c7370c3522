//! Tests of [`inbound`]: the real files (expected values sliced from their text
//! by hand), each change code's layout, and random returns and notifications
//! written, read back and found again.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use chrono::NaiveDate;
use proptest::prelude::*;

use super::tests::{batch, d, entry, file};
use super::*;
use crate::calendar::banking_day_on_or_after;
use crate::model::AccountType::{self, Checking, Savings};
use crate::money::Money;

// ---------------------------------------------------------------- real files

/// `shared/data/nacha/` beside the repository, or under `$ACH_SHARED_DATA`.
fn nacha_dir() -> PathBuf {
    let data = std::env::var_os("ACH_SHARED_DATA")
        .map_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data").into(), PathBuf::from);
    data.join("nacha")
}

fn text_of(name: &str) -> String {
    let path = nacha_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn inbound_of(name: &str) -> Vec<Inbound> {
    inbound(&read(text_of(name).as_bytes()).unwrap().file)
}

/// A YYMMDD date, by hand.
fn yymmdd(s: &str) -> NaiveDate {
    let n = |i: usize| s[i..i + 2].parse::<u32>().unwrap();
    NaiveDate::from_ymd_opt(2000 + n(0) as i32, n(2), n(4)).unwrap()
}

/// What a file brings back, read from its text at the Nacha record positions
/// (0-based slices here), without the reader.
fn by_hand(text: &str) -> Vec<Inbound> {
    let mut out = Vec::new();
    let mut date = None;
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    for (i, line) in lines.iter().enumerate() {
        match line.get(..1) {
            Some("5") => date = Some(yymmdd(&line[69..75])),
            Some("6") => {
                let (trace, amount) = (line[79..94].to_string(), line[29..39].parse().unwrap());
                // The entry's first addenda, if any, says what it is.
                let next = lines.get(i + 1).copied().unwrap_or("");
                match next.get(..3) {
                    Some("799") => out.push(Inbound::Return(InboundReturn {
                        original_trace: next[6..21].to_string(),
                        return_code: next[3..6].to_string(),
                        return_date: date.unwrap(),
                        trace,
                        amount: Money::from_cents(amount),
                        information: next[35..79].trim_end().to_string(),
                    })),
                    Some("798") => {
                        let (code, data) = (&next[3..6], &next[35..64]);
                        let correction = match code {
                            "C01" => Correction::Account(data[..17].trim().to_string()),
                            other => panic!("no {other} in the real files: add its layout here"),
                        };
                        out.push(Inbound::Notice(InboundNotice {
                            original_trace: next[6..21].to_string(),
                            change_code: code.to_string(),
                            correction,
                            trace,
                        }));
                    }
                    _ => out.push(Inbound::Other { trace }),
                }
            }
            _ => {}
        }
    }
    assert!(!out.is_empty(), "a file without entries");
    out
}

#[test]
fn every_real_file_gives_back_what_its_text_says() {
    let mut names: Vec<String> = std::fs::read_dir(nacha_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".ach"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    for name in &names {
        assert_eq!(inbound_of(name), by_hand(&text_of(name)), "{name}");
    }
}

fn returns_in(items: &[Inbound]) -> Vec<&InboundReturn> {
    items.iter().filter_map(|i| if let Inbound::Return(r) = i { Some(r) } else { None }).collect()
}

#[test]
fn return_web_holds_two_returns_dated_by_their_batch() {
    let items = inbound_of("return-WEB.ach");
    let found: Vec<(&str, &str, NaiveDate, &str, i64)> = returns_in(&items)
        .iter()
        .map(|r| {
            (
                r.return_code.as_str(),
                r.original_trace.as_str(),
                r.return_date,
                r.trace.as_str(),
                r.amount.cents(),
            )
        })
        .collect();
    // Both batches are dated 000101: 2000-01-01, long before the file's creation
    // (2018-10-17). The engine must not take the date for the day it arrived.
    assert_eq!(
        found,
        [
            ("R01", "091400600000001", d(2000, 1, 1), "091000017611242", 12_354),
            ("R03", "091400600000003", d(2000, 1, 1), "021000029461242", 4_565),
        ]
    );
    assert_eq!(items.len(), 2);
    assert!(returns_in(&items).iter().all(|r| r.lookup().is_some()));
}

#[test]
fn issue702_holds_three_returns_not_notices() {
    let items = inbound_of("issue702.ach");
    let codes: Vec<(&str, &str, NaiveDate)> = returns_in(&items)
        .iter()
        .map(|r| (r.return_code.as_str(), r.original_trace.as_str(), r.return_date))
        .collect();
    assert_eq!(
        codes,
        [
            ("R04", "101206100000001", d(2020, 3, 27)),
            ("R03", "101206100000001", d(2020, 3, 27)),
            ("R01", "101206100000001", d(2020, 3, 27)),
        ]
    );
    assert_eq!(items.len(), 3);
}

#[test]
fn cor_read_holds_one_account_number_change() {
    assert_eq!(
        inbound_of("cor-read.ach"),
        [Inbound::Notice(InboundNotice {
            original_trace: "121042880000001".into(),
            change_code: "C01".into(),
            correction: Correction::Account("1918171614".into()),
            trace: "121042880000001".into(),
        })]
    );
}

#[test]
fn a_forward_file_is_all_other() {
    assert_eq!(inbound_of("ppd-debit.ach"), [Inbound::Other { trace: "121042880000001".into() }]);
}

// ------------------------------------------------------------------- layouts

fn parse(code: &str, data: &str) -> Correction {
    Correction::parse(code, data)
}

fn unreadable(code: &str, data: &str) -> Correction {
    Correction::Unreadable { code: code.into(), text: data.into() }
}

/// A valid routing number (check digit 4) and its neighbour with a bad one.
const ROUTING: &str = "231380104";
const BAD_CHECK_DIGIT: &str = "231380105";

#[test]
fn c01_account_number_in_positions_1_to_17() {
    assert_eq!(parse("C01", "1918171614"), Correction::Account("1918171614".into()));
    assert_eq!(parse("C01", "12345678901234567"), Correction::Account("12345678901234567".into()));
    assert_eq!(parse("C01", "744-5678-99      "), Correction::Account("744-5678-99".into()));
    for bad in ["", "    ", "123456789012345678", "12345678901234567  X"] {
        assert_eq!(parse("C01", bad), unreadable("C01", bad), "{bad:?}");
    }
}

#[test]
fn c02_routing_number_with_its_check_digit() {
    assert_eq!(parse("C02", ROUTING), Correction::Routing(ROUTING.into()));
    for bad in [BAD_CHECK_DIGIT, "23138010A", "23138010", "2313801040", "231380104 X", "", "000000000"] {
        assert_eq!(parse("C02", bad), unreadable("C02", bad), "{bad:?}");
    }
}

#[test]
fn c03_routing_then_three_blanks_then_account_in_13_to_29() {
    let both = |account: &str| Correction::RoutingAndAccount {
        routing_number: ROUTING.into(),
        account_number: account.into(),
    };
    assert_eq!(parse("C03", "231380104   12345678901234567"), both("12345678901234567"));
    assert_eq!(parse("C03", "231380104   1234"), both("1234"));
    // Right-justified in its 17 positions, as some banks write it.
    assert_eq!(parse("C03", "231380104                1234"), both("1234"));
    for bad in [
        "231380104",                      // no account
        "2313801041234",                  // account where the blanks go
        "231380104 1234",                 // account from position 11
        "231380105   1234",               // check digit
        "23138010X   1234",               // letter in the routing number
        "231380104   123456789012345678", // 30 characters
    ] {
        assert_eq!(parse("C03", bad), unreadable("C03", bad), "{bad:?}");
    }
}

#[test]
fn transaction_codes_map_to_account_types() {
    for (code, account_type) in [
        ("22", Checking),
        ("23", Checking),
        ("24", Checking),
        ("27", Checking),
        ("28", Checking),
        ("29", Checking),
        ("32", Savings),
        ("33", Savings),
        ("34", Savings),
        ("37", Savings),
        ("38", Savings),
        ("39", Savings),
    ] {
        assert_eq!(parse("C05", code), Correction::AccountType(account_type), "{code}");
    }
    // Returns (21, 26, 31, 36), unused x0/x5, ledger and loan accounts, not digits.
    for bad in ["21", "26", "31", "36", "20", "25", "30", "35", "42", "52", "2", "2X", "", " 22", "22 X"] {
        assert_eq!(parse("C05", bad), unreadable("C05", bad), "{bad:?}");
    }
}

#[test]
fn c06_account_then_three_blanks_then_code_in_21_and_22() {
    let both = |account: &str, account_type| Correction::AccountAndType {
        account_number: account.into(),
        account_type,
    };
    assert_eq!(parse("C06", "12345678901234567   37"), both("12345678901234567", Savings));
    assert_eq!(parse("C06", "1234                22"), both("1234", Checking));
    for bad in [
        "12345678901234567    37", // code in 22-23
        "12345678901234567  37",   // code in 20-21
        "1234   22",               // code right after the account
        "                    22",  // no account
        "12345678901234567   21",  // a return code
        "12345678901234567",       // no code
    ] {
        assert_eq!(parse("C06", bad), unreadable("C06", bad), "{bad:?}");
    }
}

#[test]
fn c07_routing_account_and_code_side_by_side() {
    let all = |account: &str, account_type| Correction::RoutingAccountAndType {
        routing_number: ROUTING.into(),
        account_number: account.into(),
        account_type,
    };
    assert_eq!(parse("C07", "2313801041234567890123456732"), all("12345678901234567", Savings));
    assert_eq!(parse("C07", "2313801041234             27"), all("1234", Checking));
    for bad in [
        "2313801051234             27",  // check digit
        "231380104                 27",  // no account
        "2313801041234              27", // code in 28-29
        "2313801041234             2",   // half a code
        "231380104123456789012345673",   // no code
    ] {
        assert_eq!(parse("C07", bad), unreadable("C07", bad), "{bad:?}");
    }
}

#[test]
fn other_change_codes_keep_their_data() {
    for (code, data) in
        [("C04", "JOHN Q PUBLIC"), ("C09", "ID 42"), ("C13", ""), ("C61", "X"), ("c01", "1234"), ("", "")]
    {
        assert_eq!(parse(code, data), Correction::Other { code: code.into(), text: data.into() });
    }
}

#[test]
fn data_that_is_not_ascii_is_unreadable_not_a_panic() {
    for code in ["C01", "C02", "C03", "C05", "C06", "C07"] {
        for data in ["23138010é", "é", "12345678901234567   3é", "2313801041234567890123456é32"] {
            assert_eq!(parse(code, data), unreadable(code, data), "{code} {data:?}");
        }
    }
}

#[test]
fn return_codes_nacha_does_not_define_are_kept() {
    let r = InboundReturn {
        original_trace: "091400600000001".into(),
        return_code: "R99".into(),
        return_date: d(2026, 1, 2),
        trace: "091000017611242".into(),
        amount: Money::from_cents(1),
        information: String::new(),
    };
    assert_eq!(r.lookup(), None);
    let r01 = InboundReturn { return_code: "R01".into(), ..r };
    assert_eq!(r01.lookup().map(|c| c.reason()), Some("Insufficient Funds"));
}

proptest! {
    #[test]
    fn any_corrected_data_parses_without_panicking(code in "C0[0-9]|C[0-9]{2}|.{0,4}", data in ".{0,40}") {
        let c = Correction::parse(&code, &data);
        if let Correction::Other { text, .. } | Correction::Unreadable { text, .. } = c {
            prop_assert_eq!(text, data);
        }
    }
}

// ---------------------------------------------------------------- round trip

/// A routing number with a valid prefix and its ABA check digit, computed here.
fn routing() -> impl Strategy<Value = String> {
    let prefix = prop_oneof![1u32..=12, 21u32..=32, 61u32..=72, Just(80)];
    (prefix, 0u32..1_000_000).prop_map(|(prefix, rest)| {
        let eight = format!("{prefix:02}{rest:06}");
        let d: Vec<u32> = eight.bytes().map(|b| u32::from(b - b'0')).collect();
        let sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5]);
        format!("{eight}{}", (10 - sum % 10) % 10)
    })
}

fn account() -> impl Strategy<Value = String> {
    "[0-9A-Z][0-9A-Z-]{0,16}"
}

/// A transaction code of a checking or savings account and its type.
fn code_and_type() -> impl Strategy<Value = (u8, AccountType)> {
    proptest::sample::select(vec![
        (22, Checking),
        (23, Checking),
        (24, Checking),
        (27, Checking),
        (28, Checking),
        (29, Checking),
        (32, Savings),
        (33, Savings),
        (34, Savings),
        (37, Savings),
        (38, Savings),
        (39, Savings),
    ])
}

/// A change code, its corrected data laid out as Nacha says, and what it reads as.
fn notice() -> impl Strategy<Value = (String, String, Correction)> {
    let other_code = proptest::sample::select(vec!["C04", "C08", "C09", "C13", "C61", "C65", "C69"]);
    prop_oneof![
        account().prop_map(|a| ("C01".into(), a.clone(), Correction::Account(a))),
        routing().prop_map(|r| ("C02".into(), r.clone(), Correction::Routing(r))),
        (routing(), account()).prop_map(|(r, a)| (
            "C03".into(),
            format!("{r}   {a}"),
            Correction::RoutingAndAccount { routing_number: r, account_number: a }
        )),
        code_and_type().prop_map(|(t, at)| ("C05".into(), t.to_string(), Correction::AccountType(at))),
        (account(), code_and_type()).prop_map(|(a, (t, at))| (
            "C06".into(),
            format!("{a:<17}   {t}"),
            Correction::AccountAndType { account_number: a, account_type: at }
        )),
        (routing(), account(), code_and_type()).prop_map(|(r, a, (t, at))| (
            "C07".into(),
            format!("{r}{a:<17}{t}"),
            Correction::RoutingAccountAndType { routing_number: r, account_number: a, account_type: at }
        )),
        (other_code, "[A-Z0-9]([A-Z0-9 ]{0,27}[A-Z0-9])?").prop_map(|(c, t)| (
            c.to_string(),
            t.clone(),
            Correction::Other { code: c.to_string(), text: t }
        )),
    ]
}

#[derive(Debug, Clone)]
enum Gen {
    Return { code: String, original: u64, amount: i64, information: String },
    Notice { original: u64, code: String, data: String, correction: Correction },
    Forward { amount: i64 },
}

fn gen_entry() -> impl Strategy<Value = Gen> {
    let known = proptest::sample::select(crate::returns::all().iter().map(|c| c.code()).collect::<Vec<_>>());
    let code = prop_oneof![3 => known.prop_map(str::to_string), 1 => "[A-Z][0-9A-Z]{2}"];
    let original = 0u64..1_000_000_000_000_000;
    let amount = 0i64..=9_999_999_999;
    prop_oneof![
        (code, original.clone(), amount.clone(), "([A-Z0-9]([A-Z0-9 ./-]{0,42}[A-Z0-9])?)?").prop_map(
            |(code, original, amount, information)| Gen::Return { code, original, amount, information }
        ),
        (original, notice()).prop_map(|(original, (code, data, correction))| Gen::Notice {
            original,
            code,
            data,
            correction
        }),
        (1i64..=9_999_999_999).prop_map(|amount| Gen::Forward { amount }),
    ]
}

/// The file of `batches` (a date offset and entries each) and what it brings back.
fn build(batches: &[(u32, Vec<Gen>)]) -> (NachaFile, Vec<Inbound>) {
    let mut expected = Vec::new();
    let mut sequence = 0;
    let mut built = Vec::new();
    for (i, (day, gens)) in batches.iter().enumerate() {
        let date = banking_day_on_or_after(d(2026, 1, 1) + chrono::Days::new(u64::from(*day)));
        let mut entries = Vec::new();
        for g in gens {
            sequence += 1;
            let (transaction_code, amount) = match g {
                Gen::Return { amount, .. } => (26, *amount),
                Gen::Notice { .. } => (21, 0),
                Gen::Forward { amount } => (27, *amount),
            };
            let mut e = entry(transaction_code, amount, sequence);
            let trace = e.trace_number.to_string();
            let found = match g {
                Gen::Return { code, original, amount, information } => {
                    let original_trace = format!("{original:015}");
                    e.addenda.push(Addenda::Return(ReturnEntry {
                        return_code: code.into(),
                        original_trace: original_trace.as_str().into(),
                        date_of_death: Text::new(),
                        original_receiving_dfi: "23138010".into(),
                        information: information.into(),
                        trace_number: e.trace_number.clone(),
                    }));
                    Inbound::Return(InboundReturn {
                        original_trace,
                        return_code: code.clone(),
                        return_date: date,
                        trace,
                        amount: Money::from_cents(*amount),
                        information: information.clone(),
                    })
                }
                Gen::Notice { original, code, data, correction } => {
                    let original_trace = format!("{original:015}");
                    e.addenda.push(Addenda::Change(ChangeEntry {
                        change_code: code.into(),
                        original_trace: original_trace.as_str().into(),
                        original_receiving_dfi: "23138010".into(),
                        corrected_data: data.into(),
                        trace_number: e.trace_number.clone(),
                    }));
                    Inbound::Notice(InboundNotice {
                        original_trace,
                        change_code: code.clone(),
                        correction: correction.clone(),
                        trace,
                    })
                }
                Gen::Forward { .. } => Inbound::Other { trace },
            };
            expected.push(found);
            entries.push(e);
        }
        let mut b = batch("PPD", entries);
        b.batch_number = i as u32 + 1;
        b.effective_entry_date = date;
        built.push(b);
    }
    (file(built), expected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn written_returns_and_notices_are_found_again(
        batches in proptest::collection::vec((0u32..365, proptest::collection::vec(gen_entry(), 1..8)), 1..4)
    ) {
        let (f, expected) = build(&batches);
        let bytes = write(&f).unwrap();
        let parsed = read(&bytes).unwrap();
        prop_assert_eq!(&parsed.problems, &vec![]);
        prop_assert_eq!(inbound(&parsed.file), expected);
    }
}
