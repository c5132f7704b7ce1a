//! groundkit's framework runtime: tool specs and the sealed side-effect model
//! ([`tool`](mod@tool)), resource specs and URI templates ([`resource`](mod@resource)), scoped
//! registries ([`registry`]), the one error type ([`error`]),
//! request parsing ([`request`]), progress reports ([`progress`]), schemas ([`schema`]),
//! OpenAPI ([`openapi`]) and the registry's digest ([`digest`]). The retrieval engine is a crate of its own, `groundkit-retrieval`,
//! built on this one.
//!
//! Nothing here knows a transport beyond what a tool declares and OpenAPI describes (a tool's REST
//! method and path, the statuses of its OpenAPI entry): no JSON-RPC code, no server, no path a
//! server reserves. groundkit-server maps errors onto its transports and reserves its own paths.

pub mod call;
pub mod complete;
pub mod digest;
pub mod error;
pub mod intercept;
pub mod openapi;
pub mod progress;
pub mod prompt;
pub mod registry;
pub mod request;
pub mod resource;
pub mod schema;
pub mod tool;

#[doc(hidden)]
pub mod __private;

pub use call::{Cancellation, Identity, RequestContext, Transport};
pub use complete::{Completion, Completions};
pub use error::Error;
pub use groundkit_macros::{prompt, resource, tool};
pub use intercept::{Answer, Interceptor, Invocation, Next};
pub use prompt::{Block, Message, PromptSpec, Role};
pub use registry::{Registry, RegistryError};
pub use resource::{Content, ResourceSpec};
pub use tool::{HttpMethod, SideEffect, ToolSpec};
