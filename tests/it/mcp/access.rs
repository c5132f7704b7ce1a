//! The access log: exactly one line per request, whatever the transport, naming the transport
//! that served it.

use groundkit_server::Limits;
use groundkit_tests::{Response, captured_logs};
use serde_json::json;

use super::support::{Server, hello_state, request, test_state};

/// The access lines of the request `response` answered (found by its `X-Request-ID`).
fn access_lines(response: &Response) -> Vec<String> {
    let id = response
        .header("x-request-id")
        .expect("an X-Request-ID header");
    captured_logs()
        .lines()
        .filter(|line| line.contains(id) && line.contains("groundkit::access"))
        .map(str::to_owned)
        .collect()
}

/// The one access line of `response`, checked to be the only one and to hold every `part`.
fn only_line(response: &Response, parts: &[&str]) -> String {
    let lines = access_lines(response);
    assert_eq!(lines.len(), 1, "one access line per request: {lines:#?}");
    for part in parts {
        assert!(lines[0].contains(part), "{part} missing from {}", lines[0]);
    }
    lines[0].clone()
}

#[test]
fn one_rest_request_and_one_mcp_http_request_write_one_access_line_each() {
    groundkit_tests::capture_logs();
    let server = Server::start(hello_state(Limits::default()));
    let host = server.host();
    let rest = request(
        server.addr,
        "POST",
        "/text/stats",
        &[("Host", &host), ("Content-Type", "application/json")],
        json!({ "text": "one two" }).to_string().as_bytes(),
    );
    assert_eq!(rest.status, 200, "{}", rest.body);
    only_line(
        &rest,
        &[
            r#"transport="rest""#,
            "method=POST",
            r#"route="/text/stats""#,
            r#"tool="text_stats""#,
            "status=200",
        ],
    );

    let session = server.initialize();
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "text_stats", "arguments": { "text": "one two" } }
    });
    let mcp = server.mcp(&call.to_string(), &[("Mcp-Session-Id", &session)]);
    assert_eq!(mcp.status, 200, "{}", mcp.body);
    only_line(
        &mcp,
        &[
            r#"transport="mcp-http""#,
            "method=POST",
            r#"route="/mcp""#,
            r#"tool="text_stats""#,
            "status=200",
            r#"rpc_method="tools/call""#,
            r#"outcome="ok""#,
        ],
    );
}

#[test]
fn a_streamed_mcp_answer_writes_one_line_once_the_call_is_done() {
    groundkit_tests::capture_logs();
    let (state, _ctx) = test_state(Limits::default());
    let server = Server::start(state);
    let session = server.initialize();
    let frame = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"stepper","_meta":{"progressToken":42}}}"#;
    let response = server.mcp(frame, &[("Mcp-Session-Id", &session)]);
    assert!(
        response.body.contains("notifications/progress"),
        "{}",
        response.body
    );
    only_line(
        &response,
        &[
            r#"transport="mcp-http""#,
            r#"tool="stepper""#,
            r#"rpc_method="tools/call""#,
            r#"outcome="ok""#,
        ],
    );
}

#[test]
fn a_request_refused_before_routing_still_writes_one_line() {
    groundkit_tests::capture_logs();
    let server = Server::start(hello_state(Limits::default()));
    let refused = request(
        server.addr,
        "POST",
        "/mcp",
        &[
            ("Host", "evil.example"),
            ("Content-Type", "application/json"),
        ],
        br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(refused.status, 403);
    only_line(&refused, &["status=403"]);
}
