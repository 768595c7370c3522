//! Request bodies. A body is read only once the router has admitted the request
//! on its head (`api::admit`), never more of it kept than the endpoint takes, and
//! a body larger than `api::SMALL_BODY_BYTES` only while holding one of a few
//! large-body permits, so the memory bodies cost is bounded whoever sends them.

use std::time::Duration;

use ach_core::api::{MAX_BODY_BYTES, SMALL_BODY_BYTES};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::sync::{Semaphore, SemaphorePermit};

/// Large bodies read, parsed and validated at once (each costs a few times its
/// size, up to about 12 MiB for a 3 MiB transaction with check images).
pub const LARGE_BODIES: usize = 4;

/// How long a request waits for a large-body permit before it is answered 503.
pub const LARGE_BODY_WAIT: Duration = Duration::from_secs(2);

/// A body this large is still read (and discarded) so the client, still sending,
/// hears its answer; beyond it the connection is closed.
const DRAIN_LIMIT: usize = 2 * MAX_BODY_BYTES;

/// The large-body permits.
#[derive(Debug)]
pub struct LargeBodies(Semaphore);

impl Default for LargeBodies {
    fn default() -> LargeBodies {
        LargeBodies(Semaphore::new(LARGE_BODIES))
    }
}

impl LargeBodies {
    /// A permit, waiting up to [`LARGE_BODY_WAIT`]; `None` if none came free.
    async fn permit(&self) -> Option<SemaphorePermit<'_>> {
        tokio::time::timeout(LARGE_BODY_WAIT, self.0.acquire()).await.ok()?.ok()
    }
}

/// What reading a body gave.
pub enum BodyRead<'a> {
    /// The whole body, and the permit it needed if it is large (held until the
    /// request is answered: parsing and validating it cost memory too).
    Whole(Vec<u8>, Option<SemaphorePermit<'a>>),
    /// Larger than the limit (what was sent past it read and discarded, up to
    /// twice the largest limit).
    TooLarge,
    /// Large, and no permit came free in time.
    Busy,
}

/// Read a body of at most `limit` bytes (`declared`: its `Content-Length`).
pub async fn read<'a>(
    body: &mut Incoming,
    declared: Option<u64>,
    limit: usize,
    large: &'a LargeBodies,
) -> Result<BodyRead<'a>, hyper::Error> {
    if declared.is_some_and(|n| n > limit as u64) {
        discard(body, declared).await?;
        return Ok(BodyRead::TooLarge);
    }
    let mut permit = None;
    if declared.is_some_and(|n| n > SMALL_BODY_BYTES as u64) {
        match large.permit().await {
            Some(p) => permit = Some(p),
            None => return Ok(BodyRead::Busy),
        }
    }
    // A declared length within the limit is allocated at once; a body without
    // one grows as it comes.
    let mut kept = Vec::with_capacity(declared.map_or(0, |n| n as usize));
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else { continue };
        if kept.len() + data.len() > limit {
            discard(body, None).await?;
            return Ok(BodyRead::TooLarge);
        }
        if permit.is_none() && kept.len() + data.len() > SMALL_BODY_BYTES {
            // Sent without a length and grown past a small body.
            match large.permit().await {
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
/// [`DRAIN_LIMIT`] is left (the connection is then closed).
pub async fn discard(body: &mut Incoming, declared: Option<u64>) -> Result<(), hyper::Error> {
    if declared.is_some_and(|n| n > DRAIN_LIMIT as u64) {
        return Ok(());
    }
    let mut total = 0usize;
    while let Some(frame) = body.frame().await {
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

    #[tokio::test]
    async fn a_large_body_waits_for_a_permit_then_is_turned_away() {
        let large = LargeBodies::default();
        let mut held = Vec::new();
        for _ in 0..LARGE_BODIES {
            held.push(large.permit().await.expect("a free permit"));
        }
        let started = std::time::Instant::now();
        assert!(large.permit().await.is_none(), "all taken");
        assert!(started.elapsed() >= LARGE_BODY_WAIT);
        held.pop();
        assert!(large.permit().await.is_some(), "one came free");
    }
}
