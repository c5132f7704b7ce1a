//! Calling a tool: the one path both transports take from parsed arguments to a result.
//!
//! It bounds the call by the request timeout, turns a handler panic into [`Error::Internal`] (so a
//! bug in one tool neither hangs nor kills the server), and takes one of the state's call permits
//! first: when [`Limits::max_concurrent_calls`](crate::Limits::max_concurrent_calls) calls are
//! already running, on any transport, the call is refused with [`Error::Overloaded`] rather than
//! queued without bound.

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
    let _permit = state.calls.try_acquire().map_err(|_| Error::Overloaded)?;
    let context: &ErasedContext = &*state.context;
    let call = AssertUnwindSafe(spec.call(context, arguments)).catch_unwind();
    match tokio::time::timeout(state.limits.request_timeout, call).await {
        Ok(Ok(result)) => result,
        Ok(Err(_panic)) => Err(Error::internal(format!("tool `{}` panicked", spec.name()))),
        Err(_elapsed) => Err(Error::Timeout),
    }
}
