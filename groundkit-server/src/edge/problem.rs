//! Failures at the edge and the one mapping that renders them on every transport.
//!
//! A request fails either in the call ([`Error`], from groundkit-core: parsing, a tool, the call
//! path) or at the edge before any tool runs ([`Refusal`]: a foreign Host, a body over the
//! limit, an unknown route). [`Problem`] is either; [`mapping`] is the only place a problem
//! becomes an HTTP status or an MCP rendering. Its match is exhaustive over both enums, so a new
//! variant in either cannot ship without a status and a rendering.
//!
//! On REST and MCP over HTTP a problem is answered as RFC 9457 `application/problem+json`
//! ([`response`]); inside an MCP `tools/call` the MCP transport renders it as the mapping says.
//! The full error, with its source chain, is logged against the request id for the operator
//! ([`log`]) and never rendered.

use std::borrow::Cow;

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use groundkit_core::Error;
use serde_json::json;

/// A failure only an edge meets: the request is refused before any tool runs. Every refusal
/// names only what the caller sent, so its message is always shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No route matches the request path.
    #[error("no route matches this path")]
    RouteNotFound,
    /// The route exists but not for this method; `allow` names the methods it serves.
    #[error("this route does not accept this method")]
    MethodNotAllowed {
        /// The `Allow` header value.
        allow: &'static str,
    },
    /// A query string was sent; no groundkit route accepts one.
    #[error("query strings are not accepted; send parameters in the path or the JSON body")]
    QueryString,
    /// The body is larger than the server accepts.
    #[error("the request body exceeds the limit of {limit} bytes")]
    PayloadTooLarge {
        /// The configured limit in bytes.
        limit: usize,
    },
    /// The client did not send the whole body within the server's body-read deadline.
    #[error("the request body did not arrive within {seconds} s")]
    BodyTimeout {
        /// The deadline, in whole seconds.
        seconds: u64,
    },
    /// The body is not `application/json`.
    #[error("the request body must be application/json")]
    UnsupportedMediaType,
    /// The client accepts no representation the server can produce.
    #[error("the Accept header must allow application/json")]
    NotAcceptable,
    /// The request has no `Host` header, or more than one (RFC 9112 §3.2: a 400).
    #[error("the request must carry exactly one Host header")]
    InvalidHost,
    /// The `Host` header names a host not on the allow-list.
    #[error("the Host header is not allowed for this server")]
    ForbiddenHost,
    /// The `Origin` header names a foreign origin.
    #[error("the Origin header is not allowed for this server")]
    ForbiddenOrigin,
    /// An MCP session id names no live session. The id is not echoed: it is the caller's
    /// credential-like token, and a log or proxy that records error bodies should not get it.
    #[error("this MCP session does not exist or has expired; send initialize to start a new one")]
    SessionNotFound,
}

/// Anything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// A failure of the call (arguments, tool, call path).
    #[error(transparent)]
    Call(#[from] Error),
    /// A refusal at the edge.
    #[error(transparent)]
    Refused(#[from] Refusal),
}

/// JSON-RPC 2.0 error codes (the protocol's own; MCP's additions are in
/// [`mcp::protocol::code`](crate::mcp::protocol::code)).
pub mod rpc_code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// MCP's code for a `resources/read` of a resource that does not exist (2025-06-18 to
    /// 2025-11-25; the stateless era answers it with [`INVALID_PARAMS`], see
    /// `mcp::protocol::Revision::resource_not_found_code`).
    pub const RESOURCE_NOT_FOUND: i32 = -32002;
}

/// How a call failure is answered inside an MCP `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpRendering {
    /// A `tools/call` result with `isError: true` (MCP 2025-11-25: tool and argument failures
    /// are results the model can read, not protocol errors).
    ToolResult,
    /// A JSON-RPC error object with this code.
    Protocol(i32),
}

