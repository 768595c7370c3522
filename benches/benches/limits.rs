//! Limits and duplicate detection (issue 4), on a database file with redb's
//! default `Durability::Immediate`, each case an `execute_batch` of 1,000 creates
//! (one durable commit, so that the checks' cost is not hidden behind an fsync
//! per create):
//!
//! 1. `checks`: every merchant limit and every overall limit set (none binding:
//!    the bench creates are all accepted), duplicate declining on, a 30-day period,
//!    against the same engine set-up with the checks switched off
//!    ([`Engine::without_limits_and_duplicates`]: no limit or duplicate check, no
//!    usage counters, no duplicate indexes).
//! 2. `history`: the same batch (checks on) on an engine whose merchant already has
//!    1,000 transactions vs 1,000,000 (in test mode, `cargo bench -- --test`:
//!    20,000).
//!
//! After criterion's measurements each group also times its two cases alternately
//! and prints both medians and the ratio (`paired`), the figure `BENCHMARKS.md`
//! reports: this shared machine's load then hits both cases alike.
#![allow(missing_docs, clippy::unwrap_used)]

use ach_benches::paired::paired;
use ach_benches::{generous_limits, sandbox_options, transaction_body_from};
use ach_core::engine::{Caller, Engine, Operation, Outcome};
use ach_core::limits::Limits;
use ach_core::money::Money;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};

/// Creates per measured `execute_batch`.
const BATCH: usize = 1_000;

/// Creates per `execute_batch` while building a history.
const HISTORY_BATCH: usize = 10_000;

/// Creates per simulated day while building a history.
const PER_DAY: usize = 50_000;

fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// Every limit set, none binding for the bench's creates ($1.00 to $9.99 each, at
/// most a few million of them).
fn every_limit() -> Limits {
    Limits {
        min_transaction_amount: Some(Money::from_cents(1)),
        max_credit_amount: Some(ach_core::money::NACHA_MAX),
        period_days: Some(30),
        ..generous_limits()
    }
}

