//! The framing layer in front of the method table: one classified frame in, at most one frame
//! out, the same for every transport.
//!
//! It decides, before any method runs: which era and revision a request belongs to (through
//! [`protocol`]); whether a batch is allowed (2025-03-26 only, and never with `initialize`);
//! which methods exist in that era (-32601 otherwise). Requests are registered while they run so
//! `notifications/cancelled` can abort them; an aborted request is never answered.
//!
//! It knows no transport: what a transport's envelope adds (Streamable HTTP's headers) comes in
//! through [`Transport`], and what comes out is an [`Answer`] whose [`Outcome`] the transport
//! turns into its own terms (an HTTP status, an access-log line).

use groundkit_core::Cancellation;
use std::sync::Arc;

use futures_util::future::{abortable, join_all};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::answer::{Answer, Called, Outcome};
use super::bridge::{Reply, Table};
use super::http::headers::Headers;
use super::jsonrpc::{self, ErrorFrame, Incoming, Message, Request};
use super::methods::{self, Call};
use super::protocol::{self, HeaderVersion, Revision};
use super::session::Peer;
use crate::edge::problem::rpc_code;
use crate::state::AppState;

/// Which transport a frame arrived on.
#[derive(Debug, Clone, Copy)]
pub enum Transport<'a> {
    /// Newline-delimited JSON on stdin/stdout.
    Stdio,
    /// Streamable HTTP, with the request's MCP headers.
    Http(&'a Headers),
}

impl Transport<'_> {
    /// Which transport it is, as a called function sees it.
    pub fn kind(&self) -> groundkit_core::Transport {
        match self {
            Transport::Stdio => groundkit_core::Transport::McpStdio,
            Transport::Http(_) => groundkit_core::Transport::McpHttp,
        }
    }

    /// The `MCP-Protocol-Version` the envelope declares (none on stdio).
    fn version(&self) -> HeaderVersion<'_> {
        match self {
            Transport::Stdio => HeaderVersion::Absent,
            Transport::Http(headers) => headers.version(),
        }
    }
}

/// One frame's circumstances: who sent it, over what, under which request id, and where its
/// progress notifications may go (when the transport can stream them).
#[derive(Clone, Copy)]
pub struct Exchange<'a> {
    /// The conversation it belongs to.
    pub peer: &'a Arc<Peer>,
    /// The transport it arrived on.
    pub transport: Transport<'a>,
    /// Its request id (logs and error bodies).
    pub request_id: &'a str,
    /// Where progress notifications go.
    pub notify: Option<&'a UnboundedSender<String>>,
    /// Fired when its connection closes (HTTP).
    pub closed: Option<&'a Cancellation>,
}

/// The MCP server of one [`AppState`]: the method table and the framing in front of it.
pub struct McpServer<Ctx> {
    state: Arc<AppState<Ctx>>,
    table: Table,
}