/// The rendering decision for one problem: the single source every transport reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rendering {
    /// Stable machine-readable label; clients branch on this, never on prose.
    pub kind: &'static str,
    /// HTTP status on REST and MCP over HTTP.
    pub status: StatusCode,
    /// Rendering inside an MCP `tools/call`. `None` for refusals: they happen before any
    /// JSON-RPC message exists, so MCP over HTTP answers them with problem+json, as REST does.
    pub mcp: Option<McpRendering>,
    /// The JSON-RPC error code where MCP answers the failure as a protocol error rather than a
    /// tool result (`resources/read`): bad arguments are invalid params, a missing thing is
    /// "resource not found", anything else an internal error. `None` for refusals.
    pub rpc: Option<i32>,
}

/// The one mapping from problem to rendering. Exhaustive on purpose, over core's [`Error`] too.
pub fn mapping(problem: &Problem) -> Rendering {
    use McpRendering::{Protocol, ToolResult};
    use StatusCode as S;
    match problem {
        Problem::Call(error) => {
            let (status, mcp) = match error {
                Error::InvalidRequest { .. } => (S::BAD_REQUEST, ToolResult),
                Error::Validation { .. } => (S::UNPROCESSABLE_ENTITY, ToolResult),
                Error::CollectionNotFound { .. }
                | Error::ChunkNotFound { .. }
                | Error::NotFound { .. } => (S::NOT_FOUND, ToolResult),
                Error::RerankerNotConfigured
                | Error::DenseUnavailable { .. }
                | Error::EmbeddingMismatch { .. }
                | Error::CursorExpired { .. } => (S::CONFLICT, ToolResult),
                Error::Embedding { .. } | Error::Rerank { .. } => (S::BAD_GATEWAY, ToolResult),
                Error::Overloaded => (S::SERVICE_UNAVAILABLE, ToolResult),
                Error::Timeout => (S::GATEWAY_TIMEOUT, ToolResult),
                Error::Storage { .. } => (S::INTERNAL_SERVER_ERROR, ToolResult),
                Error::Internal { .. } => {
                    (S::INTERNAL_SERVER_ERROR, Protocol(rpc_code::INTERNAL_ERROR))
                }
            };
            let rpc = match error {
                Error::InvalidRequest { .. } | Error::Validation { .. } => rpc_code::INVALID_PARAMS,
                Error::CollectionNotFound { .. }
                | Error::ChunkNotFound { .. }
                | Error::NotFound { .. } => rpc_code::RESOURCE_NOT_FOUND,
                Error::RerankerNotConfigured
                | Error::DenseUnavailable { .. }
                | Error::EmbeddingMismatch { .. }
                | Error::CursorExpired { .. }
                | Error::Embedding { .. }
                | Error::Rerank { .. }
                | Error::Overloaded
                | Error::Timeout
                | Error::Storage { .. }
                | Error::Internal { .. } => rpc_code::INTERNAL_ERROR,
            };
            Rendering {
                kind: error.kind(),
                status,
                mcp: Some(mcp),
                rpc: Some(rpc),
            }
        }
        Problem::Refused(refusal) => {
            let (kind, status) = match refusal {
                Refusal::RouteNotFound => ("route_not_found", S::NOT_FOUND),
                Refusal::MethodNotAllowed { .. } => ("method_not_allowed", S::METHOD_NOT_ALLOWED),
                Refusal::QueryString => ("query_string_refused", S::BAD_REQUEST),
                Refusal::PayloadTooLarge { .. } => ("payload_too_large", S::PAYLOAD_TOO_LARGE),
                Refusal::BodyTimeout { .. } => ("body_timeout", S::REQUEST_TIMEOUT),
                Refusal::UnsupportedMediaType => {
                    ("unsupported_media_type", S::UNSUPPORTED_MEDIA_TYPE)
                }
                Refusal::NotAcceptable => ("not_acceptable", S::NOT_ACCEPTABLE),
                Refusal::InvalidHost => ("invalid_host", S::BAD_REQUEST),
                Refusal::ForbiddenHost => ("forbidden_host", S::FORBIDDEN),
                Refusal::ForbiddenOrigin => ("forbidden_origin", S::FORBIDDEN),
                Refusal::SessionNotFound => ("not_found", S::NOT_FOUND),
            };
            Rendering {
                kind,
                status,
                mcp: None,
                rpc: None,
            }
        }
    }
}

