//! The server's async tasks: every one is spawned here, marked as an async
//! worker's ([`ach_core::nonblocking`]), so that in debug and test builds a
//! storage call or a file write reached from a poll panics instead of
//! stalling every connection on that worker. Blocking work goes to
//! [`tokio::task::spawn_blocking`]. (`clippy.toml` refuses `tokio::spawn`
//! anywhere else.)

use std::future::Future;

use ach_core::nonblocking::Marked;
use tokio::task::JoinHandle;

/// Spawn `future` on the runtime's async workers, every poll of it marked.
#[allow(clippy::disallowed_methods)]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(Marked::new(future))
}

/// Spawn `future` into `set` on the runtime's async workers, every poll of
/// it marked.
#[allow(clippy::disallowed_methods)]
pub fn spawn_in<F>(set: &mut tokio::task::JoinSet<F::Output>, future: F)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    set.spawn(Marked::new(future));
}
