//! Test-only entry points (feature `simulation`, used by the simulator in `sim/`):
//! an engine over any storage backend (the crash tests' simulated disk), and an
//! audit of the stored records against both feeds and the schedule indexes.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use crate::engine::feeds::changes::date;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::{Engine, EngineOptions, OpenError, Refusal};
use crate::lifecycle::State;
use crate::model::StatusChange;
use crate::secrets::EncryptionKey;
use crate::storage::{row_keys, LogSettings, Snapshot, StorageBackend, StorageError, Store, Table};

impl Engine {
    /// Open (or create) a database over `backend`. A backend that lost power holds
    /// what a crash left; redb rolls back a commit that did not fully land. Pass
    /// the encryption key in `options` to reopen the same database (without one a
    /// fresh key is made, which a reopened database refuses).
    pub fn open_with_backend(
        backend: impl StorageBackend,
        options: EngineOptions,
    ) -> Result<Engine, OpenError> {
        let key = options.encryption_key.clone().unwrap_or_else(EncryptionKey::generate);
        let store = Store::with_backend(backend)?;
        Engine::start(store, key, options)
    }

    /// [`Engine::open_with_backend`], reopening after a failure (as a file
    /// database does): `backend` gives the backend of each open, over the same
    /// storage (`|| disk.backend()`).
    pub fn open_with_backends<B: StorageBackend>(
        backend: impl Fn() -> B + Send + Sync + 'static,
        options: EngineOptions,
    ) -> Result<Engine, OpenError> {
        let key = options.encryption_key.clone().unwrap_or_else(EncryptionKey::generate);
        let store = Store::with_backends(backend)?;
        Engine::start(store, key, options)
    }

    /// Open (or create) a database on a simulated disk with its redo log in the
    /// disk's second file, as [`Engine::open`] keeps one beside a file: a power
    /// loss takes the log's unsynced tail too, and reopening replays what the
    /// database lacks. Reopened after a failure. `settings`: how the log grows
    /// and when a commit is a checkpoint (`LogSettings::default()` as for a
    /// file; smaller to exercise checkpoints in a short run).
    pub fn open_on_disk(
        disk: &crate::storage::crash::SimDisk,
        options: EngineOptions,
        settings: LogSettings,
    ) -> Result<Engine, OpenError> {
        let key = options.encryption_key.clone().unwrap_or_else(EncryptionKey::generate);
        let store = Store::on_disk(disk, settings)?;
        Engine::start(store, key, options)
    }

    /// Check that the stored records agree with each other: every feed numbered
    /// 1, 2, 3… without gaps; every status change and event naming a transaction of
    /// its partner or merchant; every transaction's latest change and event
    /// reporting its current state and dates; the schedule indexes holding
    /// exactly the Pending (by cut-off) and Originated (by settlement) transactions.
    /// `Err` lists the first differences. A full scan, for tests.
    pub fn audit_records(&self) -> Result<Result<(), String>, Refusal> {
        let window = self.lock_window()?;
        let (now, span) = (self.now(), self.duplicate_window);
        Ok(self.store.read_durable(|r| audit(r, &self.fingerprints, &window, now, span))?)
    }

    /// The UTC days (days since 1970-01-01) the duplicate index holds entries of,
    /// oldest first, with how many each: about one duplicate window's worth.
    pub fn duplicate_index_days(&self) -> Result<Vec<(i64, usize)>, Refusal> {
        let window = self.lock_window()?;
        Ok(crate::engine::risk::duplicates::days(&window))
    }
}

const ALL: &[u8] = &[0xff; 16];

/// A feed key's scope and sequence number.
fn split(key: &[u8]) -> (String, u64) {
    let scope = key.get(..key.len().saturating_sub(9)).unwrap_or_default();
    (String::from_utf8_lossy(scope).into_owned(), row_keys::seq_of(key).unwrap_or(0))
}

/// Whether a change reports the transaction as it is stored (all but the time).
fn reports(c: &StatusChange, t: &TransactionRecord) -> bool {
    let reason = match (t.state, &t.return_reason) {
        (State::Voided, None) => Some(crate::engine::feeds::changes::VOID_REASON.to_owned()),
        (_, reason) => reason.clone(),
    };
    c.status == t.state.feed_status()
        && c.origination_date == date(t.origination_date)
        && c.effective_date == date(t.effective_date)
        && c.settlement_date == date(t.settlement_date)
        && c.return_date == date(t.return_date)
        && c.return_code == t.return_code
        && c.reason == reason
}

