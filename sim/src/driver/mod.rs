//! The simulator's driver: a seeded workload run against the engine and the
//! oracle (the reference model) side by side. Every answer is compared with the model's; after every
//! step the invariants are checked (see [`Sim::check`]).
//!
//! On a [`SimDisk`] that loses power, a failed operation (message 7) on a dead
//! disk is a crash: the simulator reopens the engine on what the crash left,
//! settles the operation that was in flight (it may or may not have committed,
//! never half), checks that everything acknowledged is there, and goes on.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use ach_core::clock::ManualClock;
use ach_core::engine::crash::{CrashImage, SimDisk};
use ach_core::engine::{Engine, EngineClock, EngineOptions, LogSettings, Outcome, Refusal};
use ach_core::model::{Event, Status, StatusChange};
use ach_core::secrets::EncryptionKey;
use ach_core::AchError;
use chrono::{DateTime, NaiveDate, Utc};

use crate::calendar;
use crate::oracle::{Expect, Ix, Oracle, Remembered, Target, FAILED};
use crate::workload::{self, Step, Workload};

mod apply;
mod check;
mod recover;

/// The redo log of a simulated disk: small, to have checkpoints and growth
/// inside a short run.
const LOG: LogSettings =
    LogSettings { records: 5, bytes: 64 << 10, grow_by: 4 << 10, checkpoint_above: 16 << 10, hold: 3 };

/// The operator key of every simulated engine.
pub const OPERATOR_KEY: &str = "ok_simulator_operator_key_0123456789";

/// How a run is checked.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Steps to run.
    pub steps: usize,
    /// Full feed reads and the storage audits every this many steps (1: every
    /// step); incremental reads and the model comparison happen after every step.
    pub full_every: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config { steps: 300, full_every: 1 }
    }
}

/// A failed run: where, and how to replay it.
#[derive(Debug, Clone)]
pub struct SimError {
    /// The seed.
    pub seed: u64,
    /// The step (1-based; 0: opening).
    pub step: usize,
    /// Steps the run was to make.
    pub steps: usize,
    /// Full checks every this many steps.
    pub full_every: usize,
    /// The crash point, for crash runs.
    pub crash_at: Option<u64>,
    /// What went wrong.
    pub message: String,
}

impl SimError {
    /// The command that replays this run.
    pub fn replay(&self) -> String {
        let crash = self.crash_at.map(|n| format!(" --crash-at {n}")).unwrap_or_default();
        let full =
            if self.full_every == 1 { String::new() } else { format!(" --full-every {}", self.full_every) };
        format!("cargo run -p ach-sim -- --seed {} --steps {}{full}{crash}", self.seed, self.steps)
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {} failed at step {}: {}\nreplay: {}",
            self.seed,
            self.step,
            self.message,
            self.replay()
        )
    }
}

/// What a crash did.
#[derive(Debug, Clone, Default)]
pub struct CrashRecord {
    /// The step it hit (0: while opening).
    pub step: usize,
    /// The kind of step in flight.
    pub kind: &'static str,
    /// The disk image.
    pub image: CrashImage,
    /// Whether the operation in flight turned out committed (`None`: not
    /// knowable, e.g. a refusal, or resolved by retrying).
    pub committed: Option<bool>,
    /// Transactions acknowledged before the crash (all found after it).
    pub acknowledged: usize,
    /// The crash hit redb's creation of the file and left it unopenable (nothing
    /// had been acknowledged; the run went on with a new file).
    pub unopenable: bool,
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The seed.
    pub seed: u64,
    /// Steps run.
    pub steps: usize,
    /// A digest of every answer, ids replaced by their place in the run: the same
    /// seed gives the same digest.
    pub digest: u64,
    /// Per kind of step: accepted, refused.
    pub counts: BTreeMap<&'static str, [u64; 2]>,
    /// Transactions in the model at the end, and their status changes.
    pub transactions: usize,
    /// Status changes in all feeds.
    pub changes: usize,
    /// The crash, for a crash run that crashed.
    pub crash: Option<CrashRecord>,
    /// Status changes by status: A, B, S, R.
    pub statuses: [u64; 4],
    /// Clock moves that crossed a weekend, a Fed holiday, a DST change, a month end.
    pub crossings: [u64; 4],
}

