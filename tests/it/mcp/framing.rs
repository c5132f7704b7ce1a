//! JSON-RPC framing and the handshake-era lifecycle, over the in-process stdio transport (the
//! framing layer is shared with HTTP; HTTP-specific statuses are in `http.rs`).

use std::time::Duration;

use groundkit_server::Limits;
use serde_json::{Value, json};

use super::support::{Stdio, hello_state, initialize_frame, modern_meta};

fn ping(id: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
}

async fn initialized(limits: Limits) -> Stdio {
    let mut stdio = Stdio::start(hello_state(limits));
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    let answer = stdio.recv().await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    stdio
        .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    stdio
}

#[tokio::test]
async fn request_ids_are_echoed_exactly_including_zero_negative_and_beyond_2_pow_53() {
    let mut stdio = initialized(Limits::default()).await;
    let ids = [
        "0",
        "-1",
        "-9223372036854775808",
        "9007199254740993",
        "18446744073709551615",
        r#""abc""#,
        r#""""#,
        r#""0""#,
    ];
    for id in ids {
        stdio.send(&ping(id)).await;
    }
    // The raw id text appears in the raw frame: compare the echoed JSON text, not a parsed f64.
    let mut echoed = Vec::new();
    for _ in ids {
        let frame = stdio.recv().await;
        assert_eq!(frame["result"], json!({}));
        echoed.push(frame["id"].to_string());
    }
    echoed.sort();
    let mut expected: Vec<String> = ids.iter().map(|s| (*s).to_owned()).collect();
    expected.sort();
    assert_eq!(echoed, expected);
}

/// A `tools/call` answer is written whole, envelope included, apart from every other answer: its
/// id is echoed as exactly, for a result and for a tool error alike.
#[tokio::test]
async fn tool_answers_echo_request_ids_exactly() {
    let mut stdio = initialized(Limits::default()).await;
    let greet = |id: &str, language: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"greet","arguments":{{"language":"{language}","name":"Jo"}}}}}}"#
        )
    };
    for id in [
        "0",
        "-1",
        "-9223372036854775808",
        "18446744073709551615",
        r#""abc""#,
        r#""""#,
        r#""q\"uote""#,
    ] {
        stdio.send(&greet(id, "de")).await;
        let answer = stdio.recv().await;
        assert_eq!(answer["id"].to_string(), id, "{answer}");
        assert_eq!(answer["jsonrpc"], "2.0");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let structured = &answer["result"]["structuredContent"];
        assert!(structured.is_object(), "{answer}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .expect("a text block");
        assert_eq!(
            &serde_json::from_str::<Value>(text).expect("JSON"),
            structured
        );

        stdio.send(&greet(id, "??")).await;
        let answer = stdio.recv().await;
        assert_eq!(answer["id"].to_string(), id, "{answer}");
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert!(answer["result"].get("structuredContent").is_none());
    }
}

#[tokio::test]
async fn null_float_and_structured_ids_are_refused_with_32600_and_never_get_a_result() {
    let mut stdio = initialized(Limits::default()).await;
    for id in ["null", "1.0", "2.5", "1e2", "true", "[1]", r#"{"a":1}"#] {
        stdio.send(&ping(id)).await;
        let frame = stdio.recv().await;
        assert_eq!(frame["error"]["code"], -32600, "id {id}: {frame}");
        assert_eq!(frame["id"], Value::Null, "id {id}");
        assert!(frame.get("result").is_none());
    }
}

#[tokio::test]
async fn malformed_json_is_32700_with_null_id_and_the_connection_keeps_serving() {
    let mut stdio = initialized(Limits::default()).await;
    for junk in [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
        "not json",
        "{]",
    ] {
        stdio.send(junk).await;
        let frame = stdio.recv().await;
        assert_eq!(frame["error"]["code"], -32700, "{junk}");
        assert_eq!(frame["id"], Value::Null);
    }
    stdio.send(&ping("7")).await;
    assert_eq!(stdio.recv().await["id"], 7);
}

#[tokio::test]
async fn notifications_and_incoming_responses_are_never_answered() {
    let mut stdio = initialized(Limits::default()).await;
    stdio
        .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    stdio
        .send(r#"{"jsonrpc":"2.0","method":"notifications/unknown","params":{"x":1}}"#)
        .await;
    stdio
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#)
        .await;
    stdio.send(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#).await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":6,"error":{"code":-1,"message":"x"}}"#)
        .await;
    stdio.send(&ping("8")).await;
    let frame = stdio.recv().await;
    assert_eq!(frame["id"], 8, "only the ping is answered: {frame}");
    assert!(stdio.try_recv(Duration::from_millis(300)).await.is_none());
}

#[tokio::test]
async fn unknown_methods_are_32601_and_positional_params_are_32602() {
    let mut stdio = initialized(Limits::default()).await;
    for method in ["resources/watch", "logging/setLevel", "tasks/list", "nope"] {
        stdio
            .send(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}"}}"#
            ))
            .await;
        assert_eq!(stdio.recv().await["error"]["code"], -32601, "{method}");
    }
    for params in ["[1,2]", "3", r#""x""#] {
        stdio
            .send(&format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{params}}}"#
            ))
            .await;
        let frame = stdio.recv().await;
        assert_eq!(frame["error"]["code"], -32602, "{params}");
        assert_eq!(frame["id"], 2);
    }
    stdio
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#)
        .await;
    assert_eq!(stdio.recv().await["error"]["code"], -32602, "missing name");
}

