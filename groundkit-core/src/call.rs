//! What a call knows about itself: the [`RequestContext`] a tool, resource, prompt or completer
//! may take as its last argument, the same on every transport.
//!
//! A transport builds one per call ([`RequestContext::new`]) with the request id it logs, the
//! [`Transport`], the negotiated MCP revision and the caller's [`Identity`] when it has them;
//! the server's one call path adds the deadline (the request timeout from the call's start) and
//! fires the [cancellation](RequestContext::cancelled) when the call is abandoned before it
//! answers: `notifications/cancelled`, the deadline passing, or, over HTTP, the connection
//! closing (the transport links the call to its connection's [`Cancellation`]). A function
//! whose work runs off the async executor (`spawn_blocking`) checks
//! [`is_cancelled`](RequestContext::is_cancelled) to stop early; an async function is simply
//! dropped. Progress goes through [`RequestContext::report_progress`], which is
//! [`progress::report`](crate::progress::report).

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::{CancellationToken, DropGuard};

/// The transport a call arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// A REST route.
    Rest,
    /// MCP Streamable HTTP.
    McpHttp,
    /// MCP over stdio.
    McpStdio,
    /// A call made in the same process, by a program rather than a client (a command line
    /// running a tool, a test).
    InProcess,
}

impl Transport {
    /// Its name in logs: `rest`, `mcp-http`, `mcp-stdio`, `in-process`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Transport::Rest => "rest",
            Transport::McpHttp => "mcp-http",
            Transport::McpStdio => "mcp-stdio",
            Transport::InProcess => "in-process",
        }
    }
}

/// Who is calling, as the server authenticated them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The caller's subject (a token's `sub`, an API key's name).
    pub subject: String,
    /// What the caller was granted (scopes or groups).
    pub scopes: Vec<String>,
}

/// A signal that fires once, shared by its clones: a connection's closing, which the calls it
/// carries are [linked to](RequestContext::cancelled_with).
#[derive(Debug, Clone, Default)]
pub struct Cancellation(CancellationToken);

impl Cancellation {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fire it.
    pub fn cancel(&self) {
        self.0.cancel();
    }

    /// Whether it fired.
    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}

/// One call's request id, transport, protocol revision, caller, deadline and cancellation.
/// Cheap to clone; clones share the cancellation.
#[derive(Debug, Clone)]
pub struct RequestContext {
    request_id: Arc<str>,
    transport: Transport,
    protocol_version: Option<&'static str>,
    identity: Option<Arc<Identity>>,
    deadline: Option<Instant>,
    cancellation: CancellationToken,
}

impl RequestContext {
    /// The context of a call with `request_id` arriving on `transport`: no protocol revision,
    /// no identity, no deadline, not cancelled.
    pub fn new(request_id: impl Into<Arc<str>>, transport: Transport) -> Self {
        Self {
            request_id: request_id.into(),
            transport,
            protocol_version: None,
            identity: None,
            deadline: None,
            cancellation: CancellationToken::new(),
        }
    }

    /// With the MCP revision the call is served under.
    pub fn with_protocol_version(mut self, version: &'static str) -> Self {
        self.protocol_version = Some(version);
        self
    }

    /// With the caller's identity.
    pub fn with_identity(mut self, identity: Identity) -> Self {
        self.identity = Some(Arc::new(identity));
        self
    }

    /// Cancelled, too, when `signal` fires (a call is abandoned when its connection closes).
    pub fn cancelled_with(mut self, signal: &Cancellation) -> Self {
        self.cancellation = signal.0.child_token();
        self
    }

    /// With the instant by which the call must answer.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The request id the server logs and answers errors with.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// The transport the call arrived on.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The negotiated MCP revision (`2025-11-25`, ...); `None` on REST and in process.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.protocol_version
    }

    /// The authenticated caller; `None` when the server authenticates no one (as on loopback).
    pub fn identity(&self) -> Option<&Identity> {
        self.identity.as_deref()
    }

    /// When the call must have answered, if it is bounded.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether the call was abandoned: cancelled by the client, its connection closed, or its
    /// deadline passed.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// Completes once the call is abandoned.
    pub async fn cancelled(&self) {
        self.cancellation.cancelled().await;
    }

    /// Abandon the call: what a transport does when the client cancels it.
    pub fn cancel(&self) {
        self.cancellation.cancel();
    }

    /// A guard that abandons the call when dropped, unless [disarmed](CallGuard::disarm) once
    /// the call has answered: the one call path holds it across the call, so a call whose
    /// future is dropped before it answers (a cancelled request, a closed connection, a timeout)
    /// is cancelled for whatever work it left running.
    pub fn guard(&self) -> CallGuard {
        CallGuard(Some(self.cancellation.clone().drop_guard()))
    }

    /// Report progress of this call; see [`progress::report`](crate::progress::report).
    pub fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> bool {
        crate::progress::report(progress, total, message)
    }
}

/// Cancels its call when dropped, unless disarmed ([`RequestContext::guard`]).
#[derive(Debug)]
pub struct CallGuard(Option<DropGuard>);

impl CallGuard {
    /// The call answered: dropping the guard no longer cancels it.
    pub fn disarm(mut self) {
        if let Some(guard) = self.0.take() {
            guard.disarm();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_guard_cancels_every_clone_and_a_disarmed_one_does_not() {
        let context = RequestContext::new("r1", Transport::Rest);
        let clone = context.clone();
        context.guard().disarm();
        assert!(!clone.is_cancelled());
        drop(context.guard());
        assert!(clone.is_cancelled() && context.is_cancelled());
        assert_eq!(
            (clone.request_id(), clone.transport().as_str()),
            ("r1", "rest")
        );
    }
}
