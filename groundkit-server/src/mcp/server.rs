//! The framing layer in front of the method table: one classified frame in, at most one frame
//! out, the same for every transport.
//!
//! It decides, before any method runs: which era and revision a request belongs to (a
//! stateless-era request names its version in `params._meta`, and over HTTP repeats it and its
//! method and tool name in headers, which must agree); whether a batch is allowed (2025-03-26
//! only, and never with `initialize`); which methods exist in that era (-32601 otherwise); and
//! the HTTP status an answer travels with. Requests are registered while they run so
//! `notifications/cancelled` can abort them; an aborted request is never answered.
//!
//! Methods are called through the jsonrpsee table's callbacks directly, with the per-call
//! [`Call`] in the request's `Extensions`: `RpcModule::raw_json_request` would need a jsonrpsee
//! request envelope (whose id type cannot hold MCP ids) and cannot carry per-call extensions.

use std::sync::Arc;
use std::time::Instant;

use crate::edge::problem::rpc_code;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use futures_util::future::{abortable, join_all};
use jsonrpsee::core::server::{ConnectionId, Extensions, MethodCallback, Methods};
use jsonrpsee::types::{Id, Params};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::jsonrpc::{self, ErrorFrame, Incoming, Message, Request};
use super::methods::{self, Call};
use super::protocol::{self, MetaVersion, Revision, code};
use super::session::Peer;
use crate::state::AppState;

/// Request headers the stateless era cross-checks against the body (HTTP only).
#[derive(Debug, Clone, Default)]
pub struct HttpHeaders {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<String>,
    /// `Mcp-Method`.
    pub method: Option<String>,
    /// `Mcp-Name`.
    pub name: Option<String>,
}

/// Which transport a frame arrived on.
#[derive(Debug, Clone, Copy)]
pub enum Transport<'a> {
    /// Newline-delimited JSON on stdin/stdout.
    Stdio,
    /// Streamable HTTP, with the request's MCP headers.
    Http(&'a HttpHeaders),
}

impl Transport<'_> {
    fn name(&self) -> &'static str {
        match self {
            Transport::Stdio => "mcp-stdio",
            Transport::Http(_) => "mcp-http",
        }
    }

    fn headers(&self) -> Option<&HttpHeaders> {
        match self {
            Transport::Stdio => None,
            Transport::Http(h) => Some(h),
        }
    }
}

/// One frame to send, with the HTTP status it travels with on HTTP.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The JSON-RPC frame (one line).
    pub body: String,
    /// HTTP status (ignored on stdio).
    pub status: u16,
    /// Whether it answers a successful `initialize` (HTTP then opens a session).
    pub initialized: bool,
}

impl Reply {
    fn error(frame: ErrorFrame, status: u16) -> Self {
        Self {
            body: frame.render(),
            status,
            initialized: false,
        }
    }
}

/// The MCP server of one [`AppState`]: the method table and the framing in front of it.
pub struct McpServer<Ctx> {
    state: Arc<AppState<Ctx>>,
    methods: Methods,
}

