//! The method table: one jsonrpsee [`Methods`] table holding every MCP method this server
//! answers.
//!
//! The table sees a [`Call`] (named params, revision, peer, request id, progress sink) in the
//! per-call [`Extensions`] (the [`bridge`](super::bridge) puts it there); the framing layer in
//! [`super::server`] decides everything about ids, eras and transports before a method runs.
//! Methods return `Result<Value, ErrorObjectOwned>` (`resources/read` too: a failed read is a
//! JSON-RPC error, rendered by [`resources::failure`]), except `tools/call`, whose answer is
//! written whole by [`tools::success`] or [`tools::failure`] and left in [`Call::result`].

use std::sync::Arc;

use futures_util::FutureExt;
use groundkit_core::progress::{self, ProgressSink};
use groundkit_core::{Cancellation, Error, RequestContext, Transport, digest};
use jsonrpsee::RpcModule;
use jsonrpsee::core::server::{AsyncMethod, Extensions, MethodCallback, MethodResponse, Methods};
use jsonrpsee::types::ErrorObjectOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::progress::Notifications;
use super::protocol::{self, Revision};
use super::session::Peer;
use super::tools::{self, ToolReply};
use super::{prompts, resources, subscribe};
use crate::edge::problem::{self, Problem, rpc_code};
use crate::invoke::{invoke, read};
use crate::state::AppState;

/// Every method name in the table, for the framing layer's era rules.
pub const METHODS: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "notifications/cancelled",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "server/discover",
    "subscriptions/listen",
];

/// Methods of the handshake era only (answered -32601 to a stateless-era request): a stateless
/// request has no conversation a subscription could belong to.
pub const HANDSHAKE_ONLY: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "ping",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Methods of the stateless era only (answered -32601 in a conversation of the handshake era,
/// which follows resources with `resources/subscribe`).
pub const STATELESS_ONLY: &[&str] = &["subscriptions/listen"];

/// What one call knows about where it came from. The method table gets it behind an `Arc`
/// (it clones a method's extensions for the response), and the dispatcher keeps one too.
pub struct Call {
    /// The revision the request is served under.
    pub revision: Revision,
    /// The conversation it belongs to.
    pub peer: Arc<Peer>,
    /// Request id for logs and error bodies.
    pub request_id: String,
    /// Where progress notifications go, when the transport can stream them.
    pub notify: Option<UnboundedSender<String>>,
    /// The id of the request being answered, raw; `None` for a notification.
    pub id: Option<Box<RawValue>>,
    /// The request's named params, parsed once by the framing layer and taken by the method.
    /// (jsonrpsee's own `Params` is raw JSON text: passing them that way would serialize the
    /// parsed params again only for the method to parse them a second time.)
    pub params: Slot<Map<String, Value>>,
    /// A `tools/call` answer, already written as the whole response frame. A tool's output can
    /// be large, and handing it back through the table's own response would serialize it again
    /// and re-validate it; the method leaves the frame here and the dispatcher sends it as it is.
    pub result: Slot<ToolReply>,
    /// Set when the request's params name a key twice: the call is refused with this message.
    pub duplicate_key: Option<String>,
    /// The transport it arrived on.
    pub transport: Transport,
    /// Fired when its connection closes (HTTP).
    pub closed: Option<Cancellation>,
}

impl Call {
    /// A call of `peer` under `revision` with `params`, with no progress sink and nothing
    /// refused yet.
    pub fn new(
        peer: &Arc<Peer>,
        transport: Transport,
        revision: Revision,
        request_id: &str,
        params: Option<Map<String, Value>>,
    ) -> Self {
        Self {
            transport,
            closed: None,
            revision,
            peer: Arc::clone(peer),
            request_id: request_id.to_owned(),
            id: None,
            notify: None,
            params: Slot(std::sync::Mutex::new(params)),
            result: Slot::default(),
            duplicate_key: None,
        }
    }

    /// What the called function sees of this call.
    pub fn request_context(&self) -> RequestContext {
        let call = RequestContext::new(self.request_id.as_str(), self.transport)
            .with_protocol_version(self.revision.as_str());
        match &self.closed {
            Some(closed) => call.cancelled_with(closed),
            None => call,
        }
    }

    /// The params, taken (empty when omitted).
    fn params(&self) -> Map<String, Value> {
        self.params.take().unwrap_or_default()
    }
}

/// What one side of a [`Call`] hands the other: the params to the method, the written answer
/// back to the dispatcher.
pub struct Slot<T>(std::sync::Mutex<Option<T>>);

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self(std::sync::Mutex::new(None))
    }
}

