//! What every transport shares at the boundary. REST ([`app`](crate::app)'s routes) and MCP
//! ([`mcp`](crate::mcp)) take what they have in common from here and never from each other.
//!
//! - [`problem`]: [`Refusal`](problem::Refusal)s (failures only an edge meets), the one
//!   [`mapping`](problem::mapping) from a failure to its HTTP status and MCP rendering, and
//!   problem+json.
//! - [`catalogue`]: the error statuses each REST route can answer with, read from that mapping,
//!   for the OpenAPI document.
//! - [`body`]: the JSON content-type check and the bounded body reader.
//! - [`id`]: the one random-id generator (request ids, MCP session ids) and the request id.
//! - [`deadline`]: the connection wrapper that closes a connection the server has written
//!   nothing to for the write deadline.
//! - [`access`]: the per-request middleware (request id, query-string refusal) and the one
//!   access-log line of a request, whatever its transport.

pub mod access;
pub mod body;
pub mod catalogue;
pub mod deadline;
pub mod id;
pub mod problem;
