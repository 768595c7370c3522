//! Group commit for callers in one process: threads of a C or Rust host that
//! call [`Engine::execute`] at the same time share one write transaction and
//! one durable commit, as the HTTPS server's writer makes its requests share
//! them.
//!
//! Each caller prepares its operation on its own thread and queues it. Whoever
//! finds no commit running becomes the leader: it takes everything queued (up
//! to [`MAX_GROUP`]), runs it with [`Engine::execute_prepared`], and hands each
//! caller its answer. Callers that queued while a commit ran wait for it, and
//! the next leader takes them all at once: one caller alone commits at once,
//! many share fsyncs. No answer is given before its commit is durable.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::{Caller, Engine, Operation, Outcome, PreparedOperation, Refusal};
use crate::AchError;

/// Most operations one leader commits together.
pub(crate) const MAX_GROUP: usize = 1000;

type Answer = Result<Outcome, Refusal>;

/// The queue and the answers of one engine's callers.
#[derive(Debug, Default)]
pub(super) struct Groups {
    state: Mutex<Queue>,
    /// Told whenever a group's answers are in (or its leader gave up).
    answered: Condvar,
}

#[derive(Debug, Default)]
struct Queue {
    waiting: Vec<(u64, Caller, PreparedOperation)>,
    answers: HashMap<u64, Answer>,
    leading: bool,
    next: u64,
}

impl Groups {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Engine {
    /// Run one operation. Calls from many threads at once share write
    /// transactions and durable commits (each still gets its own answer, given
    /// once its commit is on disk); a lone call commits at once.
    pub fn execute(&self, caller: &Caller, op: Operation) -> Answer {
        let prepared = self.prepare(op);
        let mut queue = self.groups.lock();
        let ticket = queue.next;
        queue.next += 1;
        queue.waiting.push((ticket, caller.clone(), prepared));
        loop {
            if let Some(answer) = queue.answers.remove(&ticket) {
                return answer;
            }
            if queue.leading {
                queue = self.groups.answered.wait(queue).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            queue.leading = true;
            let take = queue.waiting.len().min(MAX_GROUP);
            let group: Vec<_> = queue.waiting.drain(..take).collect();
            drop(queue);
            let mut leader = Leader { engine: self, tickets: group.iter().map(|(t, _, _)| *t).collect() };
            let answers = self.execute_prepared(group.into_iter().map(|(_, c, op)| (c, op)).collect());
            leader.hand_out(answers);
            queue = self.groups.lock();
        }
    }
}

/// The caller committing a group. If it unwinds before handing out the
/// answers (a panic inside the engine), its group answers message 1 and
/// another caller may lead: nobody waits for ever.
struct Leader<'a> {
    engine: &'a Engine,
    tickets: Vec<u64>,
}

impl Leader<'_> {
    fn hand_out(&mut self, answers: Vec<Answer>) {
        let mut queue = self.engine.groups.lock();
        let mut answers = answers.into_iter();
        for ticket in self.tickets.drain(..) {
            let answer = answers.next().unwrap_or_else(|| Err(Refusal::refused(AchError::SystemUnable)));
            queue.answers.insert(ticket, answer);
        }
        queue.leading = false;
        drop(queue);
        self.engine.groups.answered.notify_all();
    }
}

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        if !self.tickets.is_empty() {
            self.hand_out(Vec::new());
        }
    }
}
