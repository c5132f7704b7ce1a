//! tools/list parity with the registry, and tools/call through the one call path: results,
//! tool errors, unknown tools, panics, cancellation and progress.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use groundkit_core::Registry;
use groundkit_examples::hello::HelloContext;
use groundkit_server::Limits;
use serde_json::{Value, json};

use super::support::{Server, Stdio, hello_state, initialize_frame, modern_meta, test_state};

/// Compare what a live `tools/list` served with the registry: the same names in the same order,
/// and for each the registry's description, schemas, title and read-only hint. Returns every
/// difference.
fn parity<Ctx>(registry: &Registry<Ctx>, served: &[Value]) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    let served_by_name: BTreeMap<&str, &Value> = served
        .iter()
        .filter_map(|tool| Some((tool["name"].as_str()?, tool)))
        .collect();
    let registry_names: Vec<&str> = registry.tools().iter().map(|s| s.name()).collect();
    let served_names: Vec<&str> = served.iter().filter_map(|t| t["name"].as_str()).collect();
    if registry_names != served_names {
        problems.push(format!(
            "names differ: registry {registry_names:?}, served {served_names:?}"
        ));
    }
    for spec in registry.tools() {
        let Some(tool) = served_by_name.get(spec.name()) else {
            continue;
        };
        let expect = [
            ("description", json!(spec.description())),
            ("inputSchema", spec.input_schema()),
            ("outputSchema", spec.output_schema()),
            (
                "annotations.readOnlyHint",
                json!(spec.side_effect().is_read_only()),
            ),
        ];
        for (field, expected) in expect {
            let actual = match field.split_once('.') {
                Some((a, b)) => &tool[a][b],
                None => &tool[field],
            };
            if *actual != expected {
                problems.push(format!("{}: {field} differs", spec.name()));
            }
        }
        if spec.title().map(|t| json!(t)).unwrap_or(Value::Null) != tool["title"] {
            problems.push(format!("{}: title differs", spec.name()));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Every tool a live `/mcp` lists, following `nextCursor` to the end.
fn list_over_http(server: &Server, session: &str) -> Vec<Value> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1.. {
        let params = match &cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let frame = json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":params});
        let response = server.mcp(&frame.to_string(), &[("Mcp-Session-Id", session)]);
        let result = response.json()["result"].clone();
        tools.extend(result["tools"].as_array().cloned().unwrap_or_default());
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    tools
}

#[test]
fn live_mcp_tools_list_serves_exactly_the_registry() {
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    let served = list_over_http(&server, &session);
    let registry = Registry::<HelloContext>::collect().expect("registry");
    assert_eq!(parity(&registry, &served), Ok(()));
    assert!(
        served
            .iter()
            .all(|t| t["annotations"]["readOnlyHint"] == true)
    );
    assert_eq!(
        served,
        list_over_http(&server, &session),
        "the order and content are deterministic"
    );
}

#[test]
fn a_tool_added_to_the_mcp_layer_alone_fails_the_parity_check() {
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    let mut served = list_over_http(&server, &session);
    let registry = Registry::<HelloContext>::collect().expect("registry");
    let extra = json!({
        "name": "mcp_only", "description": "not in the registry",
        "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}
    });
    served.push(extra);
    let problems = parity(&registry, &served).expect_err("an extra tool must be caught");
    assert!(
        problems.iter().any(|p| p.contains("mcp_only")),
        "{problems:?}"
    );

    let mut altered = list_over_http(&server, &session);
    altered[0]["inputSchema"]["properties"] = json!({});
    assert!(
        parity(&registry, &altered).is_err(),
        "a changed schema must be caught"
    );
}

/// Paging itself is a unit test of `mcp::tools::page`; here a bogus cursor is refused on the
/// wire.
#[test]
fn a_bogus_cursor_is_invalid_params() {
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    let frame = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bogus"}}"#;
    let response = server.mcp(frame, &[("Mcp-Session-Id", &session)]);
    assert_eq!(response.json()["error"]["code"], -32602);
}

#[tokio::test]
async fn a_panicking_tool_is_32603_without_its_message_and_the_server_keeps_serving() {
    let (state, _ctx) = test_state(Limits::default());
    let mut stdio = Stdio::start(state);
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom"}}"#)
        .await;
    let frame = stdio.recv().await;
    assert_eq!(frame["error"]["code"], -32603, "{frame}");
    assert_eq!(frame["error"]["data"]["kind"], "internal_error");
    assert!(frame["error"]["data"]["request_id"].is_string());
    assert!(
        !frame.to_string().contains("/srv/secret"),
        "no panic message reaches the caller"
    );
    stdio
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#)
        .await;
    assert_eq!(stdio.recv().await["id"], 3);
}

#[tokio::test]
async fn cancelled_calls_stop_and_are_never_answered() {
    let (state, ctx) = test_state(Limits::default());
    let mut stdio = Stdio::start(state);
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"gated","arguments":{"sleep_ms":0}}}"#)
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    stdio
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"changed my mind"}}"#)
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    ctx.gate.add_permits(10);
    stdio
        .send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#)
        .await;
    let frame = stdio.recv().await;
    assert_eq!(
        frame["id"], "after",
        "the cancelled call is not answered: {frame}"
    );
    assert!(stdio.try_recv(Duration::from_millis(300)).await.is_none());
    assert_eq!(
        ctx.finished.load(Ordering::SeqCst),
        0,
        "the handler was stopped"
    );
    // Its concurrency permit was released: a new call runs to completion.
    stdio
        .send(r#"{"jsonrpc":"2.0","id":"again","method":"tools/call","params":{"name":"gated","arguments":{"sleep_ms":0}}}"#)
        .await;
    assert_eq!(stdio.recv().await["result"]["isError"], false);
}

