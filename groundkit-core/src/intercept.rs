//! Interceptors: one chain around every call a server makes (a tool call, a resource read, a
//! prompt's get, a completion), the same on every transport.
//!
//! An [`Interceptor`] is handed the [`Invocation`] (what is called, with which arguments, and
//! its [`RequestContext`]) and the [`Next`] step of the chain. It may refuse the call by
//! answering an [`Error`] without running `next`, answer it itself (from a cache, say), or run
//! `next` and look at, time, or replace what it answers. Interceptors run in the order they were
//! added, each around the ones after it, and the function itself runs last.
//!
//! This is tower's model (a `Layer` wrapping a `Service`, the request passed by value) cut down
//! to what a call needs: one object-safe trait over one erased request and answer, no
//! `poll_ready` (a server refuses an overloaded call rather than queueing it), and nothing about
//! HTTP. HTTP-only concerns (Host and Origin checks, body limits, request ids, the access line,
//! which also records requests that never become a call) stay actix-web middleware; a call's
//! bounds are interceptors of this chain in groundkit-server.

use std::sync::Arc;

use serde_json::Value;

use crate::call::RequestContext;
use crate::complete::Completions;
use crate::error::Error;
use crate::prompt::Message;
use crate::resource::Content;
use crate::tool::BoxFuture;

/// What kind of call an [`Invocation`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A tool call.
    Tool,
    /// A resource read.
    Resource,
    /// A prompt's get.
    Prompt,
    /// A completion of a prompt's or a resource template's argument.
    Completion,
}

impl Kind {
    /// Its name in logs: `tool`, `resource`, `prompt`, `completion`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Prompt => "prompt",
            Kind::Completion => "completion",
        }
    }
}

/// One call, as the chain sees it.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// What kind of call it is.
    pub kind: Kind,
    /// The tool's, resource's or prompt's name (for a completion, the prompt's name or the
    /// resource template's).
    pub name: &'static str,
    /// The arguments: a tool's request, a resource template's variables, a prompt's arguments,
    /// or a completion's `{"argument", "value", "arguments"}`. A tool, resource or prompt runs
    /// with the arguments as the chain hands them on; a completion runs with those it was asked
    /// with.
    pub arguments: Value,
    /// The call's context.
    pub request: RequestContext,
}

/// What a call answers, whatever its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A tool's JSON output.
    Json(Value),
    /// A resource's content.
    Content(Content),
    /// A prompt's messages.
    Messages(Vec<Message>),
    /// A completion's values.
    Completions(Completions),
}

/// The rest of the chain after an interceptor, ending in the function itself.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Interceptor>],
    last: Box<dyn FnOnce(Invocation) -> BoxFuture<'a, Result<Answer, Error>> + Send + 'a>,
}

impl<'a> Next<'a> {
    /// The chain `interceptors`, ending in `last` (the call itself).
    pub fn new(
        interceptors: &'a [Arc<dyn Interceptor>],
        last: impl FnOnce(Invocation) -> BoxFuture<'a, Result<Answer, Error>> + Send + 'a,
    ) -> Self {
        Self {
            rest: interceptors,
            last: Box::new(last),
        }
    }

    /// Run the rest of the chain on `invocation`.
    pub fn run(self, invocation: Invocation) -> BoxFuture<'a, Result<Answer, Error>> {
        match self.rest.split_first() {
            Some((first, rest)) => first.intercept(
                invocation,
                Next {
                    rest,
                    last: self.last,
                },
            ),
            None => (self.last)(invocation),
        }
    }
}

/// A step of the chain around every call: see the module documentation.
pub trait Interceptor: Send + Sync + 'static {
    /// Answer `invocation`, running `next` (or not).
    fn intercept<'a>(
        &'a self,
        invocation: Invocation,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Answer, Error>>;
}

/// An interceptor from a function of the invocation and the next step (`AppState::intercept`
/// takes it like any other):
///
/// ```
/// # use groundkit_core::intercept::{Interceptor, from_fn};
/// let log_calls = from_fn(|call, next| {
///     eprintln!("{} {}", call.kind.as_str(), call.name);
///     next.run(call)
/// });
/// # fn is_interceptor(_: impl Interceptor) {}
/// # is_interceptor(log_calls);
/// ```
pub fn from_fn<F>(f: F) -> FromFn<F>
where
    F: for<'a> Fn(Invocation, Next<'a>) -> BoxFuture<'a, Result<Answer, Error>>
        + Send
        + Sync
        + 'static,
{
    FromFn(f)
}

/// An interceptor made by [`from_fn`].
pub struct FromFn<F>(F);

impl<F> Interceptor for FromFn<F>
where
    F: for<'a> Fn(Invocation, Next<'a>) -> BoxFuture<'a, Result<Answer, Error>>
        + Send
        + Sync
        + 'static,
{
    fn intercept<'a>(
        &'a self,
        invocation: Invocation,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Answer, Error>> {
        (self.0)(invocation, next)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::call::Transport;

    /// Records its name on the way in and out.
    struct Trace(&'static str, Arc<Mutex<Vec<String>>>);

    impl Interceptor for Trace {
        fn intercept<'a>(
            &'a self,
            invocation: Invocation,
            next: Next<'a>,
        ) -> BoxFuture<'a, Result<Answer, Error>> {
            Box::pin(async move {
                self.1.lock().expect("lock").push(format!("{} in", self.0));
                let answer = next.run(invocation).await;
                self.1.lock().expect("lock").push(format!("{} out", self.0));
                answer
            })
        }
    }

    /// Refuses every call.
    struct Refuse;

    impl Interceptor for Refuse {
        fn intercept<'a>(
            &'a self,
            _: Invocation,
            _: Next<'a>,
        ) -> BoxFuture<'a, Result<Answer, Error>> {
            Box::pin(async { Err(Error::Overloaded) })
        }
    }

    fn invocation() -> Invocation {
        Invocation {
            kind: Kind::Tool,
            name: "t",
            arguments: serde_json::json!({}),
            request: RequestContext::new("r", Transport::InProcess),
        }
    }

    fn run(chain: &[Arc<dyn Interceptor>], ran: &Arc<Mutex<Vec<String>>>) -> Result<Answer, Error> {
        let ran = Arc::clone(ran);
        let next = Next::new(chain, move |_| {
            Box::pin(async move {
                ran.lock().expect("lock").push("call".into());
                Ok(Answer::Json(Value::Null))
            })
        });
        futures_util::FutureExt::now_or_never(next.run(invocation())).expect("ready")
    }

    #[test]
    fn interceptors_run_in_order_around_the_call_and_a_refusal_stops_the_rest() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let chain: Vec<Arc<dyn Interceptor>> = vec![
            Arc::new(Trace("a", Arc::clone(&log))),
            Arc::new(Trace("b", Arc::clone(&log))),
        ];
        assert_eq!(run(&chain, &log).ok(), Some(Answer::Json(Value::Null)));
        assert_eq!(
            *log.lock().expect("lock"),
            ["a in", "b in", "call", "b out", "a out"]
        );

        log.lock().expect("lock").clear();
        let chain: Vec<Arc<dyn Interceptor>> =
            vec![Arc::new(Trace("a", Arc::clone(&log))), Arc::new(Refuse)];
        assert!(matches!(run(&chain, &log), Err(Error::Overloaded)));
        assert_eq!(*log.lock().expect("lock"), ["a in", "a out"]);
    }
}
