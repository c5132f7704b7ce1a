//! MCP over stdio and Streamable HTTP, and the serving-safety guards, against real servers.

mod access;
mod framing;
mod guard;
mod http;
mod limits;
mod parser;
mod stdio;
pub(crate) mod support;
mod tools;