/// A feed read step by step with pointers.
#[derive(Debug, Clone)]
struct FeedReader<T> {
    pointer: String,
    seen: Vec<T>,
}

/// The simulator.
#[derive(Debug)]
pub struct Sim {
    seed: u64,
    config: Config,
    work: Workload,
    oracle: Oracle,
    engine: Option<Engine>,
    clock: ManualClock,
    key: EncryptionKey,
    disk: Option<SimDisk>,
    crash_at: Option<u64>,
    readers: Vec<FeedReader<StatusChange>>,
    event_readers: BTreeMap<Ix, FeedReader<Event>>,
    last_status: HashMap<String, Status>,
    keyed: Vec<Step>,
    labels: HashMap<String, String>,
    /// The partner of each transaction id.
    owners: HashMap<String, Ix>,
    digest: u64,
    counts: BTreeMap<&'static str, [u64; 2]>,
    step_no: usize,
    crash: Option<CrashRecord>,
    crossings: [u64; 4],
}

/// Whether an answer is a storage failure (message 7).
fn storage_failure<T>(r: &Result<T, Refusal>) -> bool {
    matches!(r, Err(Refusal::Refused { error: AchError::DatabaseUnavailable, .. }))
}

fn fnv(digest: u64, text: &str) -> u64 {
    text.bytes().fold(digest, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3))
}

/// Every engine-issued id or key in `text` (prefix + alphanumerics).
fn ids_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for prefix in ["par_", "mer_", "cus_", "txn_", "pk_", "mk_"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(prefix) {
            let start = from + i;
            let end = text[start + prefix.len()..]
                .find(|c: char| !c.is_ascii_alphanumeric())
                .map_or(text.len(), |e| start + prefix.len() + e);
            out.push(text[start..end].to_owned());
            from = end.max(start + 1);
        }
    }
    out
}

impl Sim {
    fn new(seed: u64, config: Config) -> Sim {
        let mut work = Workload::new(seed);
        let start = work.start();
        let key = EncryptionKey::from_bytes([(seed % 251) as u8; 32]);
        Sim {
            seed,
            config,
            work,
            oracle: Oracle::new(start),
            engine: None,
            clock: ManualClock::new(start),
            key,
            disk: None,
            crash_at: None,
            readers: Vec::new(),
            event_readers: BTreeMap::new(),
            last_status: HashMap::new(),
            keyed: Vec::new(),
            labels: HashMap::new(),
            owners: HashMap::new(),
            digest: 0xCBF2_9CE4_8422_2325,
            counts: BTreeMap::new(),
            step_no: 0,
            crash: None,
            crossings: [0; 4],
        }
    }

    fn error(&self, message: impl Into<String>) -> SimError {
        SimError {
            seed: self.seed,
            step: self.step_no,
            steps: self.config.steps,
            full_every: self.config.full_every,
            crash_at: self.crash_at,
            message: message.into(),
        }
    }

    /// The engine over `disk`, with its redo log there and a checkpoint every
    /// fifth record (so that crash points fall inside checkpoints too).
    fn open_on(&self, disk: &SimDisk) -> Result<Engine, ach_core::engine::OpenError> {
        Engine::open_on_disk(disk, self.options(), LOG)
    }

    fn options(&self) -> EngineOptions {
        let mut o = EngineOptions::manual(self.oracle.now)
            .with_operator_key(OPERATOR_KEY)
            .sandbox()
            .with_encryption_key(self.key.clone())
            // The model has no fraud monitoring: nothing is held.
            .with_risk_rules(ach_core::model::RiskRules::off());
        o.clock = EngineClock::Manual(self.clock.clone());
        o
    }

    /// A run over an in-memory engine.
    pub fn in_memory(seed: u64, config: Config) -> Result<Sim, SimError> {
        let mut sim = Sim::new(seed, config);
        let engine = Engine::in_memory(sim.options()).map_err(|e| sim.error(format!("open: {e}")))?;
        sim.engine = Some(engine);
        Ok(sim)
    }

