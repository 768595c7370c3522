//! Property test: files written from random mixes of entries (classes,
//! directions, account types, amounts up to 99,999,999.99, 1–300 entries over
//! several batches) have the right controls and read back as written.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::tests::{batch, d, entry, file, originator};
use super::*;
use crate::calendar::banking_day_on_or_after;
use crate::model::{AccountType, Direction};
use crate::money::Money;

/// Valid routing numbers (check digit included).
const ROUTING: [&str; 5] = ["231380104", "121042882", "026009593", "091000019", "011000015"];
const CLASSES: [&str; 6] = ["PPD", "CCD", "WEB", "TEL", "BOC", "POP"];

#[derive(Debug, Clone)]
struct GenEntry {
    credit: bool,
    savings: bool,
    amount: i64,
    routing: usize,
    account: String,
    name: String,
    serial: String,
    recurring: bool,
    payment: Option<String>,
}

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!(
        "[A-Za-z0-9.&'/-]([A-Za-z0-9 .&'/-]{{0,{}}}[A-Za-z0-9.&'/-])?",
        max - 2
    ))
    .unwrap()
}

fn gen_entry() -> impl Strategy<Value = GenEntry> {
    let amount = prop_oneof![9 => 1i64..=10_000_000, 1 => 1i64..=9_999_999_999];
    (
        any::<bool>(),
        any::<bool>(),
        amount,
        0..ROUTING.len(),
        "[0-9A-Z-]{1,17}",
        text(22),
        "[0-9]{1,9}",
        any::<bool>(),
        proptest::option::weighted(0.2, text(80)),
    )
        .prop_map(|(credit, savings, amount, routing, account, name, serial, recurring, payment)| {
            GenEntry { credit, savings, amount, routing, account, name, serial, recurring, payment }
        })
}

#[derive(Debug, Clone)]
struct GenBatch {
    class: usize,
    reversal: bool,
    day: u32,
    entries: Vec<GenEntry>,
}

fn gen_batches() -> impl Strategy<Value = Vec<GenBatch>> {
    (1usize..=300)
        .prop_flat_map(|total| {
            (1usize..=total.min(5)).prop_flat_map(move |n| {
                let per = (total / n).max(1);
                proptest::collection::vec(
                    (
                        0..CLASSES.len(),
                        proptest::bool::weighted(0.1),
                        0u32..365,
                        proptest::collection::vec(gen_entry(), 1..=per),
                    ),
                    n,
                )
            })
        })
        .prop_map(|batches| {
            batches
                .into_iter()
                .map(|(class, reversal, day, entries)| GenBatch { class, reversal, day, entries })
                .collect()
        })
}

/// Build the model; `sequence` numbers trace numbers across the file.
fn model(batches: &[GenBatch]) -> NachaFile {
    let mut sequence = 0;
    let built = batches
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let sec = CLASSES[g.class];
            let debit_only = is_debit_only_class(sec);
            let entries: Vec<Entry> = g
                .entries
                .iter()
                .map(|ge| {
                    sequence += 1;
                    let direction = if ge.credit && (!debit_only || g.reversal) {
                        Direction::Credit
                    } else {
                        Direction::Debit
                    };
                    let account = if ge.savings { AccountType::Savings } else { AccountType::Checking };
                    let mut e = entry(transaction_code(account, direction), ge.amount, sequence);
                    let routing = ROUTING[ge.routing];
                    e.receiving_dfi = routing[..8].into();
                    e.check_digit = char::from(routing.as_bytes()[8]);
                    e.account_number = ge.account.as_str().into();
                    e.name = ge.name.as_str().into();
                    match sec {
                        "BOC" => e.identification = ge.serial.as_str().into(),
                        "POP" => e.identification = pop_identification(&ge.serial, "Phila", "pa").unwrap(),
                        "WEB" | "TEL" => e.discretionary_data = if ge.recurring { "R" } else { "S" }.into(),
                        _ => {}
                    }
                    if let Some(info) = &ge.payment {
                        e.addenda.push(Addenda::Payment(info.as_str().into()));
                    }
                    e
                })
                .collect();
            let mut b = batch(sec, entries);
            b.batch_number = i as u32 + 1;
            b.effective_entry_date =
                banking_day_on_or_after(d(2026, 1, 1) + chrono::Days::new(u64::from(g.day)));
            if g.reversal {
                b.company_entry_description = "REVERSAL".into();
            }
            b
        })
        .collect();
    file(built)
}

