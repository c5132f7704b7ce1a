//! The README's complete example, `examples/src/bin/notes.rs`, run as its users run it: every
//! operation it declares answers over REST, MCP and OpenAPI.

use std::process::Command;

use groundkit_tests::ServerProcess;
use serde_json::{Value, json};

use crate::mcp::support::{example_bin, initialize_frame, request};

#[test]
fn the_notes_example_serves_everything_it_declares_over_rest_mcp_and_openapi() {
    let notes = ServerProcess::spawn(Command::new(example_bin("notes")).args(["--port", "0"]))
        .unwrap_or_else(|(status, log)| panic!("notes exited {status}: {log}"));
    assert_eq!(notes.get("/notes/todo").json(), json!({"text": "call Ada"}));
    assert_eq!(notes.get("/notes/nope").json()["kind"], "not_found");
    assert_eq!(notes.get("/resources/notes/groceries").body, "eggs, flour");
    let prompt = notes
        .post_json("/prompts/summarize", r#"{"name": "todo"}"#)
        .json();
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Summarize this note: call Ada"
    );
    let openapi = notes.get("/openapi.json").json();
    let mut paths: Vec<&String> = openapi["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/notes/{name}",
            "/prompts/summarize",
            "/resources/notes/{name}"
        ]
    );

    let addr = notes.loopback();
    let host = addr.to_string();
    let post = |body: &str, session: Option<&str>| {
        let mut headers = vec![
            ("Host", host.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(session) = session {
            headers.push(("Mcp-Session-Id", session));
            headers.push(("MCP-Protocol-Version", "2025-11-25"));
        }
        request(addr, "POST", "/mcp", &headers, body.as_bytes())
    };
    let initialized = post(&initialize_frame(1, "2025-11-25"), None);
    let capabilities = initialized.json()["result"]["capabilities"].clone();
    for capability in ["tools", "resources", "prompts", "completions"] {
        assert!(
            capabilities.get(capability).is_some(),
            "{capability}: {capabilities}"
        );
    }
    let session = initialized
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    let ask = |method: &str, params: Value| -> Value {
        let frame = json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params});
        post(&frame.to_string(), Some(&session)).json()["result"].clone()
    };
    let completed = ask(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "notes://{name}"}, "argument": {"name": "name", "value": "g"}}),
    );
    assert_eq!(completed["completion"]["values"], json!(["groceries"]));
    let read = ask("resources/read", json!({"uri": "notes://todo"}));
    assert_eq!(read["contents"][0]["text"], "call Ada");
    let called = ask(
        "tools/call",
        json!({"name": "read_note", "arguments": {"name": "todo"}}),
    );
    assert_eq!(called["structuredContent"], json!({"text": "call Ada"}));
}
