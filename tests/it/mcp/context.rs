//! The request context a function may take: its request id, transport, negotiated revision and
//! deadline as each transport gives them, and a cancellation that reaches the blocking work a
//! call leaves behind when the client cancels it, its connection closes, or its deadline passes.

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use groundkit_server::Limits;
use serde_json::{Value, json};

use super::support::{Server, Stdio, initialize_frame, request, test_state};

/// Waits up to 10 s for `counter` to reach `value`; whether it did.
async fn reaches(counter: &Arc<AtomicUsize>, value: usize) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if counter.load(Ordering::SeqCst) == value {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

fn call_info_frame(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "call_info"}})
        .to_string()
}

fn is_request_id(id: &Value) -> bool {
    id.as_str()
        .is_some_and(|id| id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()))
}

#[tokio::test]
async fn a_function_sees_its_request_id_transport_revision_and_deadline_on_every_transport() {
    let limits = Limits {
        request_timeout: Duration::from_secs(20),
        ..Limits::default()
    };
    let (state, _) = test_state(limits.clone());
    let server = Server::start(state);
    let host = server.host();
    let rest = request(
        server.addr,
        "GET",
        "/test/call-info",
        &[("Host", &host)],
        b"",
    );
    let over_rest = rest.json();
    assert_eq!(over_rest["transport"], "rest");
    assert!(over_rest.get("protocol_version").is_none(), "{over_rest}");
    assert_eq!(
        over_rest["request_id"].as_str(),
        rest.header("x-request-id"),
        "the id the response and the access log carry"
    );

    let session = server.initialize();
    let http = server.mcp(&call_info_frame(2), &[("Mcp-Session-Id", &session)]);
    let over_http = http.json()["result"]["structuredContent"].clone();
    assert_eq!(over_http["transport"], "mcp-http");
    assert_eq!(over_http["protocol_version"], "2025-11-25");
    assert_eq!(
        over_http["request_id"].as_str(),
        http.header("x-request-id")
    );

    let (state, _) = test_state(limits);
    let mut stdio = Stdio::start(state);
    stdio.send(&initialize_frame(1, "2025-06-18")).await;
    stdio.recv().await;
    stdio.send(&call_info_frame(2)).await;
    let over_stdio = stdio.recv().await["result"]["structuredContent"].clone();
    assert_eq!(over_stdio["transport"], "mcp-stdio");
    assert_eq!(over_stdio["protocol_version"], "2025-06-18");

    for info in [&over_rest, &over_http, &over_stdio] {
        assert!(is_request_id(&info["request_id"]), "{info}");
        let left = info["deadline_ms"].as_u64().expect("deadline");
        assert!(
            (15_000..=20_000).contains(&left),
            "the request timeout from the call's start: {info}"
        );
    }
    assert_ne!(over_rest["request_id"], over_http["request_id"]);
}

#[tokio::test]
async fn a_cancelled_request_cancels_the_blocking_work_it_left() {
    let (state, ctx) = test_state(Limits::default());
    let mut stdio = Stdio::start(state);
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"watch_cancel"}}"#)
        .await;
    assert!(reaches(&ctx.watching, 1).await, "the blocking work started");
    assert_eq!(ctx.cancels_seen.load(Ordering::SeqCst), 0);
    stdio
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#)
        .await;
    assert!(
        reaches(&ctx.cancels_seen, 1).await,
        "the work saw the cancellation"
    );
    assert!(reaches(&ctx.watching, 0).await);
    assert!(
        stdio.try_recv(Duration::from_millis(200)).await.is_none(),
        "a cancelled request is not answered"
    );
}

#[tokio::test]
async fn a_call_past_its_deadline_is_cancelled_and_answers_timeout() {
    let limits = Limits {
        request_timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    let (state, ctx) = test_state(limits);
    let server = Server::start(state);
    let host = server.host();
    let response = request(
        server.addr,
        "GET",
        "/test/watch-cancel",
        &[("Host", &host)],
        b"",
    );
    assert_eq!(
        (response.status, response.json()["kind"].as_str()),
        (504, Some("timeout"))
    );
    assert!(
        reaches(&ctx.cancels_seen, 1).await,
        "the work saw the deadline pass"
    );
}

#[tokio::test]
async fn a_closed_connection_cancels_its_call_on_rest_and_mcp_over_http() {
    let (state, ctx) = test_state(Limits::default());
    let server = Server::start(state);
    let session = server.initialize();
    let body = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"watch_cancel"}}"#;
    let requests = [
        format!(
            "GET /test/watch-cancel HTTP/1.1\r\nHost: {}\r\n\r\n",
            server.host()
        ),
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
            server.host(),
            body.len()
        ),
    ];
    for (seen, request) in requests.iter().enumerate() {
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        stream.write_all(request.as_bytes()).expect("send");
        assert!(
            reaches(&ctx.watching, 1).await,
            "the blocking work started: {request}"
        );
        drop(stream);
        assert!(
            reaches(&ctx.cancels_seen, seen + 1).await,
            "the work saw the connection close: {request}"
        );
        assert!(reaches(&ctx.watching, 0).await);
    }
}
