//! Calling a tool, reading a resource, getting a prompt or completing an argument: the one
//! path every transport takes from parsed arguments to a result, through the state's chain of
//! [interceptors](groundkit_core::intercept).
//!
//! The chain starts with the server's own bounds, as interceptors like any other: [`Permits`]
//! takes one of the state's call permits (when
//! [`Limits::max_concurrent_calls`](crate::Limits::max_concurrent_calls) calls are already
//! running, on any transport, the call is refused with [`Error::Overloaded`] rather than queued
//! without bound), then [`Deadline`] sets the call's deadline and answers
//! [`Error::Timeout`] past it, cancelling the call's [`RequestContext`] for whatever work it
//! left running. The library author's interceptors follow
//! ([`AppState::intercept`](crate::AppState::intercept)), and the function runs last. A panic
//! anywhere in the chain is [`Error::Internal`], so a bug in one tool neither hangs nor kills the
//! server.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use groundkit_core::complete::{self, Completer};
use groundkit_core::intercept::{Answer, Interceptor, Invocation, Kind, Next};
use groundkit_core::tool::{BoxFuture, ErasedContext};
use groundkit_core::{
    Completion, Completions, Content, Error, Message, PromptSpec, RequestContext, ResourceSpec,
    ToolSpec,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::state::AppState;

/// Run `spec` with `arguments` against the state's context.
pub async fn invoke<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    spec: &'static ToolSpec,
    arguments: Value,
    request: RequestContext,
) -> Result<Value, Error> {
    let invocation = Invocation {
        kind: Kind::Tool,
        name: spec.name(),
        arguments,
        request,
    };
    let answer = run(state, invocation, move |context, call| {
        Box::pin(async move {
            let output = spec.call(context, call.arguments, call.request).await?;
            Ok(Answer::Json(output))
        })
    });
    match answer.await? {
        Answer::Json(output) => Ok(output),
        other => Err(mismatch(Kind::Tool, &other)),
    }
}

/// Read `spec` with the arguments its URI template gave.
pub async fn read<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    spec: &'static ResourceSpec,
    arguments: Value,
    request: RequestContext,
) -> Result<Content, Error> {
    let invocation = Invocation {
        kind: Kind::Resource,
        name: spec.name(),
        arguments,
        request,
    };
    let answer = run(state, invocation, move |context, call| {
        Box::pin(async move {
            let content = spec.read(context, call.arguments, call.request).await?;
            Ok(Answer::Content(content))
        })
    });
    match answer.await? {
        Answer::Content(content) => Ok(content),
        other => Err(mismatch(Kind::Resource, &other)),
    }
}

/// Get `spec` with `arguments`.
pub async fn get_prompt<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    spec: &'static PromptSpec,
    arguments: Value,
    request: RequestContext,
) -> Result<Vec<Message>, Error> {
    let invocation = Invocation {
        kind: Kind::Prompt,
        name: spec.name(),
        arguments,
        request,
    };
    let answer = run(state, invocation, move |context, call| {
        Box::pin(async move {
            let messages = spec.get(context, call.arguments, call.request).await?;
            Ok(Answer::Messages(messages))
        })
    });
    match answer.await? {
        Answer::Messages(messages) => Ok(messages),
        other => Err(mismatch(Kind::Prompt, &other)),
    }
}

/// Complete `completion.argument` of the prompt or template `name` with the completer
/// `completers` hold for it.
pub async fn complete<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    name: &'static str,
    completers: &'static [Completer],
    completion: Completion,
    request: RequestContext,
) -> Result<Completions, Error> {
    let invocation = Invocation {
        kind: Kind::Completion,
        name,
        arguments: json!({
            "argument": completion.argument,
            "value": completion.value,
            "arguments": completion.arguments,
        }),
        request,
    };
    let answer = run(state, invocation, move |context, call| {
        Box::pin(async move {
            let values = complete::run(completers, context, completion, call.request).await?;
            Ok(Answer::Completions(values))
        })
    });
    match answer.await? {
        Answer::Completions(values) => Ok(values),
        other => Err(mismatch(Kind::Completion, &other)),
    }
}

/// An interceptor answered a call with what another kind of call answers.
fn mismatch(kind: Kind, answer: &Answer) -> Error {
    let what = match answer {
        Answer::Json(_) => "a tool's output",
        Answer::Content(_) => "a resource's content",
        Answer::Messages(_) => "a prompt's messages",
        Answer::Completions(_) => "completion values",
    };
    Error::internal(format!(
        "an interceptor answered a {} with {what}",
        kind.as_str()
    ))
}

/// Run `invocation` through the state's chain, ending in `call`; a panic is an internal error.
async fn run<'a, Ctx: Send + Sync + 'static>(
    state: &'a AppState<Ctx>,
    invocation: Invocation,
    call: impl FnOnce(&'a ErasedContext, Invocation) -> BoxFuture<'a, Result<Answer, Error>> + Send + 'a,
) -> Result<Answer, Error> {
    let context: &ErasedContext = &*state.context;
    let (kind, name) = (invocation.kind, invocation.name);
    let next = Next::new(&state.chain, move |invocation| call(context, invocation));
    match AssertUnwindSafe(next.run(invocation)).catch_unwind().await {
        Ok(answer) => answer,
        Err(_panic) => Err(Error::internal(format!(
            "{} `{name}` panicked",
            kind.as_str()
        ))),
    }
}

/// Refuses a call with [`Error::Overloaded`] when every permit is taken; holds one while the
/// rest of the chain runs.
pub(crate) struct Permits(pub(crate) Arc<Semaphore>);

impl Interceptor for Permits {
    fn intercept<'a>(
        &'a self,
        invocation: Invocation,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Answer, Error>> {
        Box::pin(async move {
            let _permit = self.0.try_acquire().map_err(|_| Error::Overloaded)?;
            next.run(invocation).await
        })
    }
}

/// Gives the call its deadline, answers [`Error::Timeout`] past it, and cancels a call that
/// does not answer (timed out, or dropped by its transport).
pub(crate) struct Deadline(pub(crate) Duration);

impl Interceptor for Deadline {
    fn intercept<'a>(
        &'a self,
        mut invocation: Invocation,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Answer, Error>> {
        Box::pin(async move {
            invocation.request = invocation.request.with_deadline(Instant::now() + self.0);
            let guard = invocation.request.guard();
            let answer = tokio::time::timeout(self.0, next.run(invocation))
                .await
                .map_err(|_elapsed| Error::Timeout)?;
            guard.disarm();
            answer
        })
    }
}
