//! Request rates: a token bucket per key holder (a partner, or a merchant's
//! events-only key), so one partner's flood of valid requests takes at most
//! its share of the server. The operator and requests without a key are not
//! rated (the connection caps bound those).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use ach_core::engine::Caller;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

/// Requests per second a key holder may make when the operator set no rate
/// for its partner (`--requests-per-second`).
pub const DEFAULT_PER_SECOND: u32 = 1000;

/// Holders remembered at most; past it the buckets are forgotten all at once
/// (each comes back full: at worst one burst more).
const MOST: usize = 100_000;

/// One bucket per holder, at the rate it was made for, timed by `C`.
pub struct RequestRates<C: Clock = DefaultClock> {
    default: NonZeroU32,
    buckets: Mutex<HashMap<String, (NonZeroU32, Bucket<C>)>>,
    clock: C,
}

type Bucket<C> = RateLimiter<NotKeyed, InMemoryState, C, NoOpMiddleware<<C as Clock>::Instant>>;

impl RequestRates {
    /// Buckets of `default` requests per second where the operator set none.
    pub fn new(default: NonZeroU32) -> RequestRates {
        RequestRates::with_clock(default, DefaultClock::default())
    }
}

impl<C: Clock + Clone> RequestRates<C> {
    /// [`RequestRates::new`] timed by `clock`.
    pub fn with_clock(default: NonZeroU32, clock: C) -> RequestRates<C> {
        RequestRates { default, buckets: Mutex::default(), clock }
    }

    /// Take one request of `caller` from its bucket (`rate`: the operator's
    /// rate for its partner, if set): `Err` with how long until one is
    /// allowed when the bucket is empty.
    pub fn take(&self, caller: Option<&Caller>, rate: Option<u32>) -> Result<(), Duration> {
        let Some(holder) = caller.and_then(crate::holders::key_holder) else { return Ok(()) };
        let per_second = rate.and_then(NonZeroU32::new).unwrap_or(self.default);
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        // The holder's bucket at its rate; a new one for a holder not seen (or
        // whose rate the operator changed). Only a new one copies the id.
        let bucket = match buckets.get_mut(holder) {
            Some(bucket) if bucket.0 == per_second => bucket,
            _ => {
                if buckets.len() >= MOST {
                    buckets.clear();
                }
                buckets
                    .entry(holder.to_owned())
                    .insert_entry((per_second, self.bucket(per_second)))
                    .into_mut()
            }
        };
        bucket.1.check().map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }

    /// A bucket of `per_second` requests a second, bursts of twice as many.
    fn bucket(&self, per_second: NonZeroU32) -> Bucket<C> {
        let burst = per_second.saturating_mul(NonZeroU32::MIN.saturating_add(1));
        RateLimiter::direct_with_clock(Quota::per_second(per_second).allow_burst(burst), self.clock.clone())
    }
}

/// The `Retry-After` for a wait: whole seconds, rounded up, at least 1.
pub fn retry_after(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0).max(u64::from(wait.is_zero()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use governor::clock::FakeRelativeClock;

    fn partner(id: &str) -> Caller {
        Caller::Partner { partner_id: id.to_owned() }
    }

    fn rates(default: u32) -> (RequestRates<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        (RequestRates::with_clock(NonZeroU32::new(default).unwrap(), clock.clone()), clock)
    }

    #[test]
    fn each_holder_has_its_own_bucket_of_twice_its_rate() {
        let (rates, clock) = rates(5);
        let a = partner("par_a");
        let taken = (0..100).filter(|_| rates.take(Some(&a), None).is_ok()).count();
        assert_eq!(taken, 10, "a burst of twice the rate");
        assert_eq!(
            rates.take(Some(&a), None),
            Err(Duration::from_millis(200)),
            "one more a fifth of a second on"
        );
        clock.advance(Duration::from_millis(200));
        assert_eq!(rates.take(Some(&a), None), Ok(()));
        assert_eq!(rates.take(Some(&partner("par_b")), None), Ok(()), "another partner is untouched");
        let merchant = Caller::Merchant { partner_id: "par_a".into(), merchant_id: "mer_a".into() };
        assert_eq!(rates.take(Some(&merchant), None), Ok(()), "a merchant key has its own bucket");
        for _ in 0..1000 {
            assert_eq!(rates.take(Some(&Caller::Operator), None), Ok(()));
            assert_eq!(rates.take(None, None), Ok(()));
        }
    }

    #[test]
    fn the_operators_rate_for_a_partner_replaces_the_default() {
        let (rates, _clock) = rates(1);
        let a = partner("par_a");
        let taken = (0..3000).filter(|_| rates.take(Some(&a), Some(1000)).is_ok()).count();
        assert_eq!(taken, 2000);
        let taken = (0..10).filter(|_| rates.take(Some(&a), Some(1)).is_ok()).count();
        assert_eq!(taken, 2, "a changed rate starts a full bucket of its own");
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(retry_after(Duration::from_millis(1)), 1);
        assert_eq!(retry_after(Duration::ZERO), 1);
        assert_eq!(retry_after(Duration::from_secs(2)), 2);
        assert_eq!(retry_after(Duration::from_millis(2001)), 3);
    }
}
