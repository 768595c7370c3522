//! Operations in, answers out: running operations in
//! one write transaction (catch-up first, then each operation prepared afresh if
//! its preparation is stale, then applied), with one durable commit.

use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};

use chrono::{DateTime, Utc};

use crate::calendar;
use crate::engine::request::apply;
use crate::engine::risk::window::Window;
use crate::engine::settlement::schedule;
use crate::engine::{
    Applied, Caller, Engine, Operation, Outcome, PreparedOperation, Refusal, Stop, WriteContext,
};
use crate::routing::RoutingDirectory;
use crate::storage::StorageError;

impl Engine {
    /// Run many operations in ONE write transaction (one durable commit), each with
    /// its own result, in order. Work that needs no storage (validation, parsing a
    /// directory, fingerprints of the request) is done before the transaction
    /// begins ([`Engine::prepare`]). If the commit fails, every operation answers
    /// message 7 and nothing is stored.
    pub fn execute_batch(&self, ops: Vec<(Caller, Operation)>) -> Vec<Result<Outcome, Refusal>> {
        let now = self.clock.now();
        let directory = self.directory();
        let prepared = self.prepare_many(ops, now, &directory);
        self.execute_prepared(prepared)
    }

    /// [`Engine::execute_batch`] of operations already prepared by
    /// [`Engine::prepare`] (on other threads): the same answers, and the same
    /// stored data, as `execute_batch` of the operations they were prepared from.
    pub fn execute_prepared(&self, ops: Vec<(Caller, PreparedOperation)>) -> Vec<Result<Outcome, Refusal>> {
        self.execute_streamed(ops, None)
    }

    /// [`Engine::execute_prepared`] of `ops` and, in the same write
    /// transaction, of every run `more` gives after them (asked again after
    /// each run is applied, until it gives none): a group commit's leader
    /// applies the operations queued so far while other callers still
    /// prepare theirs. The answers are in order, runs after `ops`.
    pub(in crate::engine) fn execute_streamed(
        &self,
        ops: Vec<(Caller, PreparedOperation)>,
        mut more: Option<More<'_>>,
    ) -> Answers {
        let now = self.clock.now();
        let mut directory = self.directory();
        let mut count = ops.len();
        let mut loaded = None;
        let Ok(mut window) = self.lock_window_in_turn() else { return unavailable(count) };
        crate::engine::multiprocess::window_log::read_ahead(self, &window);
        let mut log = Vec::new();
        let result = self.store.write(|w| -> Result<Committed, StorageError> {
            let mut cx = WriteContext::new(w, now, self, &mut window, &mut log);
            crate::engine::multiprocess::window_log::follow(&mut cx)?;
            if let Some(taken) = crate::engine::multiprocess::directory_epoch::follow(&mut cx)? {
                directory = Arc::clone(&taken);
                loaded = Some(taken);
            }
            schedule::catch_up(&mut cx, now, Some(schedule::CATCH_UP_BUDGET))?;
            // A batch's feed entries, one packed row per feed and scope, and
            // its pending index, one row per cut-off (a single operation
            // writes its own rows as it goes).
            if ops.len() > 1 || more.is_some() {
                cx.feed_rows = Some(crate::engine::feeds::feed_rows::FeedRows::default());
                cx.pending_rows =
                    Some(crate::engine::rows::packed_index::PackedIndex::new(crate::storage::Table::Pending));
            }
            let mut answers = apply_each(&mut cx, now, ops, &mut directory, &mut loaded)?;
            while let Some(run) = more.as_mut().map(|more| more()).filter(|run| !run.is_empty()) {
                count += run.len();
                answers.extend(apply_each(&mut cx, now, run, &mut directory, &mut loaded)?);
            }
            if let Some(rows) = cx.feed_rows.take() {
                rows.write(cx.write)?;
            }
            if let Some(mut rows) = cx.pending_rows.take() {
                rows.write(cx.write)?;
            }
            let epoch = cx.directory_epoch;
            Ok((answers, cx.finish()?, epoch))
        });
        match result {
            Ok((answers, clock_to, epoch)) => {
                if let Some(epoch) = epoch {
                    self.directory_epoch.store(epoch, Ordering::SeqCst);
                }
                self.after_commit(loaded, clock_to);
                answers
            }
            Err(_) => {
                // Nothing was stored (or, on a shared store, perhaps it was):
                // the window follows.
                self.after_failed_write(&mut window, &log);
                unavailable(count)
            }
        }
    }

    /// Lock the duplicate window for a batch, counted as waiting until it holds
    /// the lock, so that a long catch-up (`advance_to`) lets it in between two
    /// chunks.
    fn lock_window_in_turn(&self) -> Result<MutexGuard<'_, Window>, StorageError> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let locked = self.lock_window();
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        locked
    }

    /// Once the batch is committed: the directory it loaded and the sandbox
    /// clock's new instant take effect.
    fn after_commit(&self, loaded: Option<Arc<RoutingDirectory>>, clock_to: Option<DateTime<Utc>>) {
        if let Some(directory) = loaded {
            self.set_directory(directory);
        }
        if let (Some(t), Some(manual)) = (clock_to, &self.manual) {
            manual.set(t);
        }
    }
}

/// Every operation's answer, in order.
type Answers = Vec<Result<Outcome, Refusal>>;

/// The next run of operations for a write transaction already applying some
/// (none: there are no more).
pub(in crate::engine) type More<'m> = &'m mut dyn FnMut() -> Vec<(Caller, PreparedOperation)>;

/// A batch's answers, the sandbox clock's new instant and the directory
/// epoch taken, once committed.
type Committed = (Answers, Option<DateTime<Utc>>, Option<u64>);

/// Message 7 for each of `count` operations: nothing was stored.
fn unavailable(count: usize) -> Answers {
    (0..count).map(|_| Err(Refusal::refused(crate::AchError::DatabaseUnavailable))).collect()
}

/// Apply each operation of a batch in order, each prepared afresh if its
/// preparation is stale; `directory`: the one in force (`loaded`: set when an
/// operation loads a new one). A storage failure abandons the whole batch.
fn apply_each(
    cx: &mut WriteContext<'_, '_>,
    now: DateTime<Utc>,
    ops: Vec<(Caller, PreparedOperation)>,
    directory: &mut Arc<RoutingDirectory>,
    loaded: &mut Option<Arc<RoutingDirectory>>,
) -> Result<Answers, StorageError> {
    let mut answers = Vec::with_capacity(ops.len());
    let mut today = (now, calendar::eastern_date(now));
    for (caller, mut op) in ops {
        if let Some(unconfirmed) = op.unconfirmed.take() {
            if !crate::engine::credentials::authenticate::holds(cx, &caller, &unconfirmed, cx.now)? {
                answers.push(Err(Refusal::Authentication));
                continue;
            }
        }
        // Checked against the date and directory it runs with (a clock set
        // or a directory loaded earlier in the batch).
        if today.0 != cx.now {
            today = (cx.now, calendar::eastern_date(cx.now));
        }
        let op = op.for_transaction(cx.engine, cx.now, today.1, directory);
        let answer = match apply::apply(cx, &caller, op) {
            Ok(Applied::Done(o)) => Ok(o),
            Ok(Applied::Directory(dir, o)) => {
                *directory = Arc::new(dir);
                *loaded = Some(Arc::clone(directory));
                Ok(o)
            }
            Err(Stop::Refused(f)) => Err(f),
            Err(Stop::Storage(e)) => return Err(e),
        };
        answers.push(answer);
    }
    Ok(answers)
}
