//! The clock's catch-up: every cut-off, origination file and settlement due,
//! in bounded write transactions that let waiting requests in between them.

use crate::engine::lifecycle::images;
use crate::engine::settlement::schedule;
use crate::engine::{Engine, Progress, Refusal, WriteContext};
use crate::storage::StorageError;
use chrono::{DateTime, Utc};

impl Engine {
    /// Run every cut-off, origination file and settlement due up to `now`, in
    /// time order, in write transactions of at most `schedule::CATCH_UP_BUDGET` (500) items
    /// each (other writers run between them). Production calls this from the
    /// wall clock; the sandbox through [`crate::engine::Operation::SetClock`].
    ///
    /// Only the last of those transactions, and one that lists a file, waits
    /// for the disk: the others commit without a sync, so a crash before this
    /// returns rolls them back and the next catch-up does them again, the same
    /// way. Everything is durable once it returns `Ok`.
    pub fn advance_to(&self, now: DateTime<Utc>) -> Result<Progress, Refusal> {
        let mut total = Progress::default();
        loop {
            // Nothing due: no write transaction (an idle server does not fsync).
            if !self.store.read_latest(|r| schedule::anything_due(r, now, self.sandbox))? {
                return Ok(total);
            }
            self.let_requests_in();
            let mut window = self.lock_window()?;
            let mut log = Vec::new();
            let written = self.store.write_unrecorded(|w| {
                let mut cx = WriteContext::new(w, now, self, &mut window, &mut log);
                crate::engine::multiprocess::window_log::follow(&mut cx)?;
                let (step, mut done) = schedule::catch_up(&mut cx, now, Some(schedule::CATCH_UP_BUDGET))?;
                if done {
                    done = images::expire(&mut cx, now, schedule::CATCH_UP_BUDGET)?;
                }
                if !done {
                    cx.write.defer_sync();
                }
                cx.finish()?;
                Ok::<_, StorageError>((step, done))
            });
            let (progress, done) = written.inspect_err(|_| self.after_failed_write(&mut window, &log))?;
            total.originated += progress.originated;
            total.settled += progress.settled;
            if done {
                return Ok(total);
            }
        }
    }

    /// Between two chunks of a catch-up: let requests already waiting for the
    /// write lock take it first (a mutex is not fair: without this the catch-up
    /// would take it again at once and hold creates back for its whole length).
    /// Bounded, so a stream of requests cannot stop the catch-up either.
    fn let_requests_in(&self) {
        for _ in 0..100_000 {
            if self.waiting.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return;
            }
            std::thread::yield_now();
        }
    }
}
