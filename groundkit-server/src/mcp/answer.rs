//! What the framing answers to one frame, in no transport's terms: the frame to send, if any,
//! and an [`Outcome`] each transport turns into its own (an HTTP status, an access-log line).

use super::jsonrpc::ErrorFrame;
use crate::edge::access::Note;

/// What kind of answer a frame got: enough for a transport to choose its status and log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A result; `initialized` when it answers a successful `initialize`.
    Result {
        /// Whether it is the answer to a successful `initialize` (HTTP then opens a session).
        initialized: bool,
    },
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// A request answered with a JSON-RPC error.
    RpcError {
        /// The error code.
        code: i32,
        /// Whether the request was of the stateless era (whose statuses are fixed).
        stateless: bool,
    },
    /// A frame refused before any request in it ran: malformed, or a batch that is not allowed.
    Refused,
    /// The answers to a batch.
    Batch,
    /// Nothing to answer: notifications and responses.
    Silent,
    /// A request cancelled by `notifications/cancelled`: never answered.
    Cancelled,
}

impl Outcome {
    /// The name the access line uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Result { .. } => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::RpcError { .. } => "rpc_error",
            Outcome::Refused => "refused",
            Outcome::Batch => "batch",
            Outcome::Silent => "silent",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// The answer to one frame.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The frame to send (one line); `None` when nothing is answered.
    pub frame: Option<String>,
    /// What kind of answer it is.
    pub outcome: Outcome,
    /// The request's method and tool, when the frame was one request.
    pub request: Option<Called>,
}

/// Which method (and tool) one request called.
#[derive(Debug, Clone)]
pub struct Called {
    /// The JSON-RPC method.
    pub method: String,
    /// The tool, for `tools/call`.
    pub tool: Option<String>,
}

impl Answer {
    /// Say on `note` what the access line records of this answer; the method and tool names
    /// move to the note.
    pub fn note(&mut self, note: &mut Note) {
        note.outcome = Some(self.outcome.as_str());
        if let Some(called) = self.request.take() {
            note.rpc_method = Some(called.method);
            note.tool = called.tool.map(Into::into);
        }
    }

    pub(super) fn refused(frame: ErrorFrame) -> Self {
        Self {
            frame: Some(frame.render()),
            outcome: Outcome::Refused,
            request: None,
        }
    }

    pub(super) fn silent() -> Self {
        Self {
            frame: None,
            outcome: Outcome::Silent,
            request: None,
        }
    }
}
