//! What a running server holds: the registry, the shared context, the limits, the rendered
//! OpenAPI document, the Host policy and the MCP session table. Built once at start and shared
//! by every transport.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use groundkit_core::intercept::Interceptor;
use groundkit_core::openapi::{self, ApiInfo};
use groundkit_core::{Registry, RegistryError};
use tokio::sync::Semaphore;

use crate::edge::body::BodyLimits;
use crate::guard::HostPolicy;
use crate::invoke::{Deadline, Permits};
use crate::mcp::{McpShared, ResultLinks};

/// Bounds on what requests may cost. Each is listed in `docs/limits.md` with its test.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body accepted on REST and `/mcp`, in bytes (default 1 MiB).
    pub max_body_bytes: usize,
    /// Longest a tool call or resource read may run before it is abandoned with `timeout`
    /// (default 30 s).
    pub request_timeout: Duration,
    /// Tool calls and resource reads running at once across REST and MCP; one more is refused
    /// with `overloaded` (default 32).
    pub max_concurrent_calls: usize,
    /// Longest stdio line (one MCP message), in bytes (default 16 MiB).
    pub max_line_bytes: usize,
    /// Live MCP HTTP sessions at once; one more `initialize` is refused with 503 (default 256).
    pub max_sessions: usize,
    /// An MCP HTTP session unused this long is forgotten; its id then gets 404 (default 30 min).
    pub session_idle_timeout: Duration,
    /// Time a client has to send a whole request body once its headers are in; a slower body is
    /// refused with 408 `body_timeout` and its buffer freed (default 10 s).
    pub body_timeout: Duration,
    /// Messages in one JSON-RPC batch (2025-03-26 only); a longer batch is refused whole with
    /// -32600 (default 16).
    pub max_batch_len: usize,
    /// Time a client has to send a request's headers (default 5 s).
    pub header_timeout: Duration,
    /// Time a client has to close a connection after the response (default 5 s).
    pub disconnect_timeout: Duration,
    /// How long an idle keep-alive connection is held open for the client's next request
    /// (default 5 s).
    pub keep_alive: Duration,
    /// Open HTTP connections at once; past it, new connections wait in the listen backlog
    /// until one closes (default 256). With the body limit and timeouts this bounds what slow
    /// clients can hold: about `max_connections` × `max_body_bytes` for `body_timeout`.
    pub max_connections: usize,
    /// HTTP worker threads (default: the machine's available parallelism).
    pub workers: usize,
    /// Threads for the blocking work tools hand off (`tokio::task::spawn_blocking`), shared
    /// among the `workers` (rounded up) or all on stdio's runtime; more work waits for a free
    /// thread (default 32, as many as `max_concurrent_calls`, for work that waits on the network).
    /// Fewer threads cost less memory and fewer context switches for work that is CPU-bound.
    pub blocking_threads: usize,
}

impl Limits {
    /// How long a connection may go without the server writing a byte to it before it is
    /// closed: `keep_alive` + `header_timeout` + `body_timeout` + `request_timeout`, the bounds
    /// of one exchange added up (default 50 s). Why that sum, and what it bounds that they do
    /// not, is in the module doc of the write deadline (`edge::deadline`).
    pub fn write_deadline(&self) -> Duration {
        self.keep_alive + self.header_timeout + self.body_timeout + self.request_timeout
    }

    /// The bounds on one request body.
    pub(crate) fn body(&self) -> BodyLimits {
        BodyLimits {
            max_bytes: self.max_body_bytes,
            timeout: self.body_timeout,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            max_concurrent_calls: 32,
            max_line_bytes: 16 * 1024 * 1024,
            max_sessions: 256,
            session_idle_timeout: Duration::from_secs(30 * 60),
            body_timeout: Duration::from_secs(10),
            max_batch_len: 16,
            header_timeout: Duration::from_secs(5),
            disconnect_timeout: Duration::from_secs(5),
            keep_alive: Duration::from_secs(5),
            max_connections: 256,
            workers: std::thread::available_parallelism().map_or(1, usize::from),
            blocking_threads: 32,
        }
    }
}