impl<T> Slot<T> {
    fn put(&self, value: T) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(value);
        }
    }

    /// What the slot holds, taken.
    pub fn take(&self) -> Option<T> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

pub(super) type RpcResult = Result<Value, ErrorObjectOwned>;

pub(super) fn rpc_error(code: i32, message: impl Into<String>) -> ErrorObjectOwned {
    ErrorObjectOwned::owned(code, message.into(), None::<()>)
}

pub(super) fn invalid_params(message: impl Into<String>) -> ErrorObjectOwned {
    rpc_error(rpc_code::INVALID_PARAMS, message)
}

/// The call a method runs for.
fn call_of(ext: &Extensions) -> Result<Arc<Call>, ErrorObjectOwned> {
    ext.get::<Arc<Call>>()
        .cloned()
        .ok_or_else(|| rpc_error(rpc_code::INTERNAL_ERROR, "Internal error"))
}

/// Build the table for `state`.
pub fn table<Ctx: Send + Sync + 'static>(state: Arc<AppState<Ctx>>) -> Methods {
    let mut module = RpcModule::from_arc(Arc::clone(&state));
    let mut registered = vec![
        module
            .register_async_method("initialize", |_, state, ext| async move {
                let call = call_of(&ext)?;
                initialize(&state, &call.params(), &call)
            })
            .map(|_| ()),
        module
            .register_async_method("notifications/initialized", |_, _, _| async {
                RpcResult::Ok(Value::Null)
            })
            .map(|_| ()),
        module
            .register_async_method("notifications/cancelled", |_, state, ext| async move {
                let call = call_of(&ext)?;
                if let Some(id) = call.params().get("requestId") {
                    state.mcp.in_flight.cancel(call.peer.id(), &id.to_string());
                }
                RpcResult::Ok(Value::Null)
            })
            .map(|_| ()),
        module
            .register_async_method("ping", |_, _, _| async { RpcResult::Ok(json!({})) })
            .map(|_| ()),
        module
            .register_async_method("tools/list", |_, state, ext| async move {
                let call = call_of(&ext)?;
                tools_list(&state, &call.params(), &call)
            })
            .map(|_| ()),
        module
            .register_async_method("resources/list", |_, state, ext| async move {
                let call = call_of(&ext)?;
                resources_list(&state, &call.params(), &call, true)
            })
            .map(|_| ()),
        module
            .register_async_method("resources/templates/list", |_, state, ext| async move {
                let call = call_of(&ext)?;
                resources_list(&state, &call.params(), &call, false)
            })
            .map(|_| ()),
        module
            .register_async_method("resources/read", |_, state, ext| async move {
                let call = call_of(&ext)?;
                resources_read(&state, &call.params(), &call).await
            })
            .map(|_| ()),
        module
            .register_async_method("resources/subscribe", |_, state, ext| async move {
                let call = call_of(&ext)?;
                subscribe::subscribe(&state, &call.params(), &call, true)
            })
            .map(|_| ()),
        module
            .register_async_method("resources/unsubscribe", |_, state, ext| async move {
                let call = call_of(&ext)?;
                subscribe::subscribe(&state, &call.params(), &call, false)
            })
            .map(|_| ()),
        module
            .register_async_method("subscriptions/listen", |_, state, ext| async move {
                let call = call_of(&ext)?;
                subscribe::listen(&state, &call.params(), &call).await
            })
            .map(|_| ()),
        module
            .register_async_method("prompts/list", |_, state, ext| async move {
                let call = call_of(&ext)?;
                prompts_list(&state, &call.params(), &call)
            })
            .map(|_| ()),
        module
            .register_async_method("prompts/get", |_, state, ext| async move {
                let call = call_of(&ext)?;
                if state.registry.prompts().is_empty() {
                    return Err(rpc_error(rpc_code::METHOD_NOT_FOUND, "Method not found"));
                }
                prompts::get(&state, &call.params(), &call).await
            })
            .map(|_| ()),
        module
            .register_async_method("completion/complete", |_, state, ext| async move {
                let call = call_of(&ext)?;
                if !state.registry.has_completers() {
                    return Err(rpc_error(rpc_code::METHOD_NOT_FOUND, "Method not found"));
                }
                prompts::complete(&state, &call.params(), &call).await
            })
            .map(|_| ()),
        module
            .register_async_method("server/discover", |_, state, _| async move {
                RpcResult::Ok(discover(&state))
            })
            .map(|_| ()),
    ];
    let mut methods: Methods = module.into();
    // tools/call answers through the call's result slot (see `Call::result`), so it is
    // registered as a bare callback: through `register_async_method`, the table would also
    // write a response frame of its own for every call, only for it to be dropped.
    let call_tool: AsyncMethod<'static> = Arc::new(move |id, _, _, _, ext| {
        let state = Arc::clone(&state);
        async move {
            let answered = match call_of(&ext) {
                Ok(call) => tools_call(&state, call.params(), &call).await,
                Err(error) => Err(error),
            };
            match answered {
                Ok(()) => MethodResponse::notification(),
                Err(error) => MethodResponse::error(id, error),
            }
        }
        .boxed()
    });
    registered.push(
        methods
            .verify_and_insert("tools/call", MethodCallback::Async(call_tool))
            .map(|_| ()),
    );
    for result in registered {
        if let Err(err) = result {
            // The names above are distinct literals; a clash is a programming error.
            unreachable!("MCP method table: {err}");
        }
    }
    methods
}

