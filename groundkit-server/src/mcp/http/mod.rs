//! Streamable HTTP at `/mcp`, in the same actix app and port as REST.
//!
//! `POST` carries one JSON-RPC message (or, in 2025-03-26, a batch). Checks run cheapest first
//! and before anything is allocated for the request: Host and Origin (mounted by [`configure`],
//! the resource wraps itself in `host_guard`, so it stays safe in an app without one; the
//! service's own app guards every route already and mounts it unwrapped), `Accept` (406 unless
//! it allows `application/json` or `text/event-stream`), `Content-Type` (415 unless JSON), the
//! declared length (413), then the body, read up to
//! [`Limits::max_body_bytes`](crate::Limits::max_body_bytes) and no further.
//!
//! Answers: a response frame as `application/json`, or as `text/event-stream` when the client
//! accepts only that, or when a `tools/call` asks for progress (`_meta.progressToken`) and the
//! client accepts a stream (progress events, then the response, then the stream ends), or for a
//! stateless `subscriptions/listen` (its acknowledgement and updates, open until the client
//! closes it; a comment every half of the write deadline while nothing comes); 202 with
//! an empty body for notifications and responses. The status comes from the framing's
//! `Outcome` (`headers::status`).
//!
//! Sessions exist only in the handshake era: a successful `initialize` opens one and its id
//! comes back in `Mcp-Session-Id`; every later handshake-era request must carry it (400 when
//! missing, 404 when unknown, expired or deleted); `DELETE` ends it. Stateless-era requests
//! (2026-07-28) ignore sessions entirely, and a stateless-era `DELETE` is 405.
//!
//! `GET` with a session opens the session's stream of what the server pushes: the
//! `notifications/resources/updated` of the resources it follows (`subscriptions`). It starts
//! with a priming event (an event id, `retry`, no data), carries each notification as one
//! event, and a comment every half of the write deadline
//! ([`Limits::write_deadline`](crate::Limits::write_deadline)) so the stream outlives the
//! deadline and a vanished client is noticed; it ends when the
//! client closes it, when a newer stream of the session replaces it, or when the session ends.
//! Without a session, or in the stateless era, `GET` is 405.
//!
//! This module imports from `edge`, never from REST.

pub(crate) mod headers;

use crate::edge::deadline::Closed;
use groundkit_core::Cancellation;
use std::sync::Arc;

use actix_web::http::header::{CACHE_CONTROL, HeaderName};
use actix_web::middleware::{Condition, from_fn};
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use futures_util::StreamExt;
use groundkit_core::Error;
use tokio::sync::mpsc;

use self::headers::{Headers, accepts, header, status};
use super::answer::Outcome;
use super::jsonrpc::{self, Incoming, Message};
use super::protocol::{self, HeaderVersion, Revision};
use super::server::{Exchange, McpServer, Transport};
use super::session::{Peer, SessionError};
use crate::edge::access::{self, Later};
use crate::edge::body;
use crate::edge::id::RequestId;
use crate::edge::problem::{self, Problem, Refusal};
use crate::guard::host_guard;
use crate::state::AppState;

pub use self::headers::VERSION_HEADER;

/// The path MCP is served at.
pub const PATH: &str = "/mcp";
/// The routes this transport adds to an app, as (method, path): everything else at [`PATH`] is
/// 405. Route-parity checks add these to the registry's own routes.
pub const ROUTES: &[(&str, &str)] = &[("POST", PATH), ("GET", PATH), ("DELETE", PATH)];
/// Session id header.
pub const SESSION_HEADER: &str = "mcp-session-id";
const SESSION: HeaderName = HeaderName::from_static(SESSION_HEADER);

// No tool may claim the MCP path.
#[linkme::distributed_slice(groundkit_core::registry::RESERVED_PATHS)]
static RESERVED_MCP: &str = PATH;

/// Mount `/mcp` for `state`, behind its own Host/Origin guard (`host_guard` with
/// `state.hosts`), so it is safe in an app that has none.
pub fn configure<Ctx: Send + Sync + 'static>(
    state: &Arc<AppState<Ctx>>,
    cfg: &mut web::ServiceConfig,
) {
    mount(state, cfg, true);
}

/// Mount `/mcp` for `state` without a guard of its own: for [`crate::app::build`], whose
/// app-wide [`host_guard`] has already checked every request with the same `state.hosts`.
pub(crate) fn configure_behind_guard<Ctx: Send + Sync + 'static>(
    state: &Arc<AppState<Ctx>>,
    cfg: &mut web::ServiceConfig,
) {
    mount(state, cfg, false);
}

