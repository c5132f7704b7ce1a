//! Streamable HTTP at `/mcp` over real loopback HTTP: content negotiation, statuses, sessions
//! and the stateless era's header rules.

use std::time::Duration;

use groundkit_server::Limits;
use serde_json::{Value, json};

use super::support::{
    Server, event_stream, events, hello_state, initialize_frame, modern_meta, open_events, request,
    short_limits, test_state,
};

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

#[test]
fn json_accepting_clients_get_json_and_sse_only_clients_get_an_event_stream() {
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    let json = server.mcp(PING, &[("Mcp-Session-Id", &session)]);
    assert_eq!(json.status, 200);
    assert!(
        json.header("content-type")
            .is_some_and(|c| c.starts_with("application/json"))
    );
    assert_eq!(json.json()["result"], json!({}));

    let host = server.host();
    let sse = request(
        server.addr,
        "POST",
        "/mcp",
        &[
            ("Host", &host),
            ("Content-Type", "application/json"),
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &session),
        ],
        PING.as_bytes(),
    );
    assert_eq!(sse.status, 200);
    assert!(
        sse.header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"))
    );
    let events = events(&sse);
    assert_eq!(events.last().map(|e| &e["result"]), Some(&json!({})));
}

#[test]
fn a_call_asking_for_progress_streams_progress_events_then_the_response() {
    let (state, _ctx) = test_state(Limits::default());
    let server = Server::start(state);
    let session = server.initialize();
    let frame = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"stepper","_meta":{"progressToken":42}}}"#;
    let response = server.mcp(frame, &[("Mcp-Session-Id", &session)]);
    assert!(
        response
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"))
    );
    let events = events(&response);
    let (last, progress) = events.split_last().expect("events");
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["isError"], false);
    let steps: Vec<f64> = progress
        .iter()
        .map(|e| {
            assert_eq!(e["method"], "notifications/progress");
            assert_eq!(e["params"]["progressToken"], 42);
            e["params"]["progress"].as_f64().expect("number")
        })
        .collect();
    assert_eq!(steps, vec![1.0, 2.0, 3.0]);
}

#[test]
fn a_session_stream_carries_what_its_session_follows_and_ends_with_the_session() {
    let state = hello_state(Limits::default());
    let updates = state.resource_updates();
    let server = Server::start(state);
    let session = server.initialize();
    let (version, id) = (
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", session.as_str()),
    );
    let uri = "hello://languages";
    let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                           "params": {"uri": uri}});
    let answer = server.mcp(&subscribe.to_string(), &[version, id]);
    assert_eq!(answer.json()["result"], json!({}), "{}", answer.body);
    // Nothing to push to yet: the update is not kept.
    assert_eq!(updates.updated(uri), 0);

    let first = event_stream(server.addr, &session);
    let next = |events: &std::sync::mpsc::Receiver<Value>| {
        events
            .recv_timeout(Duration::from_secs(10))
            .expect("an event")
    };
    assert_eq!(next(&first), json!({"status": "200"}));
    assert_eq!(next(&first), json!({"priming": true}));
    assert_eq!(updates.updated(uri), 1);
    assert_eq!(
        next(&first),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": uri}})
    );
    assert_eq!(
        updates.updated("hello://greetings/en/ada"),
        0,
        "not followed"
    );

    // A newer stream of the session replaces the first, which ends.
    let second = event_stream(server.addr, &session);
    assert_eq!(next(&second), json!({"status": "200"}));
    assert_eq!(next(&second), json!({"priming": true}));
    assert_eq!(next(&first), json!({"end": true}));
    assert_eq!(updates.updated(uri), 1);
    assert_eq!(next(&second)["params"]["uri"], uri);

    // The session ends: so do its stream and its subscriptions.
    let host = server.host();
    let deleted = request(
        server.addr,
        "DELETE",
        "/mcp",
        &[("Host", &host), version, id],
        b"",
    );
    assert_eq!(deleted.status, 204);
    assert_eq!(next(&second), json!({"end": true}));
    assert_eq!(updates.updated(uri), 0);
    assert!(updates.subscribed().is_empty());
    // An unknown session has no stream.
    let unknown = event_stream(server.addr, "0123");
    assert_eq!(next(&unknown), json!({"status": "404"}));
}