/// What this server can do, as advertised: tools; resources, prompts and completions when the
/// registry has any (a method of one it has not answers -32601); resource subscriptions
/// (`resources/subscribe` in the handshake era, `subscriptions/listen` in the stateless one); no
/// list changes (the registry is fixed), no logging.
fn capabilities<Ctx>(state: &AppState<Ctx>) -> Value {
    let mut capabilities = json!({ "tools": { "listChanged": false } });
    if !state.registry.resources().is_empty() {
        capabilities["resources"] = json!({ "listChanged": false, "subscribe": true });
    }
    if !state.registry.prompts().is_empty() {
        capabilities["prompts"] = json!({ "listChanged": false });
    }
    if state.registry.has_completers() {
        capabilities["completions"] = json!({});
    }
    capabilities
}

fn server_info<Ctx>(state: &AppState<Ctx>) -> Value {
    json!({ "name": state.info.title, "version": state.info.version })
}

/// Negotiate the revision of a conversation, once: a second `initialize` on the same connection
/// (stdio) or session (HTTP) is refused, since re-negotiating would silently change what every
/// later answer looks like.
fn initialize<Ctx>(state: &AppState<Ctx>, params: &Map<String, Value>, call: &Call) -> RpcResult {
    if call.peer.negotiated().is_some() {
        return Err(rpc_error(
            rpc_code::INVALID_REQUEST,
            "Invalid Request: this connection is already initialized",
        ));
    }
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let revision = Revision::negotiate(requested);
    call.peer.set_negotiated(revision);
    Ok(json!({
        "protocolVersion": revision.as_str(),
        "capabilities": capabilities(state),
        "serverInfo": server_info(state),
    }))
}

fn discover<Ctx>(state: &AppState<Ctx>) -> Value {
    json!({
        "supportedVersions": Revision::supported(),
        "capabilities": capabilities(state),
        "ttlMs": tools::LIST_TTL_MS,
        "cacheScope": "public",
        "resultType": "complete",
        "_meta": {
            protocol::META_SERVER_INFO: server_info(state),
            digest::DIGEST_META_KEY: state.digest,
        },
    })
}

fn tools_list<Ctx>(state: &AppState<Ctx>, params: &Map<String, Value>, call: &Call) -> RpcResult {
    let (page, next) = page(state.registry.tools(), |s| s.name(), params)?;
    let tools = page
        .iter()
        .map(|spec| tools::definition(spec, call.revision));
    Ok(list("tools", tools, next, call.revision, &state.digest))
}

/// `prompts/list`; -32601 when the registry has no prompts.
fn prompts_list<Ctx>(state: &AppState<Ctx>, params: &Map<String, Value>, call: &Call) -> RpcResult {
    if state.registry.prompts().is_empty() {
        return Err(rpc_error(rpc_code::METHOD_NOT_FOUND, "Method not found"));
    }
    let (page, next) = page(state.registry.prompts(), |s| s.name(), params)?;
    let items = page.iter().map(|spec| prompts::entry(spec, call.revision));
    Ok(list("prompts", items, next, call.revision, &state.digest))
}

/// `resources/list` (`statics`) or `resources/templates/list`; -32601 when the registry has no
/// resources, as the capability is then not advertised.
fn resources_list<Ctx>(
    state: &AppState<Ctx>,
    params: &Map<String, Value>,
    call: &Call,
    statics: bool,
) -> RpcResult {
    if state.registry.resources().is_empty() {
        return Err(rpc_error(rpc_code::METHOD_NOT_FOUND, "Method not found"));
    }
    let specs: Vec<_> = state
        .registry
        .resources()
        .iter()
        .filter(|spec| spec.uri().is_static() == statics)
        .collect();
    let (page, next) = page(&specs, |s| s.name(), params)?;
    let revision = call.revision;
    Ok(if statics {
        let items = page.iter().map(|s| resources::resource(s, revision));
        list("resources", items, next, revision, &state.digest)
    } else {
        let items = page.iter().map(|s| resources::template(s, revision));
        list("resourceTemplates", items, next, revision, &state.digest)
    })
}

