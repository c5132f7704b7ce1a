//! Every bound in docs/limits.md, at the limit and one past it, on real transports.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use groundkit_server::Limits;
use serde_json::json;

use super::support::{
    Server, Stdio, hello_state, initialize_frame, modern_meta, request, test_state,
};

/// A connection to `server` whose reads give up after 5 s.
fn connected(server: &Server) -> TcpStream {
    let stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    stream
}

/// A `ping` frame padded with spaces to exactly `len` bytes.
fn padded_ping(len: usize) -> String {
    let frame = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    assert!(len >= frame.len());
    format!("{}{}", frame, " ".repeat(len - frame.len()))
}

#[test]
fn body_cap_accepts_exactly_the_limit_and_refuses_one_byte_more_on_mcp_and_rest() {
    let limit = 4096;
    let server = Server::start(hello_state(Limits {
        max_body_bytes: limit,
        ..Limits::default()
    }));
    let session = server.initialize();
    let at = server.mcp(&padded_ping(limit), &[("Mcp-Session-Id", &session)]);
    assert_eq!(at.status, 200);
    let past = server.mcp(&padded_ping(limit + 1), &[("Mcp-Session-Id", &session)]);
    assert_eq!(past.status, 413);
    assert_eq!(past.json()["kind"], "payload_too_large");

    // Without a declared length (chunked), the cap holds as the body streams in.
    let host = server.host();
    let body = padded_ping(limit + 1);
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMcp-Session-Id: {session}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    assert_eq!(
        super::support::raw(server.addr, chunked.as_bytes()).status,
        413
    );

    let text = |len: usize| {
        let shell = json!({ "text": "" }).to_string();
        format!(r#"{{"text":"{}"}}"#, "a".repeat(len - shell.len()))
    };
    let rest = |body: String| {
        request(
            server.addr,
            "POST",
            "/text/stats",
            &[("Host", &host), ("Content-Type", "application/json")],
            body.as_bytes(),
        )
    };
    let at = rest(text(limit));
    assert_ne!(at.status, 413, "exactly the limit is read: {}", at.body);
    assert_eq!(rest(text(limit + 1)).status, 413);
}

#[tokio::test]
async fn stdio_line_cap_accepts_exactly_the_limit_and_refuses_one_byte_more() {
    let cap = 1024;
    let mut stdio = Stdio::start(hello_state(Limits {
        max_line_bytes: cap,
        ..Limits::default()
    }));
    stdio.send(&padded_ping(cap)).await;
    assert_eq!(stdio.recv().await["result"], json!({}));
    stdio.send(&padded_ping(cap + 1)).await;
    let refused = stdio.recv().await;
    assert_eq!(refused["error"]["code"], -32600);
    assert_eq!(refused["id"], serde_json::Value::Null);
    // A line far past the cap is skipped as it streams, and the connection keeps serving.
    stdio.send(&padded_ping(cap * 200)).await;
    assert_eq!(stdio.recv().await["error"]["code"], -32600);
    stdio
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(stdio.recv().await["id"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_are_capped_across_both_transports() {
    let (state, ctx) = test_state(Limits {
        max_concurrent_calls: 2,
        ..Limits::default()
    });
    let state = Arc::new(state);
    let mut stdio = Stdio::start_shared(Arc::clone(&state));
    let server = Server::start_shared(Arc::clone(&state));
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    for id in [10, 11] {
        stdio
            .send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"gated","arguments":{{"sleep_ms":0}}}}}}"#))
            .await;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while ctx.started.load(std::sync::atomic::Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "two calls should be running");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // At the limit both run; one more is refused on REST and on MCP over HTTP.
    let addr = server.addr;
    let host = format!("127.0.0.1:{}", addr.port());
    let (rest, mcp) = tokio::task::spawn_blocking(move || {
        let rest = request(
            addr,
            "POST",
            "/test/gated",
            &[("Host", &host), ("Content-Type", "application/json")],
            br#"{"sleep_ms":0}"#,
        );
        let frame = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gated","arguments":{"sleep_ms":0},"_meta": modern_meta()}});
        let mcp = request(
            addr,
            "POST",
            "/mcp",
            &[
                ("Host", &host),
                ("Content-Type", "application/json"),
                ("Accept", "application/json"),
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "gated"),
            ],
            frame.to_string().as_bytes(),
        );
        (rest, mcp)
    })
    .await
    .expect("requests");
    assert_eq!(rest.status, 503);
    assert_eq!(rest.json()["kind"], "overloaded");
    let result = &mcp.json()["result"];
    assert_eq!(groundkit_tests::tool_error(result)["kind"], "overloaded");

    ctx.gate.add_permits(100);
    for _ in 0..2 {
        assert_eq!(stdio.recv().await["result"]["isError"], false);
    }
    stdio
        .send(r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"gated","arguments":{"sleep_ms":0}}}"#)
        .await;
    assert_eq!(
        stdio.recv().await["result"]["isError"],
        false,
        "permits come back"
    );
}