#[test]
fn a_listen_stream_outlives_the_write_deadline_and_ends_when_its_client_goes() {
    // A write deadline of 3.5 s: the stream's comments keep it open past it.
    let state = hello_state(short_limits());
    let updates = state.resource_updates();
    let server = Server::start(state);
    let uri = "hello://languages";
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": [uri]}, "_meta": modern_meta()}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
        server.host(),
        body.len()
    );
    let events = open_events(server.addr, head.into_bytes());
    let next = || {
        events
            .recv_timeout(Duration::from_secs(10))
            .expect("an event")
    };
    assert_eq!(next(), json!({"status": "200"}));
    assert_eq!(next()["method"], "notifications/subscriptions/acknowledged");
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(updates.updated(uri), 1);
    let update = next();
    assert_eq!(update["params"]["uri"], uri);
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    // The client goes: the listen ends, and its subscription with it.
    drop(events);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !updates.subscribed().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the listen outlived its client"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn unacceptable_accept_is_406_non_json_body_is_415_and_get_is_405() {
    let server = Server::start(hello_state(Limits::default()));
    let host = server.host();
    let post = |headers: &[(&str, &str)]| {
        let mut all = vec![("Host", host.as_str())];
        all.extend_from_slice(headers);
        request(
            server.addr,
            "POST",
            "/mcp",
            &all,
            initialize_frame(1, "2025-11-25").as_bytes(),
        )
    };
    let refused = post(&[
        ("Content-Type", "application/json"),
        ("Accept", "text/html"),
    ]);
    assert_eq!(refused.status, 406);
    assert_eq!(refused.json()["kind"], "not_acceptable");
    assert_eq!(
        post(&[
            ("Content-Type", "text/plain"),
            ("Accept", "application/json")
        ])
        .status,
        415
    );
    assert_eq!(
        post(&[("Accept", "application/json")]).status,
        415,
        "no Content-Type"
    );
    assert_eq!(
        post(&[
            ("Content-Type", "application/json"),
            ("Accept", "application/json")
        ])
        .status,
        200
    );
    let get = request(
        server.addr,
        "GET",
        "/mcp",
        &[("Host", &host), ("Accept", "text/event-stream")],
        b"",
    );
    // Without a session there is no conversation to push to.
    assert_eq!(get.status, 405);
    assert_eq!(get.header("allow"), Some("POST, GET, DELETE"));
}

#[test]
fn malformed_json_is_400_with_a_32700_body_and_notifications_are_202_with_no_body() {
    let server = Server::start(hello_state(Limits::default()));
    let response = server.mcp("{not json", &[]);
    assert_eq!(response.status, 400);
    assert_eq!(response.json()["error"]["code"], -32700);
    assert_eq!(response.json()["id"], Value::Null);

    let session = server.initialize();
    for frame in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
    ] {
        let response = server.mcp(frame, &[("Mcp-Session-Id", &session)]);
        assert_eq!(response.status, 202, "{frame}");
        assert!(response.body.is_empty());
    }
    let unknown = server.mcp(
        r#"{"jsonrpc":"2.0","id":"u","method":"logging/setLevel"}"#,
        &[("Mcp-Session-Id", &session)],
    );
    assert_eq!(
        unknown.status, 200,
        "the handshake era answers -32601 with 200"
    );
    assert_eq!(unknown.json()["error"]["code"], -32601);
    assert_eq!(unknown.json()["id"], "u");
}

#[test]
fn sessions_are_issued_by_initialize_required_after_and_404_once_deleted() {
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    assert_eq!(session.len(), 32, "128 bits as hex");
    assert!(session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    assert_ne!(
        session,
        server.initialize(),
        "each initialize opens its own session"
    );

    let ok = server.mcp(PING, &[("Mcp-Session-Id", &session)]);
    assert_eq!(ok.status, 200);
    assert!(
        ok.header("mcp-session-id").is_none(),
        "the id comes only with initialize"
    );

    let missing = server.mcp(PING, &[]);
    assert_eq!(missing.status, 400);
    let unknown = server.mcp(
        PING,
        &[("Mcp-Session-Id", "0123456789abcdef0123456789abcdef")],
    );
    assert_eq!(unknown.status, 404, "unknown sessions are 404, never 401");
    assert_eq!(unknown.json()["kind"], "not_found");
    assert!(
        !unknown.body.contains("0123456789abcdef"),
        "the unknown id is not echoed: {}",
        unknown.body
    );

    let host = server.host();
    let delete = |id: &str| {
        request(
            server.addr,
            "DELETE",
            "/mcp",
            &[("Host", &host), ("Mcp-Session-Id", id)],
            b"",
        )
    };
    assert_eq!(delete(&session).status, 204);
    assert_eq!(
        server.mcp(PING, &[("Mcp-Session-Id", &session)]).status,
        404
    );
    assert_eq!(delete(&session).status, 404);
    assert_eq!(
        request(server.addr, "DELETE", "/mcp", &[("Host", &host)], b"").status,
        400
    );
}

#[test]
fn a_refused_initialize_opens_no_session() {
    let state = hello_state(Limits {
        max_sessions: 1,
        ..Limits::default()
    });
    let server = Server::start(state);
    let bad = server.mcp(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1]}"#,
        &[],
    );
    assert_eq!(bad.json()["error"]["code"], -32602);
    assert!(bad.header("mcp-session-id").is_none());
    // The one slot is still free.
    server.initialize();
}