    /// A run over a simulated disk that loses power just before its operation
    /// number `crash_at` (never, if `None`).
    pub fn on_disk(seed: u64, config: Config, crash_at: Option<u64>) -> Result<(Sim, SimDisk), SimError> {
        let mut sim = Sim::new(seed, config);
        sim.crash_at = crash_at;
        let disk = SimDisk::new();
        if let Some(n) = crash_at {
            disk.lose_power_before(n);
        }
        sim.disk = Some(disk.clone());
        match sim.open_on(&disk) {
            Ok(engine) => sim.engine = Some(engine),
            Err(_) if disk.crashed() => {
                sim.reopen("open")?;
                sim.check(true).map_err(|m| sim.error(m))?;
            }
            Err(e) => return Err(sim.error(format!("open: {e}"))),
        }
        Ok((sim, disk))
    }

    fn engine(&self) -> &Engine {
        // Only ever `None` between a crash and the reopen that follows it.
        self.engine.as_ref().unwrap_or_else(|| unreachable!("the engine is open"))
    }

    /// Run the configured number of steps.
    pub fn run(mut self) -> Result<Summary, SimError> {
        for _ in 0..self.config.steps {
            self.step()?;
        }
        self.check(true).map_err(|m| self.error(format!("at the end: {m}")))?;
        if self.disk.is_some() {
            self.close_and_reopen().map_err(|m| self.error(format!("closing and reopening: {m}")))?;
        }
        Ok(self.summary())
    }

    /// The summary so far.
    pub fn summary(&self) -> Summary {
        Summary {
            seed: self.seed,
            steps: self.step_no,
            digest: self.digest,
            counts: self.counts.clone(),
            transactions: self.oracle.txns.len(),
            changes: self.oracle.partners.iter().map(|p| p.feed.len()).sum(),
            crash: self.crash.clone(),
            statuses: self.statuses(),
            crossings: self.crossings,
        }
    }

    fn statuses(&self) -> [u64; 4] {
        let mut out = [0; 4];
        for c in self.oracle.partners.iter().flat_map(|p| &p.feed) {
            out[c.status as usize] += 1;
        }
        out
    }

    /// Note what a clock move to `to` crosses.
    fn crossing(&mut self, to: DateTime<Utc>) {
        use chrono::Datelike;
        let (from, to) = (calendar::eastern_date(self.oracle.now), calendar::eastern_date(to));
        let days: Vec<NaiveDate> = from.iter_days().skip(1).take_while(|d| *d <= to).collect();
        let weekend = days.iter().any(|d| d.weekday().number_from_monday() >= 6);
        let holiday =
            days.iter().any(|d| d.weekday().number_from_monday() < 6 && !calendar::is_banking_day(*d));
        let dst = days.iter().any(|d| calendar::dst_changes(d.year()).contains(d));
        let month = days.iter().any(|d| d.day() == 1);
        for (i, hit) in [weekend, holiday, dst, month].into_iter().enumerate() {
            self.crossings[i] += u64::from(hit);
        }
    }

    /// One step: choose, perform, check.
    pub fn step(&mut self) -> Result<(), SimError> {
        self.step_no += 1;
        let step = if !self.keyed.is_empty() && self.work.rng().percent(4) {
            self.retry()
        } else {
            self.work.next(&self.oracle)
        };
        self.perform(&step).map_err(|m| self.error(format!("{}: {m}", step.kind())))?;
        let full = self.step_no.is_multiple_of(self.config.full_every.max(1));
        self.check(full).map_err(|m| self.error(format!("after {}: {m}", step.kind())))
    }

