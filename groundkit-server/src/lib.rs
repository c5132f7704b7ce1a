//! groundkit transports: everything between a [`Registry`](groundkit_core::Registry) and the
//! network, plus the `grk` command line.
//!
//! [`app`] builds the actix application from a registry; [`rest`] renders each tool as a route;
//! [`invoke`] is the single call path every transport uses; [`edge::problem`] maps and renders
//! errors at the edge; [`middleware`] assigns request ids and writes the access log; [`state`] is what a
//! running server holds; [`mcp`] serves the same registry over MCP (stdio and Streamable HTTP at
//! `/mcp`); [`guard`] holds the bind guard and the Host/Origin allow-list; [`serve`] runs it all;
//! [`cli`] (feature `retrieval`) is `grk`.

pub mod app;
#[cfg(feature = "retrieval")]
pub mod cli;
pub mod edge;
pub mod guard;
pub mod invoke;
pub mod logging;
pub mod mcp;
pub mod middleware;
pub mod rest;
pub mod serve;
#[cfg(feature = "retrieval")]
pub mod service;
pub mod state;

pub use state::{AppState, Limits};

/// The README's Rust, compiled (not run) as a doctest so the example a library author copies is
/// complete.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;
