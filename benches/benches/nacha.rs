//! Writing and reading a NACHA file of 100,000 entries (10 batches of 10,000
//! PPD, WEB and CCD entries, a tenth with a payment addenda): the writer with
//! every field and rule check, the reader with every control check.
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use ach_core::model::{AccountType, Direction};
use ach_core::nacha::{read, transaction_code, write, Addenda, Entry, NachaFile, Originator, Text};
use ach_core::Money;
use ach_tests::nacha_sample;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const ENTRIES: u32 = 100_000;
const BATCHES: u32 = 10;
const RECEIVERS: [&str; 4] = ["231380104", "026009593", "091000019", "021000021"];

fn file() -> NachaFile {
    let o = Originator {
        odfi_routing_number: "121042882".into(),
        immediate_destination: "231380104".into(),
        immediate_destination_name: "FEDERAL RESERVE BANK".into(),
        immediate_origin: "121042882".into(),
        immediate_origin_name: "MY BANK NAME".into(),
        same_day_cutoffs: ach_core::nacha::default_same_day_cutoffs(),
    };
    let per = ENTRIES / BATCHES;
    let batches = (0..BATCHES)
        .map(|b| {
            let sec = ["PPD", "WEB", "CCD"][(b % 3) as usize];
            let entries: Vec<Entry> = (0..per)
                .map(|i| {
                    let n = b * per + i + 1;
                    let routing = RECEIVERS[(n % 4) as usize];
                    let account =
                        if n.is_multiple_of(5) { AccountType::Savings } else { AccountType::Checking };
                    let direction = if n.is_multiple_of(3) { Direction::Credit } else { Direction::Debit };
                    Entry {
                        transaction_code: transaction_code(account, direction),
                        receiving_dfi: routing[..8].into(),
                        check_digit: char::from(routing.as_bytes()[8]),
                        account_number: format!("{}", 1_000_000_000 + u64::from(n) * 7919).into(),
                        amount: Money::from_cents(i64::from(n % 1_000_000) + 1),
                        identification: format!("CUST{n:08}").into(),
                        name: format!("RECEIVER NUMBER {n}").into(),
                        discretionary_data: if sec == "WEB" { "S".into() } else { Text::new() },
                        trace_number: o.trace_number(n),
                        addenda: if n.is_multiple_of(10) {
                            vec![Addenda::Payment(format!("INVOICE {n}").into())]
                        } else {
                            vec![]
                        },
                    }
                })
                .collect();
            nacha_sample::batch(&o, "ACME WIDGETS", (sec, "PURCHASE"), b + 1, entries)
        })
        .collect();
    nacha_sample::file(&o, batches)
}

fn nacha(c: &mut Criterion) {
    let model = file();
    let bytes = write(&model).unwrap();
    let parsed = read(&bytes).unwrap();
    assert!(parsed.problems.is_empty());
    assert_eq!(parsed.entry_count(), ENTRIES as usize);

    let mut group = c.benchmark_group("nacha_100k_entries");
    group.throughput(Throughput::Elements(u64::from(ENTRIES)));
    group.sample_size(20);
    group.bench_function("write", |b| b.iter(|| black_box(write(black_box(&model)).unwrap())));
    group.bench_function("read", |b| b.iter(|| black_box(read(black_box(&bytes)).unwrap())));
    group.finish();
}

criterion_group!(benches, nacha);
criterion_main!(benches);
