//! Preparing an operation before its write transaction: the work that needs no
//! storage (parsing and validating the body into a typed value, the account's
//! keyed fingerprint, the idempotency key and the request's keyed fingerprint)
//! done by whichever thread calls [`Engine::prepare`], so a host that funnels
//! every write through one thread (the HTTPS server's group commit) can do it on
//! its request threads, in parallel, and leave the writer only the reads, checks
//! and writes that need the write transaction.
//!
//! [`Engine::execute_batch`] prepares every operation itself and hands them to
//! [`Engine::execute_prepared`]: every host runs the same code, so answers are the
//! same byte for byte whoever prepared the operation. A prepared operation is
//! only used if it was prepared by this engine, on the same Eastern date as the
//! write transaction's `now`, against the routing directory still in force; if
//! not, it is prepared again at the transaction's `now` from the operation it
//! keeps (what validation consults besides the request is exactly the date and
//! the directory). Everything that depends on the instant itself (ids that begin
//! with the creation time, `created_at`, cut-offs, duplicate windows, the seal
//! bound to the new id) is still decided inside the write transaction.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};

use crate::calendar;
use crate::engine::request::operation::Operation;
use crate::engine::request::validated::{self, Validated};
use crate::engine::{Caller, Engine};
use crate::routing::RoutingDirectory;
use crate::validation::json::JsonBody;

/// An operation prepared by [`Engine::prepare`], to run with
/// [`Engine::execute_prepared`] on the same engine.
pub struct PreparedOperation {
    /// The operation as given (to prepare again when the preparation is stale).
    operation: Operation,
    work: Validated,
    /// The engine that prepared it (its keys made the fingerprints).
    engine: u64,
    /// The Eastern date validation used.
    today: NaiveDate,
    /// The routing directory validation used.
    directory: Arc<RoutingDirectory>,
    /// The caller's authentication, if still to be confirmed in the write
    /// transaction ([`PreparedOperation::confirming`]).
    pub(crate) unconfirmed: Option<crate::engine::Unconfirmed>,
}

impl fmt::Debug for PreparedOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedOperation")
            .field("operation", &self.operation)
            .field("today", &self.today)
            .finish()
    }
}

impl PreparedOperation {
    /// The operation as it was given.
    pub fn operation(&self) -> &Operation {
        &self.operation
    }

    /// Have the write transaction confirm the caller's authentication before
    /// it runs (`unconfirmed`: from [`Engine::admit_key`]; `None`: nothing to
    /// confirm); refused with [`crate::engine::Refusal::Authentication`] if the key
    /// no longer authenticates the caller.
    #[must_use]
    pub fn confirming(mut self, unconfirmed: Option<crate::engine::Unconfirmed>) -> Self {
        self.unconfirmed = unconfirmed;
        self
    }

    /// The prepared work, valid for an operation running at `now` (whose Eastern
    /// date is `today`) under `directory`: this preparation if it still holds,
    /// else a new one.
    pub(crate) fn for_transaction(
        self,
        engine: &Engine,
        now: DateTime<Utc>,
        today: NaiveDate,
        directory: &Arc<RoutingDirectory>,
    ) -> Validated {
        let fresh =
            self.engine == engine.instance && self.today == today && Arc::ptr_eq(&self.directory, directory);
        if fresh {
            self.work
        } else {
            validated::prepare(&self.operation, None, engine, now, directory)
        }
    }
}

/// A number per engine of this process (never reused): a preparation is only
/// trusted by the engine that made it.
pub(crate) fn next_instance() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Engine {
    /// Do the work of `operation` that needs no storage (parse and validate its
    /// body, fingerprint an inline account and an idempotent request), on the
    /// calling thread, by the engine's clock now. Run it later with
    /// [`Engine::execute_prepared`]: it answers exactly what
    /// [`Engine::execute_batch`] answers for `operation` at that moment
    /// (an invalid body is refused there, with the same problems, and stores
    /// nothing). Prepare on request threads, execute on the writer.
    pub fn prepare(&self, operation: Operation) -> PreparedOperation {
        self.prepare_at(operation, None, self.now(), self.directory())
    }

    /// [`Engine::prepare`] of an operation whose body the router has parsed
    /// already (`parsed`: that body, the same bytes the operation carries):
    /// the body is validated, and its idempotency key and digest taken, from
    /// that one parse.
    pub(crate) fn prepare_parsed(&self, operation: Operation, parsed: &JsonBody<'_>) -> PreparedOperation {
        self.prepare_at(operation, Some(parsed), self.now(), self.directory())
    }

    pub(crate) fn prepare_at(
        &self,
        operation: Operation,
        parsed: Option<&JsonBody<'_>>,
        now: DateTime<Utc>,
        directory: Arc<RoutingDirectory>,
    ) -> PreparedOperation {
        let work = validated::prepare(&operation, parsed, self, now, &directory);
        PreparedOperation {
            operation,
            work,
            engine: self.instance,
            today: calendar::eastern_date(now),
            directory,
            unconfirmed: None,
        }
    }

    /// [`Engine::prepare_at`] of every operation, in order. A large batch is split
    /// across the machine's cores (scoped threads; preparation touches no storage);
    /// the browser's module, without threads, prepares in line.
    pub(crate) fn prepare_many(
        &self,
        ops: Vec<(Caller, Operation)>,
        now: DateTime<Utc>,
        directory: &Arc<RoutingDirectory>,
    ) -> Vec<(Caller, PreparedOperation)> {
        let one = |(caller, op): (Caller, Operation)| {
            (caller, self.prepare_at(op, None, now, Arc::clone(directory)))
        };
        let threads = match ops.len() / PARALLEL_CHUNK {
            0 | 1 => 1,
            chunks => parallelism().min(chunks),
        };
        if threads < 2 {
            return ops.into_iter().map(one).collect();
        }
        let per_thread = ops.len().div_ceil(threads);
        let mut ops = ops.into_iter();
        let chunks: Vec<Vec<_>> = (0..threads).map(|_| ops.by_ref().take(per_thread).collect()).collect();
        std::thread::scope(|scope| {
            let workers: Vec<_> = chunks
                .into_iter()
                .map(|chunk| scope.spawn(move || chunk.into_iter().map(one).collect::<Vec<_>>()))
                .collect();
            let mut out = Vec::with_capacity(per_thread * threads);
            for worker in workers {
                // Preparing does not panic; if it ever did, it does so here as it
                // would have in line.
                out.extend(worker.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            out
        })
    }
}

/// Operations per thread below which a batch is prepared in line (a thread costs
/// tens of microseconds; preparing a create, a few).
const PARALLEL_CHUNK: usize = 128;

/// Threads for preparing a large batch: the cores available (at most 8), asked
/// once (the standard library reads the cgroup files on every call).
#[cfg(not(target_arch = "wasm32"))]
fn parallelism() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// No threads in the browser's module.
#[cfg(target_arch = "wasm32")]
fn parallelism() -> usize {
    1
}