#[tokio::test]
async fn a_call_within_the_request_timeout_completes_and_a_longer_one_is_a_timeout_error() {
    let (state, ctx) = test_state(Limits {
        request_timeout: Duration::from_millis(400),
        ..Limits::default()
    });
    ctx.gate.add_permits(100);
    let mut stdio = Stdio::start(state);
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gated","arguments":{"sleep_ms":100}}}"#)
        .await;
    assert_eq!(stdio.recv().await["result"]["isError"], false);
    let started = Instant::now();
    stdio
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"gated","arguments":{"sleep_ms":5000}}}"#)
        .await;
    let result = stdio.recv().await["result"].clone();
    assert_eq!(groundkit_tests::tool_error(&result)["kind"], "timeout");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn session_cap_admits_exactly_the_limit_and_refuses_one_more_until_one_ends() {
    let server = Server::start(hello_state(Limits {
        max_sessions: 2,
        ..Limits::default()
    }));
    let first = server.initialize();
    server.initialize();
    let refused = server.mcp(&initialize_frame(3, "2025-11-25"), &[]);
    assert_eq!(refused.status, 503);
    assert_eq!(refused.json()["kind"], "overloaded");
    assert!(refused.header("mcp-session-id").is_none());
    let host = server.host();
    let deleted = request(
        server.addr,
        "DELETE",
        "/mcp",
        &[("Host", &host), ("Mcp-Session-Id", &first)],
        b"",
    );
    assert_eq!(deleted.status, 204);
    server.initialize();
}

