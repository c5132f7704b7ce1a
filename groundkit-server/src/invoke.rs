//! Calling a tool or reading a resource: the one path both transports take from parsed
//! arguments to a result.
//!
//! It bounds the call by the request timeout, turns a handler panic into [`Error::Internal`] (so a
//! bug in one tool neither hangs nor kills the server), and takes one of the state's call permits
//! first: when [`Limits::max_concurrent_calls`](crate::Limits::max_concurrent_calls) calls are
//! already running, on any transport, the call is refused with [`Error::Overloaded`] rather than
//! queued without bound. A resource read is a call like any other: same permits, same timeout,
//! same panic capture.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use groundkit_core::tool::{BoxFuture, ErasedContext};
use groundkit_core::{Content, Error, ResourceSpec, ToolSpec};
use serde_json::Value;

use crate::state::AppState;

/// Run `spec` with `arguments` against the state's context.
pub async fn invoke<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    spec: &ToolSpec,
    arguments: Value,
) -> Result<Value, Error> {
    run(state, "tool", spec.name(), |context| {
        spec.call(context, arguments)
    })
    .await
}

/// Read `spec` with the arguments its URI template gave.
pub async fn read<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    spec: &ResourceSpec,
    arguments: Value,
) -> Result<Content, Error> {
    run(state, "resource", spec.name(), |context| {
        spec.read(context, arguments)
    })
    .await
}

async fn run<'a, Ctx: Send + Sync + 'static, T>(
    state: &'a AppState<Ctx>,
    what: &str,
    name: &str,
    call: impl FnOnce(&'a ErasedContext) -> BoxFuture<'a, Result<T, Error>>,
) -> Result<T, Error> {
    let _permit = state.calls.try_acquire().map_err(|_| Error::Overloaded)?;
    let context: &ErasedContext = &*state.context;
    let call = AssertUnwindSafe(call(context)).catch_unwind();
    match tokio::time::timeout(state.limits.request_timeout, call).await {
        Ok(Ok(result)) => result,
        Ok(Err(_panic)) => Err(Error::internal(format!("{what} `{name}` panicked"))),
        Err(_elapsed) => Err(Error::Timeout),
    }
}
