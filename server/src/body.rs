//! Request bodies. A body is read only once the router has admitted the request
//! on its head (`api::admit`), never more of it kept than the endpoint takes, and
//! a body larger than `api::SMALL_BODY_BYTES` only while holding one of a few
//! large-body permits, so the memory bodies cost is bounded whoever sends them.

use std::sync::Arc;
use std::time::Duration;

use ach_core::api::{MAX_BODY_BYTES, SMALL_BODY_BYTES};
use ach_core::engine::Caller;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

use crate::holders::{self, Place, Places};

/// Large bodies the public API reads, parses and validates at once (each
/// costs a few times its size, up to about 12 MiB for a 3 MiB transaction
/// with check images).
pub const LARGE_BODIES: usize = 4;

/// Large bodies one partner may have in flight (waiting or being read) at
/// once: half the public permits, so another partner always finds some.
pub const PARTNER_SHARE: usize = 2;

/// Large bodies only the operator plane reads (the routing directory, return
/// files): no partner can take them.
pub const OPERATOR_LARGE_BODIES: usize = 2;

/// How long a request waits for a large-body permit before it is answered 503.
pub const LARGE_BODY_WAIT: Duration = Duration::from_secs(2);

/// The slowest a body may arrive, after [`RATE_GRACE`]: a body slower than
/// this is cut (408), so a client trickling bytes holds no permit and no
/// connection for long.
pub const MIN_BYTES_PER_SECOND: u64 = 16 * 1024;

/// How long a body may take before [`MIN_BYTES_PER_SECOND`] applies (a
/// client's first bytes may wait on its own TLS and TCP start).
pub const RATE_GRACE: Duration = Duration::from_secs(3);

/// A body this large is still read (and discarded) so the client, still sending,
/// hears its answer; beyond it the connection is closed.
const DRAIN_LIMIT: usize = 2 * MAX_BODY_BYTES;

/// The large-body permits: the public ones, shared fairly among partners,
/// and the operator plane's reserve.
#[derive(Debug)]
pub struct LargeBodies {
    public: Semaphore,
    operator: Semaphore,
    /// Each partner's places among the public permits (waiting or held).
    shares: Arc<Places>,
}

impl Default for LargeBodies {
    fn default() -> LargeBodies {
        LargeBodies {
            public: Semaphore::new(LARGE_BODIES),
            operator: Semaphore::new(OPERATOR_LARGE_BODIES),
            shares: Places::new(PARTNER_SHARE),
        }
    }
}

/// A large-body permit; dropping it frees the permit and the partner's place.
#[derive(Debug)]
pub struct LargePermit<'a> {
    _permit: SemaphorePermit<'a>,
    _share: Option<Place>,
}

impl LargeBodies {
    /// A permit for `caller`'s body, waiting up to [`LARGE_BODY_WAIT`]: the
    /// operator's from its reserve, a partner's (or its merchant's) from the
    /// public permits within its share. `None`: the share is full, or no
    /// permit came free.
    async fn permit(&self, caller: Option<&Caller>) -> Option<LargePermit<'_>> {
        if caller == Some(&Caller::Operator) {
            return Some(LargePermit { _permit: waited(&self.operator).await?, _share: None });
        }
        let share = self.shares.take(caller.and_then(holders::partner).unwrap_or_default())?;
        Some(LargePermit { _permit: waited(&self.public).await?, _share: Some(share) })
    }
}

/// A permit of `semaphore`, waiting up to [`LARGE_BODY_WAIT`].
async fn waited(semaphore: &Semaphore) -> Option<SemaphorePermit<'_>> {
    tokio::time::timeout(LARGE_BODY_WAIT, semaphore.acquire()).await.ok()?.ok()
}

/// What reading a body gave.
pub enum BodyRead<'a> {
    /// The whole body, and the permit it needed if it is large (held until the
    /// request is answered: parsing and validating it cost memory too).
    Whole(Vec<u8>, Option<LargePermit<'a>>),
    /// Larger than the limit (what was sent past it read and discarded, up to
    /// twice the largest limit).
    TooLarge,
    /// Large, and the caller's share is taken or no permit came free in time.
    Busy,
    /// Arriving slower than [`MIN_BYTES_PER_SECOND`]: cut.
    TooSlow,
}

/// When a body of which `received` bytes came by now, started at `started`,
/// falls below the minimum rate unless more arrives.
fn rate_deadline(started: Instant, received: usize) -> Instant {
    let ahead = Duration::from_secs_f64(received as f64 / MIN_BYTES_PER_SECOND as f64);
    started + RATE_GRACE + ahead
}