    /// A keyed step again: the same request (its first answer comes back) or,
    /// one time in three, another request under the same key (message 2).
    fn retry(&mut self) -> Step {
        let i = self.work.rng().below(self.keyed.len());
        let mut step = self.keyed[i].clone();
        if self.work.rng().percent(33) {
            if let Step::Keyed { step: inner, .. } = &mut step {
                match &mut **inner {
                    Step::CreateTxn { spec, .. } => spec.description.push_str(" again"),
                    Step::Submit { app, .. } => app.decline_duplicates = !app.decline_duplicates,
                    Step::CreateCustomer { account, .. } => account.name.push_str(" Jr"),
                    Step::DeleteCustomer { customer, .. } => {
                        *customer = Target::Unknown(self.work.unknown("cus"))
                    }
                    Step::Void { txn, .. } | Step::Reverse { txn, .. } => {
                        *txn = Target::Unknown(self.work.unknown("txn"));
                    }
                    _ => {}
                }
            }
        }
        step
    }

    fn count(&mut self, kind: &'static str, ok: bool) {
        self.counts.entry(kind).or_default()[usize::from(!ok)] += 1;
    }

    /// Replace engine-issued ids with their labels (`T12`), keys with `KEY`.
    fn normalize(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for id in ids_in(text) {
            let label = if id.starts_with("pk_") || id.starts_with("mk_") {
                "KEY".to_owned()
            } else {
                self.labels.get(&id).cloned().unwrap_or(id.clone())
            };
            out = out.replace(&id, &label);
        }
        out
    }

    fn note(&mut self, kind: &str, answer: &Result<Outcome, Refusal>) {
        let text = match answer {
            Ok(o) => serde_json::to_string(o).unwrap_or_default(),
            Err(f) => format!("{} {}", f.status(), f.message()),
        };
        let line = format!("{}|{kind}|{}", self.step_no, self.normalize(&text));
        self.digest = fnv(self.digest, &line);
    }

    fn label(&mut self, id: &str, prefix: char, n: usize) {
        if prefix == 'T' {
            let partner = self.oracle.txns.get(n).map_or(usize::MAX, |t| t.partner);
            self.owners.insert(id.to_owned(), partner);
        }
        self.labels.insert(id.to_owned(), format!("{prefix}{n}"));
    }

    fn perform(&mut self, step: &Step) -> Result<(), String> {
        if let Step::SetClock { to } | Step::Advance { to } | Step::Drift { to, .. } = step {
            if *to > self.oracle.now {
                self.crossing(*to);
            }
        }
        match step {
            Step::Advance { to } => {
                self.clock.set(*to);
                let got = self.engine().advance_to(*to);
                if storage_failure(&got) && self.crashed() {
                    return self.recover(step, &Expect::Ok);
                }
                let progress = got.map_err(|f| format!("advance_to failed: {f:?}"))?;
                let want = self.oracle.advance(*to);
                if progress != want {
                    return Err(format!("advance_to({to}) did {progress:?}, the model {want:?}"));
                }
                self.count("advance_to", true);
                self.digest = fnv(self.digest, &format!("{}|advance|{progress:?}", self.step_no));
                Ok(())
            }
            Step::Drift { to, then } => {
                // The clock moves; the next operation runs the catch-up first.
                self.clock.set(*to);
                self.oracle.advance(*to);
                self.perform_op(step, then)
            }
            _ => self.perform_op(step, step),
        }
    }

    fn crashed(&self) -> bool {
        self.disk.as_ref().is_some_and(SimDisk::crashed)
    }

