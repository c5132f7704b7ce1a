//! What a running server holds: the registry, the shared context, the limits, the rendered
//! OpenAPI document. Built once at start and shared by every transport.

use std::sync::Arc;
use std::time::Duration;

use groundkit_core::Registry;
use groundkit_core::openapi::{self, ApiInfo};

/// Bounds on what one request may cost. Each is documented in the README's limits table.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body accepted, in bytes (default 1 MiB).
    pub max_body_bytes: usize,
    /// Longest a tool call may run before it is abandoned with `timeout` (default 30 s).
    pub request_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 1024 * 1024,
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// One server's state, shared by its transports.
pub struct AppState<Ctx> {
    /// The tools this server serves.
    pub registry: Registry<Ctx>,
    /// The context every tool call receives.
    pub context: Arc<Ctx>,
    /// Request bounds.
    pub limits: Limits,
    /// `GET /openapi.json`, rendered once.
    pub openapi: Arc<serde_json::Value>,
    /// Name and version reported to clients.
    pub info: ApiInfo,
}

impl<Ctx> AppState<Ctx> {
    /// State for `registry` served with `context`.
    pub fn new(registry: Registry<Ctx>, context: Ctx, info: ApiInfo, limits: Limits) -> Self {
        let openapi = Arc::new(openapi::document(&registry, &info));
        Self {
            registry,
            context: Arc::new(context),
            limits,
            openapi,
            info,
        }
    }
}
