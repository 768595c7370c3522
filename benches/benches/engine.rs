//! The engine, against redb alone:
//!
//! 1. `durable_create`: one durable `execute` of CreateTransaction (a file, redb's
//!    default `Durability::Immediate`) vs a bare redb write transaction inserting
//!    one stored transaction record under a fresh key and committing, in a second
//!    database file in the same directory.
//! 2. `batch_create`: `execute_batch` of 1,000 creates (one durable commit).
//! 3. `feed_page`: a full status-changes page (10,000 changes) after a pointer in
//!    the middle of a short history vs of a 1,000,000-change history.
//!
//! After criterion's measurements, groups 1 and 3 also time their two cases
//! alternately and print both medians and the ratio (`paired`): on this shared
//! machine other processes' load and disk flushes come and go within seconds, and
//! then hit both cases alike.
//!
//! In test mode (`cargo bench -- --test`) the long history is 20,000 changes.
//! `stored_transaction_record` reads the engine's `transactions` table by name.
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use ach_benches::paired::paired;
use ach_benches::Sandbox;
use ach_core::engine::{Outcome, PAGE_LIMIT};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

/// Creates per `execute_batch` in `batch_create`.
const BATCH: usize = 1_000;

/// Creates per `execute_batch` while building a feed history.
const HISTORY_BATCH: usize = 10_000;

/// The table the engine keeps transactions in, and the baseline's table.
const TRANSACTIONS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("transactions");

fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// Criterion's `--profile-time` (under a profiler): no paired run afterwards.
fn profile_mode() -> bool {
    std::env::args().any(|a| a == "--profile-time")
}

/// A key like the engine's transaction ids: `txn_`, the creation time (here
/// [`ach_benches::start`] plus `n` ms) and a random tail (`ids::generate_transaction`),
/// so the baseline inserts in time order as the engine does.
fn fresh_key(n: u64) -> [u8; 26] {
    let at = ach_benches::start() + chrono::Duration::milliseconds(n as i64);
    let id = ach_core::ids::generate_transaction(at);
    id.as_bytes().try_into().unwrap()
}

/// The bytes the engine stores for one typical created transaction: create one in a
/// scratch engine at `path`, close it and read its record back with redb.
fn stored_transaction_record(path: &Path) -> Vec<u8> {
    {
        let sandbox = Sandbox::file(path);
        let created = sandbox.engine.execute(&sandbox.partner, sandbox.create_op(0));
        assert!(matches!(created, Ok(Outcome::TransactionCreated { .. })), "{created:?}");
    }
    let db = Database::create(path).unwrap();
    let tx = db.begin_read().unwrap();
    let table = tx.open_table(TRANSACTIONS).unwrap();
    let (_, value) = table.first().unwrap().unwrap();
    value.value().to_vec()
}

fn durable_create(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let record = stored_transaction_record(&dir.path().join("sample.redb"));
    eprintln!("durable_create: the baseline inserts the engine's stored record, {} bytes", record.len());

    let bare = Database::create(dir.path().join("bare.redb")).unwrap();
    let sandbox = Sandbox::file(&dir.path().join("engine.redb"));

    let mut group = c.benchmark_group("durable_create");
    group.throughput(Throughput::Elements(1));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(30);
    let mut n = 0u64;
    group.bench_function("redb_insert_commit", |b| {
        b.iter(|| {
            n += 1;
            let tx = bare.begin_write().unwrap();
            {
                let mut table = tx.open_table(TRANSACTIONS).unwrap();
                table.insert(fresh_key(n).as_slice(), record.as_slice()).unwrap();
            }
            tx.commit().unwrap();
        });
    });
    let (mut n, mut ran) = (0u64, false);
    group.bench_function("engine_execute_create", |b| {
        ran = true;
        b.iter(|| {
            n += 1;
            let created = sandbox.engine.execute(&sandbox.partner, sandbox.create_op(n));
            assert!(matches!(created, Ok(Outcome::TransactionCreated { .. })), "{created:?}");
        });
    });
    group.finish();
    if !ran || profile_mode() {
        return;
    }

    let pairs = if test_mode() { 2 } else { 1_000 };
    let (mut n, mut m) = (1u64 << 40, 1u64 << 40);
    paired(
        "durable_create",
        "redb_insert_commit",
        "engine_execute_create",
        pairs,
        || {
            n += 1;
            let tx = bare.begin_write().unwrap();
            tx.open_table(TRANSACTIONS).unwrap().insert(fresh_key(n).as_slice(), record.as_slice()).unwrap();
            tx.commit().unwrap();
        },
        || {
            m += 1;
            sandbox.engine.execute(&sandbox.partner, sandbox.create_op(m)).unwrap()
        },
    );
}

