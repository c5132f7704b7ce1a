//! The one error type of the stack, and the one mapping that renders it.
//!
//! Every layer (registry, request parsing, tools, retrieval engine, transports) reports failures
//! as [`Error`]. Transports never classify: they call [`Error::mapping`] and render the
//! [`ErrorMapping`] it returns, as `application/problem+json` on REST and as a JSON-RPC error or
//! an `isError` tool result on MCP. The match in [`Error::mapping`] is exhaustive, so a new
//! variant cannot ship without a status, a stable `kind` and an exposure decision.
//!
//! Only kinds whose message names caller input expose their message. Everything else renders a
//! fixed generic detail, because its message (or its source chain) may carry paths, URLs or
//! provider text. Sources are kept for the server log and never rendered.

use std::borrow::Cow;

/// Boxed source of an opaque failure; logged server-side, never shown to a caller.
pub type BoxedSource = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The detail shown for every kind that does not expose its message.
pub const GENERIC_DETAIL: &str = "the server could not complete this request; the server log has the details under this request id";

/// Every failure a groundkit surface can report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request body or arguments are not the JSON the tool accepts (syntax, types, unknown or
    /// missing fields).
    #[error("{message}")]
    InvalidRequest {
        /// Dotted path of the offending field, when one is known.
        field: Option<String>,
        /// What is wrong, in terms of the caller's input.
        message: String,
    },
    /// The arguments parse but break a declared bound (length, range, pattern).
    #[error("{field}: {message}")]
    Validation {
        /// Dotted path of the offending field.
        field: String,
        /// Which bound it breaks.
        message: String,
    },
    /// A named collection does not exist. The name has passed validation, so echoing it is safe.
    #[error(
        "collection '{name}' does not exist; call list_collections for the collections this server has"
    )]
    CollectionNotFound {
        /// The (validated) collection name.
        name: String,
    },
    /// A chunk id does not exist in the collection.
    #[error("chunk '{chunk_id}' does not exist in this collection")]
    ChunkNotFound {
        /// The chunk id as the caller gave it.
        chunk_id: String,
    },
    /// A resource a framework tool looked up does not exist.
    #[error("{resource} '{id}' does not exist")]
    NotFound {
        /// What kind of thing was looked up (e.g. "greeting").
        resource: &'static str,
        /// The identifier the caller gave.
        id: String,
    },
    /// An MCP session id names no live session. The id is not echoed: it is the caller's
    /// credential-like token, and a log or proxy that records error bodies should not get it.
    #[error("this MCP session does not exist or has expired; send initialize to start a new one")]
    SessionNotFound,
    /// A rerank was requested of a server started without a reranker.
    #[error("this server was started without a reranker; send rerank: false")]
    RerankerNotConfigured,
    /// No route matches the request path.
    #[error("no route matches this path")]
    RouteNotFound,
    /// The route exists but not for this method.
    #[error("this route does not accept this method")]
    MethodNotAllowed,
    /// A query string was sent; no groundkit route accepts one.
    #[error("query strings are not accepted; send parameters in the path or the JSON body")]
    QueryStringRefused,
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
    /// The `Host` header is missing, duplicated or not on the allow-list.
    #[error("the Host header is not allowed for this server")]
    ForbiddenHost,
    /// The `Origin` header names a foreign origin.
    #[error("the Origin header is not allowed for this server")]
    ForbiddenOrigin,
    /// A bounded resource (concurrent scans, sessions) is exhausted; retry later.
    #[error("the server is at capacity for this kind of request; retry shortly")]
    Overloaded,
    /// The request took longer than the server's request timeout.
    #[error("the request did not complete within the server's time limit")]
    Timeout,
    /// Reading or writing the collection store or index failed.
    #[error("storage failure: {message}")]
    Storage {
        /// Operator-facing description (may name paths; never shown to a caller).
        message: String,
        /// The underlying failure.
        #[source]
        source: Option<BoxedSource>,
    },
    /// An embedding or rerank provider failed.
    #[error("provider failure: {message}")]
    Provider {
        /// Operator-facing description (may name URLs; never shown to a caller).
        message: String,
        /// The underlying failure.
        #[source]
        source: Option<BoxedSource>,
    },
    /// A bug or an unexpected condition, including a handler panic.
    #[error("internal error: {message}")]
    Internal {
        /// Operator-facing description (never shown to a caller).
        message: String,
    },
}

/// How an error is rendered on MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpRendering {
    /// A `tools/call` result with `isError: true` (MCP 2025-11-25: tool and argument failures
    /// are results the model can read, not protocol errors).
    ToolResult,
    /// A JSON-RPC error object with this code.
    Protocol(i32),
}