/// A partner (its overall limits set) and its approved merchant (its limits set,
/// duplicate declining on) on an engine over a file in a fresh directory.
struct Fixture {
    engine: Engine,
    partner: Caller,
    partner_id: String,
    merchant_id: String,
    next: std::cell::Cell<u64>,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new(checks: bool) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(&dir.path().join("engine.redb"), sandbox_options()).unwrap();
        let engine = if checks { engine } else { engine.without_limits_and_duplicates() };
        let operator = Caller::Operator;
        let Ok(Outcome::PartnerCreated { partner_id, api_key }) =
            engine.execute(&operator, Operation::CreatePartner { name: "Limits Bench".into() })
        else {
            panic!("create partner")
        };
        let partner = engine.authenticate(&api_key).unwrap();
        let set = Operation::SetPartnerLimits { partner_id: partner_id.clone(), limits: every_limit() };
        assert!(matches!(engine.execute(&operator, set), Ok(Outcome::LimitsSet { .. })));
        let mut application: serde_json::Value =
            serde_json::from_str(include_str!("../../examples/requests/merchant.json")).unwrap();
        application["partner_id"] = partner_id.clone().into();
        application["velocities"]["decline_duplicates"] = true.into();
        let submit = Operation::SubmitMerchant {
            partner_id: partner_id.clone(),
            body: serde_json::to_vec(&application).unwrap(),
        };
        let Ok(Outcome::MerchantSubmitted { merchant_id }) = engine.execute(&partner, submit) else {
            panic!("submit merchant")
        };
        let approve = Operation::ApproveMerchant { merchant_id: merchant_id.clone(), limits: every_limit() };
        assert!(matches!(engine.execute(&operator, approve), Ok(Outcome::MerchantApproved { .. })));
        Fixture { engine, partner, partner_id, merchant_id, next: std::cell::Cell::new(0), _dir: dir }
    }

    /// The next `count` creates: PPD debits of $1.00 to $9.99 with an inline
    /// customer, each from its own account (so that none is a duplicate).
    fn creates(&self, count: usize) -> Vec<(Caller, Operation)> {
        let first = self.next.get();
        self.next.set(first + count as u64);
        (first..first + count as u64)
            .map(|n| {
                let account = (100_000_000 + n).to_string();
                let body = transaction_body_from(&self.partner_id, &self.merchant_id, n, &account);
                let op = Operation::CreateTransaction { partner_id: self.partner_id.clone(), body };
                (self.partner.clone(), op)
            })
            .collect()
    }

    /// Apply `ops` in one `execute_batch`, panicking if any is refused.
    fn run(&self, ops: Vec<(Caller, Operation)>) -> usize {
        let answers = self.engine.execute_batch(ops);
        if let Some(refused) = answers.iter().find(|a| a.is_err()) {
            panic!("a create was refused: {refused:?}");
        }
        answers.len()
    }

    /// One measured batch: [`BATCH`] fresh creates.
    fn batch(&self) -> usize {
        let ops = self.creates(BATCH);
        self.run(ops)
    }

    /// A fixture (checks on) whose merchant already has `prior` transactions,
    /// made [`PER_DAY`] a day on consecutive days (each day's cut-off and, later,
    /// settlement run as the clock passes them), then a day later: the measured
    /// creates happen on a day of their own, as they would for a merchant with a
    /// long history.
    fn with_history(prior: usize) -> Fixture {
        let f = Fixture::new(true);
        let mut done = 0;
        while done < prior {
            let mut today = 0;
            while today < PER_DAY && done < prior {
                let n = HISTORY_BATCH.min(prior - done).min(PER_DAY - today);
                let ops = f.creates(n);
                f.run(ops);
                done += n;
                today += n;
            }
            f.next_day();
        }
        f
    }

    /// Move the sandbox clock a day ahead (running every cut-off and settlement due).
    fn next_day(&self) {
        let now = self.engine.now() + chrono::Duration::days(1);
        let clock = self.engine.execute(&Caller::Operator, Operation::SetClock { now });
        assert!(matches!(clock, Ok(Outcome::ClockSet { .. })), "{clock:?}");
    }
}

fn measure(c: &mut Criterion, group: &str, cases: &[(&str, &Fixture)]) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(BATCH as u64));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(20);
    for (name, fixture) in cases {
        g.bench_function(*name, |b| {
            b.iter_batched(|| fixture.creates(BATCH), |ops| fixture.run(ops), BatchSize::PerIteration);
        });
    }
    g.finish();
}

fn checks(c: &mut Criterion) {
    let (on, off) = (Fixture::new(true), Fixture::new(false));
    measure(c, "checks", &[("all_limits_and_duplicates_on", &on), ("checks_off", &off)]);
    let pairs = if test_mode() { 2 } else { 30 };
    paired("checks", "checks_off", "all_limits_and_duplicates_on", pairs, || off.batch(), || on.batch());
}

fn history(c: &mut Criterion) {
    let long = match std::env::var("ACH_LIMITS_PRIOR") {
        Ok(n) => n.parse().unwrap(),
        Err(_) if test_mode() => 20_000,
        Err(_) => 1_000_000,
    };
    let began = std::time::Instant::now();
    let big = Fixture::with_history(long);
    eprintln!("history: built {long} prior transactions in {:.1} s", began.elapsed().as_secs_f64());
    let small = Fixture::with_history(1_000);
    let long_name = format!("prior_{long}");
    let long_name = long_name.as_str();
    measure(c, "history", &[("prior_1k", &small), (long_name, &big)]);
    let pairs = if test_mode() { 2 } else { 30 };
    paired("history", "prior_1k", long_name, pairs, || small.batch(), || big.batch());
}

criterion_group!(benches, checks, history);
criterion_main!(benches);
