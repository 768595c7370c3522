//! Validating a typical transaction from bytes vs parsing the same bytes with
//! serde_json alone: into a `Value`, and into the typed `NewTransaction` with serde
//! derive (no rules checked).
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use ach_benches::TYPICAL_TRANSACTION;
use ach_core::model::NewTransaction;
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use chrono::NaiveDate;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn validation(c: &mut Criterion) {
    let bytes = TYPICAL_TRANSACTION.as_bytes();
    let directory = RoutingDirectory::embedded();
    let ctx = Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: &directory };
    assert!(check_bytes(Kind::Transaction, bytes, &ctx).valid);

    let mut group = c.benchmark_group("transaction");
    group.throughput(Throughput::Elements(1));
    group.bench_function("serde_json_parse_only", |b| {
        b.iter(|| black_box(serde_json::from_slice::<serde_json::Value>(black_box(bytes)).unwrap()));
    });
    group.bench_function("serde_json_typed_only", |b| {
        b.iter(|| black_box(serde_json::from_slice::<NewTransaction>(black_box(bytes)).unwrap()));
    });
    group.bench_function("validate_from_bytes", |b| {
        b.iter(|| black_box(check_bytes(Kind::Transaction, black_box(bytes), &ctx)));
    });
    group.finish();
}

criterion_group!(benches, validation);
criterion_main!(benches);