#[test]
fn headers_sent_within_the_header_timeout_are_served_and_slower_ones_are_cut_off() {
    let server = Server::start(hello_state(Limits {
        header_timeout: Duration::from_millis(600),
        ..Limits::default()
    }));
    let host = server.host();
    let head = format!("GET /languages HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    let (first, rest) = head.split_at(10);

    let mut prompt = connected(&server);
    prompt.write_all(first.as_bytes()).expect("write");
    std::thread::sleep(Duration::from_millis(200));
    prompt.write_all(rest.as_bytes()).expect("write");
    assert_eq!(super::support::read_response(&mut prompt).status, 200);

    let mut slow = connected(&server);
    slow.write_all(first.as_bytes()).expect("write");
    let started = Instant::now();
    let mut answer = Vec::new();
    let _ = slow.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "a stalled client is cut off: {answer:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

/// A 2025-03-26 batch of `len` pings.
fn ping_batch(len: usize) -> String {
    let pings: Vec<String> = (0..len)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#))
        .collect();
    format!("[{}]", pings.join(","))
}

#[tokio::test]
async fn batch_length_admits_exactly_the_limit_and_refuses_one_more_whole() {
    let mut stdio = Stdio::start(hello_state(Limits {
        max_batch_len: 4,
        ..Limits::default()
    }));
    stdio.send(&initialize_frame(1, "2025-03-26")).await;
    stdio.recv().await;
    stdio.send(&ping_batch(4)).await;
    let at = stdio.recv().await;
    assert_eq!(at.as_array().map(Vec::len), Some(4), "{at}");
    stdio.send(&ping_batch(5)).await;
    let past = stdio.recv().await;
    assert_eq!(past["error"]["code"], -32600, "{past}");
    assert!(
        past["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 4")),
        "{past}"
    );
}

#[test]
fn a_body_sent_within_the_body_timeout_is_served_and_a_stalled_one_is_refused_with_408() {
    let server = Server::start(hello_state(Limits {
        body_timeout: Duration::from_millis(800),
        ..Limits::default()
    }));
    let host = server.host();
    let body = r#"{"text":"slow and steady"}"#;
    let head = format!(
        "POST /text/stats HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let (first, rest) = body.split_at(5);

    let mut prompt = connected(&server);
    prompt.write_all(head.as_bytes()).expect("write");
    prompt.write_all(first.as_bytes()).expect("write");
    std::thread::sleep(Duration::from_millis(300));
    prompt.write_all(rest.as_bytes()).expect("write");
    let served = super::support::read_response(&mut prompt);
    assert_eq!(served.status, 200, "{}", served.body);

    for path in ["/text/stats", "/mcp"] {
        let head = head.replace("/text/stats", path);
        let mut stalled = connected(&server);
        stalled.write_all(head.as_bytes()).expect("write");
        stalled.write_all(first.as_bytes()).expect("write");
        let started = Instant::now();
        let refused = super::support::read_response(&mut stalled);
        let waited = started.elapsed();
        assert_eq!(refused.status, 408, "{path}: {}", refused.body);
        assert_eq!(refused.json()["kind"], "body_timeout", "{path}");
        assert!(
            waited >= Duration::from_millis(700) && waited < Duration::from_secs(3),
            "{path}: refused after {waited:?}"
        );
    }
}

/// The status of the answer to `head` sent raw.
fn head_status(server: &Server, head: &str) -> Option<u16> {
    Some(groundkit_tests::send_raw(server.addr, head).status)
}

#[test]
fn request_heads_up_to_128_kib_and_96_headers_are_served_and_larger_ones_refused() {
    const HEAD_LIMIT: usize = 128 * 1024;
    let server = Server::start(hello_state(Limits::default()));
    let host = server.host();
    let head_of = |padding: &str, extra: &str| {
        format!(
            "GET /languages HTTP/1.1\r\nHost: {host}\r\nX-Pad: {padding}\r\n{extra}Connection: close\r\n\r\n"
        )
    };
    // Size: the whole head, request line and URI included. The bound is applied as the head
    // streams in (a head still incomplete at 128 KiB is refused), so it is exact to a read:
    // tested a KiB either side.
    let bare = head_of("", "").len();
    let at = head_of(&"p".repeat(HEAD_LIMIT - 1024 - bare), "");
    assert_eq!(head_status(&server, &at), Some(200));
    let past = head_of(&"p".repeat(HEAD_LIMIT + 1024 - bare), "");
    assert_eq!(head_status(&server, &past), Some(431));
    let long_uri = format!(
        "GET /languages/{} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n",
        "u".repeat(HEAD_LIMIT)
    );
    assert_eq!(head_status(&server, &long_uri), Some(431));

    // Count: Host, X-Pad and Connection plus 93 more is 96 headers.
    let headers = |n: usize| -> String { (0..n).map(|i| format!("X-H{i}: v\r\n")).collect() };
    assert_eq!(head_status(&server, &head_of("p", &headers(93))), Some(200));
    assert_eq!(head_status(&server, &head_of("p", &headers(94))), Some(431));
}

#[test]
fn an_idle_connection_is_kept_for_the_keep_alive_and_closed_after_it() {
    let server = Server::start(hello_state(Limits {
        keep_alive: Duration::from_millis(1500),
        ..Limits::default()
    }));
    let host = server.host();
    let get = format!("GET /languages HTTP/1.1\r\nHost: {host}\r\n\r\n");
    let mut stream = connected(&server);
    stream.write_all(get.as_bytes()).expect("write");
    assert_eq!(super::support::read_response(&mut stream).status, 200);
    std::thread::sleep(Duration::from_millis(300));
    stream.write_all(get.as_bytes()).expect("write");
    assert_eq!(
        super::support::read_response(&mut stream).status,
        200,
        "reused within the keep-alive"
    );
    let idle = Instant::now();
    let mut rest = Vec::new();
    let read = stream.read_to_end(&mut rest);
    assert!(
        read.is_ok() && rest.is_empty(),
        "closed, not answered: {read:?}"
    );
    let waited = idle.elapsed();
    assert!(
        // actix measures the keep-alive on a coarse clock (about half a second).
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(4),
        "closed after {waited:?}"
    );
}

#[test]
fn connections_past_the_limit_wait_until_one_closes() {
    let server = Server::start(hello_state(Limits {
        max_connections: 2,
        workers: 2,
        header_timeout: Duration::from_secs(20),
        ..Limits::default()
    }));
    let host = server.host();
    let stall = || {
        let mut stream = connected(&server);
        stream
            .write_all(b"GET /languages HTTP/1.1\r\n")
            .expect("write");
        std::thread::sleep(Duration::from_millis(150));
        stream
    };
    let get = format!("GET /languages HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    // At the limit: one stalled client (half a request head) and one served.
    let mut stalled = vec![stall()];
    assert_eq!(groundkit_tests::send_raw(server.addr, &get).status, 200);
    // Past it: two stalled clients hold both connections.
    stalled.push(stall());
    std::thread::sleep(Duration::from_millis(300));
    let mut third = connected(&server);
    third
        .set_read_timeout(Some(Duration::from_millis(1500)))
        .expect("timeout");
    third
        .write_all(
            format!("GET /languages HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .expect("write");
    let mut early = [0u8; 16];
    assert!(
        third.read(&mut early).is_err(),
        "a third connection is not served while two are open"
    );
    drop(stalled.pop());
    third
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    assert_eq!(
        super::support::read_response(&mut third).status,
        200,
        "served once one closes"
    );
}

#[test]
fn blocking_work_runs_on_at_most_the_blocking_threads_and_the_rest_waits_its_turn() {
    let (state, ctx) = test_state(Limits {
        workers: 1,
        blocking_threads: 2,
        ..Limits::default()
    });
    let server = Server::start(state);
    let addr = server.addr;
    let host = format!("127.0.0.1:{}", addr.port());
    // Five calls at once, each holding a blocking thread for 300 ms: two run, three wait.
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let host = host.clone();
            std::thread::spawn(move || {
                request(
                    addr,
                    "POST",
                    "/test/hold",
                    &[("Host", &host), ("Content-Type", "application/json")],
                    br#"{"sleep_ms":300}"#,
                )
                .status
            })
        })
        .collect();
    let statuses: Vec<u16> = calls.into_iter().map(|c| c.join().expect("call")).collect();
    assert_eq!(statuses, [200; 5], "every call is served, none refused");
    assert_eq!(
        ctx.most_holding.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "two blocking threads, both used, never a third"
    );
}

/// Wait until the server closes `stream` (end of stream or reset), sending one byte of
/// `trickle` every 100 ms meanwhile; how long that took. Panics if the server answers anything
/// or keeps the connection for 20 s.
fn wait_for_close(stream: &mut TcpStream, trickle: &[u8]) -> Duration {
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    let started = Instant::now();
    let mut trickle = trickle.iter();
    let mut buf = [0u8; 512];
    loop {
        let waited = started.elapsed();
        assert!(
            waited < Duration::from_secs(20),
            "still open after {waited:?}"
        );
        if let Some(byte) = trickle.next()
            && stream.write_all(&[*byte]).is_err()
        {
            return waited;
        }
        match stream.read(&mut buf) {
            Ok(0) => return started.elapsed(),
            Ok(n) => panic!("answered: {:?}", String::from_utf8_lossy(&buf[..n])),
            Err(err)
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return started.elapsed(),
        }
    }
}

#[test]
fn a_body_still_trickling_after_its_answer_is_cut_at_the_write_deadline() {
    let limits = super::support::short_limits();
    let deadline = limits.write_deadline();
    let server = Server::start(hello_state(limits));
    // Refused before its body is read, so the body's own timeout never starts, and chunked, so
    // the parser drains the rest of it after the answer, as slowly as it comes.
    let mut stream = connected(&server);
    stream
        .write_all(
            b"POST /text/stats HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n",
        )
        .expect("write");
    assert_eq!(super::support::read_response(&mut stream).status, 403);
    let waited = wait_for_close(&mut stream, &[b' '; 1000]);
    assert!(
        waited < deadline + Duration::from_secs(3),
        "closed {waited:?} after the answer (deadline {deadline:?})"
    );
}

#[test]
fn a_stalled_later_head_is_closed_at_the_write_deadline() {
    let limits = super::support::short_limits();
    let deadline = limits.write_deadline();
    let server = Server::start(hello_state(limits));
    let host = server.host();
    let get = format!("GET /languages HTTP/1.1\r\nHost: {host}\r\n\r\n");
    let part = format!("GET /languages HTTP/1.1\r\nHost: {host}\r\n");
    // Part of the next head, sent after the first answer: actix-http times only a connection's
    // first head, and stops its keep-alive timer at the first byte that arrives after an
    // answer, so only the write deadline ends it. And part of the next head sent with the
    // first request, in one write, so the parser holds it before it answers.
    for together in [false, true] {
        let mut stream = connected(&server);
        match together {
            false => stream.write_all(get.as_bytes()).expect("write"),
            true => stream
                .write_all(format!("{get}{part}").as_bytes())
                .expect("write"),
        }
        assert_eq!(super::support::read_response(&mut stream).status, 200);
        if !together {
            stream.write_all(part.as_bytes()).expect("write");
        }
        let waited = wait_for_close(&mut stream, b"");
        assert!(
            waited < deadline + Duration::from_secs(3),
            "sent together: {together}; closed {waited:?} after the answer (deadline {deadline:?})"
        );
    }
}

/// The statuses of the next `count` answers on `stream`, each with a `Content-Length`.
fn statuses(stream: &mut TcpStream, count: usize) -> Vec<u16> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let (found, _) = super::support::answers(&String::from_utf8_lossy(&data));
        if found.len() >= count {
            return found.into_iter().map(|(status, _)| status).collect();
        }
        let n = stream.read(&mut buf).expect("read");
        assert!(n > 0, "closed after {found:?}");
        data.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn a_connection_that_keeps_being_answered_outlives_the_write_deadline() {
    let limits = Limits {
        keep_alive: Duration::from_secs(2),
        header_timeout: Duration::from_millis(250),
        body_timeout: Duration::from_millis(250),
        request_timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let deadline = limits.write_deadline();
    let (state, _ctx) = test_state(limits);
    let server = Server::start(state);
    let host = server.host();
    let session = server.initialize();
    let frame = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"stepper","_meta":{"progressToken":1}}}"#;
    let streamed = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{frame}",
        frame.len()
    );
    let get = format!("GET /test/progress HTTP/1.1\r\nHost: {host}\r\n\r\n");
    let mut stream = connected(&server);
    let started = Instant::now();
    while started.elapsed() < deadline * 2 {
        // An answer streamed as server-sent events: progress, then the result.
        stream.write_all(streamed.as_bytes()).expect("write");
        let answer = super::support::read_response(&mut stream);
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(
            answer
                .header("content-type")
                .is_some_and(|c| c.starts_with("text/event-stream"))
        );
        let events = super::support::events(&answer);
        assert_eq!(events.len(), 4, "{events:?}");
        assert_eq!(events[3]["result"]["isError"], false, "{events:?}");
        // Two requests in one write.
        stream
            .write_all(format!("{get}{get}").as_bytes())
            .expect("write");
        assert_eq!(statuses(&mut stream, 2), [200, 200]);
        std::thread::sleep(Duration::from_millis(500));
    }
}
