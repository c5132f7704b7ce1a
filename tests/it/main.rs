//! The one integration-test binary (one link step instead of dozens on a 2-core machine).

mod embed;
mod framework;
mod mcp;
mod opensearch;
mod rerank;
mod retrieval;
mod service;