#[tokio::test]
async fn progress_uses_the_token_strictly_increases_and_arrives_before_the_response() {
    let (state, _ctx) = test_state(Limits::default());
    let mut stdio = Stdio::start(state);
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stepper","_meta":{"progressToken":"tok-1"}}}"#)
        .await;
    let mut progress = Vec::new();
    loop {
        let frame = stdio.recv().await;
        if frame["method"] == "notifications/progress" {
            assert_eq!(frame["params"]["progressToken"], "tok-1");
            assert_eq!(frame["params"]["total"], 3.0);
            progress.push(frame["params"]["progress"].as_f64().expect("number"));
        } else {
            assert_eq!(frame["id"], 2);
            break;
        }
    }
    assert_eq!(
        progress,
        vec![1.0, 2.0, 3.0],
        "the repeated 1 is dropped, the rest in order"
    );
    assert!(stdio.try_recv(Duration::from_millis(200)).await.is_none());

    // Without a token, no notification at all.
    stdio
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stepper"}}"#)
        .await;
    assert_eq!(stdio.recv().await["id"], 3);
}

#[tokio::test]
async fn tool_results_carry_structured_content_and_the_same_json_as_text_and_errors_their_kind() {
    let mut stdio = Stdio::start(hello_state(Limits::default()));
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"language":"fr","name":"Zoé"}}}"#)
        .await;
    let result = stdio.recv().await["result"].clone();
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"]["message"], "Bonjour, Zoé!");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().expect("text"))
        .expect("the text block is JSON");
    assert_eq!(text, result["structuredContent"]);

    let cases = [
        (
            r#"{"language":"fr"}"#,
            "invalid_request",
            "missing required field",
        ),
        (
            r#"{"language":"fr","name":"x","extra":1}"#,
            "invalid_request",
            "unknown field",
        ),
        (
            r#"{"language":"FR","name":"x"}"#,
            "validation_error",
            "pattern",
        ),
        (r#"{"language":"zz","name":"x"}"#, "not_found", "unknown"),
    ];
    for (arguments, kind, why) in cases {
        stdio
            .send(&format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"greet","arguments":{arguments}}}}}"#))
            .await;
        let frame = stdio.recv().await;
        let result = &frame["result"];
        let problem = groundkit_tests::tool_error(result);
        assert_eq!(problem["kind"], kind, "{why}: {frame}");
        assert_eq!(problem["request_id"].as_str().map(str::len), Some(32));
    }
    stdio
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#)
        .await;
    assert_eq!(stdio.recv().await["error"]["code"], -32602);
}

