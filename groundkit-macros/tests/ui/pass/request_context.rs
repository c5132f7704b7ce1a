//! A tool, a resource and a prompt may take the request context as their last argument (by any
//! path ending in its name), and see the call's request id, transport and cancellation through it.
#![deny(warnings, missing_docs, unused_qualifications, unreachable_pub)]

use garde::Validate;
use groundkit_core::{self as gk, Content, Error, Message, Registry, Transport, prompt, resource, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Context.
pub struct Ctx;

/// No arguments.
#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

/// What a tool saw of its call.
#[derive(Serialize, JsonSchema)]
pub struct Seen {
    /// The request id.
    pub request_id: String,
    /// The transport's name.
    pub transport: String,
    /// Whether it was cancelled.
    pub cancelled: bool,
}

/// Say what the call is.
#[tool(read_only, rest = "GET /seen")]
pub async fn seen(_: &Ctx, _: Nothing, call: gk::RequestContext) -> Result<Seen, Error> {
    Ok(Seen {
        request_id: call.request_id().to_owned(),
        transport: call.transport().as_str().to_owned(),
        cancelled: call.is_cancelled(),
    })
}

/// The request id, as text.
#[resource(read_only, uri = "seen://request", mime_type = "text/plain")]
pub async fn request(_: &Ctx, call: gk::RequestContext) -> Result<Content, Error> {
    Ok(Content::Text(call.request_id().to_owned()))
}

/// The transport, as a message.
#[prompt(read_only)]
pub async fn transport(_: &Ctx, call: gk::RequestContext) -> Result<Vec<Message>, Error> {
    Ok(vec![Message::user(call.transport().as_str())])
}

fn main() {
    let registry = Registry::<Ctx>::collect().expect("registry");
    let call = gk::RequestContext::new("r-1", Transport::McpStdio);
    let tool = registry.get("seen").expect("seen");
    let answer = run(tool.call(&Ctx, serde_json::json!({}), call.clone())).expect("call");
    assert_eq!(
        answer,
        serde_json::json!({"request_id": "r-1", "transport": "mcp-stdio", "cancelled": false})
    );
    call.cancel();
    let answer = run(tool.call(&Ctx, serde_json::json!({}), call)).expect("call");
    assert_eq!(answer["cancelled"], true);
    let (resource, arguments) = registry.resource_for("seen://request").expect("resource");
    let call = gk::RequestContext::new("r-2", Transport::Rest);
    assert_eq!(
        run(resource.read(&Ctx, arguments.into(), call)).expect("read"),
        Content::Text("r-2".into())
    );
    let prompt = registry.prompt("transport").expect("prompt");
    let call = gk::RequestContext::new("r-3", Transport::McpHttp);
    let messages = run(prompt.get(&Ctx, serde_json::json!({}), call)).expect("get");
    assert_eq!(messages, [Message::user("mcp-http")]);
    assert!(prompt.arguments().is_empty(), "the request context is not an argument");
}

/// Run a future that never waits to completion.
fn run<T>(future: impl Future<Output = T>) -> T {
    let waker = std::task::Waker::noop();
    let mut context = std::task::Context::from_waker(waker);
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("the call waited"),
    }
}