impl<Ctx: Send + Sync + 'static> McpServer<Ctx> {
    /// The server for `state` (cheap: builds the method table).
    pub fn new(state: Arc<AppState<Ctx>>) -> Self {
        let table = Table::new(Arc::clone(&state));
        Self { state, table }
    }

    /// The state it serves.
    pub fn state(&self) -> &Arc<AppState<Ctx>> {
        &self.state
    }

    /// Parse and answer one frame.
    pub async fn handle_frame(&self, bytes: &[u8], ex: Exchange<'_>) -> Answer {
        self.handle_incoming(jsonrpc::parse(bytes), ex).await
    }

    /// Answer one parsed frame.
    pub async fn handle_incoming(&self, incoming: Incoming, ex: Exchange<'_>) -> Answer {
        match incoming {
            Incoming::Single(message) => self.message(message, ex).await,
            Incoming::Batch(messages) => self.batch(messages, ex).await,
        }
    }

    async fn batch(&self, messages: Vec<Message>, ex: Exchange<'_>) -> Answer {
        let revision =
            match protocol::handshake_revision(ex.peer.negotiated(), ex.transport.version()) {
                Ok(revision) => revision,
                Err(frame) => return Answer::refused(frame),
            };
        let refuse = |message: &str| {
            Answer::refused(ErrorFrame::new(None, rpc_code::INVALID_REQUEST, message))
        };
        let limit = self.state.limits.max_batch_len;
        if !revision.allows_batches() {
            return refuse("Invalid Request: batches are not accepted in this protocol revision");
        }
        if messages.is_empty() {
            return refuse("Invalid Request: an empty batch");
        }
        if messages.len() > limit {
            return refuse(&format!(
                "Invalid Request: a batch may hold at most {limit} messages"
            ));
        }
        if messages
            .iter()
            .any(|m| matches!(m, Message::Request(r) if r.method == "initialize"))
        {
            return refuse("Invalid Request: initialize cannot be part of a batch");
        }
        let answers = join_all(messages.into_iter().map(|m| self.message(m, ex))).await;
        let frames: Vec<String> = answers.into_iter().filter_map(|a| a.frame).collect();
        if frames.is_empty() {
            return Answer::silent();
        }
        Answer {
            frame: Some(format!("[{}]", frames.join(","))),
            outcome: Outcome::Batch,
            request: None,
        }
    }

    async fn message(&self, message: Message, ex: Exchange<'_>) -> Answer {
        match message {
            Message::Request(request) => self.request(request, ex).await,
            Message::Notification { method, params } => {
                if method.starts_with("notifications/")
                    && methods::METHODS.contains(&method.as_str())
                {
                    let revision = ex.peer.negotiated().unwrap_or(Revision::ASSUMED);
                    let call = Call::new(
                        ex.peer,
                        ex.transport.kind(),
                        revision,
                        ex.request_id,
                        Some(params),
                    );
                    let _ = self.table.call(&method, call).await;
                }
                Answer::silent()
            }
            Message::Response => Answer::silent(),
            Message::Invalid(frame) => Answer::refused(frame),
        }
    }

    async fn request(&self, mut request: Request, ex: Exchange<'_>) -> Answer {
        let called = Called {
            method: request.method.clone(),
            tool: tool_name(&request.method, request.params.as_ref()),
        };
        let stateless = protocol::is_stateless(&request, ex.transport.version());
        let outcome = match revision(&request, ex, stateless) {
            Ok(revision) => {
                let params = request.params.take();
                self.dispatch(&request, params, revision, stateless, ex)
                    .await
            }
            Err(frame) => Err(frame),
        };
        let (frame, outcome) = match outcome {
            Ok(Some(Reply::Frame(reply))) => {
                let outcome = if reply.is_error {
                    Outcome::ToolError
                } else {
                    Outcome::Result { initialized: false }
                };
                (Some(reply.frame), outcome)
            }
            Ok(Some(Reply::Result(result))) => {
                let outcome = Outcome::Result {
                    initialized: request.method == "initialize",
                };
                (Some(jsonrpc::success(&request.id, &result)), outcome)
            }
            Ok(None) => (None, Outcome::Cancelled),
            Err(mut frame) => {
                frame.id = Some(request.id);
                let outcome = Outcome::RpcError {
                    code: frame.code,
                    stateless,
                };
                (Some(frame.render()), outcome)
            }
        };
        Answer {
            frame,
            outcome,
            request: Some(called),
        }
    }

    /// Run a known method of the request's era with `params` (taken from the request);
    /// `Ok(None)` when it was cancelled.
    async fn dispatch(
        &self,
        request: &Request,
        params: Option<Map<String, Value>>,
        revision: Revision,
        stateless: bool,
        ex: Exchange<'_>,
    ) -> Result<Option<Reply>, ErrorFrame> {
        let method = request.method.as_str();
        let era_only = if stateless {
            methods::HANDSHAKE_ONLY
        } else {
            methods::STATELESS_ONLY
        };
        let known = methods::METHODS.contains(&method)
            && !method.starts_with("notifications/")
            && !era_only.contains(&method);
        if !known {
            return Err(ErrorFrame::new(
                None,
                rpc_code::METHOD_NOT_FOUND,
                "Method not found",
            ));
        }
        if let Some(message) = request
            .duplicate_key
            .as_ref()
            .filter(|_| method != "tools/call")
        {
            return Err(ErrorFrame::new(
                None,
                rpc_code::INVALID_PARAMS,
                format!("Invalid params: {message}"),
            ));
        }
        let mut call = Call::new(
            ex.peer,
            ex.transport.kind(),
            revision,
            ex.request_id,
            params,
        );
        call.id = Some(request.id.clone());
        call.notify = ex.notify.cloned();
        call.closed = ex.closed.cloned();
        call.duplicate_key = request.duplicate_key.clone();
        let key = jsonrpc::id_key(&request.id);
        let (future, handle) = abortable(self.table.call(method, call));
        let in_flight = &self.state.mcp.in_flight;
        in_flight.insert(ex.peer.id(), key.clone(), handle);
        let outcome = future.await;
        in_flight.remove(ex.peer.id(), &key);
        outcome.ok().transpose()
    }
}

/// The revision `request` is served under, or why it cannot be served.
fn revision(request: &Request, ex: Exchange<'_>, stateless: bool) -> Result<Revision, ErrorFrame> {
    if !stateless {
        return protocol::handshake_revision(ex.peer.negotiated(), ex.transport.version());
    }
    protocol::stateless_revision(request, |version| match ex.transport {
        Transport::Stdio => Ok(()),
        Transport::Http(headers) => headers.agree_with(request, version),
    })
}

/// The tool a `tools/call` names (for the access line).
fn tool_name(method: &str, params: Option<&Map<String, Value>>) -> Option<String> {
    (method == "tools/call")
        .then(|| params?.get("name")?.as_str().map(str::to_owned))
        .flatten()
}
