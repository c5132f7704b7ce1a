//! groundkit transports: everything between a [`Registry`](groundkit_core::Registry) and the
//! network.
//!
//! [`app`] builds the actix application from a registry; [`rest`] renders each tool as a route;
//! [`invoke`] is the single call path every transport uses; [`problem`] renders errors at the
//! edge; [`middleware`] assigns request ids and writes the access log; [`state`] is what a
//! running server holds; [`mcp`] serves the same registry over MCP (stdio and Streamable HTTP at
//! `/mcp`); [`guard`] holds the bind guard and the Host/Origin allow-list; [`serve`] runs it all.

pub mod app;
pub mod guard;
pub mod invoke;
pub mod logging;
pub mod mcp;
pub mod middleware;
pub mod problem;
pub mod rest;
pub mod serve;
pub mod state;

pub use state::{AppState, Limits};