/// One server's state, shared by its transports.
pub struct AppState<Ctx> {
    /// The tools and resources this server serves.
    pub registry: Registry<Ctx>,
    /// The context every tool call receives.
    pub context: Arc<Ctx>,
    /// Request bounds.
    pub limits: Limits,
    /// `GET /openapi.json`, rendered once.
    pub openapi: Arc<serde_json::Value>,
    /// Name and version reported to clients.
    pub info: ApiInfo,
    /// Which Host and Origin values are answered. Fail-closed (loopback names) until
    /// [`serve`](crate::serve) derives it from the bind.
    pub hosts: HostPolicy,
    /// The interceptors around every call: the server's bounds (permits, deadline), then the
    /// ones added with [`AppState::intercept`].
    pub(crate) chain: Vec<Arc<dyn Interceptor>>,
    /// MCP sessions and in-flight requests.
    pub(crate) mcp: McpShared,
    /// The registry's digest, computed once (`groundkit_core::digest`).
    pub(crate) digest: String,
    /// The resource links of tools' MCP results, by tool name ([`AppState::link_results`]).
    pub(crate) links: HashMap<&'static str, ResultLinks>,
}

impl<Ctx> AppState<Ctx> {
    /// The handle that tells MCP clients a resource changed: each conversation that subscribed
    /// to a URI (`resources/subscribe`) is sent `notifications/resources/updated` when the
    /// application calls [`ResourceUpdates::updated`](crate::mcp::ResourceUpdates::updated)
    /// with it. Keep it beside whatever notices the change.
    pub fn resource_updates(&self) -> crate::mcp::ResourceUpdates {
        self.mcp.updates.clone()
    }

    /// Run every call through `interceptor` too, after the server's own bounds and the
    /// interceptors added before it (see [`groundkit_core::intercept`]).
    pub fn intercept(mut self, interceptor: impl Interceptor) -> Self {
        self.chain.push(Arc::new(interceptor));
        self
    }

    /// Give every MCP result of tool `tool` the resource links `links` finds in the call's
    /// arguments and answer, each a `resource_link` content block after the answer's text (from
    /// revision 2025-06-18), so a client can read or attach what the answer names without
    /// another call. REST answers, `structuredContent` and the text block are unchanged. Fails
    /// when the registry has no tool of that name.
    pub fn link_results(mut self, tool: &str, links: ResultLinks) -> Result<Self, RegistryError> {
        let Some(spec) = self.registry.get(tool) else {
            return Err(RegistryError::UnknownTool {
                name: tool.to_owned(),
            });
        };
        self.links.insert(spec.name(), links);
        Ok(self)
    }

    /// State for `registry` served with `context`.
    pub fn new(registry: Registry<Ctx>, context: Ctx, info: ApiInfo, limits: Limits) -> Self {
        let errors = crate::edge::catalogue::error_statuses();
        let openapi = Arc::new(openapi::document(&registry, &info, &errors));
        let digest = registry.digest();
        Self {
            digest,
            registry,
            context: Arc::new(context),
            chain: vec![
                Arc::new(Permits(Arc::new(Semaphore::new(
                    limits.max_concurrent_calls,
                )))),
                Arc::new(Deadline(limits.request_timeout)),
            ],
            mcp: McpShared::new(limits.max_sessions, limits.session_idle_timeout),
            limits,
            openapi,
            info,
            hosts: HostPolicy::default(),
            links: HashMap::new(),
        }
    }
}

impl<Ctx: Send + Sync + 'static> AppState<Ctx> {
    /// State for every linked tool, resource and prompt whose context type is `Ctx`
    /// ([`Registry::collect`]), served with `context` within the default [`Limits`].
    ///
    /// ```
    /// use groundkit_core::openapi::ApiInfo;
    /// use groundkit_server::AppState;
    ///
    /// let state = AppState::collect((), ApiInfo::new("notes", "0.1"))?;
    /// assert_eq!(state.openapi["info"]["title"], "notes");
    /// # Ok::<(), groundkit_core::RegistryError>(())
    /// ```
    pub fn collect(context: Ctx, info: ApiInfo) -> Result<Self, RegistryError> {
        Ok(Self::new(
            Registry::collect()?,
            context,
            info,
            Limits::default(),
        ))
    }
}
