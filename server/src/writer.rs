//! Group commit: ONE thread runs every write. Handlers prepare their operation
//! ([`Engine::prepare`]: validation and fingerprints, on the request's thread) and
//! queue `(caller, prepared operation, reply)`; the thread takes everything queued
//! (up to [`MAX_BATCH`]), runs it with [`Engine::execute_prepared`] — one redb
//! write transaction, one durable commit, one fsync for all of them — and only
//! then answers each request. So concurrent clients share fsyncs, no answer
//! leaves before its commit is on disk, and the serial part is storage work.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::JoinHandle;

use ach_core::engine::{Caller, Engine, Outcome, PreparedOperation, Refusal};
use ach_core::AchError;
use tokio::sync::{mpsc, oneshot};
use tracing::{debug, error, warn};

/// Most operations in one write transaction.
pub const MAX_BATCH: usize = 1000;
/// Requests that may wait for the writer; more wait to be queued.
const QUEUE: usize = 4 * MAX_BATCH;

type Answer = Result<Outcome, Refusal>;

struct Job {
    caller: Caller,
    operation: PreparedOperation,
    reply: oneshot::Sender<Answer>,
}

/// The handle requests use to run an operation (cheap to share).
#[derive(Clone)]
pub struct Writer {
    queue: mpsc::Sender<Job>,
}

impl Writer {
    /// Run one prepared operation in the next group commit; answers after the
    /// commit is durable. Message 1 if the writer has stopped.
    pub async fn execute(&self, caller: Caller, operation: PreparedOperation) -> Answer {
        let unavailable = || Err(Refusal::refused(AchError::SystemUnable));
        let (reply, answer) = oneshot::channel();
        if self.queue.send(Job { caller, operation, reply }).await.is_err() {
            return unavailable();
        }
        answer.await.unwrap_or_else(|_| unavailable())
    }
}

/// Start the writer thread. It stops once every [`Writer`] is dropped and the
/// queue is empty (it still commits and answers everything queued before).
pub fn start(engine: Arc<Engine>) -> std::io::Result<(Writer, JoinHandle<()>)> {
    let (queue, jobs) = mpsc::channel(QUEUE);
    let thread = std::thread::Builder::new().name("achd-writer".into()).spawn(move || run(&engine, jobs))?;
    Ok((Writer { queue }, thread))
}

fn run(engine: &Engine, mut jobs: mpsc::Receiver<Job>) {
    while let Some(first) = jobs.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        commit(engine, batch);
    }
    debug!("writer stopped: queue drained");
}

/// One write transaction for the whole batch, then the answers.
fn commit(engine: &Engine, batch: Vec<Job>) {
    let size = batch.len();
    let (operations, replies): (Vec<_>, Vec<_>) =
        batch.into_iter().map(|job| ((job.caller, job.operation), job.reply)).unzip();
    let answers = match catch_unwind(AssertUnwindSafe(|| engine.execute_prepared(operations))) {
        Ok(answers) => answers,
        Err(_) => {
            // The write transaction was dropped uncommitted: nothing of it stored.
            error!(size, "a batch panicked; its requests answer message 1");
            Vec::new()
        }
    };
    debug!(size, "group commit");
    warn_of_crossings(&answers);
    let mut answers = answers.into_iter();
    for reply in replies {
        let answer = answers.next().unwrap_or_else(|| Err(Refusal::refused(AchError::SystemUnable)));
        // The client may have gone; the operation is committed all the same.
        let _ = reply.send(answer);
    }
}

/// A warning for every Nacha return-rate threshold a committed return put its
/// merchant over (`GET /admin/return-rates` shows them all).
fn warn_of_crossings(answers: &[Answer]) {
    for answer in answers {
        let (transaction_id, crossings) = match answer {
            Ok(Outcome::ReturnRecorded { transaction_id, crossings }) => (transaction_id.as_str(), crossings),
            Ok(Outcome::ReturnFileIngested { crossings, .. }) => ("(a return file)", crossings),
            _ => continue,
        };
        for c in crossings {
            warn!(
                merchant_id = %c.merchant_id,
                partner_id = %c.partner_id,
                group = ?c.group,
                returns = c.count,
                debits = c.debits,
                rate = c.rate(),
                threshold = c.threshold(),
                transaction_id = %transaction_id,
                "return rate over the Nacha threshold"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ach_core::engine::{EngineOptions, Operation};

    #[test]
    fn concurrent_operations_share_commits_and_all_answer() {
        let at = ach_core::calendar::parse_instant("2026-11-23T10:00:00-05:00").unwrap();
        let options = EngineOptions::manual(at).with_operator_key("ok_test");
        let engine = Arc::new(Engine::in_memory(options).unwrap());
        let (writer, thread) = super::start(Arc::clone(&engine)).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
        let answers = runtime.block_on(async {
            let tasks: Vec<_> = (0..64)
                .map(|i| {
                    let writer = writer.clone();
                    let op = engine.prepare(Operation::CreatePartner { name: format!("p{i}") });
                    crate::tasks::spawn(async move { writer.execute(Caller::Operator, op).await })
                })
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        });
        assert!(answers.iter().all(|a| matches!(a, Ok(Outcome::PartnerCreated { .. }))), "{answers:?}");
        drop(writer);
        thread.join().unwrap();
        assert_eq!(Arc::strong_count(&engine), 1);
    }
}
