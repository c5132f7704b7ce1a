//! The connection gate: groundkit's reader in front of actix-http's HTTP/1.x parser, there so that
//! a request with no `Host` or with two reaches the Host guard instead of the parser.
//!
//! actix-http refuses an HTTP/1.1 request without `Host`, and a request of any version with more
//! than one, inside its parser, with an empty 400 that no application code sees. [`HostGate`]
//! wraps each accepted connection and reads every request head before the parser does. A head
//! with a Host fault is rewritten: its `Host` lines are dropped, one empty `Host` takes their
//! place (so the parser accepts it) and [`FAULT_HEADER`] names the fault, which
//! [`guard::check`](crate::guard::check) refuses like every other Host (problem+json, with its
//! request id). A client cannot send [`FAULT_HEADER`] itself: the gate drops it from every head.
//! Every other head passes byte for byte.
//!
//! To find the next head the gate follows each body's framing (`Content-Length`, or chunked
//! `Transfer-Encoding`), by the same rules as actix-http. Whatever it cannot follow — a head the
//! parser would refuse anyway, an upgrade, a malformed chunk, a head larger than the parser's
//! buffer — switches the connection to pass-through: the parser then sees the rest unchanged
//! and answers as it would without the gate. The gate holds at most one head's bytes, never a
//! body, and adds no timeout of its own: actix-http's header timeout keeps running while the
//! gate waits for the rest of a head.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The header a rewritten head carries: `missing` or `duplicate`.
pub const FAULT_HEADER: &str = "groundkit-host-fault";

/// actix-http's limits: headers per head, and the unparsed bytes it holds before answering 431.
const MAX_HEADERS: usize = 96;
const MAX_HEAD_BYTES: usize = 131_072;
/// The longest chunk-size or trailer line followed; a longer one switches to pass-through.
const MAX_CHUNK_LINE: usize = 4096;

/// An HTTP/1.x connection read through the gate; writes pass straight through.
#[derive(Debug)]
pub struct HostGate<T> {
    io: T,
    state: State,
    /// Bytes read but not yet judged: only ever the start of a head.
    pending: BytesMut,
    /// Bytes judged and not yet handed to the parser.
    out: BytesMut,
    eof: bool,
}

#[derive(Debug)]
enum State {
    /// Waiting for a request head.
    Head,
    /// Inside a body of this many more bytes.
    Length(u64),
    /// Inside a chunked body.
    Chunked(Chunks),
    /// Everything passes unread until the connection ends.
    Through,
}

impl<T> HostGate<T> {
    /// Gate `io` from its first byte.
    pub fn new(io: T) -> Self {
        HostGate {
            io,
            state: State::Head,
            pending: BytesMut::new(),
            out: BytesMut::new(),
            eof: false,
        }
    }

    /// How many of `bytes` (which follow everything seen so far) belong to the current body or
    /// pass through; 0 while a head is awaited.
    fn through(&mut self, bytes: &[u8]) -> usize {
        match &mut self.state {
            State::Head => 0,
            State::Through => bytes.len(),
            State::Length(left) => {
                let n = (*left).min(bytes.len() as u64);
                *left -= n;
                if *left == 0 {
                    self.state = State::Head;
                }
                n as usize
            }
            State::Chunked(chunks) => match chunks.feed(bytes) {
                Ok(Some(n)) => {
                    self.state = State::Head;
                    n
                }
                Ok(None) => bytes.len(),
                Err(Malformed) => {
                    self.state = State::Through;
                    bytes.len()
                }
            },
        }
    }