fn mount<Ctx: Send + Sync + 'static>(
    state: &Arc<AppState<Ctx>>,
    cfg: &mut web::ServiceConfig,
    guarded: bool,
) {
    let server = Arc::new(McpServer::new(Arc::clone(state)));
    let post_server = Arc::clone(&server);
    let get_server = Arc::clone(&server);
    cfg.service(
        web::resource(PATH)
            .name("mcp")
            .app_data(web::Data::new(state.hosts.clone()))
            .wrap(Condition::new(guarded, from_fn(host_guard)))
            .wrap(from_fn(access::tagged(access::Transport::McpHttp)))
            .route(web::post().to(move |req: HttpRequest, body: web::Payload| {
                post(Arc::clone(&post_server), req, body)
            }))
            .route(web::get().to(move |req: HttpRequest| get(Arc::clone(&get_server), req)))
            .route(web::delete().to(move |req: HttpRequest| delete(Arc::clone(&server), req)))
            .default_service(web::to(method_not_allowed)),
    );
}

fn refuse(problem: impl Into<Problem>, req: &HttpRequest) -> HttpResponse {
    problem::response(problem, &RequestId::of(req))
}

fn session_problem(error: SessionError) -> Problem {
    match error {
        SessionError::Unknown => Refusal::SessionNotFound.into(),
        SessionError::Full => Error::Overloaded.into(),
    }
}

fn missing_session() -> Error {
    Error::InvalidRequest {
        field: None,
        message: "this request needs the Mcp-Session-Id header returned by initialize".into(),
    }
}

async fn post<Ctx: Send + Sync + 'static>(
    server: Arc<McpServer<Ctx>>,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let state = server.state();
    let accept = accepts(&req);
    if !accept.json && !accept.sse {
        return refuse(Refusal::NotAcceptable, &req);
    }
    if !body::is_json(&req) {
        return refuse(Refusal::UnsupportedMediaType, &req);
    }
    let bytes = match body::read(&req, payload, state.limits.body()).await {
        Ok(bytes) => bytes,
        Err(problem) => return refuse(problem, &req),
    };
    let headers = Headers::of(&req);
    let version = headers.version();
    let incoming = jsonrpc::parse(&bytes);

    let request = match &incoming {
        Incoming::Single(Message::Request(request)) => Some(request),
        _ => None,
    };
    let stateless = match request {
        Some(request) => protocol::is_stateless(request, version),
        None => version.is_stateless(),
    };
    let initialize = request.is_some_and(|r| r.method == "initialize");
    let listen = stateless && request.is_some_and(|r| r.method == "subscriptions/listen");
    let malformed = matches!(incoming, Incoming::Single(Message::Invalid(_)));
    let progress = request.is_some_and(|r| {
        r.method == "tools/call"
            && r.params
                .as_ref()
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get("progressToken"))
                .is_some()
    });

    if !stateless && !malformed && matches!(version, HeaderVersion::Unknown(_)) {
        let message = format!(
            "unsupported MCP-Protocol-Version; this server speaks {}",
            Revision::supported().join(", ")
        );
        let error = Error::InvalidRequest {
            field: None,
            message,
        };
        return refuse(error, &req);
    }
    let peer = if stateless || initialize || malformed {
        Peer::new()
    } else {
        match header(&req, &SESSION) {
            None => return refuse(missing_session(), &req),
            Some(id) => match state.mcp.sessions.get(id) {
                Ok(peer) => peer,
                Err(error) => return refuse(session_problem(error), &req),
            },
        }
    };

    let request_id = RequestId::of(&req);
    let closed = req.conn_data::<Closed>().map(|closed| closed.0.clone());
    if (progress || listen) && accept.sse {
        let later = access::defer(&req);
        return stream(server, peer, incoming, headers, request_id, closed, later);
    }
    let exchange = Exchange {
        peer: &peer,
        transport: Transport::Http(&headers),
        request_id: &request_id,
        notify: None,
        closed: closed.as_ref(),
    };
    let mut answer = server.handle_incoming(incoming, exchange).await;
    access::note(&req, |note| answer.note(note));
    let Some(frame) = answer.frame else {
        return HttpResponse::Accepted().finish();
    };
    let mut response = HttpResponse::build(status(answer.outcome));
    if answer.outcome == (Outcome::Result { initialized: true }) && !stateless {
        match state.mcp.sessions.create(Arc::clone(&peer)) {
            Ok(id) => {
                response.insert_header((SESSION, id));
            }
            Err(error) => return refuse(session_problem(error), &req),
        }
    }
    if accept.json {
        response.content_type("application/json").body(frame)
    } else {
        response
            .content_type("text/event-stream")
            .insert_header((CACHE_CONTROL, "no-cache"))
            .body(sse_event(&frame))
    }
}