/// Read `caller`'s body of at most `limit` bytes (`declared`: its
/// `Content-Length`).
pub async fn read<'a>(
    body: &mut Incoming,
    declared: Option<u64>,
    limit: usize,
    caller: Option<&Caller>,
    large: &'a LargeBodies,
) -> Result<BodyRead<'a>, hyper::Error> {
    if declared.is_some_and(|n| n > limit as u64) {
        discard(body, declared).await?;
        return Ok(BodyRead::TooLarge);
    }
    let mut permit = None;
    if declared.is_some_and(|n| n > SMALL_BODY_BYTES as u64) {
        match large.permit(caller).await {
            Some(p) => permit = Some(p),
            None => return Ok(BodyRead::Busy),
        }
    }
    let started = Instant::now();
    // A declared length within the limit is allocated at once; a body without
    // one grows as it comes.
    let mut kept = Vec::with_capacity(declared.map_or(0, |n| n as usize));
    loop {
        let next = tokio::time::timeout_at(rate_deadline(started, kept.len()), body.frame()).await;
        let Ok(frame) = next else { return Ok(BodyRead::TooSlow) };
        let Some(frame) = frame else { break };
        let Ok(data) = frame?.into_data() else { continue };
        if kept.len() + data.len() > limit {
            discard(body, None).await?;
            return Ok(BodyRead::TooLarge);
        }
        if permit.is_none() && kept.len() + data.len() > SMALL_BODY_BYTES {
            // Sent without a length and grown past a small body.
            match large.permit(caller).await {
                Some(p) => permit = Some(p),
                None => return Ok(BodyRead::Busy),
            }
        }
        kept.extend_from_slice(&data);
    }
    Ok(BodyRead::Whole(kept, permit))
}

/// Read and discard a body the request is answered without, so the client,
/// still sending, hears the answer; a body declared or grown past
/// [`DRAIN_LIMIT`], or arriving slower than [`MIN_BYTES_PER_SECOND`], is left
/// (the connection is then closed).
pub async fn discard(body: &mut Incoming, declared: Option<u64>) -> Result<(), hyper::Error> {
    if declared.is_some_and(|n| n > DRAIN_LIMIT as u64) {
        return Ok(());
    }
    let started = Instant::now();
    let mut total = 0usize;
    // A body trickled in slower than the minimum rate is left (the
    // connection is closed), as one being kept is cut.
    while let Ok(Some(frame)) = tokio::time::timeout_at(rate_deadline(started, total), body.frame()).await {
        if let Ok(data) = frame?.into_data() {
            total = total.saturating_add(data.len());
            if total > DRAIN_LIMIT {
                break;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partner(id: &str) -> Caller {
        Caller::Partner { partner_id: id.to_owned() }
    }

    #[tokio::test]
    async fn a_partner_holds_its_share_and_no_more() {
        let large = LargeBodies::default();
        let (a, b) = (partner("par_a"), partner("par_b"));
        let mut held = Vec::new();
        for _ in 0..PARTNER_SHARE {
            held.push(large.permit(Some(&a)).await.expect("within its share"));
        }
        let started = std::time::Instant::now();
        assert!(large.permit(Some(&a)).await.is_none(), "past its share");
        assert!(started.elapsed() < LARGE_BODY_WAIT, "refused at once, not after a wait");
        let merchant = Caller::Merchant { partner_id: "par_a".into(), merchant_id: "mer_a".into() };
        assert!(large.permit(Some(&merchant)).await.is_none(), "its merchants count as the partner");
        for _ in 0..LARGE_BODIES - PARTNER_SHARE {
            held.push(large.permit(Some(&b)).await.expect("another partner finds the rest"));
        }
        assert!(large.permit(Some(&partner("par_c"))).await.is_none(), "all public permits taken");
        // The operator plane's reserve is untouched by partners.
        let operator: Vec<_> = futures_free(&large).await;
        assert_eq!(operator.len(), OPERATOR_LARGE_BODIES);
        held.remove(0);
        assert!(large.permit(Some(&a)).await.is_some(), "a freed place is the partner's again");
    }

    async fn futures_free(large: &LargeBodies) -> Vec<LargePermit<'_>> {
        let mut out = Vec::new();
        for _ in 0..OPERATOR_LARGE_BODIES {
            out.push(large.permit(Some(&Caller::Operator)).await.expect("the operator's reserve"));
        }
        assert!(large.permit(Some(&Caller::Operator)).await.is_none(), "the reserve is bounded too");
        out
    }

    #[test]
    fn a_body_must_keep_the_minimum_rate_after_the_grace() {
        let t0 = Instant::now();
        assert_eq!(rate_deadline(t0, 0), t0 + RATE_GRACE);
        assert_eq!(
            rate_deadline(t0, MIN_BYTES_PER_SECOND as usize * 10),
            t0 + RATE_GRACE + Duration::from_secs(10)
        );
    }
}
