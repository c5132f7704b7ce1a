//! MCP over stdio: one JSON-RPC message per line in, one per line out.
//!
//! stdout carries frames and nothing else: every frame goes through one writer task, so lines
//! never interleave, and logging goes to stderr ([`crate::logging::init`] runs before the first
//! frame). Requests run concurrently (at most [`MAX_IN_FLIGHT`] at once; reading pauses until
//! one finishes) and may be answered out of order. A line longer than the configured cap
//! ([`Limits::max_line_bytes`](crate::Limits::max_line_bytes), 16 MiB by default) is answered
//! with -32600 and skipped without being held in memory. At end of input the server answers
//! what is already in flight and returns, so the process exits 0. Each request gets its request
//! id and one access-log line, as an HTTP request does. `notifications/resources/updated` for the
//! resources the client follows go out on the same lines, between answers.

use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use crate::edge::problem::rpc_code;

use super::answer::Outcome;
use super::jsonrpc::ErrorFrame;
use super::server::{Exchange, McpServer, Transport};
use super::session::Peer;
use crate::edge::access::{self, Note};
use crate::edge::id::random_id;
use crate::state::AppState;

/// Requests handled at once on one stdio connection.
pub const MAX_IN_FLIGHT: usize = 64;

/// Serve `state` on the process's stdin and stdout until stdin ends.
pub async fn run<Ctx: Send + Sync + 'static>(state: Arc<AppState<Ctx>>) -> std::io::Result<()> {
    serve(state, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serve `state` on `input` and `output` until `input` ends.
pub async fn serve<Ctx, R, W>(state: Arc<AppState<Ctx>>, input: R, output: W) -> std::io::Result<()>
where
    Ctx: Send + Sync + 'static,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let cap = state.limits.max_line_bytes;
    let server = Arc::new(McpServer::new(state));
    let peer = Peer::new();
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(write_frames(rx, output));
    // What the server pushes (a followed resource changed) goes out on the same lines.
    let updates = server.state().mcp.updates.clone();
    peer.push_to(&updates, tx.clone());
    let permits = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let mut tasks = JoinSet::new();
    let mut reader = BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        let line = read_line(&mut reader, &mut buf, cap).await?;
        while tasks.try_join_next().is_some() {}
        match line {
            Line::Eof => break,
            Line::TooLong => {
                let frame = ErrorFrame::new(
                    None,
                    rpc_code::INVALID_REQUEST,
                    format!("Invalid Request: a message may be at most {cap} bytes"),
                );
                let _ = tx.send(frame.render());
            }
            Line::Frame(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {}
            Line::Frame(bytes) => {
                let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
                    break;
                };
                let server = Arc::clone(&server);
                let peer = Arc::clone(&peer);
                let tx = tx.clone();
                tasks.spawn(async move {
                    let started = Instant::now();
                    let request_id = random_id();
                    let exchange = Exchange {
                        peer: &peer,
                        transport: Transport::Stdio,
                        request_id: &request_id,
                        notify: Some(&tx),
                        closed: None,
                    };
                    let mut answer = server.handle_frame(&bytes, exchange).await;
                    if answer.outcome != Outcome::Silent {
                        let mut note = Note {
                            transport: Some(access::Transport::McpStdio),
                            ..Note::default()
                        };
                        answer.note(&mut note);
                        access::write(&request_id, None, &note, started);
                    }
                    if let Some(frame) = answer.frame {
                        let _ = tx.send(frame);
                    }
                    drop(permit);
                });
            }
        }
    }
    // What stays open until the input ends (a `subscriptions/listen`) answers now.
    peer.end();
    while tasks.join_next().await.is_some() {}
    updates.forget(peer.id());
    drop(tx);
    writer.await.map_err(std::io::Error::other)?
}

async fn write_frames<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<String>,
    mut output: W,
) -> std::io::Result<()> {
    while let Some(frame) = rx.recv().await {
        let mut line = frame.into_bytes();
        line.push(b'\n');
        output.write_all(&line).await?;
        output.flush().await?;
    }
    Ok(())
}

enum Line {
    Frame(Vec<u8>),
    TooLong,
    Eof,
}

/// Read up to the next newline, keeping at most `cap` bytes: a longer line is consumed and
/// dropped as it streams past.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Frame(std::mem::take(buf))
            });
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > cap {
                too_long = true;
                *buf = Vec::new();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if done.is_some() {
            if too_long {
                return Ok(Line::TooLong);
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Line::Frame(std::mem::take(buf)));
        }
    }
}
