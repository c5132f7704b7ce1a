//! groundkit runtime.
//!
//! The framework half (always built): tool specs and the sealed side-effect model, scoped
//! registries, the one error type, schema generation and OpenAPI. The retrieval half (feature
//! `retrieval`, on by default): collections, ingest, lexical search and citation verification.

pub mod error;
#[cfg(feature = "retrieval")]
pub mod retrieval;

pub use error::{Error, ErrorMapping, McpRendering};