impl<Ctx: Send + Sync + 'static> McpServer<Ctx> {
    /// The server for `state` (cheap: builds the method table).
    pub fn new(state: Arc<AppState<Ctx>>) -> Self {
        let methods = methods::table(Arc::clone(&state));
        Self { state, methods }
    }

    /// The state it serves.
    pub fn state(&self) -> &Arc<AppState<Ctx>> {
        &self.state
    }

    /// The methods the table answers, for parity tests and diagnostics.
    pub fn method_names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.methods.method_names().collect();
        names.sort_unstable();
        names
    }

    /// Parse and answer one frame.
    pub async fn handle_frame(
        &self,
        peer: &Arc<Peer>,
        bytes: &[u8],
        transport: Transport<'_>,
        request_id: &str,
        notify: Option<&UnboundedSender<String>>,
    ) -> Option<Reply> {
        self.handle_incoming(peer, jsonrpc::parse(bytes), transport, request_id, notify)
            .await
    }

    /// Answer one parsed frame.
    pub async fn handle_incoming(
        &self,
        peer: &Arc<Peer>,
        incoming: Incoming,
        transport: Transport<'_>,
        request_id: &str,
        notify: Option<&UnboundedSender<String>>,
    ) -> Option<Reply> {
        match incoming {
            Incoming::Single(message) => {
                self.message(peer, message, transport, request_id, notify)
                    .await
            }
            Incoming::Batch(messages) => {
                self.batch(peer, messages, transport, request_id, notify)
                    .await
            }
        }
    }

    async fn batch(
        &self,
        peer: &Arc<Peer>,
        messages: Vec<Message>,
        transport: Transport<'_>,
        request_id: &str,
        notify: Option<&UnboundedSender<String>>,
    ) -> Option<Reply> {
        let revision = match handshake_revision(peer, transport) {
            Ok(revision) => revision,
            Err(frame) => return Some(Reply::error(frame, 400)),
        };
        let refuse = |message: &str| {
            Some(Reply::error(
                ErrorFrame::new(None, rpc_code::INVALID_REQUEST, message),
                400,
            ))
        };
        if !revision.allows_batches() {
            return refuse("Invalid Request: batches are not accepted in this protocol revision");
        }
        if messages.is_empty() {
            return refuse("Invalid Request: an empty batch");
        }
        if messages.len() > self.state.limits.max_batch_len {
            return refuse(&format!(
                "Invalid Request: a batch may hold at most {} messages",
                self.state.limits.max_batch_len
            ));
        }
        if messages
            .iter()
            .any(|m| matches!(m, Message::Request(r) if r.method == "initialize"))
        {
            return refuse("Invalid Request: initialize cannot be part of a batch");
        }
        let replies = join_all(
            messages
                .into_iter()
                .map(|m| self.message(peer, m, transport, request_id, notify)),
        )
        .await;
        let bodies: Vec<String> = replies.into_iter().flatten().map(|r| r.body).collect();
        (!bodies.is_empty()).then(|| Reply {
            body: format!("[{}]", bodies.join(",")),
            status: 200,
            initialized: false,
        })
    }

    async fn message(
        &self,
        peer: &Arc<Peer>,
        message: Message,
        transport: Transport<'_>,
        request_id: &str,
        notify: Option<&UnboundedSender<String>>,
    ) -> Option<Reply> {
        match message {
            Message::Request(request) => {
                self.request(peer, request, transport, request_id, notify)
                    .await
            }
            Message::Notification { method, params } => {
                if method.starts_with("notifications/")
                    && methods::METHODS.contains(&method.as_str())
                {
                    let call = Call {
                        revision: peer.negotiated().unwrap_or(Revision::ASSUMED),
                        peer: Arc::clone(peer),
                        request_id: request_id.to_owned(),
                        notify: None,
                        result: Default::default(),
                        duplicate_key: None,
                    };
                    let _ = self.dispatch(&method, Some(&params), call).await;
                }
                None
            }
            Message::Response => None,
            Message::Invalid(frame) => {
                let status = if transport.headers().is_some() {
                    400
                } else {
                    200
                };
                Some(Reply::error(frame, status))
            }
        }
    }

    async fn request(
        &self,
        peer: &Arc<Peer>,
        request: Request,
        transport: Transport<'_>,
        request_id: &str,
        notify: Option<&UnboundedSender<String>>,
    ) -> Option<Reply> {
        let started = Instant::now();
        let stateless = is_stateless(&request, transport);
        let revision = if stateless {
            stateless_revision(&request, transport)
        } else {
            handshake_revision(peer, transport).map_err(|mut frame| {
                frame.id = Some(request.id.clone());
                Reply::error(frame, 400)
            })
        };
        let revision = match revision {
            Ok(revision) => revision,
            Err(reply) => return Some(reply),
        };
        let id = request.id;
        let method = request.method.as_str();
        let known = methods::METHODS.contains(&method)
            && !method.starts_with("notifications/")
            && !(stateless && methods::HANDSHAKE_ONLY.contains(&method));
        let duplicate_outside_a_call = request
            .duplicate_key
            .as_ref()
            .filter(|_| method != "tools/call");
        let outcome = if let (true, Some(message)) = (known, duplicate_outside_a_call) {
            Err(ErrorFrame::new(
                None,
                rpc_code::INVALID_PARAMS,
                format!("Invalid params: {message}"),
            ))
        } else if known {
            let call = Call {
                revision,
                peer: Arc::clone(peer),
                request_id: request_id.to_owned(),
                notify: notify.cloned(),
                result: Default::default(),
                duplicate_key: request.duplicate_key.clone(),
            };
            let key = jsonrpc::id_key(&id);
            let (future, handle) = abortable(self.dispatch(method, request.params.as_ref(), call));
            let in_flight = &self.state.mcp.in_flight;
            in_flight.insert(peer.id(), key.clone(), handle);
            let outcome = future.await;
            in_flight.remove(peer.id(), &key);
            match outcome {
                Ok(outcome) => outcome,
                Err(_aborted) => {
                    access_log(
                        transport,
                        request_id,
                        method,
                        &request.params,
                        "cancelled",
                        started,
                    );
                    return None;
                }
            }
        } else {
            Err(ErrorFrame::new(
                None,
                rpc_code::METHOD_NOT_FOUND,
                "Method not found",
            ))
        };
        let (reply, outcome) = match outcome {
            Ok(result) => {
                let outcome = if super::tools::is_error_result(&result) {
                    "tool_error"
                } else {
                    "ok"
                };
                let reply = Reply {
                    body: jsonrpc::success(&id, &result),
                    status: 200,
                    initialized: method == "initialize",
                };
                (reply, outcome)
            }
            Err(mut frame) => {
                frame.id = Some(id);
                let status = error_status(frame.code, stateless);
                (Reply::error(frame, status), "rpc_error")
            }
        };
        access_log(
            transport,
            request_id,
            method,
            &request.params,
            outcome,
            started,
        );
        Some(reply)
    }

    /// Call `method` in the table with `params` and `call` in its extensions.
    ///
    /// The result comes back as the JSON text the method table serialized, so it is spliced
    /// into the reply as it is rather than parsed and serialized again.
    async fn dispatch(
        &self,
        method: &str,
        params: Option<&Map<String, Value>>,
        call: Call,
    ) -> Result<String, ErrorFrame> {
        let not_found = || ErrorFrame::new(None, rpc_code::METHOD_NOT_FOUND, "Method not found");
        let Some(MethodCallback::Async(callback)) = self.methods.method(method) else {
            return Err(not_found());
        };
        let raw = match params {
            Some(params) => serde_json::to_string(params).unwrap_or_else(|_| "{}".to_owned()),
            None => "{}".to_owned(),
        };
        let slot = call.result.clone();
        let mut extensions = Extensions::new();
        extensions.insert(call);
        let response = callback(
            Id::Number(0),
            Params::new(Some(&raw)).into_owned(),
            ConnectionId(0),
            usize::MAX,
            extensions,
        )
        .await;
        if let Some(result) = slot.take() {
            return Ok(result);
        }
        let json = response.as_json().get();
        // jsonrpsee writes a success as exactly this prefix, the result, and `}`.
        if let Some(result) = json
            .strip_prefix(r#"{"jsonrpc":"2.0","id":0,"result":"#)
            .and_then(|rest| rest.strip_suffix('}'))
        {
            return Ok(result.to_owned());
        }
        let internal = || ErrorFrame::new(None, rpc_code::INTERNAL_ERROR, "Internal error");
        let frame: TableFrame<'_> = serde_json::from_str(json).map_err(|_| internal())?;
        if let Some(result) = frame.result {
            return Ok(result.get().to_owned());
        }
        let error = frame.error.ok_or_else(internal)?;
        let code = error
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(rpc_code::INTERNAL_ERROR);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("Internal error");
        let mut frame = ErrorFrame::new(None, code, message);
        frame.data = error.get("data").cloned();
        Err(frame)
    }
}

