//! MCP over stdio and Streamable HTTP, and the serving-safety guards, against real servers.

mod framing;
mod guard;
mod http;
mod limits;
mod stdio;
mod support;
mod tools;