/// Walk one feed table: sequence numbers per scope, owners, the latest entry of
/// each transaction.
fn walk(
    r: &Snapshot,
    table: Table,
    txns: &BTreeMap<String, TransactionRecord>,
    change: impl Fn(&StatusChange, u64) -> Result<StatusChange, String>,
    owner: impl Fn(&TransactionRecord) -> &str,
    problems: &mut Vec<String>,
) -> Result<BTreeMap<String, StatusChange>, StorageError> {
    let mut latest = BTreeMap::new();
    let mut expected: BTreeMap<String, u64> = BTreeMap::new();
    let rows = r.range(table, &[], ALL, usize::MAX)?;
    let entries = rows.iter().map(|(k, v)| {
        let (scope, last) = split(k);
        Ok(crate::engine::feeds::feed_rows::entries(last, v)?
            .into_iter()
            .map(move |(seq, e)| (scope.clone(), seq, e)))
    });
    for (scope, seq, v) in entries.collect::<Result<Vec<_>, StorageError>>()?.into_iter().flatten() {
        let next = expected.entry(scope.clone()).or_insert(1);
        if seq != *next {
            problems.push(format!("{scope}: entry {seq} where {next} was due"));
        }
        *next = seq + 1;
        let entry = match table {
            Table::Events => crate::engine::feeds::changes::decode_event(v)?.change().clone(),
            _ => crate::storage::decode(table, v)?,
        };
        let c = match change(&entry, seq) {
            Ok(c) => c,
            Err(why) => {
                problems.push(format!("{scope} #{seq}: {why}"));
                continue;
            }
        };
        match txns.get(&c.transaction_id) {
            Some(t) if owner(t) == scope => {}
            _ => problems
                .push(format!("{scope} #{seq}: names {}, not one of its transactions", c.transaction_id)),
        }
        latest.insert(c.transaction_id.clone(), c);
    }
    Ok(latest)
}

fn audit(
    r: &Snapshot,
    fingerprints: &crate::secrets::Fingerprinter,
    window: &crate::engine::risk::window::Window,
    now: chrono::DateTime<chrono::Utc>,
    duplicate_window: chrono::Duration,
) -> Result<Result<(), String>, StorageError> {
    let mut problems = Vec::new();
    let mut txns = BTreeMap::new();
    for (_, v) in r.range(Table::Transactions, &[], ALL, usize::MAX)? {
        let t: TransactionRecord = crate::storage::decode(Table::Transactions, &v)?;
        txns.insert(t.id.clone(), t);
    }
    let mut latest = |table, owner: fn(&TransactionRecord) -> &str| {
        walk(r, table, &txns, |c: &StatusChange, _| Ok(c.clone()), owner, &mut problems)
    };
    let changes = latest(Table::Changes, |t| &t.partner_id)?;
    let events = latest(Table::Events, |t| &t.merchant_id)?;
    for t in txns.values() {
        match (changes.get(&t.id), events.get(&t.id)) {
            (Some(c), Some(e)) if reports(c, t) && c == e => {}
            (c, e) => problems.push(format!(
                "{} is {} but its latest change is {:?} and latest event {:?}",
                t.id,
                t.state,
                c.map(|c| c.status),
                e.map(|e| e.status)
            )),
        }
    }
    // Entries held for review wait outside the pending index.
    let mut held = BTreeSet::new();
    for (key, _) in r.range(Table::Held, &[], ALL, usize::MAX)? {
        held.insert(row_keys::at_id(&key).unwrap_or_default().to_owned());
    }
    let pending = Audited { member: State::Pending, left: State::Voided, outside: &held };
    index_audit(r, Table::Pending, &txns, pending, |t| Some(t.cutoff_at), &mut problems)?;
    let settles = |t: &TransactionRecord| t.settles_at;
    let none = BTreeSet::new();
    let settled = Audited { member: State::Originated, left: State::Returned, outside: &none };
    index_audit(r, Table::Settlements, &txns, settled, settles, &mut problems)?;
    crate::engine::risk::duplicates::audit(window, fingerprints, &txns, now, duplicate_window, &mut problems);
    if problems.is_empty() {
        return Ok(Ok(()));
    }
    problems.truncate(5);
    Ok(Err(problems.join("; ")))
}

/// What an index of transactions holds: every transaction in state `member`
/// but those `outside` it, and nothing else but transactions in state `left`
/// (left in their packed rows; the run over the index skips them).
struct Audited<'a> {
    member: State,
    left: State,
    outside: &'a BTreeSet<String>,
}

/// An index of transactions by instant (pending: by cut-off; settlements: by
/// settlement instant) holds what `audited` says, each at its instant
/// (`at`), once.
fn index_audit(
    r: &Snapshot,
    table: Table,
    txns: &BTreeMap<String, TransactionRecord>,
    Audited { member, left, outside }: Audited<'_>,
    at: fn(&TransactionRecord) -> Option<DateTime<Utc>>,
    problems: &mut Vec<String>,
) -> Result<(), StorageError> {
    let name = table.name();
    let mut indexed = BTreeSet::new();
    for (key, value) in r.range(table, &[], ALL, usize::MAX)? {
        let when = row_keys::decode_instant(&key);
        for id in crate::engine::rows::packed_index::row_ids(&key, &value)? {
            if !indexed.insert((when, id.to_owned())) {
                problems.push(format!("the {name} index holds {id} twice"));
            }
        }
    }
    for t in txns.values().filter(|t| t.state == member && !outside.contains(&t.id)) {
        if !indexed.contains(&(at(t), t.id.clone())) {
            problems.push(format!("{} is {member} but not in the {name} index at its instant", t.id));
        }
    }
    for (_, id) in &indexed {
        match txns.get(id).map(|t| t.state) {
            Some(state) if outside.contains(id) && state == member => {
                problems.push(format!("the {name} index holds {id}, which is held for review"));
            }
            Some(state) if state == member || state == left => {}
            other => problems.push(format!("the {name} index holds {id}, which is {other:?}")),
        }
    }
    Ok(())
}
