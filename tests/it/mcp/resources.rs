//! MCP resources: `resources/list`, `resources/templates/list` and `resources/read` over stdio
//! and Streamable HTTP, from the registry's `#[resource]` declarations, through the one call path
//! and the one error mapping.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_examples::conformance::ConformanceContext;
use groundkit_examples::hello::HelloContext;
use groundkit_server::{AppState, Limits};
use serde_json::{Value, json};

use super::support::{Server, Stdio, hello_state, initialize_frame, modern_meta, test_state};

fn frame(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// An initialized stdio connection to `state`.
async fn stdio<Ctx: Send + Sync + 'static>(state: AppState<Ctx>) -> Stdio {
    let mut stdio = Stdio::start(state);
    stdio.send(&initialize_frame(0, "2025-11-25")).await;
    stdio.recv().await;
    stdio
}

/// The answer to `method` with `params` over an initialized stdio connection.
async fn ask(stdio: &mut Stdio, method: &str, params: Value) -> Value {
    stdio.send(&frame(7, method, params)).await;
    stdio.recv().await
}

/// The answer to `method` with `params` in an HTTP session.
fn ask_http(server: &Server, session: &str, method: &str, params: Value) -> Value {
    let response = server.mcp(
        &frame(7, method, params),
        &[
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    assert_eq!(response.status, 200, "{}", response.body);
    response.json()
}

#[tokio::test]
async fn both_transports_list_and_read_the_registrys_resources_and_templates() {
    let mut stdio = stdio(hello_state(Limits::default())).await;
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    let asks = [
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "hello://languages"})),
        ("resources/read", json!({"uri": "hello://greetings/fr/Ada"})),
        (
            "resources/read",
            json!({"uri": "hello://greetings/fr/Ada%20L."}),
        ),
    ];
    let mut answers = Vec::new();
    for (method, params) in asks {
        let over_stdio = ask(&mut stdio, method, params.clone()).await;
        let over_http = ask_http(&server, &session, method, params);
        assert_eq!(over_stdio, over_http, "{method}");
        answers.push(over_stdio["result"].clone());
    }
    assert_eq!(
        answers[0]["resources"],
        json!([{
            "uri": "hello://languages", "name": "languages", "mimeType": "text/plain",
            "description": "The languages the server greets in, one a line: code, name and greeting word, separated by\ntabs.",
            "_meta": {"groundkit/effect": "read_only"},
        }])
    );
    let templates = answers[1]["resourceTemplates"]
        .as_array()
        .expect("templates");
    assert_eq!(templates.len(), 1);
    assert_eq!(
        templates[0]["uriTemplate"],
        "hello://greetings/{language}/{name}"
    );
    assert_eq!(templates[0]["title"], "A greeting");
    let languages = &answers[2]["contents"][0];
    assert_eq!(languages["mimeType"], "text/plain");
    assert!(
        languages["text"]
            .as_str()
            .expect("text")
            .contains("fr\tFrench\tBonjour\n")
    );
    assert_eq!(
        answers[3]["contents"],
        json!([{"uri": "hello://greetings/fr/Ada", "mimeType": "text/plain", "text": "Bonjour, Ada!"}])
    );
    assert_eq!(answers[4]["contents"][0]["text"], "Bonjour, Ada L.!");
}

