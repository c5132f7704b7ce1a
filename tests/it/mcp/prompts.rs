//! MCP prompts and completions: `prompts/list`, `prompts/get` and `completion/complete` over
//! stdio and Streamable HTTP, and a prompt's REST route, from the registry's `#[prompt]`
//! declarations and the completers declared beside prompts' arguments and templates'
//! variables.

use groundkit_server::Limits;
use serde_json::{Value, json};

use super::support::{Server, Stdio, hello_state, initialize_frame, request};

fn frame(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

async fn stdio() -> Stdio {
    let mut stdio = Stdio::start(hello_state(Limits::default()));
    stdio.send(&initialize_frame(0, "2025-11-25")).await;
    let answer = stdio.recv().await;
    assert_eq!(
        answer["result"]["capabilities"]["prompts"],
        json!({"listChanged": false})
    );
    assert_eq!(answer["result"]["capabilities"]["completions"], json!({}));
    stdio
}

/// The same request over stdio and HTTP: the answer, which must be the same on both but for an
/// error's request id.
async fn ask_both(
    stdio: &mut Stdio,
    server: &Server,
    session: &str,
    method: &str,
    params: Value,
) -> Value {
    stdio.send(&frame(7, method, params.clone())).await;
    let mut over_stdio = stdio.recv().await;
    let response = server.mcp(
        &frame(7, method, params),
        &[
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    assert_eq!(response.status, 200, "{}", response.body);
    let mut over_http = response.json();
    for answer in [&mut over_stdio, &mut over_http] {
        if let Some(data) = answer["error"]["data"].as_object_mut() {
            assert!(data.remove("request_id").is_some(), "{data:?}");
        }
    }
    assert_eq!(over_stdio, over_http, "{method}");
    over_stdio
}

fn rest_post(server: &Server, path: &str, body: &Value) -> (u16, Value) {
    let host = server.host();
    let response = request(
        server.addr,
        "POST",
        path,
        &[
            ("Host", host.as_str()),
            ("Content-Type", "application/json"),
        ],
        body.to_string().as_bytes(),
    );
    (response.status, response.json())
}

#[tokio::test]
async fn prompts_are_listed_and_got_alike_on_stdio_http_and_rest() {
    let mut stdio = stdio().await;
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();

    let listed = ask_both(&mut stdio, &server, &session, "prompts/list", json!({})).await;
    assert_eq!(
        listed["result"]["prompts"],
        json!([{
            "name": "greeting_card",
            "title": "Write a greeting card",
            "description": "Ask for a two-line greeting card that opens with the server's greeting.",
            "arguments": [
                {"name": "language", "description": "ISO 639-1 code of the language to greet in.", "required": true},
                {"name": "name", "description": "Who the card is for.", "required": true},
                {"name": "occasion", "description": "The occasion, if there is one.", "required": false},
            ],
            "_meta": {"groundkit/effect": "read_only"},
        }])
    );

    let arguments = json!({"language": "fr", "name": "Ada", "occasion": "a birthday"});
    let got = ask_both(
        &mut stdio,
        &server,
        &session,
        "prompts/get",
        json!({"name": "greeting_card", "arguments": arguments}),
    )
    .await;
    let expected = json!({
        "description": "Ask for a two-line greeting card that opens with the server's greeting.",
        "messages": [{"role": "user", "content": {"type": "text",
            "text": "Write a two-line greeting card for a birthday in French. Open it with \"Bonjour, Ada!\"."}}],
    });
    assert_eq!(got["result"], expected);
    let (status, body) = rest_post(&server, "/prompts/greeting_card", &arguments);
    assert_eq!((status, body), (200, expected));
}

#[tokio::test]
async fn a_prompts_bad_arguments_fail_with_the_same_kind_on_mcp_and_rest() {
    let mut stdio = stdio().await;
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    let cases = [
        (json!({"language": "fr"}), "invalid_request", 400),
        (
            json!({"language": "FR", "name": "Ada"}),
            "validation_error",
            422,
        ),
        (
            json!({"language": "fr", "name": "Ada", "extra": "x"}),
            "invalid_request",
            400,
        ),
        (json!({"language": "xx", "name": "Ada"}), "not_found", 404),
    ];
    for (arguments, kind, status) in cases {
        let answer = ask_both(
            &mut stdio,
            &server,
            &session,
            "prompts/get",
            json!({"name": "greeting_card", "arguments": arguments}),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{arguments}");
        assert_eq!(answer["error"]["data"]["kind"], kind, "{arguments}");
        let (rest_status, body) = rest_post(&server, "/prompts/greeting_card", &arguments);
        assert_eq!(
            (rest_status, body["kind"].as_str()),
            (status, Some(kind)),
            "{arguments}"
        );
    }
    let unknown = ask_both(
        &mut stdio,
        &server,
        &session,
        "prompts/get",
        json!({"name": "nope"}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(
        unknown["error"]["message"],
        "Invalid params: unknown prompt 'nope'"
    );
}

#[tokio::test]
async fn completions_offer_the_completers_values_that_begin_with_what_was_typed() {
    let mut stdio = stdio().await;
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    let prompt = json!({"type": "ref/prompt", "name": "greeting_card"});
    let template = json!({"type": "ref/resource", "uri": "hello://greetings/{language}/{name}"});
    let cases = [
        (&prompt, "language", "e", json!(["en", "es"])),
        (
            &prompt,
            "language",
            "",
            json!(["de", "en", "es", "fr", "sw"]),
        ),
        (&prompt, "language", "x", json!([])),
        // An argument without a completer completes to nothing.
        (&prompt, "name", "A", json!([])),
        (&template, "language", "s", json!(["sw"])),
    ];
    for (reference, argument, typed, values) in cases {
        let answer = ask_both(
            &mut stdio,
            &server,
            &session,
            "completion/complete",
            json!({"ref": reference, "argument": {"name": argument, "value": typed}}),
        )
        .await;
        let completion = &answer["result"]["completion"];
        assert_eq!(completion["values"], values, "{argument}={typed}");
        assert_eq!(completion["total"], values.as_array().map_or(0, Vec::len));
        assert_eq!(completion["hasMore"], false);
    }
    let refused = [
        json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
        json!({"ref": {"type": "ref/resource", "uri": "hello://languages/{x}"}, "argument": {"name": "x", "value": ""}}),
        json!({"ref": {"type": "ref/tool", "name": "greet"}, "argument": {"name": "language", "value": ""}}),
        json!({"ref": prompt, "argument": {"name": "language"}}),
    ];
    for params in refused {
        let answer = ask_both(
            &mut stdio,
            &server,
            &session,
            "completion/complete",
            params.clone(),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{params}");
    }
}
