//! A tool declared with a raw identifier is named without the `r#`: `r#match` is `match`.

use std::pin::pin;
use std::task::{Context, Poll, Waker};

use garde::Validate;
use groundkit_core::{Error, Registry, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Ctx;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Req {
    #[garde(length(max = 10))]
    pub pattern: String,
    #[garde(length(max = 100))]
    pub text: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Resp {
    pub found: bool,
}

/// Whether a pattern occurs in a text.
#[tool(read_only, rest = "POST /match")]
async fn r#match(_: &Ctx, request: Req) -> Result<Resp, Error> {
    Ok(Resp { found: request.text.contains(&request.pattern) })
}

fn main() {
    let registry = Registry::<Ctx>::collect().expect("registry");
    let spec = registry.get("match").expect("the tool is registered as `match`");
    assert_eq!(spec.route().path, "/match");
    // The handler behind the name calls `r#match`; having nothing to wait for, it is ready at
    // the first poll.
    let arguments = serde_json::json!({"pattern": "ch", "text": "match"});
    let mut call = pin!(spec.call(&Ctx, arguments, call()));
    let Poll::Ready(output) = call.as_mut().poll(&mut Context::from_waker(Waker::noop())) else {
        panic!("the call was not ready");
    };
    assert_eq!(output.expect("the call succeeds"), serde_json::json!({"found": true}));
    // The function itself is still called by its raw identifier.
    let _future = r#match(&Ctx, Req { pattern: String::new(), text: String::new() });
}

/// The context of a call made here.
fn call() -> groundkit_core::RequestContext {
    groundkit_core::RequestContext::new("test", groundkit_core::Transport::InProcess)
}