#[tokio::test]
async fn a_traversal_in_a_template_parameter_is_refused_before_the_function_runs() {
    let (state, ctx) = test_state(Limits::default());
    let mut stdio = stdio(state).await;
    for uri in [
        "test://files/..",
        "test://files/..%2F..%2Fetc%2Fpasswd",
        "test://files/a%2F..%2Fb",
        "test://files/%2E%2E",
    ] {
        let answer = ask(&mut stdio, "resources/read", json!({"uri": uri})).await;
        assert_eq!(answer["error"]["code"], -32602, "{uri}: {answer}");
        assert_eq!(answer["error"]["data"]["kind"], "validation_error", "{uri}");
        assert_eq!(answer["error"]["data"]["uri"], uri);
        assert_eq!(answer["error"]["data"]["field"], "name");
    }
    assert_eq!(ctx.reads.load(Ordering::SeqCst), 0, "no read ran");
    let answer = ask(
        &mut stdio,
        "resources/read",
        json!({"uri": "test://files/a.txt"}),
    )
    .await;
    assert_eq!(answer["result"]["contents"][0]["text"], "contents of a.txt");
    assert_eq!(ctx.reads.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unknown_resource_is_32002_with_its_uri_and_invalid_params_in_the_stateless_era() {
    let mut stdio = stdio(hello_state(Limits::default())).await;
    for uri in [
        "hello://nothing",
        "other://languages",
        "hello://greetings/fr",
        "hello://greetings/xx/Ada",
    ] {
        let answer = ask(&mut stdio, "resources/read", json!({"uri": uri})).await;
        assert_eq!(answer["error"]["code"], -32002, "{uri}: {answer}");
        assert_eq!(answer["error"]["message"], "Resource not found");
        assert_eq!(answer["error"]["data"]["uri"], uri);
        assert_eq!(answer["error"]["data"]["kind"], "not_found");
    }
    for params in [json!({}), json!({"uri": 3})] {
        let answer = ask(&mut stdio, "resources/read", params).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }

    let server = Server::start(hello_state(Limits::default()));
    let params = json!({"uri": "hello://nothing", "_meta": modern_meta()});
    let response = server.mcp(
        &frame(1, "resources/read", params),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "resources/read"),
            ("Mcp-Name", "hello://nothing"),
        ],
    );
    let answer = response.json();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["uri"], "hello://nothing");
}

#[tokio::test]
async fn a_panicking_read_is_an_internal_error_that_shows_nothing_and_the_server_keeps_serving() {
    let (state, _ctx) = test_state(Limits::default());
    let mut stdio = stdio(state).await;
    let answer = ask(&mut stdio, "resources/read", json!({"uri": "test://boom"})).await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert_eq!(answer["error"]["data"]["kind"], "internal_error");
    assert!(!answer.to_string().contains("/srv"), "{answer}");
    let answer = ask(
        &mut stdio,
        "resources/read",
        json!({"uri": "test://files/b"}),
    )
    .await;
    assert_eq!(answer["result"]["contents"][0]["text"], "contents of b");
}

#[tokio::test]
async fn a_binary_resource_reads_as_base64_with_its_mime_type() {
    let registry = Registry::<ConformanceContext>::collect().expect("conformance registry");
    let info = ApiInfo {
        title: "conformance".into(),
        version: "0".into(),
    };
    let state = AppState::new(registry, ConformanceContext, info, Limits::default());
    let mut stdio = stdio(state).await;
    let answer = ask(
        &mut stdio,
        "resources/read",
        json!({"uri": "test://static-binary"}),
    )
    .await;
    let contents = &answer["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "image/png");
    assert!(contents.get("text").is_none());
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(contents["blob"].as_str().expect("blob"))
        .expect("base64");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

#[tokio::test]
async fn a_registry_without_resources_neither_advertises_nor_answers_them() {
    let hello = Registry::<HelloContext>::collect().expect("hello registry");
    let tools_only =
        Registry::<HelloContext>::from_specs(hello.tools().iter().copied()).expect("tools alone");
    let info = ApiInfo {
        title: "tools only".into(),
        version: "0".into(),
    };
    let state = AppState::new(tools_only, HelloContext::default(), info, Limits::default());
    let mut stdio = Stdio::start_shared(Arc::new(state));
    stdio.send(&initialize_frame(0, "2025-11-25")).await;
    let answer = stdio.recv().await;
    assert_eq!(
        answer["result"]["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    for method in [
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
    ] {
        let answer = ask(&mut stdio, method, json!({"uri": "hello://languages"})).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}");
    }

    let mut with = stdio_with_resources().await;
    let answer = with.recv().await;
    assert_eq!(
        answer["result"]["capabilities"]["resources"],
        json!({"listChanged": false, "subscribe": true})
    );
}

async fn stdio_with_resources() -> Stdio {
    let mut stdio = Stdio::start(hello_state(Limits::default()));
    stdio.send(&initialize_frame(0, "2025-11-25")).await;
    stdio
}