fn sse_event(frame: &str) -> String {
    format!("event: message\ndata: {frame}\n\n")
}

/// The frames `rx` receives as events, until its senders are gone, with a comment whenever none
/// came for `every`: a stream that outlives the write deadline, and notices a vanished client.
fn frames(
    rx: mpsc::UnboundedReceiver<String>,
    every: std::time::Duration,
) -> impl futures_util::Stream<Item = Result<Bytes, actix_web::Error>> {
    let mut keep_alive = tokio::time::interval(every);
    keep_alive.reset();
    futures_util::stream::unfold((rx, keep_alive), |(mut rx, mut keep_alive)| async move {
        let bytes = tokio::select! {
            frame = rx.recv() => {
                keep_alive.reset();
                sse_event(&frame?)
            }
            _ = keep_alive.tick() => ": keep-alive\n\n".to_owned(),
        };
        Some((Ok(Bytes::from(bytes)), (rx, keep_alive)))
    })
}

/// Answer as a stream: notifications as they happen (a call's progress, a listen's
/// acknowledgement and updates), then the response, with comments while nothing comes (as
/// [`frames`] writes them). The access line (`later`) is written when the call is done, before
/// its response is sent.
fn stream<Ctx: Send + Sync + 'static>(
    server: Arc<McpServer<Ctx>>,
    peer: Arc<Peer>,
    incoming: Incoming,
    headers: Headers,
    request_id: String,
    closed: Option<Cancellation>,
    later: Later,
) -> HttpResponse {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let every = server.state().limits.write_deadline() / 2;
    actix_web::rt::spawn(async move {
        let exchange = Exchange {
            peer: &peer,
            transport: Transport::Http(&headers),
            request_id: &request_id,
            notify: Some(&tx),
            closed: closed.as_ref(),
        };
        let mut answer = server.handle_incoming(incoming, exchange).await;
        later.note(|note| answer.note(note));
        drop(later);
        if let Some(frame) = answer.frame {
            let _ = tx.send(frame);
        }
    });
    let events = frames(rx, every);
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((CACHE_CONTROL, "no-cache"))
        .streaming(events)
}

/// `GET /mcp`: the session's stream of what the server pushes (see the module's documentation).
async fn get<Ctx: Send + Sync + 'static>(
    server: Arc<McpServer<Ctx>>,
    req: HttpRequest,
) -> HttpResponse {
    let Some(id) = header(&req, &SESSION) else {
        // No conversation to push to: a stateless client, or none that initialized.
        return method_not_allowed(req).await;
    };
    if Headers::of(&req).version().is_stateless() {
        return method_not_allowed(req).await;
    }
    if !accepts(&req).sse {
        return refuse(Refusal::NotAcceptable, &req);
    }
    let peer = match server.state().mcp.sessions.get(id) {
        Ok(peer) => peer,
        Err(error) => return refuse(session_problem(error), &req),
    };
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    // The only sender is the one the subscriptions hold: the stream ends when a newer stream
    // replaces it or the session ends.
    peer.push_to(&server.state().mcp.updates, tx);
    drop(peer);
    let priming = Bytes::from(format!("id: 0\nretry: {}\ndata:\n\n", RETRY.as_millis()));
    let events = frames(rx, server.state().limits.write_deadline() / 2);
    let events = futures_util::stream::once(async move { Ok(priming) }).chain(events);
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((CACHE_CONTROL, "no-cache"))
        .streaming(events)
}

/// How long a client waits before reconnecting a `GET` stream the server closed.
const RETRY: std::time::Duration = std::time::Duration::from_secs(3);

async fn delete<Ctx: Send + Sync + 'static>(
    server: Arc<McpServer<Ctx>>,
    req: HttpRequest,
) -> HttpResponse {
    if Headers::of(&req).version().is_stateless() {
        // The stateless era has no sessions to end.
        return method_not_allowed(req).await;
    }
    let Some(id) = header(&req, &SESSION) else {
        return refuse(missing_session(), &req);
    };
    match server.state().mcp.sessions.remove(id) {
        Ok(()) => HttpResponse::NoContent().finish(),
        Err(error) => refuse(session_problem(error), &req),
    }
}

async fn method_not_allowed(req: HttpRequest) -> HttpResponse {
    refuse(
        Refusal::MethodNotAllowed {
            allow: "POST, GET, DELETE",
        },
        &req,
    )
}