/// The model as it reads back: letters upper-cased.
fn upper(mut f: NachaFile) -> NachaFile {
    for b in &mut f.batches {
        for e in &mut b.entries {
            e.account_number.make_ascii_uppercase();
            e.name.make_ascii_uppercase();
            e.identification.make_ascii_uppercase();
            for a in &mut e.addenda {
                if let Addenda::Payment(info) = a {
                    info.make_ascii_uppercase();
                }
            }
        }
    }
    f
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn written_files_have_their_controls_and_read_back(batches in gen_batches()) {
        let f = model(&batches);
        let bytes = write(&f).unwrap();
        let text = std::str::from_utf8(&bytes).unwrap();
        prop_assert!(text.ends_with('\n'));
        let lines: Vec<&str> = text.lines().collect();
        prop_assert!(lines.iter().all(|l| l.len() == RECORD_LEN));
        prop_assert_eq!(lines.len() % BLOCKING_FACTOR, 0);

        // Controls, computed here independently of the writer.
        let mut file_debit = 0i64;
        let mut file_credit = 0i64;
        let mut file_hash = 0u64;
        let mut records = 2;
        let mut controls = lines.iter().filter(|l| l.starts_with('8'));
        for b in &f.batches {
            let debit: i64 = b.entries.iter().filter(|e| e.is_debit()).map(|e| e.amount.cents()).sum();
            let credit: i64 = b.entries.iter().filter(|e| e.is_credit()).map(|e| e.amount.cents()).sum();
            let hash: u64 = b.entries.iter().map(|e| e.receiving_dfi.parse::<u64>().unwrap()).sum::<u64>() % 10_000_000_000;
            let count = b.entries.len() + b.entries.iter().map(|e| e.addenda.len()).sum::<usize>();
            let control = controls.next().unwrap();
            prop_assert_eq!(&control[4..10], format!("{count:06}"));
            prop_assert_eq!(&control[10..20], format!("{hash:010}"));
            prop_assert_eq!(&control[20..32], format!("{debit:012}"));
            prop_assert_eq!(&control[32..44], format!("{credit:012}"));
            let class = match (debit > 0 || b.entries.iter().any(Entry::is_debit), b.entries.iter().any(Entry::is_credit)) {
                (true, false) => "225",
                (false, true) => "220",
                _ => "200",
            };
            prop_assert_eq!(&control[1..4], class);
            file_debit += debit;
            file_credit += credit;
            file_hash = (file_hash + hash) % 10_000_000_000;
            records += 2 + count;
        }
        let fc = lines.iter().find(|l| l.starts_with('9') && !l.starts_with("99")).unwrap();
        prop_assert_eq!(&fc[1..7], format!("{:06}", f.batches.len()));
        prop_assert_eq!(&fc[7..13], format!("{:06}", records.div_ceil(10)));
        prop_assert_eq!(&fc[13..21], format!("{:08}", records - 2 - 2 * f.batches.len()));
        prop_assert_eq!(&fc[21..31], format!("{file_hash:010}"));
        prop_assert_eq!(&fc[31..43], format!("{file_debit:012}"));
        prop_assert_eq!(&fc[43..55], format!("{file_credit:012}"));
        prop_assert_eq!(lines.len(), records.div_ceil(10) * 10);

        // Round trip through the reader: no problems, the same model.
        let parsed = read(&bytes).unwrap();
        prop_assert_eq!(&parsed.problems, &vec![]);
        prop_assert_eq!(check(&parsed), vec![]);
        prop_assert_eq!(parsed.total_debit(), Money::from_cents(file_debit));
        prop_assert_eq!(parsed.total_credit(), Money::from_cents(file_credit));
        prop_assert_eq!(parsed.file, upper(f));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The streaming writer, fed the same batches and entries in pieces, writes
    /// the same bytes as the writer.
    #[test]
    fn a_streamed_file_is_the_written_file(batches in gen_batches(), cut in 1usize..7) {
        let f = model(&batches);
        let whole = write(&f).unwrap();
        let mut out = Vec::new();
        let mut stream = Stream::start(&f.header, &mut out).unwrap();
        let mut pieces = vec![std::mem::take(&mut out)];
        let mut n = 0;
        for b in &f.batches {
            stream.open_batch(b, &mut out).unwrap();
            for e in &b.entries {
                stream.entry(e, &mut out).unwrap();
                n += 1;
                if n % cut == 0 {
                    // Stored and restored between pieces, as the engine does.
                    let saved = serde_json::to_string(&stream).unwrap();
                    stream = serde_json::from_str(&saved).unwrap();
                    pieces.push(std::mem::take(&mut out));
                }
            }
        }
        prop_assert!(stream.finish(&mut out));
        pieces.push(out);
        prop_assert_eq!(String::from_utf8(pieces.concat()).unwrap(), String::from_utf8(whole).unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Hostile bytes: any input, or a valid file with bytes overwritten, cut or
    /// with line ends removed, reads to a result (never a panic), and the
    /// checker runs over whatever was read.
    #[test]
    fn any_bytes_read_without_panicking(
        noise in proptest::collection::vec(any::<u8>(), 0..2_000),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..40),
        cut in any::<usize>(),
        header in any::<bool>(),
        strip in any::<bool>(),
    ) {
        let mut noisy = noise.clone();
        if header {
            noisy.insert(0, b'1');
        }
        if let Ok(parsed) = read(&noisy) {
            let _ = check(&parsed);
        }
        let f = file(vec![batch("PPD", vec![entry(27, 5, 1), entry(22, 6, 2)])]);
        let mut bytes = write(&f).unwrap();
        for (at, byte) in edits {
            let len = bytes.len();
            bytes[at % len] = byte;
        }
        bytes.truncate(cut % (bytes.len() + 1));
        if strip {
            bytes.retain(|&b| b != b'\n');
        }
        if let Ok(parsed) = read(&bytes) {
            prop_assert!(parsed.records >= 1);
            let _ = check(&parsed);
        }
    }
}

#[test]
fn the_originator_numbers_traces_from_its_odfi() {
    assert_eq!(originator().trace_number(42), "121042880000042");
}
