//! MCP's [`ProgressSink`]: a tool's [`report`](groundkit_core::progress::report)s become
//! `notifications/progress` frames.
//!
//! The method table runs a `tools/call` inside [`groundkit_core::progress::scope`] with this
//! sink when the request carried `_meta.progressToken` and the transport can stream (stdio, or
//! an SSE response on HTTP). The rules (finite, strictly increasing, nothing after the response)
//! are core's; this only frames what passes them.

use groundkit_core::progress::ProgressSink;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::jsonrpc;

/// Sends one call's progress as notifications carrying its token.
pub(crate) struct Notifications {
    token: Value,
    out: UnboundedSender<String>,
}

impl Notifications {
    pub(crate) fn new(token: Value, out: UnboundedSender<String>) -> Self {
        Self { token, out }
    }
}

impl ProgressSink for Notifications {
    fn deliver(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let mut params = json!({ "progressToken": self.token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.out
            .send(jsonrpc::notification("notifications/progress", &params))
            .is_ok()
    }
}
