//! Interceptors: one chain around every call, the same on REST, MCP over HTTP and stdio. An
//! interceptor added in one line sees every kind of call with its request context, can refuse
//! one with a typed error (the same `kind` on every transport), and can answer one itself
//! without the function running; the server's own bounds run first.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use groundkit_core::Error;
use groundkit_core::intercept::{Answer, Interceptor, Invocation, Next};
use groundkit_core::tool::BoxFuture;
use groundkit_server::Limits;
use groundkit_tests::TestServer;
use serde_json::json;

use crate::mcp::support::{Stdio, hello_state, initialize_frame, test_state};

/// What one call looked like to the chain: kind, name, transport, and how it ended.
type Seen = (String, String, String, String);

/// Records every call it sees, and refuses any whose arguments name the language `xx`.
struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Interceptor for Recorder {
    fn intercept<'a>(
        &'a self,
        invocation: Invocation,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Answer, Error>> {
        Box::pin(async move {
            let kind = invocation.kind.as_str().to_owned();
            let name = invocation.name.to_owned();
            let transport = invocation.request.transport().as_str().to_owned();
            let refused = invocation.arguments.get("language") == Some(&json!("xx"));
            let answer = if refused {
                Err(Error::Validation {
                    field: "language".into(),
                    message: "xx is refused by policy".into(),
                })
            } else {
                next.run(invocation).await
            };
            let end = match &answer {
                Ok(_) => "ok".to_owned(),
                Err(error) => error.kind().to_owned(),
            };
            self.0
                .lock()
                .expect("lock")
                .push((kind, name, transport, end));
            answer
        })
    }
}

/// Answers a resource read it has answered before from what it kept, keyed by name and
/// arguments.
#[derive(Default)]
struct Cache(Mutex<HashMap<String, Answer>>);

impl Interceptor for Cache {
    fn intercept<'a>(
        &'a self,
        invocation: Invocation,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Answer, Error>> {
        Box::pin(async move {
            let key = format!("{}{}", invocation.name, invocation.arguments);
            if let Some(answer) = self.0.lock().expect("lock").get(&key) {
                return Ok(answer.clone());
            }
            let answer = next.run(invocation).await?;
            self.0.lock().expect("lock").insert(key, answer.clone());
            Ok(answer)
        })
    }
}

fn seen(kind: &str, name: &str, transport: &str, end: &str) -> Seen {
    (kind.into(), name.into(), transport.into(), end.into())
}

#[tokio::test]
async fn an_interceptor_sees_every_call_on_every_transport_and_refuses_alike() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let state = || hello_state(Limits::default()).intercept(Recorder(Arc::clone(&log)));
    let server = TestServer::start(state());
    let mut stdio = Stdio::start(state());
    stdio.send(&initialize_frame(0, "2025-11-25")).await;
    stdio.recv().await;

    assert_eq!(server.get("/greetings/fr/Ada").status, 200);
    let refused = server.get("/greetings/xx/Ada");
    assert_eq!(
        (refused.status, refused.json()["kind"].clone()),
        (422, json!("validation_error"))
    );
    let frames = [
        json!({"method": "tools/call", "params": {"name": "greet", "arguments": {"language": "xx", "name": "Ada"}}}),
        json!({"method": "resources/read", "params": {"uri": "hello://greetings/de/Jo"}}),
        json!({"method": "prompts/get", "params": {"name": "greeting_card", "arguments": {"language": "es", "name": "Jo"}}}),
        json!({"method": "completion/complete", "params": {"ref": {"type": "ref/prompt", "name": "greeting_card"}, "argument": {"name": "language", "value": "e"}}}),
    ];
    let mut answers = Vec::new();
    for (id, frame) in frames.iter().enumerate() {
        let mut frame = frame.clone();
        frame["jsonrpc"] = json!("2.0");
        frame["id"] = json!(id);
        stdio.send(&frame.to_string()).await;
        answers.push(stdio.recv().await);
    }
    let refused = groundkit_tests::tool_error(&answers[0]["result"]);
    assert_eq!(refused["kind"], "validation_error", "{refused}");
    assert_eq!(refused["field"], "language");
    assert_eq!(
        answers[3]["result"]["completion"]["values"],
        json!(["en", "es"])
    );

    assert_eq!(
        *log.lock().expect("lock"),
        [
            seen("tool", "greet", "rest", "ok"),
            seen("tool", "greet", "rest", "validation_error"),
            seen("tool", "greet", "mcp-stdio", "validation_error"),
            seen("resource", "greeting", "mcp-stdio", "ok"),
            seen("prompt", "greeting_card", "mcp-stdio", "ok"),
            seen("completion", "greeting_card", "mcp-stdio", "ok"),
        ]
    );
}

#[tokio::test]
async fn an_interceptor_can_answer_a_call_without_the_function_running() {
    let (state, ctx) = test_state(Limits::default());
    let server = TestServer::start(state.intercept(Cache::default()));
    let first = server.get("/resources/test/files/a.txt");
    let second = server.get("/resources/test/files/a.txt");
    let other = server.get("/resources/test/files/b.txt");
    assert_eq!(
        (first.status, first.body.as_str()),
        (200, "contents of a.txt")
    );
    assert_eq!(
        (second.status, second.body.as_str()),
        (200, "contents of a.txt")
    );
    assert_eq!(other.body, "contents of b.txt");
    assert_eq!(
        ctx.reads.load(Ordering::SeqCst),
        2,
        "the second read of a.txt came from the cache"
    );
}
