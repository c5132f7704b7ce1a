//! The write deadline: a connection to which the server has written nothing for
//! [`Limits::write_deadline`](crate::Limits::write_deadline) is closed.
//!
//! actix-http bounds a connection's first request head (`header_timeout`, answered 408) and an
//! idle kept-alive connection (`keep_alive`), but not the head of a later request once any byte
//! of it has reached the parser: it arms its head timer for a connection's first request only,
//! and stops its keep-alive timer at the first byte of the next. Nor does it bound a chunked
//! body nobody reads (one refused before it was read, or past `body_timeout`): it drains the
//! rest as slowly as the client sends it. Nor a client that stops reading its answer. Each
//! would hold a connection for as long as the client cares to keep it.
//!
//! The bound sits below the parser, on bytes, and parses nothing: a second reader of HTTP in
//! front of actix-http's parser would have to agree with it on where every request starts and
//! ends, and wherever two readers disagree a request can hide from one of them (request
//! smuggling). Nothing examines a connection's bytes before the parser. [`WriteDeadline`]
//! wraps each accepted connection: its clock starts at accept and restarts at every byte
//! written; once it reaches the deadline, the connection's next read or write fails and
//! actix-http drops it, without an answer (logged at DEBUG under `groundkit::client`).
//!
//! Only writes restart the clock: a read cannot tell a request from a trickle, and a write is
//! the server's own answer. Counting from the last write, rather than from the first read after
//! it, also bounds a client that stops reading its answer: the server's writes then stay
//! pending, and nothing else would end them.
//!
//! The deadline is the sum of the bounds of one exchange, `keep_alive` + `header_timeout` +
//! `body_timeout` + `request_timeout` (50 s by default): after an answer the server waits at
//! most `keep_alive` for the next request (actix-http closes an idle connection then), a
//! well-behaved client sends its head within `header_timeout` and its body within
//! `body_timeout` ([`body::read`](crate::edge::body::read) answers 408 past it), and a tool call
//! is answered within `request_timeout` ([`invoke`](crate::invoke::invoke) answers `timeout`
//! past it). So the deadline ends no exchange those bounds allow, and bounds what they leave
//! open. An answer streamed as server-sent events (an MCP `tools/call` with progress) writes as
//! it goes and ends with its call; the server offers no stream that stays silent (`GET /mcp` is
//! 405).
//!
//! The wrapper also tells the calls a connection carries when it closes: a read that finds the
//! end of the stream (or fails), or the connection being dropped, fires its [`Cancellation`],
//! which every call arriving on it is linked to ([`Closed`], in the connection's data). That
//! looks at how many bytes a read returned, never at what they say. A client that half-closes
//! its side after sending a request is taken to be gone, as most servers take it.
//!
//! The expired clock wakes the connection's task, and actix-http polls the connection's reads
//! whenever its task wakes (unless its read buffer is full, while it answers what it holds) and
//! its writes while it has something to send, so the connection is dropped at the deadline.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use groundkit_core::Cancellation;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// A connection closed once nothing has been written to it for its deadline.
#[derive(Debug)]
pub struct WriteDeadline<T> {
    io: T,
    limit: Duration,
    /// When a byte was last written (or the connection accepted).
    last_write: Instant,
    /// Fires at `last_write + limit` or earlier: a write only records its time, and the timer
    /// is moved on when it fires early.
    timer: Pin<Box<Sleep>>,
    expired: bool,
    /// Fired when the peer closes the connection or it is dropped.
    closed: Cancellation,
}

/// A connection's closing, in its connection data (`HttpRequest::conn_data`).
#[derive(Debug, Clone)]
pub struct Closed(pub Cancellation);

impl<T> Drop for WriteDeadline<T> {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

impl<T> WriteDeadline<T> {
    /// Wrap `io`, accepted now, with a deadline of `limit`.
    pub fn new(io: T, limit: Duration) -> Self {
        let now = Instant::now();
        WriteDeadline {
            io,
            limit,
            last_write: now,
            timer: Box::pin(tokio::time::sleep_until(now + limit)),
            expired: false,
            closed: Cancellation::new(),
        }
    }

    /// The signal fired when this connection closes.
    pub fn closed(&self) -> Closed {
        Closed(self.closed.clone())
    }

    /// An error once the deadline has passed; otherwise the timer is armed to wake `cx` at it.
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        while !self.expired {
            if self.timer.as_mut().poll(cx).is_pending() {
                return Ok(());
            }
            let due = self.last_write + self.limit;
            if due <= Instant::now() {
                self.expired = true;
                tracing::debug!(
                    target: "groundkit::client",
                    "closing a connection the server wrote nothing to for {:?}",
                    self.limit
                );
            } else {
                self.timer.as_mut().reset(due);
            }
        }
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the connection's write deadline passed",
        ))
    }

    fn wrote(&mut self, result: &Poll<io::Result<usize>>) {
        if let Poll::Ready(Ok(1..)) = result {
            self.last_write = Instant::now();
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteDeadline<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        let before = buf.filled().len();
        let result = Pin::new(&mut this.io).poll_read(cx, buf);
        let at_end = buf.remaining() > 0 && buf.filled().len() == before;
        if matches!(result, Poll::Ready(Err(_))) || (result.is_ready() && at_end) {
            this.closed.cancel();
        }
        result
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        let result = Pin::new(&mut this.io).poll_write(cx, buf);
        this.wrote(&result);
        result
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        let result = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.wrote(&result);
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn writes_restart_the_clock_and_reads_do_not() {
        let limit = Duration::from_millis(400);
        let (mut client, server) = tokio::io::duplex(1024);
        let mut conn = WriteDeadline::new(server, limit);
        let mut byte = [0u8; 1];
        let started = Instant::now();
        for _ in 0..4 {
            // A write within the deadline keeps the connection for another deadline.
            tokio::time::sleep(limit / 4).await;
            conn.write_all(b"x")
                .await
                .expect("written within the deadline");
            client.read_exact(&mut byte).await.expect("read");
        }
        assert!(
            started.elapsed() > limit,
            "outlived one deadline by writing"
        );
        // Bytes keep arriving, but the server writes nothing: closed a deadline after its last
        // write.
        let last_write = Instant::now();
        let trickle = tokio::spawn(async move {
            while client.write_all(b"y").await.is_ok() {
                tokio::time::sleep(limit / 8).await;
            }
        });
        let err = loop {
            if let Err(err) = conn.read(&mut byte).await {
                break err;
            }
        };
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        let waited = last_write.elapsed();
        assert!(
            waited >= limit && waited < limit * 10,
            "closed after {waited:?}"
        );
        assert!(conn.write_all(b"z").await.is_err(), "and stays closed");
        trickle.abort();
    }
}
