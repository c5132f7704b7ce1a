//! Progress notifications from inside a tool.
//!
//! A tool calls [`report`] as it goes; when the MCP request that started it carried
//! `_meta.progressToken` and the transport can stream (stdio, or an SSE response on HTTP), each
//! report becomes a `notifications/progress` frame with that token. Anywhere else (REST, no
//! token) a report is a no-op, so a tool never needs to know how it was called.
//!
//! The spec's rules are kept here rather than trusted to every tool: `progress` must strictly
//! increase (a report that does not is dropped), and nothing is sent once the call's response
//! has been produced (the sink is scoped to the call's future).

use std::sync::Mutex;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::jsonrpc;

tokio::task_local! {
    static SINK: ProgressSink;
}

/// Where one call's progress goes.
pub(crate) struct ProgressSink {
    token: Value,
    out: UnboundedSender<String>,
    last: Mutex<Option<f64>>,
}

impl ProgressSink {
    pub(crate) fn new(token: Value, out: UnboundedSender<String>) -> Self {
        Self {
            token,
            out,
            last: Mutex::new(None),
        }
    }
}

/// Run `future` with `sink` receiving its progress reports.
pub(crate) async fn scope<F: Future>(sink: Option<ProgressSink>, future: F) -> F::Output {
    match sink {
        Some(sink) => SINK.scope(sink, future).await,
        None => future.await,
    }
}

/// Report progress of the current tool call: `progress` so far, out of `total` when known.
///
/// Returns whether a notification was sent.
pub fn report(progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
    SINK.try_with(|sink| {
        let Ok(mut last) = sink.last.lock() else {
            return false;
        };
        if !progress.is_finite() || last.is_some_and(|last| progress <= last) {
            return false;
        }
        *last = Some(progress);
        let mut params = json!({ "progressToken": sink.token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        sink.out
            .send(jsonrpc::notification("notifications/progress", &params))
            .is_ok()
    })
    .unwrap_or(false)
}
