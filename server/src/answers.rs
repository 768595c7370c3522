//! Answers in flight. A feed page is built whole (up to a few MB) and held
//! until the client has taken it, so clients that ask and never read could
//! make the server hold gigabytes. The public API's large reads (a feed page,
//! the OpenAPI document) are therefore built only within a budget of bytes
//! held at once, and each key holder has at most [`READS_PER_HOLDER`] of them
//! in flight. A read reserves the largest answer its endpoint gives before
//! it is built, keeps what its answer really holds, and frees it when the
//! answer's bytes are written or its connection is closed. The operator plane is not
//! budgeted: its own pool of connections bounds it.

use std::sync::Arc;
use std::time::Duration;

use ach_core::engine::Caller;
use hyper::body::Bytes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::holders::{self, Place, Places};

/// Bytes of large answers held at once, in all.
pub const BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// Large reads one key holder (a partner, or a merchant's key) may have in
/// flight at once.
pub const READS_PER_HOLDER: usize = 2;

/// How long a read waits for room in the budget before it is answered 503.
pub const BUDGET_WAIT: Duration = Duration::from_secs(2);

/// The budget counts kibibytes (a semaphore's permits are a `u32` at most).
const UNIT: usize = 1024;

/// The budget and the reads in flight per holder.
pub struct Answers {
    budget: Arc<Semaphore>,
    per_holder: Arc<Places>,
}

/// Why a read was not let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The holder has [`READS_PER_HOLDER`] reads in flight.
    HolderBusy,
    /// The budget stayed full for [`BUDGET_WAIT`].
    Full,
}

/// A read's place: its share of the budget and of its holder's reads,
/// freed when dropped (with the answer's body that carries it).
pub struct Ticket {
    permit: OwnedSemaphorePermit,
    _place: Option<Place>,
}

impl Default for Answers {
    fn default() -> Answers {
        Answers::with_budget(BUDGET_BYTES)
    }
}

impl Answers {
    /// A budget of `bytes`.
    pub fn with_budget(bytes: usize) -> Answers {
        Answers { budget: Arc::new(Semaphore::new(bytes / UNIT)), per_holder: Places::new(READS_PER_HOLDER) }
    }

    /// A place for `caller`'s read whose answer is at most `largest` bytes.
    /// Reads without a key (the OpenAPI document) are budgeted only: they
    /// are not one holder's.
    pub async fn reserve(&self, caller: Option<&Caller>, largest: usize) -> Result<Ticket, Refused> {
        let place = match caller.and_then(holders::key_holder) {
            Some(holder) => Some(self.per_holder.take(holder).ok_or(Refused::HolderBusy)?),
            None => None,
        };
        let permit = self.budget_for(largest).await?;
        Ok(Ticket { permit, _place: place })
    }

    /// `largest` bytes of the budget, waiting up to [`BUDGET_WAIT`].
    async fn budget_for(&self, largest: usize) -> Result<OwnedSemaphorePermit, Refused> {
        let units = u32::try_from(largest.div_ceil(UNIT)).unwrap_or(u32::MAX);
        let acquire = Arc::clone(&self.budget).acquire_many_owned(units);
        match tokio::time::timeout(BUDGET_WAIT, acquire).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(Refused::Full),
        }
    }

    /// The bytes of the budget free now.
    #[cfg(test)]
    fn free(&self) -> usize {
        self.budget.available_permits() * UNIT
    }
}

impl Ticket {
    /// Keep only what an answer of `bytes` needs; the rest goes back.
    pub fn shrink_to(&mut self, bytes: usize) {
        let keep = bytes.div_ceil(UNIT).max(1);
        let extra = self.permit.num_permits().saturating_sub(keep);
        if extra > 0 {
            drop(self.permit.split(extra));
        }
    }
}

/// An answer's bytes carrying the ticket of the read it answers (if any):
/// the ticket is freed when the last of the bytes is let go, once written
/// to the connection or with the connection (hyper keeps the bytes, not the
/// body they came in, until the socket takes them).
pub fn carrying(body: String, ticket: Option<Ticket>) -> Bytes {
    match ticket {
        None => Bytes::from(body),
        Some(ticket) => Bytes::from_owner(Carried { body, _ticket: ticket }),
    }
}

/// An answer and its ticket, owned by the [`Bytes`] that show it.
struct Carried {
    body: String,
    _ticket: Ticket,
}

impl AsRef<[u8]> for Carried {
    fn as_ref(&self) -> &[u8] {
        self.body.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn merchant(id: &str) -> Caller {
        Caller::Merchant { partner_id: "par_a".into(), merchant_id: id.into() }
    }

    #[tokio::test]
    async fn a_holder_has_two_reads_in_flight_at_most() {
        let answers = Arc::new(Answers::default());
        let m = merchant("mer_a");
        let first = answers.reserve(Some(&m), 4 << 20).await.unwrap();
        let _second = answers.reserve(Some(&m), 4 << 20).await.unwrap();
        assert_eq!(answers.reserve(Some(&m), 1).await.err(), Some(Refused::HolderBusy));
        let _other = answers.reserve(Some(&merchant("mer_b")), 1).await.expect("another holder is untouched");
        let anonymous: Vec<_> = futures_all(&answers).await;
        assert_eq!(anonymous.len(), 3, "reads without a key are budgeted only");
        drop(first);
        let _third = answers.reserve(Some(&m), 1).await.expect("a written answer frees its place");
    }

    async fn futures_all(answers: &Arc<Answers>) -> Vec<Ticket> {
        let mut out = Vec::new();
        for _ in 0..3 {
            out.push(answers.reserve(None, 1024).await.unwrap());
        }
        out
    }

    #[tokio::test]
    async fn answers_are_held_within_the_budget_and_keep_only_their_size() {
        let answers = Arc::new(Answers::with_budget(8 << 20));
        let mut a = answers.reserve(Some(&merchant("mer_a")), 4 << 20).await.unwrap();
        let _b = answers.reserve(Some(&merchant("mer_b")), 4 << 20).await.unwrap();
        assert_eq!(answers.free(), 0);
        let started = std::time::Instant::now();
        assert_eq!(answers.reserve(Some(&merchant("mer_c")), 4 << 20).await.err(), Some(Refused::Full));
        assert!(started.elapsed() >= BUDGET_WAIT);
        a.shrink_to(3000);
        assert_eq!(answers.free(), (4 << 20) - 3 * 1024, "a 3,000-byte answer keeps 3 KiB");
        // A holder refused for the budget keeps no place.
        let c = merchant("mer_c");
        let again = answers.reserve(Some(&c), 1 << 20).await;
        drop(again.expect("a holder refused for the budget keeps no place"));
        let bytes = carrying("{}".to_owned(), Some(a));
        let written = bytes.slice(1..);
        drop(bytes);
        assert_eq!(answers.free(), (4 << 20) - 3 * 1024, "a part of the answer is still to be written");
        drop(written);
        assert_eq!(answers.free(), 4 << 20, "all of it written, its bytes are back");
        assert_eq!(
            answers.per_holder.held_by(&"mer_a".to_owned()),
            0,
            "the written answer's holder keeps no place"
        );
    }
}