/// A response frame of the method table, with its result left as raw JSON.
#[derive(serde::Deserialize)]
struct TableFrame<'a> {
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<Value>,
}

/// Whether `request` belongs to the stateless era: it names its version in `_meta`, is a
/// `server/discover`, or arrives over HTTP declaring 2026-07-28.
pub fn is_stateless(request: &Request, transport: Transport<'_>) -> bool {
    request.method == "server/discover"
        || protocol::meta_version(request.params.as_ref()) != MetaVersion::Absent
        || transport
            .headers()
            .and_then(|h| h.protocol_version.as_deref())
            .and_then(|v| Revision::parse(v.trim()))
            .is_some_and(Revision::is_stateless)
}

/// The revision of a handshake-era request: the HTTP header's (which must name a supported
/// version), else the negotiated one, else the transport spec's assumption.
fn handshake_revision(peer: &Peer, transport: Transport<'_>) -> Result<Revision, ErrorFrame> {
    let header = transport
        .headers()
        .and_then(|h| h.protocol_version.as_deref());
    match header {
        Some(header) => Revision::parse(header.trim()).ok_or_else(|| {
            ErrorFrame::new(
                None,
                rpc_code::INVALID_REQUEST,
                "Bad Request: unsupported MCP-Protocol-Version",
            )
            .with_data(json!({ "supported": Revision::supported() }))
        }),
        None => Ok(peer.negotiated().unwrap_or(Revision::ASSUMED)),
    }
}