/// JSON-RPC error codes used by the MCP surface.
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
}

/// The rendering decision for one error: the single source both transports read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorMapping {
    /// Stable machine-readable label; clients branch on this, never on prose.
    pub kind: &'static str,
    /// HTTP status on the REST surface.
    pub http_status: u16,
    /// Rendering on the MCP surface.
    pub mcp: McpRendering,
    /// Whether [`Error`]'s own message may be shown to a caller.
    pub expose_message: bool,
}

impl ErrorMapping {
    const fn new(kind: &'static str, http_status: u16, expose_message: bool) -> Self {
        Self {
            kind,
            http_status,
            mcp: McpRendering::ToolResult,
            expose_message,
        }
    }

    const fn protocol(mut self, code: i32) -> Self {
        self.mcp = McpRendering::Protocol(code);
        self
    }
}

impl Error {
    /// The one mapping from error to rendering. Exhaustive on purpose.
    pub const fn mapping(&self) -> ErrorMapping {
        use ErrorMapping as M;
        match self {
            Error::InvalidRequest { .. } => M::new("invalid_request", 400, true),
            Error::Validation { .. } => M::new("validation_error", 422, true),
            Error::CollectionNotFound { .. } => M::new("collection_not_found", 404, true),
            Error::ChunkNotFound { .. } => M::new("chunk_not_found", 404, true),
            Error::NotFound { .. } | Error::SessionNotFound => M::new("not_found", 404, true),
            Error::RerankerNotConfigured => M::new("reranker_not_configured", 409, true),
            Error::RouteNotFound => M::new("route_not_found", 404, true),
            Error::MethodNotAllowed => M::new("method_not_allowed", 405, true),
            Error::QueryStringRefused => M::new("query_string_refused", 400, true),
            Error::PayloadTooLarge { .. } => M::new("payload_too_large", 413, true),
            Error::BodyTimeout { .. } => M::new("body_timeout", 408, true),
            Error::UnsupportedMediaType => M::new("unsupported_media_type", 415, true),
            Error::NotAcceptable => M::new("not_acceptable", 406, true),
            Error::ForbiddenHost => M::new("forbidden_host", 403, true),
            Error::ForbiddenOrigin => M::new("forbidden_origin", 403, true),
            Error::Overloaded => M::new("overloaded", 503, true),
            Error::Timeout => M::new("timeout", 504, true),
            Error::Storage { .. } => M::new("storage_error", 500, false),
            Error::Provider { .. } => M::new("provider_error", 502, false),
            Error::Internal { .. } => {
                M::new("internal_error", 500, false).protocol(rpc_code::INTERNAL_ERROR)
            }
        }
    }

    /// Stable machine-readable label of this error.
    pub const fn kind(&self) -> &'static str {
        self.mapping().kind
    }

    /// The text a caller may see: the message for exposed kinds, [`GENERIC_DETAIL`] otherwise.
    /// Never reads the source chain.
    pub fn public_detail(&self) -> Cow<'static, str> {
        if self.mapping().expose_message {
            Cow::Owned(self.to_string())
        } else {
            Cow::Borrowed(GENERIC_DETAIL)
        }
    }

    /// The field the caller should fix, when the error names one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::InvalidRequest { field, .. } => field.as_deref(),
            Error::Validation { field, .. } => Some(field),
            _ => None,
        }
    }

    /// A storage failure with its underlying cause (logged, never rendered).
    pub fn storage(message: impl Into<String>, source: impl Into<BoxedSource>) -> Self {
        Error::Storage {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// An internal failure (logged, never rendered).
    pub fn internal(message: impl Into<String>) -> Self {
        Error::Internal {
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaque_kinds_never_render_their_message() {
        let err = Error::storage(
            "cannot open /srv/secret/index/a.sqlite3",
            std::io::Error::other("os error 13"),
        );
        let detail = err.public_detail();
        assert_eq!(detail, GENERIC_DETAIL);
        assert!(!detail.contains("/srv"));
        assert_eq!(err.mapping().http_status, 500);
        assert_eq!(err.kind(), "storage_error");
    }

    #[test]
    fn caller_kinds_render_their_message() {
        let err = Error::CollectionNotFound {
            name: "papers".into(),
        };
        assert!(err.public_detail().contains("'papers'"));
        assert_eq!(err.mapping().http_status, 404);
        let err = Error::Validation {
            field: "query".into(),
            message: "too long".into(),
        };
        assert_eq!(err.public_detail(), "query: too long");
        assert_eq!(err.field(), Some("query"));
    }
}