impl Problem {
    /// Whether the message may be shown: core's decision for call failures; always for
    /// refusals, which name only what the caller sent.
    pub fn exposes_message(&self) -> bool {
        match self {
            Problem::Call(error) => error.exposes_message(),
            Problem::Refused(_) => true,
        }
    }

    /// The text a caller may see (never a source chain).
    pub fn public_detail(&self) -> Cow<'static, str> {
        match self {
            Problem::Call(error) => error.public_detail(),
            Problem::Refused(refusal) => Cow::Owned(refusal.to_string()),
        }
    }

    /// The field the caller should fix, when the failure names one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Problem::Call(error) => error.field(),
            Problem::Refused(_) => None,
        }
    }
}

/// The problem-details body for `problem`.
pub fn body(problem: &Problem, request_id: &str) -> serde_json::Value {
    let rendering = mapping(problem);
    let mut body = json!({
        "type": format!("urn:groundkit:error:{}", rendering.kind),
        "title": rendering.status.canonical_reason().unwrap_or("Error"),
        "status": rendering.status.as_u16(),
        "detail": problem.public_detail(),
        "kind": rendering.kind,
        "request_id": request_id,
    });
    if let Some(field) = problem.field() {
        body["field"] = json!(field);
    }
    body
}

/// The `application/problem+json` response for `problem`, logging it server-side first. A
/// refused method carries the `Allow` header RFC 9110 requires.
pub fn response(problem: impl Into<Problem>, request_id: &str) -> HttpResponse {
    let problem = problem.into();
    log(&problem, request_id);
    let mut response = HttpResponse::build(mapping(&problem).status);
    if let Problem::Refused(Refusal::MethodNotAllowed { allow }) = &problem {
        response.insert_header((header::ALLOW, HeaderValue::from_static(allow)));
    }
    response
        .content_type("application/problem+json")
        .body(body(&problem, request_id).to_string())
}

/// Log the full failure for the operator: opaque kinds at ERROR with their sources, caller
/// errors at DEBUG (the access log already records their status).
pub fn log(problem: &Problem, request_id: &str) {
    let kind = mapping(problem).kind;
    if problem.exposes_message() {
        tracing::debug!(request_id, kind, "request refused: {problem}");
    } else {
        tracing::error!(request_id, kind, error = ?problem, "request failed: {problem}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_collection_or_chunk_is_404() {
        for missing in [
            Error::CollectionNotFound { name: "c".into() },
            Error::ChunkNotFound {
                chunk_id: "x".into(),
            },
        ] {
            let shown = format!("{missing:?}");
            assert_eq!(
                mapping(&missing.into()).status,
                StatusCode::NOT_FOUND,
                "{shown}"
            );
        }
    }

    #[test]
    fn statuses_and_kinds_of_call_failures_and_refusals() {
        let storage = Problem::from(Error::storage("/srv/x", std::io::Error::other("13")));
        let rendering = mapping(&storage);
        assert_eq!(rendering.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(rendering.kind, "storage_error");
        assert!(!body(&storage, "r").to_string().contains("/srv"));
        let internal = Problem::from(Error::internal("bug"));
        assert_eq!(
            mapping(&internal).mcp,
            Some(McpRendering::Protocol(rpc_code::INTERNAL_ERROR))
        );
        let host = Problem::from(Refusal::ForbiddenHost);
        assert_eq!(mapping(&host).status, StatusCode::FORBIDDEN);
        assert_eq!(mapping(&host).mcp, None);
        let refused = response(Refusal::MethodNotAllowed { allow: "POST" }, "r");
        assert_eq!(refused.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(
            refused.headers().get(header::ALLOW).map(|v| v.as_bytes()),
            Some(&b"POST"[..])
        );
    }
}