/// The registry's digest is one value wherever it is given: `tools/list`, `resources/list` and
/// `resources/templates/list` over HTTP, `server/discover` and `tools/list` over stdio, and
/// OpenAPI's `info`; each tool and resource states its effect class in `_meta` (from
/// 2025-06-18, which has `_meta` on them), and another registry has another digest. That a
/// client recomputes the same value from the lists is the Python SDK client's test
/// (`tests/python/test_hello_client.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_one_registry_digest_and_each_operation_its_effect() {
    const DIGEST: &str = "groundkit/registry-digest";
    const EFFECT: &str = "groundkit/effect";
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    let list = |method: &str| {
        let frame = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}});
        let response = server.mcp(&frame.to_string(), &[("Mcp-Session-Id", &session)]);
        response.json()["result"].clone()
    };
    let tools = list("tools/list");
    let digest = tools["_meta"][DIGEST]
        .as_str()
        .expect("a digest")
        .to_owned();
    assert!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{digest}"
    );
    let resources = list("resources/list");
    let templates = list("resources/templates/list");
    for (listed, key) in [
        (&tools, "tools"),
        (&resources, "resources"),
        (&templates, "resourceTemplates"),
    ] {
        assert_eq!(listed["_meta"][DIGEST], digest.as_str(), "{key}");
        let items = listed[key].as_array().expect("a list");
        assert!(!items.is_empty(), "{key}");
        for item in items {
            assert_eq!(item["_meta"][EFFECT], "read_only", "{key}: {item}");
        }
    }
    let openapi = groundkit_tests::get(server.addr, "/openapi.json").json();
    assert_eq!(
        openapi["info"]["x-groundkit-registry-digest"],
        digest.as_str()
    );

    let mut stdio = Stdio::start(hello_state(Limits::default()));
    for (id, method) in [(1, "server/discover"), (2, "tools/list")] {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": modern_meta()}});
        stdio.send(&frame.to_string()).await;
        assert_eq!(
            stdio.recv().await["result"]["_meta"][DIGEST],
            digest.as_str(),
            "{method}"
        );
    }
    stdio.send(&initialize_frame(3, "2025-03-26")).await;
    stdio.recv().await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#)
        .await;
    let old = stdio.recv().await["result"].clone();
    assert_eq!(old["_meta"][DIGEST], digest.as_str());
    assert!(
        old["tools"][0].get("_meta").is_none(),
        "2025-03-26 tools have no _meta"
    );

    let other = Registry::<groundkit_examples::conformance::ConformanceContext>::collect()
        .expect("conformance registry");
    assert_ne!(other.digest(), digest, "another registry, another digest");
}

/// A declared icon is listed as `icons: [{src}]` from 2025-11-25, the revision that has them,
/// on the tool and the resource template that declare one, and on nothing else; an earlier
/// revision lists none.
#[tokio::test]
async fn declared_icons_are_listed_from_the_revision_that_has_them() {
    // The circle `greet` and `greeting` declare, as an SVG `data:` URI.
    let icon = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PGNpcmNsZSBjeD0iOCIgY3k9IjgiIHI9IjciLz48L3N2Zz4=";
    for (version, listed) in [("2025-11-25", true), ("2025-06-18", false)] {
        let mut stdio = Stdio::start(hello_state(Limits::default()));
        stdio.send(&initialize_frame(1, version)).await;
        stdio.recv().await;
        stdio
            .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#)
            .await;
        let tools = stdio.recv().await["result"]["tools"].clone();
        stdio
            .send(r#"{"jsonrpc":"2.0","id":3,"method":"resources/templates/list","params":{}}"#)
            .await;
        let templates = stdio.recv().await["result"]["resourceTemplates"].clone();
        let icons = |items: &Value, name: &str| {
            items
                .as_array()
                .expect("a list")
                .iter()
                .find(|item| item["name"] == name)
                .expect("listed")
                .get("icons")
                .cloned()
        };
        let expected = listed.then(|| json!([{ "src": icon }]));
        assert_eq!(icons(&tools, "greet"), expected, "{version}");
        assert_eq!(icons(&templates, "greeting"), expected, "{version}");
        assert_eq!(
            icons(&tools, "text_stats"),
            None,
            "{version}: declared none"
        );
    }
}
