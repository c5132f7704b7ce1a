//! The one error type of the stack: what went wrong, its stable `kind`, and whether its message
//! may be shown to a caller.
//!
//! Every layer (registry, request parsing, tools, retrieval engine, the call path) reports
//! failures as [`Error`]. This module decides two things about each variant, in one exhaustive
//! match ([`Error::kind`], [`Error::exposes_message`]): the stable `kind` clients branch on, and
//! whether the message may be rendered. How a kind travels (an HTTP status, a JSON-RPC code, an
//! MCP tool result) is the transports' business: groundkit-server matches this enum exhaustively
//! in its one mapping, so a new variant cannot ship without a kind, an exposure decision and a
//! rendering on every transport.
//!
//! Only kinds whose message names caller input expose their message. Everything else renders a
//! fixed generic detail, because its message (or its source chain) may carry paths, URLs or
//! provider text. Sources are kept for the server log and never rendered.
//!
//! Failures only a network edge can meet (a refused Host, a body over the limit, an unknown
//! route) are not here: groundkit-server owns them.

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
    /// Dense or hybrid search was asked of a collection this server cannot search by vectors:
    /// the collection has none, or the server has no embedder. The reason names neither paths
    /// nor providers.
    #[error(
        "dense and hybrid search are not available on collection '{collection}': {reason}; use mode \"lexical\""
    )]
    DenseUnavailable {
        /// The (validated) collection name.
        collection: String,
        /// Why, in terms of the collection and the server's configuration.
        reason: &'static str,
    },
    /// The collection's vectors were computed by a different embedder than the server's, so a
    /// query vector would not be comparable with them.
    #[error(
        "collection '{collection}' was embedded with {collection_model} ({collection_fingerprint}); this server embeds queries with {server_model} ({server_fingerprint}); use mode \"lexical\", or serve with the collection's embedder"
    )]
    EmbeddingMismatch {
        /// The (validated) collection name.
        collection: String,
        /// The model that embedded the collection.
        collection_model: String,
        /// Its fingerprint.
        collection_fingerprint: String,
        /// The server's query embedder.
        server_model: String,
        /// Its fingerprint.
        server_fingerprint: String,
    },
    /// The embedder failed (a provider error, a timeout, a model failure). Its message may carry
    /// provider text or endpoints, so it is never shown to a caller.
    #[error("embedding failed: {message}")]
    Embedding {
        /// Operator-facing description (never shown to a caller).
        message: String,
        /// The underlying failure.
        #[source]
        source: Option<BoxedSource>,
    },
    /// The reranker failed (a provider error, a timeout, a model failure). Its message may carry
    /// provider text or endpoints, so it is never shown to a caller. The unreranked results are
    /// not returned in its place.
    #[error("rerank failed: {message}")]
    Rerank {
        /// Operator-facing description (never shown to a caller).
        message: String,
        /// The underlying failure.
        #[source]
        source: Option<BoxedSource>,
    },
    /// A search `cursor` continues a generation of its collection that is no longer served:
    /// the collection changed since the page before. The search must start again from its
    /// first page.
    #[error(
        "the cursor continues generation {generation} of the collection, which has changed since; search again without a cursor"
    )]
    CursorExpired {
        /// The generation the cursor was issued for.
        generation: u64,
    },
    /// A rerank was requested of a server started without a reranker.
    #[error("this server was started without a reranker; send rerank: false")]
    RerankerNotConfigured,
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
    /// A bug or an unexpected condition, including a handler panic.
    #[error("internal error: {message}")]
    Internal {
        /// Operator-facing description (never shown to a caller).
        message: String,
    },
}

impl Error {
    /// The stable `kind` and whether the message may be shown: the one place both are decided.
    /// Exhaustive on purpose.
    const fn class(&self) -> (&'static str, bool) {
        match self {
            Error::InvalidRequest { .. } => ("invalid_request", true),
            Error::Validation { .. } => ("validation_error", true),
            Error::CollectionNotFound { .. } => ("collection_not_found", true),
            Error::ChunkNotFound { .. } => ("chunk_not_found", true),
            Error::NotFound { .. } => ("not_found", true),
            Error::DenseUnavailable { .. } => ("dense_unavailable", true),
            Error::EmbeddingMismatch { .. } => ("embedding_mismatch", true),
            Error::Embedding { .. } => ("embedding_error", false),
            Error::Rerank { .. } => ("rerank_error", false),
            Error::CursorExpired { .. } => ("cursor_expired", true),
            Error::RerankerNotConfigured => ("reranker_not_configured", true),
            Error::Overloaded => ("overloaded", true),
            Error::Timeout => ("timeout", true),
            Error::Storage { .. } => ("storage_error", false),
            Error::Internal { .. } => ("internal_error", false),
        }
    }

    /// Stable machine-readable label of this error.
    pub const fn kind(&self) -> &'static str {
        self.class().0
    }

    /// Whether this error's own message may be shown to a caller (it names only caller input).
    pub const fn exposes_message(&self) -> bool {
        self.class().1
    }

    /// The text a caller may see: the message for exposed kinds, [`GENERIC_DETAIL`] otherwise.
    /// Never reads the source chain.
    pub fn public_detail(&self) -> Cow<'static, str> {
        if self.exposes_message() {
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

    /// An embedding failure with its underlying cause (logged, never rendered).
    pub fn embedding(message: impl Into<String>, source: Option<BoxedSource>) -> Self {
        Error::Embedding {
            message: message.into(),
            source,
        }
    }

    /// A rerank failure with its underlying cause (logged, never rendered).
    pub fn rerank(message: impl Into<String>, source: Option<BoxedSource>) -> Self {
        Error::Rerank {
            message: message.into(),
            source,
        }
    }

    /// `resource` (`"book"`, `"language"`) named `id` does not exist.
    pub fn not_found(resource: &'static str, id: impl Into<String>) -> Self {
        Error::NotFound {
            resource,
            id: id.into(),
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
        assert!(!err.exposes_message());
        assert_eq!(err.kind(), "storage_error");
    }

    #[test]
    fn caller_kinds_render_their_message() {
        let err = Error::CollectionNotFound {
            name: "papers".into(),
        };
        assert!(err.public_detail().contains("'papers'"));
        assert_eq!(err.kind(), "collection_not_found");
        let err = Error::Validation {
            field: "query".into(),
            message: "too long".into(),
        };
        assert_eq!(err.public_detail(), "query: too long");
        assert_eq!(err.field(), Some("query"));
    }
}
