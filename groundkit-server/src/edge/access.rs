//! Per-request bookkeeping around every HTTP route, and the one access-log line of a request.
//!
//! [`request_context`] assigns the request id, refuses query strings and writes exactly one INFO
//! line per request; a request refused before the application sees it gets both from
//! [`refuse_unrouted`]. What it cannot see from the outside, the transport that served the request
//! [`note`]s in the request's extensions: its own name ([`Transport`], tagged by the transport on
//! its resources, so nothing here compares paths), the tool, the JSON-RPC method and outcome,
//! the result count. A response that streams past the handler (an MCP answer with progress)
//! [`defer`]s the line until the call is done, so it still carries the outcome and the whole
//! latency. MCP over stdio has no HTTP request and writes its line with [`write()`].
//!
//! The line carries request id, transport, method, route pattern, tool, status, JSON-RPC method
//! and outcome, latency and result count. It never carries a body or a query (free text travels
//! in bodies precisely so it stays out of logs).

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, HttpResponse};

use super::id::{REQUEST_ID_HEADER, RequestId};
use super::problem::{self, Refusal};

pub use groundkit_core::Transport;

/// What the transport that served a request says about it.
#[derive(Debug, Clone, Default)]
pub struct Note {
    /// The transport (none: refused before any transport saw it).
    pub transport: Option<Transport>,
    /// The tool called.
    pub tool: Option<Cow<'static, str>>,
    /// The JSON-RPC method (MCP).
    pub rpc_method: Option<String>,
    /// How the JSON-RPC request ended (MCP): `ok`, `tool_error`, `rpc_error`, ….
    pub outcome: Option<&'static str>,
    /// How many results the response carried.
    pub results: Option<usize>,
}

/// What the middleware knows once the response exists.
struct Head {
    request_id: String,
    method: String,
    route: String,
    status: u16,
    started: Instant,
}

#[derive(Default)]
struct State {
    note: Note,
    deferred: bool,
    head: Option<Head>,
}

/// The access record of one request, shared by the middleware and the transport through the
/// request's extensions.
#[derive(Clone, Default)]
struct Access(Arc<Mutex<State>>);

impl Access {
    /// The record of `req`; a detached one when no [`request_context`] runs around it.
    fn of(req: &HttpRequest) -> Self {
        req.extensions()
            .get::<Access>()
            .cloned()
            .unwrap_or_default()
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut state) = self.0.lock() {
            f(&mut state);
        }
    }

    /// The response exists: write the line now, or keep its head for [`Later`] to write.
    fn respond(&self, head: Head) {
        self.update(|state| {
            if state.deferred {
                state.head = Some(head);
            } else {
                write_head(&head, &state.note);
            }
        });
    }
}

/// Add to what the access line says about `req`.
pub fn note(req: &HttpRequest, f: impl FnOnce(&mut Note)) {
    Access::of(req).update(|state| f(&mut state.note));
}

/// Tag `req` as served by `transport`.
pub fn tag(req: &HttpRequest, transport: Transport) {
    note(req, |note| note.transport = Some(transport));
}

/// Middleware (for [`from_fn`](actix_web::middleware::from_fn)) a transport wraps its own
/// resources in: every request they serve is tagged `transport`, whatever answers it.
pub fn tagged<B: 'static>(
    transport: Transport,
) -> impl Fn(ServiceRequest, Next<B>) -> <Next<B> as Service<ServiceRequest>>::Future + 'static {
    move |req, next| {
        tag(req.request(), transport);
        next.call(req)
    }
}

/// Hold the access line of `req` until the returned [`Later`] is dropped: for a response whose
/// call finishes after the handler returns.
pub fn defer(req: &HttpRequest) -> Later {
    let access = Access::of(req);
    access.update(|state| state.deferred = true);
    Later(access)
}

/// A deferred access line; written, with everything noted by then, when this is dropped.
pub struct Later(Access);

impl Later {
    /// Add to what the line says.
    pub fn note(&self, f: impl FnOnce(&mut Note)) {
        self.0.update(|state| f(&mut state.note));
    }
}

impl Drop for Later {
    fn drop(&mut self) {
        self.0.update(|state| {
            state.deferred = false;
            if let Some(head) = state.head.take() {
                write_head(&head, &state.note);
            }
        });
    }
}

/// Assign the request id, refuse query strings, add `X-Request-ID`, write the access line.
pub async fn request_context(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let started = Instant::now();
    let id = RequestId::generate();
    let access = Access::default();
    req.extensions_mut().insert(id.clone());
    req.extensions_mut().insert(access.clone());
    let mut res = if !req.query_string().is_empty() {
        let response = problem::response(Refusal::QueryString, &id.0);
        req.into_response(response)
    } else {
        next.call(req).await?.map_into_boxed_body()
    };
    set_request_id(res.headers_mut(), &id);
    let req = res.request();
    access.respond(Head {
        request_id: id.0,
        method: req.method().as_str().to_owned(),
        route: req.match_pattern().unwrap_or_else(|| "-".to_owned()),
        status: res.status().as_u16(),
        started,
    });
    Ok(res)
}

/// The answer to a request refused before the application sees it (by the expect handler, which
/// runs ahead of routing and of [`request_context`]): the problem with a fresh request id in
/// `X-Request-ID`, and the request's one access line (route `-`, no transport).
pub fn refuse_unrouted(method: &str, refusal: Refusal) -> HttpResponse {
    let started = Instant::now();
    let id = RequestId::generate();
    let mut res = problem::response(refusal, &id.0);
    set_request_id(res.headers_mut(), &id);
    let http = (method, "-", res.status().as_u16());
    write(&id.0, Some(http), &Note::default(), started);
    res
}

fn set_request_id(headers: &mut HeaderMap, id: &RequestId) {
    if let Ok(value) = HeaderValue::from_str(&id.0) {
        headers.insert(HeaderName::from_static(REQUEST_ID_HEADER), value);
    }
}

fn write_head(head: &Head, note: &Note) {
    let http = (head.method.as_str(), head.route.as_str(), head.status);
    write(&head.request_id, Some(http), note, head.started);
}

/// Write the one access line of a request: `http` is its (method, route pattern, status) when
/// it came over HTTP.
pub fn write(request_id: &str, http: Option<(&str, &str, u16)>, note: &Note, started: Instant) {
    tracing::info!(
        target: "groundkit::access",
        request_id,
        transport = note.transport.map_or("-", Transport::as_str),
        method = http.map(|(method, _, _)| display(method)),
        route = http.map(|(_, route, _)| route),
        tool = note.tool.as_deref().unwrap_or("-"),
        status = http.map(|(_, _, status)| status),
        rpc_method = note.rpc_method.as_deref(),
        outcome = note.outcome,
        latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        results = note.results,
        "request"
    );
}
