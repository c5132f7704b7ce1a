//! MCP from the registry: JSON-RPC framing, the method table, and the stdio and Streamable HTTP
//! transports.
//!
//! - [`jsonrpc`] classifies incoming frames and builds outgoing ones (ids echoed exactly).
//! - [`protocol`] names the revisions and the rules that differ between eras.
//! - [`methods`] is the jsonrpsee method table (`initialize`, `ping`, `tools/list`,
//!   `tools/call`, `server/discover`, and the notifications).
//! - [`server`] is the framing layer in front of the table, shared by both transports.
//! - [`tools`] renders registry specs, results and errors as MCP JSON.
//! - [`progress`] turns a tool's progress reports into `notifications/progress`.
//! - [`session`] holds peers, the HTTP session table and the in-flight requests.
//! - [`stdio`] and [`http`] are the transports.
//!
//! Every tool served here comes from the [`Registry`](groundkit_core::Registry) in the
//! [`AppState`](crate::AppState); there is no way to add an MCP-only tool.

pub mod http;
pub mod jsonrpc;
pub mod methods;
pub mod progress;
pub mod protocol;
pub mod server;
pub mod session;
pub mod stdio;
pub mod tools;

pub use protocol::Revision;
pub use server::{HttpHeaders, McpServer, Reply, Transport};
pub use session::{McpShared, Peer};