#[test]
fn an_unsupported_protocol_version_header_is_400_and_a_missing_one_is_served() {
    let server = Server::start(hello_state(Limits::default()));
    let session = server.initialize();
    for bad in ["1999-01-01", "garbage"] {
        let response = server.mcp(
            PING,
            &[("Mcp-Session-Id", &session), ("MCP-Protocol-Version", bad)],
        );
        assert_eq!(response.status, 400, "{bad}");
    }
    for good in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let response = server.mcp(
            PING,
            &[("Mcp-Session-Id", &session), ("MCP-Protocol-Version", good)],
        );
        assert_eq!(response.status, 200, "{good}");
    }
    assert_eq!(
        server.mcp(PING, &[("Mcp-Session-Id", &session)]).status,
        200
    );
}

fn modern(server: &Server, method: &str, params: Value, headers: &[(&str, &str)]) -> (u16, Value) {
    let frame = json!({"jsonrpc":"2.0","id":11,"method":method,"params":params});
    let response = server.mcp(&frame.to_string(), headers);
    let body = if response.body.is_empty() {
        Value::Null
    } else {
        response.json()
    };
    (response.status, body)
}

#[test]
fn stateless_requests_ignore_sessions_and_check_their_headers_against_the_body() {
    let server = Server::start(hello_state(Limits::default()));
    let v = ("MCP-Protocol-Version", "2026-07-28");
    let call =
        json!({"name":"greet","arguments":{"language":"en","name":"Bo"},"_meta": modern_meta()});

    let (status, body) = modern(
        &server,
        "tools/call",
        call.clone(),
        &[v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "greet")],
    );
    assert_eq!(
        (status, &body["result"]["isError"]),
        (200, &json!(false)),
        "{body}"
    );
    assert_eq!(body["result"]["resultType"], "complete");

    let encoded = ("Mcp-Name", "=?base64?Z3JlZXQ=?=");
    let (status, _) = modern(
        &server,
        "tools/call",
        call.clone(),
        &[v, ("Mcp-Method", " tools/call "), encoded],
    );
    assert_eq!(
        status, 200,
        "trimmed and base64-sentinel header values are decoded"
    );

    let mismatches: [&[(&str, &str)]; 5] = [
        &[v, ("Mcp-Method", "tools/list"), ("Mcp-Name", "greet")],
        &[v, ("Mcp-Method", "Tools/Call"), ("Mcp-Name", "greet")],
        &[
            v,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "list_languages"),
        ],
        &[v, ("Mcp-Name", "greet")],
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "greet")],
    ];
    for headers in mismatches {
        let (status, body) = modern(&server, "tools/call", call.clone(), headers);
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!(-32020)),
            "{headers:?}: {body}"
        );
        assert_eq!(body["id"], 11);
    }

    let list = [v, ("Mcp-Method", "tools/list")];
    let (status, body) = modern(&server, "tools/list", json!({}), &list);
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!(-32602)),
        "missing _meta"
    );
    let (status, body) = modern(
        &server,
        "nope/nope",
        json!({"_meta": modern_meta()}),
        &[v, ("Mcp-Method", "nope/nope")],
    );
    assert_eq!((status, &body["error"]["code"]), (404, &json!(-32601)));
    let (status, body) = modern(
        &server,
        "ping",
        json!({"_meta": modern_meta()}),
        &[v, ("Mcp-Method", "ping")],
    );
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!(-32601)),
        "ping is gone in 2026-07-28"
    );

    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("v999");
    let (status, body) = modern(
        &server,
        "server/discover",
        json!({"_meta": meta}),
        &[
            ("MCP-Protocol-Version", "v999"),
            ("Mcp-Method", "server/discover"),
        ],
    );
    assert_eq!((status, &body["error"]["code"]), (400, &json!(-32022)));
    assert_eq!(body["error"]["data"]["requested"], "v999");

    let host = server.host();
    let delete = request(
        server.addr,
        "DELETE",
        "/mcp",
        &[("Host", &host), v, ("Mcp-Session-Id", "anything")],
        b"",
    );
    assert_eq!(delete.status, 405, "no sessions to end in 2026-07-28");

    // A session id is ignored, even an unknown one.
    let (status, _) = modern(
        &server,
        "tools/list",
        json!({"_meta": modern_meta()}),
        &[v, ("Mcp-Method", "tools/list"), ("Mcp-Session-Id", "nope")],
    );
    assert_eq!(status, 200);
}

#[test]
fn idle_sessions_expire_to_404() {
    let state = hello_state(Limits {
        session_idle_timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let server = Server::start(state);
    let session = server.initialize();
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(
        server.mcp(PING, &[("Mcp-Session-Id", &session)]).status,
        200,
        "within the timeout"
    );
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(
        server.mcp(PING, &[("Mcp-Session-Id", &session)]).status,
        200,
        "each request restarts the idle clock"
    );
    std::thread::sleep(Duration::from_millis(450));
    assert_eq!(
        server.mcp(PING, &[("Mcp-Session-Id", &session)]).status,
        404,
        "past it"
    );
}
