//! Threads that must never wait on storage or a file: a host's async workers.
//!
//! An async server runs every connection on a few worker threads (two on a
//! two-core machine); one of them waiting on a disk sync, a lock held through
//! one, or a database round trip stalls every connection it carries. So a
//! host marks each poll of its async tasks ([`Marked`], or [`Scope`] around
//! synchronous code it runs there), and every storage entry point of the
//! engine calls [`assert_may_block`] first: in debug and test builds a storage
//! call inside a marked poll panics, naming the entry point, so the host's test
//! suites fail on any path that reaches storage from an async worker. Release
//! builds carry none of it (the marks and checks compile to nothing).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

#[cfg(debug_assertions)]
thread_local! {
    /// How many marked polls this thread is inside (a poll may nest another).
    static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// While alive, the current thread is an async worker's: storage may not be
/// called on it.
#[must_use = "the mark lasts as long as the scope"]
pub struct Scope {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Scope {
    /// Mark the current thread as an async worker's until the scope drops.
    pub fn enter() -> Scope {
        #[cfg(debug_assertions)]
        DEPTH.with(|d| d.set(d.get() + 1));
        Scope { _not_send: std::marker::PhantomData }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Whether the current thread is inside a [`Scope`] (always `false` in a
/// release build).
pub fn on_async_worker() -> bool {
    #[cfg(debug_assertions)]
    {
        DEPTH.with(|d| d.get() > 0)
    }
    #[cfg(not(debug_assertions))]
    {
        false
    }
}

/// Panic, in a debug or test build, if the current thread is an async
/// worker's: `what` (a storage entry point, a file written) would block it.
#[track_caller]
pub fn assert_may_block(what: &str) {
    debug_assert!(!on_async_worker(), "{what} on an async worker thread: run it on a blocking thread");
    let _ = what;
}

/// A future whose every poll runs inside a [`Scope`]: what a host spawns on
/// its async workers.
pub struct Marked<F> {
    inner: Pin<Box<F>>,
}

impl<F: Future> Marked<F> {
    /// Mark every poll of `future`.
    pub fn new(future: F) -> Marked<F> {
        Marked { inner: Box::pin(future) }
    }
}

impl<F: Future> Future for Marked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _scope = Scope::enter();
        self.inner.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_marks_its_thread_until_it_drops() {
        assert!(!on_async_worker());
        {
            let _outer = Scope::enter();
            assert_eq!(on_async_worker(), cfg!(debug_assertions));
            {
                let _inner = Scope::enter();
            }
            assert_eq!(on_async_worker(), cfg!(debug_assertions), "a nested scope leaves the outer one");
        }
        assert!(!on_async_worker());
        let elsewhere = std::thread::spawn(on_async_worker);
        let _scope = Scope::enter();
        assert!(!elsewhere.join().unwrap_or(true), "only the thread that entered is marked");
    }

    #[cfg(debug_assertions)]
    #[test]
    fn a_blocking_call_in_a_scope_panics_and_names_itself() {
        let panicked = std::panic::catch_unwind(|| {
            let _scope = Scope::enter();
            assert_may_block("a storage read");
        });
        let message = panicked.err().and_then(|p| p.downcast_ref::<String>().cloned()).unwrap_or_default();
        assert_eq!(message, "a storage read on an async worker thread: run it on a blocking thread");
        assert!(!on_async_worker(), "the scope unwound with the panic");
        assert_may_block("a storage read outside a scope");
    }

    #[test]
    fn a_marked_future_is_marked_only_while_polled() {
        let seen = std::cell::Cell::new(false);
        let future = Marked::new(async { seen.set(on_async_worker()) });
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut future = std::pin::pin!(future);
        assert_eq!(future.as_mut().poll(&mut cx), Poll::Ready(()));
        assert_eq!(seen.get(), cfg!(debug_assertions));
        assert!(!on_async_worker());
    }
}