    /// Judge what is pending, moving it to `out`, until only part of a head is left.
    fn judge_pending(&mut self) {
        while !self.pending.is_empty() {
            if !matches!(self.state, State::Head) {
                let pending = std::mem::take(&mut self.pending);
                let n = self.through(&pending);
                self.out.extend_from_slice(&pending[..n]);
                self.pending = pending;
                self.pending.advance(n);
                continue;
            }
            match judge(&self.pending) {
                Judged::Partial if self.pending.len() < MAX_HEAD_BYTES => return,
                Judged::Partial | Judged::Unfollowable => self.state = State::Through,
                Judged::Head {
                    len,
                    rewritten,
                    next,
                } => {
                    match rewritten {
                        Some(head) => self.out.extend_from_slice(&head),
                        None => self.out.extend_from_slice(&self.pending[..len]),
                    }
                    self.pending.advance(len);
                    self.state = next;
                }
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for HostGate<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            if !this.out.is_empty() {
                let n = this.out.len().min(buf.remaining());
                buf.put_slice(&this.out[..n]);
                this.out.advance(n);
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let before = buf.filled().len();
            ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
            let read = buf.filled().len() - before;
            if read == 0 {
                // The parser gets whatever part of a head there is, then the end.
                this.eof = true;
                this.out.extend_from_slice(&this.pending.split());
                continue;
            }
            // Body bytes stay where they were read; only a head's bytes are held back.
            let kept = match this.pending.is_empty() {
                true => this.through(&buf.filled()[before..]),
                false => 0,
            };
            if kept < read {
                this.pending
                    .extend_from_slice(&buf.filled()[before + kept..]);
                buf.set_filled(before + kept);
                this.judge_pending();
            }
            if kept > 0 {
                return Poll::Ready(Ok(()));
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for HostGate<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// What the gate makes of the bytes at the start of a head.
#[derive(Debug)]
enum Judged {
    /// Not a whole head yet.
    Partial,
    /// A head the gate cannot follow past (or the parser would refuse).
    Unfollowable,
    /// A whole head of `len` bytes, to pass as it is or `rewritten`, followed by a body framed
    /// as `next` says.
    Head {
        len: usize,
        rewritten: Option<Vec<u8>>,
        next: State,
    },
}

/// The Host fault a head has, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Missing,
    Duplicate,
}

fn judge(bytes: &[u8]) -> Judged {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let len = match request.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Judged::Partial,
        Err(_) => return Judged::Unfollowable,
    };
    let http_11 = request.version == Some(1);
    let (mut hosts, mut forged) = (0, false);
    let (mut length, mut encodings) = (None, 0);
    let mut chunked = false;
    for header in request.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("host") {
            hosts += 1;
        } else if name.eq_ignore_ascii_case(FAULT_HEADER) {
            forged = true;
        } else if name.eq_ignore_ascii_case("content-length") {
            let Some(value) = decimal(header.value) else {
                return Judged::Unfollowable;
            };
            if length.replace(value).is_some() {
                return Judged::Unfollowable;
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            encodings += 1;
            chunked = header.value.trim_ascii().eq_ignore_ascii_case(b"chunked");
        } else if name.eq_ignore_ascii_case("upgrade") {
            return Judged::Unfollowable;
        }
    }
    let next = match (encodings, chunked, length) {
        (0, _, None | Some(0)) => State::Head,
        (0, _, Some(n)) => State::Length(n),
        (1, true, None) if http_11 => State::Chunked(Chunks::default()),
        _ => return Judged::Unfollowable,
    };
    let fault = match hosts {
        0 if http_11 => Some(Fault::Missing),
        0 | 1 => None,
        _ => Some(Fault::Duplicate),
    };
    let rewritten = (fault.is_some() || forged).then(|| rewrite(&request, fault));
    Judged::Head {
        len,
        rewritten,
        next,
    }
}

/// A `Content-Length` value as actix-http reads it: trimmed ASCII digits, no sign.
fn decimal(value: &[u8]) -> Option<u64> {
    let value = value.trim_ascii();
    match value.first() {
        Some(b'0'..=b'9') => std::str::from_utf8(value).ok()?.parse().ok(),
        _ => None,
    }
}

/// `request` again without its [`FAULT_HEADER`] lines; with a `fault`, also without its `Host`
/// lines, and with an empty `Host` and the fault in their place.
fn rewrite(request: &httparse::Request<'_, '_>, fault: Option<Fault>) -> Vec<u8> {
    let mut head = Vec::with_capacity(256);
    let method = request.method.unwrap_or_default();
    let path = request.path.unwrap_or_default();
    let minor = request.version.unwrap_or_default();
    head.extend_from_slice(format!("{method} {path} HTTP/1.{minor}\r\n").as_bytes());
    for header in request.headers.iter() {
        let name = header.name;
        let host = name.eq_ignore_ascii_case("host");
        if (host && fault.is_some()) || name.eq_ignore_ascii_case(FAULT_HEADER) {
            continue;
        }
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(header.value);
        head.extend_from_slice(b"\r\n");
    }
    if let Some(fault) = fault {
        let fault = match fault {
            Fault::Missing => "missing",
            Fault::Duplicate => "duplicate",
        };
        head.extend_from_slice(format!("host: \r\n{FAULT_HEADER}: {fault}\r\n").as_bytes());
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// A chunked body that does not follow the framing.
#[derive(Debug)]
struct Malformed;

/// Where a chunked body is: in a size line, in a chunk's data, at the CRLF after it, or in the
/// trailer section.
#[derive(Debug, Default)]
struct Chunks {
    part: Part,
    /// The current size or trailer line so far.
    line: Vec<u8>,
}

#[derive(Debug, Default)]
enum Part {
    #[default]
    Size,
    Data(u64),
    DataEnd,
    Trailers,
}

impl Chunks {
    /// Follow `bytes`: `Some(n)` if the body ends after `n` of them, `None` if all belong to it.
    fn feed(&mut self, bytes: &[u8]) -> Result<Option<usize>, Malformed> {
        let mut at = 0;
        while at < bytes.len() {
            match self.part {
                Part::Data(left) => {
                    let n = left.min((bytes.len() - at) as u64);
                    at += n as usize;
                    self.part = match left - n {
                        0 => Part::DataEnd,
                        left => Part::Data(left),
                    };
                }
                Part::Size | Part::DataEnd | Part::Trailers => {
                    let end = bytes[at..].iter().position(|&b| b == b'\n');
                    let taken = end.map_or(bytes.len() - at, |i| i + 1);
                    self.line.extend_from_slice(&bytes[at..at + taken]);
                    at += taken;
                    if self.line.len() > MAX_CHUNK_LINE {
                        return Err(Malformed);
                    }
                    if end.is_some() && self.line_ends()? {
                        return Ok(Some(at));
                    }
                }
            }
        }
        Ok(None)
    }

    /// A whole line has been read: move on, and say whether the body ends with it.
    fn line_ends(&mut self) -> Result<bool, Malformed> {
        let line = std::mem::take(&mut self.line);
        match self.part {
            Part::Size => match httparse::parse_chunk_size(&line) {
                Ok(httparse::Status::Complete((used, size))) if used == line.len() => {
                    self.part = match size {
                        0 => Part::Trailers,
                        size => Part::Data(size),
                    };
                    Ok(false)
                }
                _ => Err(Malformed),
            },
            Part::DataEnd if line == b"\r\n" => {
                self.part = Part::Size;
                Ok(false)
            }
            Part::Trailers => Ok(line == b"\r\n" || line == b"\n"),
            Part::DataEnd | Part::Data(_) => Err(Malformed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// What the parser reads through the gate when the client sends `sent` in `pieces`.
    fn through_gate(sent: &[u8], pieces: usize) -> Vec<u8> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let (mut client, server) = tokio::io::duplex(1 << 20);
            let size = sent.len().div_ceil(pieces).max(1);
            let sent = sent.to_vec();
            let writer = tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                for piece in sent.chunks(size) {
                    client.write_all(piece).await.expect("write");
                    tokio::task::yield_now().await;
                }
            });
            let mut gate = HostGate::new(server);
            let mut read = Vec::new();
            gate.read_to_end(&mut read).await.expect("read");
            writer.await.expect("writer");
            read
        })
    }

    fn both_ways(sent: &[u8]) -> Vec<u8> {
        let whole = through_gate(sent, 1);
        for pieces in [2, 7, sent.len()] {
            assert_eq!(
                through_gate(sent, pieces),
                whole,
                "{pieces} pieces of {:?}",
                String::from_utf8_lossy(sent)
            );
        }
        whole
    }

    #[test]
    fn well_formed_requests_pass_byte_for_byte_whatever_their_framing() {
        let stream: &[u8] = b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello\
            POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
            5;ext=1\r\nGET /\r\n0\r\nx-trailer: 1\r\n\r\n\
            GET /c HTTP/1.0\r\n\r\n\
            GET /d HTTP/1.1\r\nhost: h\r\n\r\n";
        assert_eq!(both_ways(stream), stream);
    }

    #[test]
    fn host_faults_are_named_and_the_next_request_is_untouched() {
        let sent: &[u8] = b"GET /a HTTP/1.1\r\nAccept: */*\r\n\r\n\
            POST /b HTTP/1.1\r\nHost: h\r\nhost: evil\r\nContent-Length: 24\r\n\r\n\
            GET /x HTTP/1.1\r\n\r\nxxxxx\
            GET /c HTTP/1.1\r\nHost: h\r\n\r\n";
        let expected: &[u8] = b"GET /a HTTP/1.1\r\nAccept: */*\r\nhost: \r\ngroundkit-host-fault: missing\r\n\r\n\
            POST /b HTTP/1.1\r\nContent-Length: 24\r\nhost: \r\ngroundkit-host-fault: duplicate\r\n\r\n\
            GET /x HTTP/1.1\r\n\r\nxxxxx\
            GET /c HTTP/1.1\r\nHost: h\r\n\r\n";
        assert_eq!(
            String::from_utf8_lossy(&both_ways(sent)),
            String::from_utf8_lossy(expected)
        );
    }

    #[test]
    fn a_client_cannot_name_a_fault_itself() {
        let sent: &[u8] = b"GET / HTTP/1.1\r\nHost: h\r\nGroundkit-Host-Fault: missing\r\n\r\n";
        assert_eq!(both_ways(sent), b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    }

    #[test]
    fn what_the_gate_cannot_follow_passes_unchanged_to_the_end() {
        for sent in [
            // Two lengths, a length with a sign, an encoding that is not chunked, both framings,
            // an upgrade, a bad chunk size: each passes, and so does the Host fault after it.
            &b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx"[..],
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\nx",
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"GET / HTTP/1.1\r\nHost h\r\n\r\n",
        ] {
            let mut stream = sent.to_vec();
            stream.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
            assert_eq!(both_ways(&stream), stream, "{}", String::from_utf8_lossy(sent));
        }
    }

    #[test]
    fn a_head_larger_than_the_parsers_buffer_passes_for_the_parser_to_refuse() {
        let mut sent = b"GET / HTTP/1.1\r\nx-big: ".to_vec();
        sent.resize(MAX_HEAD_BYTES + 10, b'a');
        assert_eq!(through_gate(&sent, 3), sent);
    }

    #[test]
    fn a_truncated_head_reaches_the_parser_at_the_end() {
        let sent = b"GET / HTTP/1.1\r\nHost: h\r\n";
        assert_eq!(through_gate(sent, 2), sent);
    }
}