#[tokio::test]
async fn params_may_be_omitted_and_meta_may_carry_anything() {
    let mut stdio = initialized(Limits::default()).await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    assert!(stdio.recv().await["result"]["tools"].is_array());
    stdio
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"x":[1,{"y":null}],"progressToken":"p"}}}"#)
        .await;
    assert_eq!(stdio.recv().await["result"], json!({}));
    stdio
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_languages","_meta":{"anything":true}}}"#)
        .await;
    let frame = stdio.recv().await;
    assert_eq!(
        frame["result"]["isError"], false,
        "missing arguments are {{}}: {frame}"
    );
}

#[tokio::test]
async fn batches_are_answered_per_message_in_2025_03_26_only() {
    let mut stdio = Stdio::start(hello_state(Limits::default()));
    stdio.send(&initialize_frame(1, "2025-03-26")).await;
    assert_eq!(
        stdio.recv().await["result"]["protocolVersion"],
        "2025-03-26"
    );
    stdio
        .send(r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"nope"}]"#)
        .await;
    let batch = stdio.recv().await;
    let answers = batch.as_array().expect("a batch answer is an array");
    assert_eq!(
        answers.len(),
        2,
        "the notification is not answered: {batch}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == "a" && a["result"] == json!({}))
    );
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == "b" && a["error"]["code"] == -32601)
    );
    stdio
        .send(&format!("[{}]", initialize_frame(9, "2025-03-26")))
        .await;
    assert_eq!(
        stdio.recv().await["error"]["code"],
        -32600,
        "initialize in a batch"
    );
    stdio.send("[]").await;
    assert_eq!(stdio.recv().await["error"]["code"], -32600, "empty batch");

    let mut newer = initialized(Limits::default()).await;
    newer
        .send(r#"[{"jsonrpc":"2.0","id":"a","method":"ping"}]"#)
        .await;
    let frame = newer.recv().await;
    assert_eq!(
        frame["error"]["code"], -32600,
        "2025-11-25 has no batches: {frame}"
    );
    assert_eq!(frame["id"], Value::Null);
}

#[tokio::test]
async fn an_unknown_version_is_answered_with_the_latest_and_requests_before_initialized_are_served()
{
    let mut stdio = Stdio::start(hello_state(Limits::default()));
    stdio.send(&ping("0")).await;
    assert_eq!(
        stdio.recv().await["result"],
        json!({}),
        "ping before initialize"
    );
    stdio.send(&initialize_frame(1, "1999-01-01")).await;
    let result = stdio.recv().await["result"].clone();
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert!(result["capabilities"]["tools"].is_object());
    assert!(
        result["capabilities"].get("logging").is_none(),
        "only implemented capabilities"
    );
    assert!(
        result["serverInfo"]["name"].is_string() && result["serverInfo"]["version"].is_string()
    );
    // No notifications/initialized yet: tools/list is still served.
    stdio
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    assert_eq!(stdio.recv().await["result"]["tools"][0]["name"], "greet");
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut other = Stdio::start(hello_state(Limits::default()));
        other.send(&initialize_frame(1, version)).await;
        assert_eq!(other.recv().await["result"]["protocolVersion"], version);
    }
}

#[tokio::test]
async fn a_legacy_discover_probe_is_refused_at_once_and_the_handshake_then_works() {
    let mut stdio = Stdio::start(hello_state(Limits::default()));
    stdio
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#)
        .await;
    let frame = stdio.recv_within(Duration::from_millis(500)).await;
    assert_eq!(frame["error"]["code"], -32602, "{frame}");
    stdio.send(&initialize_frame(2, "2025-11-25")).await;
    assert_eq!(
        stdio.recv().await["result"]["protocolVersion"],
        "2025-11-25"
    );
}

#[tokio::test]
async fn stateless_requests_name_their_version_in_meta_and_get_cache_hints() {
    let mut stdio = Stdio::start(hello_state(Limits::default()));
    let discover = json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta": modern_meta()}});
    stdio.send(&discover.to_string()).await;
    let result = stdio.recv().await["result"].clone();
    assert!(
        result["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28")) && v.contains(&json!("2025-03-26")))
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "hello"
    );
    let list =
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta": modern_meta()}});
    stdio.send(&list.to_string()).await;
    let result = stdio.recv().await["result"].clone();
    assert!(result["ttlMs"].as_u64().is_some());
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["resultType"], "complete");
    for removed in ["initialize", "ping"] {
        let frame =
            json!({"jsonrpc":"2.0","id":3,"method":removed,"params":{"_meta": modern_meta()}});
        stdio.send(&frame.to_string()).await;
        assert_eq!(stdio.recv().await["error"]["code"], -32601, "{removed}");
    }
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let frame = json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta": meta}});
    stdio.send(&frame.to_string()).await;
    let error = stdio.recv().await["error"].clone();
    assert_eq!(error["code"], -32022);
    assert_eq!(error["data"]["requested"], "2099-01-01");
    let frame = json!({"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    stdio.send(&frame.to_string()).await;
    assert_eq!(
        stdio.recv().await["error"]["code"],
        -32602,
        "missing clientCapabilities"
    );
}

#[tokio::test]
async fn a_second_initialize_on_one_connection_is_refused_and_the_first_revision_stays() {
    let mut stdio = initialized(Limits::default()).await;
    stdio.send(&initialize_frame(2, "2025-03-26")).await;
    let again = stdio.recv().await;
    assert_eq!(again["id"], 2);
    assert_eq!(again["error"]["code"], -32600, "{again}");
    stdio
        .send(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_languages"}}"#,
        )
        .await;
    let call = stdio.recv().await;
    assert!(
        call["result"]["structuredContent"].is_object(),
        "still 2025-11-25, with structured content: {call}"
    );
}