fn batch_create(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::file(&dir.path().join("engine.redb"));

    let mut group = c.benchmark_group("batch_create");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(30);
    let mut n = 0u64;
    group.bench_function("execute_batch_1000", |b| {
        b.iter_batched(
            || {
                n += BATCH as u64;
                sandbox.create_batch(n, BATCH)
            },
            |ops| {
                let answers = sandbox.engine.execute_batch(ops);
                assert!(answers.iter().all(Result::is_ok), "a create was refused");
                answers
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// An engine whose partner has `total` status changes, and the pointer after the
/// `middle`-th.
struct History {
    sandbox: Sandbox,
    pointer: String,
    _dir: tempfile::TempDir,
}

impl History {
    fn build(middle: usize, total: usize) -> History {
        let began = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::file(&dir.path().join("engine.redb"));
        sandbox.create_many(0, middle, HISTORY_BATCH);
        let walk_began = Instant::now();
        let (pointer, walked) = sandbox.pointer_at_end();
        assert_eq!(walked, middle);
        let walk = walk_began.elapsed();
        sandbox.create_many(middle as u64, total - middle, HISTORY_BATCH);
        let page = sandbox.engine.status_changes(&sandbox.partner, &sandbox.partner_id, &pointer).unwrap();
        assert_eq!(page.changes.len(), PAGE_LIMIT);
        let all = began.elapsed();
        eprintln!(
            "feed_page: built {total} changes (pointer after {middle}) in {:.1} s: creates {:.1} s \
             ({:.0}/s), walking the feed to the pointer {:.1} s",
            all.as_secs_f64(),
            (all - walk).as_secs_f64(),
            total as f64 / (all - walk).as_secs_f64(),
            walk.as_secs_f64(),
        );
        History { sandbox, pointer, _dir: dir }
    }

    fn page(&self) -> usize {
        let s = &self.sandbox;
        let page = s.engine.status_changes(&s.partner, &s.partner_id, black_box(&self.pointer)).unwrap();
        black_box(page).changes.len()
    }
}

fn feed_page(c: &mut Criterion) {
    let (long_middle, long_total) = if test_mode() { (10_000, 20_000) } else { (500_000, 1_000_000) };
    // Both histories are built before either is measured, so that both pages are
    // read in the same process state. Measured before the long history was built,
    // the short one read 1.64x faster; read alternately after both builds, 1.01x.
    let build = || {
        let long = History::build(long_middle, long_total);
        let short = History::build(5_000, 15_000);
        [short, long]
    };
    short_and_long(
        c,
        "feed_page",
        PAGE_LIMIT,
        ["history_15k_after_5k", "history_1m_after_500k"],
        build,
        History::page,
    );
}

/// Group `group`: a page (`elements` long) of a short and of a long case,
/// `names` in that order, both built by `build` when the first is measured;
/// then, outside a profiler, both timed alternately.
fn short_and_long<T>(
    c: &mut Criterion,
    group: &str,
    elements: usize,
    names: [&str; 2],
    mut build: impl FnMut() -> [T; 2],
    page: impl Fn(&T) -> usize,
) {
    let mut built: Option<[T; 2]> = None;
    let mut measured = c.benchmark_group(group);
    measured.throughput(Throughput::Elements(elements as u64));
    measured.sample_size(30);
    for (i, name) in names.into_iter().enumerate() {
        measured.bench_function(name, |b| {
            let case = &built.get_or_insert_with(&mut build)[i];
            b.iter(|| page(case));
        });
    }
    measured.finish();
    if let Some([short, long]) = built.as_ref().filter(|_| !profile_mode()) {
        let pairs = if test_mode() { 2 } else { 30 };
        paired(group, names[0], names[1], pairs, || page(short), || page(long));
    }
}

/// An engine whose partner has `total` transactions.
struct Listed {
    sandbox: Sandbox,
    _dir: tempfile::TempDir,
}

impl Listed {
    fn build(total: usize) -> Listed {
        let began = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::file(&dir.path().join("engine.redb"));
        sandbox.create_many(0, total, HISTORY_BATCH);
        eprintln!("list_page: built {total} transactions in {:.1} s", began.elapsed().as_secs_f64());
        Listed { sandbox, _dir: dir }
    }

    /// The first page of 100 of the partner's transactions (newest first).
    fn page(&self) -> usize {
        let s = &self.sandbox;
        let filter = ach_core::model::TransactionFilter {
            merchant_id: None,
            status: None,
            created_from: None,
            created_to: None,
            page: ach_core::model::PageRequest { limit: 100, after: None },
        };
        let page = s.engine.transactions(&s.partner, Some(&s.partner_id), black_box(&filter)).unwrap();
        assert_eq!(page.transactions.len(), 100);
        black_box(page).transactions.len()
    }
}

/// `GET /transactions`: a page of 100 at 1,000,000 transactions against at 1,000.
fn list_page(c: &mut Criterion) {
    let long_total = if test_mode() { 20_000 } else { 1_000_000 };
    let build = || [Listed::build(1_000), Listed::build(long_total)];
    short_and_long(c, "list_page", 100, ["transactions_1k", "transactions_1m"], build, Listed::page);
}

criterion_group!(benches, durable_create, batch_create, feed_page, list_page);
criterion_main!(benches);