/// One page of `items` after the params' `cursor`.
fn page<'a, T>(
    items: &'a [T],
    name: impl Fn(&T) -> &str,
    params: &Map<String, Value>,
) -> Result<(&'a [T], Option<String>), ErrorObjectOwned> {
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor.as_str()),
        Some(_) => return Err(invalid_params("Invalid params: cursor must be a string")),
    };
    tools::page(items, name, cursor, tools::PAGE_SIZE)
        .map_err(|_| invalid_params("Invalid params: unknown cursor"))
}

/// A list result: the items under `key`, the next cursor, and the stateless era's cache hints.
/// A list result: the page, the next cursor, the stateless era's cache hints, and the registry's
/// `digest` in `_meta`.
fn list(
    key: &str,
    items: impl Iterator<Item = Value>,
    next: Option<String>,
    revision: Revision,
    digest: &str,
) -> Value {
    let mut result = json!({
        key: items.collect::<Vec<_>>(),
        "_meta": { digest::DIGEST_META_KEY: digest },
    });
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    if revision.is_stateless() {
        result["ttlMs"] = json!(tools::LIST_TTL_MS);
        result["cacheScope"] = json!("public");
        result["resultType"] = json!("complete");
    }
    result
}

async fn resources_read<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    params: &Map<String, Value>,
    call: &Call,
) -> RpcResult {
    if state.registry.resources().is_empty() {
        return Err(rpc_error(rpc_code::METHOD_NOT_FOUND, "Method not found"));
    }
    let Some(Value::String(uri)) = params.get("uri") else {
        return Err(invalid_params("Invalid params: uri must be a string"));
    };
    let outcome = match state.registry.resource_for(uri) {
        Some((spec, arguments)) => read(
            state,
            spec,
            Value::Object(arguments),
            call.request_context(),
        )
        .await
        .map(|content| resources::contents(uri, spec, &content, call.revision)),
        None => Err(Error::NotFound {
            resource: "resource",
            id: uri.clone(),
        }),
    };
    outcome.map_err(|error| {
        let problem = Problem::from(error);
        problem::log(&problem, &call.request_id);
        resources::failure(&problem, Some(uri), &call.request_id, call.revision)
    })
}

async fn tools_call<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    mut params: Map<String, Value>,
    call: &Call,
) -> Result<(), ErrorObjectOwned> {
    let name = match params.get("name") {
        Some(Value::String(name)) => name.clone(),
        _ => return Err(invalid_params("Invalid params: name must be a string")),
    };
    let Some(spec) = state.registry.get(&name) else {
        return Err(invalid_params(format!(
            "Invalid params: unknown tool '{name}'"
        )));
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(arguments)) => Value::Object(arguments),
        Some(_) => {
            return Err(invalid_params(
                "Invalid params: arguments must be an object",
            ));
        }
    };
    let token = params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned();
    let sink = token
        .zip(call.notify.clone())
        .map(|(token, out)| Arc::new(Notifications::new(token, out)) as Arc<dyn ProgressSink>);
    // The arguments a tool's result links are found in, kept only where it has links.
    let linker = state
        .links
        .get(spec.name())
        .map(|&links| (links, arguments.clone()));
    let outcome = match &call.duplicate_key {
        None => {
            let request = call.request_context();
            progress::scope(sink, invoke(state, spec, arguments, request)).await
        }
        Some(message) => Err(Error::InvalidRequest {
            field: None,
            message: message.clone(),
        }),
    };
    let Some(id) = call.id.as_deref() else {
        // tools/call is a request: the dispatcher always gives its id.
        return Err(rpc_error(rpc_code::INTERNAL_ERROR, "Internal error"));
    };
    let result = match outcome {
        Ok(output) => {
            let links =
                linker.map_or_else(Vec::new, |(links, arguments)| links(&arguments, &output));
            tools::success(id, &output, &links, call.revision)
        }
        Err(error) => {
            let problem = Problem::from(error);
            problem::log(&problem, &call.request_id);
            match tools::failure(id, &problem, &call.request_id, call.revision) {
                tools::Failure::Result(result) => result,
                tools::Failure::Protocol(code, message, data) => {
                    return Err(ErrorObjectOwned::owned(code, message, Some(data)));
                }
            }
        }
    };
    call.result.put(result);
    Ok(())
}
