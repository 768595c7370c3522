//! Time comes from an injected clock: the system clock in production, a settable
//! clock in tests and the sandbox. Nothing else in the core reads the time.

use std::fmt;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

/// A source of the current instant.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
}

/// The operating system's clock (not available in the browser, where the host
/// passes `Date.now()` through a [`ManualClock`]).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

#[cfg(not(target_arch = "wasm32"))]
impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        DateTime::from_timestamp(d.as_secs() as i64, d.subsec_nanos()).unwrap_or_default()
    }
}

/// A clock that only moves when told to (tests, the sandbox, the browser).
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    /// A clock showing `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock { now: Arc::new(Mutex::new(start)) }
    }

    /// Show `now` from here on (clones of this clock see it too).
    pub fn set(&self, now: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = now;
    }

    /// Move forward by `by`.
    pub fn advance(&self, by: chrono::Duration) {
        let mut guard = self.now.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *guard += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told_and_clones_share_it() {
        let t = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let c = ManualClock::new(t);
        let shared = c.clone();
        assert_eq!(c.now(), t);
        c.advance(chrono::Duration::hours(2));
        assert_eq!(shared.now(), t + chrono::Duration::hours(2));
        shared.set(t);
        assert_eq!(c.now(), t);
    }

    #[test]
    fn system_clock_is_after_2026() {
        assert!(SystemClock.now() > DateTime::from_timestamp(1_767_225_600, 0).unwrap());
    }
}
