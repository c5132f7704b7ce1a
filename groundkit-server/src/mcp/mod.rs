//! MCP from the registry: JSON-RPC framing, the method table, and the stdio and Streamable HTTP
//! transports.
//!
//! - `jsonrpc` classifies incoming frames and builds outgoing ones (ids echoed exactly).
//! - `protocol` names the revisions, the rules that differ between eras, and which era and
//!   revision a request belongs to.
//! - `server` is the framing layer in front of the table, shared by both transports; it
//!   answers with an `answer::Answer` whose `Outcome` is in no transport's terms.
//! - `bridge` calls the jsonrpsee method table; `methods` is that table (`initialize`,
//!   `ping`, `tools/list`, `tools/call`, `resources/list`, `resources/templates/list`,
//!   `resources/read`, `resources/subscribe`, `resources/unsubscribe`, `prompts/list`,
//!   `prompts/get`, `completion/complete`, `server/discover`, and the notifications).
//! - `tools` renders tool specs, results (with the resource links
//!   [`AppState::link_results`](crate::AppState::link_results) asks for) and errors as MCP JSON; `resources` renders resource
//!   specs, contents and failed reads; `prompts` renders prompt specs and answers gets and
//!   completions.
//! - `progress` turns a tool's progress reports into `notifications/progress`.
//! - `session` holds peers, the HTTP session table and the in-flight requests;
//!   `subscriptions`, who follows which resource and where the server may push to them;
//!   `subscribe`, the methods that say so.
//! - [`stdio`] and [`http`] are the transports; only [`http`] knows HTTP.
//!
//! Every tool, resource and prompt served here comes from the [`Registry`](groundkit_core::Registry) in the
//! [`AppState`](crate::AppState); there is no way to add an MCP-only tool. Nothing here imports
//! REST: what both share is in `edge`.
//!
//! A user reaches the transports only: [`http::configure`] mounts `/mcp` in an app of their own
//! and [`stdio::serve`] answers on a pair of streams; the rest is private.

mod answer;
mod bridge;
pub mod http;
mod jsonrpc;
mod methods;
mod progress;
mod prompts;
mod protocol;
mod resources;
mod server;
mod session;
pub mod stdio;
mod subscribe;
mod subscriptions;
mod tools;

pub(crate) use session::McpShared;
pub use subscriptions::{MAX_SUBSCRIPTIONS, ResourceUpdates};
pub use tools::{ResourceLink, ResultLinks};
