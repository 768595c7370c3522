//! Group commit: ONE thread runs every write. Handlers prepare their operation
//! ([`Engine::prepare`]: validation and fingerprints, on the request's thread) and
//! queue `(caller, prepared operation, reply)`; the thread takes what is queued
//! (up to [`MAX_BATCH`], from every partner's line in turn), runs it with
//! [`Engine::execute_prepared`] — one redb
//! write transaction, one durable commit, one fsync for all of them — and only
//! then answers each request. So concurrent clients share fsyncs, no answer
//! leaves before its commit is on disk, and the serial part is storage work.

use std::collections::{HashMap, VecDeque};
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
pub fn start(
    engine: Arc<Engine>,
    metrics: crate::metrics::Shared,
) -> std::io::Result<(Writer, JoinHandle<()>)> {
    let (queue, jobs) = mpsc::channel(QUEUE);
    let thread =
        std::thread::Builder::new().name("achd-writer".into()).spawn(move || run(&engine, &metrics, jobs))?;
    Ok((Writer { queue }, thread))
}

fn run(engine: &Engine, metrics: &crate::metrics::Metrics, mut jobs: mpsc::Receiver<Job>) {
    let mut waiting = Waiting::default();
    loop {
        if waiting.is_empty() {
            match jobs.blocking_recv() {
                Some(job) => waiting.push(job),
                None => break,
            }
        }
        // Everything queued joins the partners' lines (at most QUEUE jobs
        // wait here: past it the senders wait, as on the channel).
        while waiting.len() < QUEUE {
            match jobs.try_recv() {
                Ok(job) => waiting.push(job),
                Err(_) => break,
            }
        }
        commit(engine, metrics, waiting.take_fairly(MAX_BATCH));
    }
    debug!("writer stopped: queue drained");
}

/// The jobs waiting for a group commit, one line per partner (a merchant's
/// key counts as its partner; the operator has a line of its own). A group
/// takes from every line in turn, so a partner that queues thousands of
/// operations delays another partner's one by a group at most; within a
/// line, jobs keep their order.
struct Waiting<T = Job> {
    /// Each holder's line, in order.
    lines: HashMap<String, VecDeque<T>>,
    /// The holders with a line, in the order they are served.
    turns: VecDeque<String>,
    count: usize,
}

impl<T> Default for Waiting<T> {
    fn default() -> Waiting<T> {
        Waiting { lines: HashMap::new(), turns: VecDeque::new(), count: 0 }
    }
}

/// Whose line a job joins.
trait Holder {
    fn holder(&self) -> &str;
}

impl Holder for Job {
    fn holder(&self) -> &str {
        crate::holders::partner(&self.caller).unwrap_or_default()
    }
}

impl<T: Holder> Waiting<T> {
    fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn len(&self) -> usize {
        self.count
    }

    fn push(&mut self, job: T) {
        self.count += 1;
        if let Some(line) = self.lines.get_mut(job.holder()) {
            line.push_back(job);
            return;
        }
        let holder = job.holder().to_owned();
        self.turns.push_back(holder.clone());
        self.lines.insert(holder, VecDeque::from([job]));
    }

    /// Up to `most` jobs, one from each line in turn; lines left empty go,
    /// and the next group starts with the line after the last one served.
    fn take_fairly(&mut self, most: usize) -> Vec<T> {
        let mut group = Vec::with_capacity(most.min(self.count));
        while group.len() < most {
            let Some(holder) = self.turns.pop_front() else { break };
            let Some(line) = self.lines.get_mut(&holder) else { continue };
            if let Some(job) = line.pop_front() {
                group.push(job);
                self.count -= 1;
            }
            if line.is_empty() {
                self.lines.remove(&holder);
            } else {
                self.turns.push_back(holder);
            }
        }
        group
    }
}

/// One write transaction for the whole batch, then the answers.
fn commit(engine: &Engine, metrics: &crate::metrics::Metrics, batch: Vec<Job>) {
    let size = batch.len();
    let (operations, replies): (Vec<_>, Vec<_>) =
        batch.into_iter().map(|job| ((job.caller, job.operation), job.reply)).unzip();
    let started = std::time::Instant::now();
    let executed = catch_unwind(AssertUnwindSafe(|| engine.execute_prepared(operations)));
    metrics.commit(size, started.elapsed());
    let answers = match executed {
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

    struct Tagged(&'static str, usize);

    impl Holder for Tagged {
        fn holder(&self) -> &str {
            self.0
        }
    }

    #[test]
    fn a_group_takes_from_every_partner_in_turn() {
        let mut waiting = Waiting::default();
        for n in 0..3000 {
            waiting.push(Tagged("par_flood", n));
        }
        waiting.push(Tagged("par_quiet", 0));
        waiting.push(Tagged("", 0));
        let first = waiting.take_fairly(MAX_BATCH);
        assert_eq!(first.len(), MAX_BATCH);
        assert!(first.iter().any(|t| t.0 == "par_quiet"), "the quiet partner is in the first group");
        assert!(first.iter().any(|t| t.0.is_empty()), "so is the operator");
        let flood: Vec<usize> = first.iter().filter(|t| t.0 == "par_flood").map(|t| t.1).collect();
        assert_eq!(flood, (0..MAX_BATCH - 2).collect::<Vec<_>>(), "a partner's own keep their order");
        assert_eq!(waiting.len(), 3002 - MAX_BATCH);
        let rest: Vec<usize> =
            std::iter::from_fn(|| Some(waiting.take_fairly(MAX_BATCH)).filter(|g| !g.is_empty()))
                .flatten()
                .map(|t| t.1)
                .collect();
        assert_eq!(rest, (MAX_BATCH - 2..3000).collect::<Vec<_>>());
        assert!(waiting.is_empty());
    }

    #[test]
    fn concurrent_operations_share_commits_and_all_answer() {
        let at = ach_core::calendar::parse_instant("2026-11-23T10:00:00-05:00").unwrap();
        let options = EngineOptions::manual(at).with_operator_key("ok_test");
        let engine = Arc::new(Engine::in_memory(options).unwrap());
        let (writer, thread) = super::start(Arc::clone(&engine), Arc::default()).unwrap();
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
