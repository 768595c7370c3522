//! A stream whose writes fail once they have made no progress for a while: a
//! client that never reads its answers cannot hold its connection (and the
//! answer's buffers) for ever.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// `io` whose writes, flushes and shutdown fail with [`io::ErrorKind::TimedOut`]
/// once one has waited `limit` without the peer taking a byte. Reads pass
/// through.
pub struct WriteTimeout<IO> {
    io: IO,
    limit: Duration,
    /// Running while a write waits.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<IO> WriteTimeout<IO> {
    /// Wrap `io`.
    pub fn new(io: IO, limit: Duration) -> WriteTimeout<IO> {
        WriteTimeout { io, limit, stalled: None }
    }

    /// Progress clears the clock; waiting starts it, and past the limit fails.
    fn watch<T>(&mut self, cx: &mut Context<'_>, polled: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let limit = self.limit;
        let stall = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match stall.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client took nothing for {} s", limit.as_secs_f32()),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for WriteTimeout<IO> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for WriteTimeout<IO> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        this.watch(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_flush(cx);
        this.watch(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_shutdown(cx);
        this.watch(cx, polled)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const LIMIT: Duration = Duration::from_secs(10);

    #[tokio::test(start_paused = true)]
    async fn a_write_nobody_takes_fails_after_the_limit() {
        let (near, _far) = tokio::io::duplex(64);
        let mut stream = WriteTimeout::new(near, LIMIT);
        let started = tokio::time::Instant::now();
        let failed = stream.write_all(&[0; 1024]).await.unwrap_err();
        assert_eq!(failed.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= LIMIT && started.elapsed() < LIMIT * 2, "{:?}", started.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_reader_that_keeps_taking_bytes_is_not_cut_off() {
        let (near, mut far) = tokio::io::duplex(64);
        let reader = crate::tasks::spawn(async move {
            let mut taken = Vec::new();
            let mut buf = [0; 64];
            loop {
                tokio::time::sleep(LIMIT / 2).await;
                match far.read(&mut buf).await.unwrap() {
                    0 => return taken.len(),
                    n => taken.extend_from_slice(&buf[..n]),
                }
            }
        });
        let mut stream = WriteTimeout::new(near, LIMIT);
        stream.write_all(&[7; 1024]).await.unwrap();
        stream.shutdown().await.unwrap();
        drop(stream);
        assert_eq!(reader.await.unwrap(), 1024);
    }
}
