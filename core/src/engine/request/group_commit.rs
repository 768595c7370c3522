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
//!
//! A leader gathers: callers already inside [`Engine::execute`] (still
//! preparing their operation) join its group, waited for at most [`GATHER`].
//! Without it, the callers answered by one commit come back while the next
//! leader has taken only the others, and a host's threads split into two
//! groups committing in turn, each half the size. A lone caller never waits.
//! While others prepare, the leader applies what is queued already, in its
//! write transaction, then takes what was queued meanwhile, and so on
//! ([`Engine::execute_streamed`]): the group's apply overlaps the others'
//! preparation, and it commits once nobody is left preparing.
//! While the queue is empty and others still prepare, the leader does not
//! sleep: it yields its core to them and looks again, so each arrival is
//! applied as it comes and the group commits soon after the last. Asleep, it
//! was woken either at every arrival (a task switch each: two thirds of the
//! process's futex calls) or once all had queued, and then applied most of
//! the group after the last arrival instead of while they came.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::engine::{Caller, Engine, Operation, Outcome, PreparedOperation, Refusal};
use crate::AchError;

/// Most operations one leader commits together.
pub(crate) const MAX_GROUP: usize = 1000;

/// Longest a leader waits for callers still preparing (a preparation takes
/// tens of microseconds; a durable commit, hundreds).
const GATHER: Duration = Duration::from_micros(300);

type Answer = Result<Outcome, Refusal>;

/// The queue and the answers of one engine's callers.
#[derive(Debug, Default)]
pub(in crate::engine) struct Groups {
    state: Mutex<Queue>,
    /// Told whenever a group's answers are in (or its leader gave up).
    answered: Condvar,
    /// Callers inside [`Engine::execute`], preparing, queued or leading.
    inside: AtomicUsize,
}

/// A caller counted in [`Groups::inside`] while it lives.
struct Inside<'a>(&'a Groups);

impl<'a> Inside<'a> {
    fn enter(groups: &'a Groups) -> Self {
        groups.inside.fetch_add(1, Ordering::SeqCst);
        Inside(groups)
    }
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.0.inside.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Debug, Default)]
pub(in crate::engine) struct Queue {
    waiting: Vec<(u64, Caller, PreparedOperation)>,
    pub(in crate::engine) answers: HashMap<u64, Answer>,
    pub(in crate::engine) leading: bool,
    /// Operations the leader took for its group so far (not answered yet).
    taken: usize,
    next: u64,
}

impl Groups {
    pub(in crate::engine) fn lock(&self) -> MutexGuard<'_, Queue> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a gathering leader should wait on: callers inside
    /// [`Engine::execute`] have not all queued, and the group is not full.
    fn preparing(&self, q: &Queue) -> bool {
        let there = q.waiting.len() + q.taken;
        there < MAX_GROUP && there < self.inside.load(Ordering::SeqCst)
    }
}

impl Engine {
    /// Run one operation. Calls from many threads at once share write
    /// transactions and durable commits (each still gets its own answer, given
    /// once its commit is on disk); a lone call commits at once.
    pub fn execute(&self, caller: &Caller, op: Operation) -> Answer {
        let planned = self.execute_planned(|| Ok::<_, Infallible>((caller.clone(), self.prepare(op))));
        planned.unwrap_or_else(|never| match never {})
    }

    /// Run the operation `plan` prepares, if it prepares one (else its `Err`,
    /// with nothing run): [`Engine::execute`] for a host that decides what to
    /// run and prepares it in one step (the router). While `plan` runs, the
    /// caller counts as preparing, so a group's leader waits for it.
    pub fn execute_planned<E>(
        &self,
        plan: impl FnOnce() -> Result<(Caller, PreparedOperation), E>,
    ) -> Result<Answer, E> {
        let _inside = Inside::enter(&self.groups);
        let (caller, prepared) = plan()?;
        Ok(self.join_group(caller, prepared))
    }

    /// Queue a prepared operation and wait for its answer, leading a group
    /// when none is being committed.
    fn join_group(&self, caller: Caller, prepared: PreparedOperation) -> Answer {
        let mut queue = self.groups.lock();
        let ticket = queue.next;
        queue.next += 1;
        queue.waiting.push((ticket, caller, prepared));
        loop {
            if let Some(answer) = queue.answers.remove(&ticket) {
                return answer;
            }
            if queue.leading {
                queue = self.groups.answered.wait(queue).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            queue.leading = true;
            let mut leader = Leader { engine: self, tickets: Vec::new() };
            let first = take(&mut queue, &mut leader.tickets);
            // Others still preparing: what is queued is applied while they
            // do, and they join the same transaction as they queue. Only
            // then is the clock read: a lone caller (and the browser's
            // module, with no threads and no clock to wait with) goes on.
            let streaming = self.groups.preparing(&queue);
            drop(queue);
            let answers = if streaming {
                let deadline = std::time::Instant::now() + GATHER;
                let mut more = || self.more(deadline, &mut leader.tickets);
                self.execute_streamed(first, Some(&mut more))
            } else {
                self.execute_prepared(first)
            };
            leader.hand_out(answers);
            queue = self.groups.lock();
        }
    }
}

/// Take up to a group's room of the queued operations, their tickets into
/// `tickets`.
fn take(queue: &mut Queue, tickets: &mut Vec<u64>) -> Vec<(Caller, PreparedOperation)> {
    let room = MAX_GROUP.saturating_sub(queue.taken);
    let n = queue.waiting.len().min(room);
    queue.taken += n;
    queue
        .waiting
        .drain(..n)
        .map(|(ticket, caller, op)| {
            tickets.push(ticket);
            (caller, op)
        })
        .collect()
}

impl Engine {
    /// The leader's next run: what was queued while it applied the last
    /// one, or, if nothing was, the next a caller still preparing queues
    /// before `deadline`. None once nobody is preparing, the group is full
    /// or the deadline has passed.
    fn more(&self, deadline: std::time::Instant, tickets: &mut Vec<u64>) -> Vec<(Caller, PreparedOperation)> {
        let groups = &self.groups;
        let mut queue = groups.lock();
        while queue.waiting.is_empty() && groups.preparing(&queue) && std::time::Instant::now() < deadline {
            // The core to those preparing, then a look again.
            drop(queue);
            std::thread::yield_now();
            queue = groups.lock();
        }
        take(&mut queue, tickets)
    }
}

/// The caller committing a group. If it unwinds before handing out the
/// answers (a panic inside the engine), its group answers message 1 and
/// another caller may lead: nobody waits for ever.
pub(in crate::engine) struct Leader<'a> {
    pub(in crate::engine) engine: &'a Engine,
    /// Its group's callers' tickets.
    pub(in crate::engine) tickets: Vec<u64>,
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
        queue.taken = 0;
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
