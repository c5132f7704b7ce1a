//! Calling a tool: the one path both transports take from parsed arguments to a result.
//!
//! It bounds the call by the request timeout and turns a handler panic into
//! [`Error::Internal`], so a bug in one tool neither hangs nor kills the server.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use groundkit_core::tool::ErasedContext;
use groundkit_core::{Error, ToolSpec};
use serde_json::Value;

use crate::state::AppState;

/// Run `spec` with `arguments` against the state's context.
pub async fn invoke<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    spec: &ToolSpec,
    arguments: Value,
) -> Result<Value, Error> {
    let context: &ErasedContext = &*state.context;
    let call = AssertUnwindSafe(spec.call(context, arguments)).catch_unwind();
    match tokio::time::timeout(state.limits.request_timeout, call).await {
        Ok(Ok(result)) => result,
        Ok(Err(_panic)) => Err(Error::internal(format!("tool `{}` panicked", spec.name()))),
        Err(_elapsed) => Err(Error::Timeout),
    }
}
