//! groundkit runtime.
//!
//! The framework half (always built): tool specs and the sealed side-effect model
//! ([`tool`](mod@tool)), scoped registries ([`registry`]), the one error type ([`error`]),
//! request parsing ([`request`]), progress reports ([`progress`]), schemas ([`schema`]) and
//! OpenAPI ([`openapi`]). The retrieval half (feature `retrieval`, off by default): collections,
//! ingest, lexical search and citation verification.

pub mod error;
pub mod openapi;
pub mod progress;
pub mod registry;
pub mod request;
#[cfg(feature = "retrieval")]
pub mod retrieval;
pub mod schema;
pub mod tool;

#[doc(hidden)]
pub mod __private;

pub use error::{Error, ErrorMapping, McpRendering};
pub use groundkit_macros::tool;
pub use registry::{Registry, RegistryError};
pub use tool::{HttpMethod, SideEffect, ToolSpec};