/// The revision of a stateless-era request, after checking its `_meta` and (on HTTP) that its
/// headers agree with its body.
fn stateless_revision(request: &Request, transport: Transport<'_>) -> Result<Revision, Reply> {
    let fail = |code: i32, message: &str| {
        Reply::error(ErrorFrame::new(Some(&request.id), code, message), 400)
    };
    let params = request.params.as_ref();
    let version = protocol::check_meta(params).map_err(|message| {
        fail(
            rpc_code::INVALID_PARAMS,
            &format!("Invalid params: {message}"),
        )
    })?;
    if let Some(headers) = transport.headers() {
        let mismatch = |message: &str| fail(code::HEADER_MISMATCH, message);
        if headers.protocol_version.as_deref().map(str::trim) != Some(version.as_str()) {
            return Err(mismatch(
                "Header mismatch: MCP-Protocol-Version must equal params._meta protocolVersion",
            ));
        }
        if headers.method.as_deref().map(decode_header) != Some(request.method.clone()) {
            return Err(mismatch(
                "Header mismatch: Mcp-Method must equal the request method",
            ));
        }
        let name = params.and_then(|p| match request.method.as_str() {
            "tools/call" | "prompts/get" => p.get("name"),
            "resources/read" => p.get("uri"),
            _ => None,
        });
        if let Some(Value::String(name)) = name
            && headers.name.as_deref().map(decode_header).as_ref() != Some(name)
        {
            return Err(mismatch("Header mismatch: Mcp-Name must equal params.name"));
        }
    }
    match Revision::parse(&version) {
        Some(revision) if revision.is_stateless() => Ok(revision),
        _ => Err(Reply::error(
            ErrorFrame::new(
                Some(&request.id),
                code::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
            )
            .with_data(json!({ "supported": Revision::supported(), "requested": version })),
            400,
        )),
    }
}

/// A header value as the sender meant it: trimmed, and `=?base64?…?=` decoded (how non-ASCII
/// names travel). A sentinel that does not decode stays as it is, so it cannot match.
fn decode_header(value: &str) -> String {
    let value = value.trim();
    value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
        .and_then(|b64| STANDARD.decode(b64).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| value.to_owned())
}

/// HTTP status of an error answer. The stateless era fixes them (404 for an unknown method, 400
/// for a refused request); the handshake era answers protocol errors with 200 and reserves 400
/// for frames that are not requests at all.
fn error_status(code: i32, stateless: bool) -> u16 {
    match code {
        rpc_code::PARSE_ERROR | rpc_code::INVALID_REQUEST => 400,
        rpc_code::METHOD_NOT_FOUND if stateless => 404,
        rpc_code::INTERNAL_ERROR if stateless => 500,
        _ if stateless => 400,
        _ => 200,
    }
}

fn access_log(
    transport: Transport<'_>,
    request_id: &str,
    method: &str,
    params: &Option<Map<String, Value>>,
    outcome: &str,
    started: Instant,
) {
    let tool = (method == "tools/call")
        .then(|| params.as_ref()?.get("name")?.as_str())
        .flatten()
        .unwrap_or("-");
    tracing::info!(
        target: "groundkit::access",
        request_id,
        transport = transport.name(),
        method,
        tool,
        outcome,
        latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request"
    );
}