    /// The answer the model expects for `step`.
    fn expect(&self, step: &Step) -> Expect {
        let m = &self.oracle;
        if let Some((caller, partner)) = step.parties() {
            if caller != partner {
                return Expect::Auth;
            }
        }
        match step {
            Step::CreatePartner { name } => {
                if name.trim().is_empty() {
                    Expect::No(FAILED.into(), 422)
                } else {
                    Expect::Ok
                }
            }
            Step::PartnerLimits { partner, .. } => match partner {
                Target::Known(_) => Expect::Ok,
                Target::Unknown(_) => Expect::No(FAILED.into(), 404),
            },
            Step::Submit { app, .. } => m.expect_submit(app),
            Step::Approve { merchant, .. } => match merchant {
                Target::Known(i) if m.merchants[*i].approved => Expect::No(FAILED.into(), 422),
                Target::Known(_) => Expect::Ok,
                Target::Unknown(id) => Expect::No(format!("'{id}' is an invalid Merchant ID"), 422),
            },
            Step::MerchantLimits { merchant, .. } => match merchant {
                Target::Known(_) => Expect::Ok,
                Target::Unknown(id) => Expect::No(format!("'{id}' is an invalid Merchant ID"), 422),
            },
            Step::CreateCustomer { partner, scope, account, .. } => {
                m.expect_customer(*partner, scope, account)
            }
            Step::DeleteCustomer { partner, customer, .. } => m.expect_delete(*partner, customer),
            Step::CreateTxn { partner, spec, .. } => m.expect_create(*partner, spec),
            Step::Void { partner, txn, .. } => m.expect_void(*partner, txn),
            Step::Reverse { partner, txn, .. } => m.expect_reverse(*partner, txn),
            Step::Return { txn, code, date } => m.expect_return(txn, code, *date),
            Step::SetClock { to } => {
                if *to < m.now {
                    Expect::No(FAILED.into(), 422)
                } else {
                    Expect::Ok
                }
            }
            Step::Advance { .. } => Expect::Ok,
            Step::Drift { then, .. } => self.expect(then),
            Step::Keyed { key, step: inner, .. } => {
                let partner = inner.parties().map_or(0, |(_, p)| p);
                match m.partners[partner].idem.get(key) {
                    Some(stored) if stored.request == format!("{inner:?}") => {
                        Expect::Replay(Box::new(stored.answer.clone()))
                    }
                    Some(_) => Expect::No(AchError::AlreadySubmitted.to_string(), 409),
                    None => self.expect(inner),
                }
            }
        }
    }

    fn perform_op(&mut self, outer: &Step, step: &Step) -> Result<(), String> {
        let expect = self.expect(step);
        let (caller, op) = workload::operation(&self.oracle, step);
        let got = self.engine().execute(&caller, op);
        if storage_failure(&got) && self.crashed() {
            return self.recover(outer, &expect);
        }
        let ok = match (&expect, &got) {
            (Expect::Ok, Ok(_)) | (Expect::Auth, Err(Refusal::Authentication)) => true,
            (Expect::No(message, status), Err(f)) => f.message() == *message && f.status() == *status,
            // A replay is marked, around exactly the first answer.
            (Expect::Replay(first), got) => match (first.as_ref(), got) {
                (Ok(first), Ok(Outcome::Replayed(again))) => first == again.as_ref(),
                (Err(first), Err(Refusal::Replayed(again))) => first == again.as_ref(),
                _ => false,
            },
            _ => false,
        };
        if std::env::var_os("SIM_TRACE").is_some() {
            let answer = match &got {
                Ok(o) => format!("{o:?}"),
                Err(f) => format!("{} {}", f.status(), f.message()),
            };
            eprintln!("{:>4} {:<18} {}", self.step_no, step.kind(), self.normalize(&answer));
        }
        if !ok {
            return Err(format!("expected {expect:?}, got {got:?} (request {step:?})"));
        }
        self.count(step.kind(), got.is_ok());
        self.remember_key(step, &expect, &got);
        if let (Ok(outcome), false) = (&got, matches!(expect, Expect::Replay(_))) {
            self.apply(step, outcome)?;
        }
        self.note(step.kind(), &got);
        if got.is_err() && matches!(expect, Expect::No(..)) {
            self.twin(step, &got)?;
        }
        Ok(())
    }

    /// A keyed request that ran (not a replay, not a key conflict, not an
    /// authentication failure) stores its answer under its key.
    fn remember_key(&mut self, step: &Step, expect: &Expect, got: &Result<Outcome, Refusal>) {
        let Step::Keyed { key, step: inner, .. } = step else { return };
        let conflict = matches!(expect, Expect::No(m, 409) if *m == AchError::AlreadySubmitted.to_string());
        if matches!(expect, Expect::Auth | Expect::Replay(_)) || conflict {
            return;
        }
        let partner = inner.parties().map_or(0, |(_, p)| p);
        let stored = Remembered { request: format!("{inner:?}"), answer: got.clone() };
        self.oracle.partners[partner].idem.insert(key.clone(), stored);
        self.keyed.push(step.clone());
    }
}
