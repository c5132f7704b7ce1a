//! Resource subscriptions of `grk serve`: a client that follows a collection's status hears of
//! each new generation, over Streamable HTTP (on the session's `GET /mcp` stream, or on the
//! stream of a stateless `subscriptions/listen`) and over stdio (both eras), and hears nothing
//! once it unsubscribes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use groundkit_tests::ServerProcess;
use serde_json::{Value, json};

use crate::mcp::support::{event_stream, initialize_frame, modern_meta, open_events, request};
use crate::retrieval::Fixture;

/// How long a change may take to be announced (the server looks every second).
const PATIENCE: Duration = Duration::from_secs(15);

fn notes() -> Fixture {
    let fx = Fixture::new();
    fx.write("tea.md", "Green tea is steeped at 80 degrees.");
    fx.ingest_all("notes");
    fx
}

fn frame(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// The JSON-RPC messages of an HTTP response (JSON, or the data of its events).
fn messages(body: &str) -> Vec<Value> {
    let data: Vec<Value> = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter(|data| !data.trim().is_empty())
        .map(|data| serde_json::from_str(data.trim()).expect("JSON data"))
        .collect();
    if data.is_empty() {
        vec![serde_json::from_str(body).expect("a JSON body")]
    } else {
        data
    }
}

/// The `notifications/resources/updated` of `uri`.
fn is_update_of(message: &Value, uri: &str) -> bool {
    message["method"] == "notifications/resources/updated" && message["params"]["uri"] == uri
}

/// Waits for an update of `uri` among `events`; `false` when none came within `within`.
fn heard(events: &Receiver<Value>, uri: &str, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match events.recv_timeout(left) {
            Ok(message) if is_update_of(&message, uri) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

#[test]
fn a_session_that_follows_a_collection_hears_of_each_generation_on_its_stream() {
    let fx = notes();
    let server = ServerProcess::spawn(fx.grk().args(["serve", "--port", "0"]))
        .unwrap_or_else(|(status, log)| panic!("grk serve exited ({status}): {log}"));
    let host = format!("127.0.0.1:{}", server.loopback().port());
    // A request of the session, of no session (initialize), or stateless (2026-07-28).
    let post = |body: &str, session: Option<&str>| {
        let method = serde_json::from_str::<Value>(body).expect("a frame")["method"]
            .as_str()
            .expect("a method")
            .to_owned();
        let mut headers = vec![
            ("Host", host.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        match session {
            Some("stateless") => {
                headers.push(("MCP-Protocol-Version", "2026-07-28"));
                headers.push(("Mcp-Method", &method));
            }
            Some(session) => {
                headers.push(("Mcp-Session-Id", session));
                headers.push(("MCP-Protocol-Version", "2025-11-25"));
            }
            None => {}
        }
        request(server.loopback(), "POST", "/mcp", &headers, body.as_bytes())
    };
    let initialized = post(&initialize_frame(1, "2025-11-25"), None);
    assert_eq!(initialized.status, 200, "{}", initialized.body);
    let answer = &messages(&initialized.body)[0];
    assert_eq!(
        answer["result"]["capabilities"]["resources"]["subscribe"], true,
        "{answer}"
    );
    let session = initialized
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    let events = event_stream(server.loopback(), &session);
    let opened = events.recv_timeout(PATIENCE).expect("the stream answers");
    assert_eq!(opened["status"], "200", "{opened}");
    assert_eq!(
        events.recv_timeout(PATIENCE).expect("a priming event"),
        json!({"priming": true})
    );

    let uri = "grk://notes/status";
    let subscribed = post(
        &frame(2, "resources/subscribe", json!({"uri": uri})),
        Some(&session),
    );
    assert_eq!(
        messages(&subscribed.body)[0]["result"],
        json!({}),
        "{}",
        subscribed.body
    );
    // A URI the server does not serve is refused as a read of it is.
    let unknown = post(
        &frame(
            3,
            "resources/subscribe",
            json!({"uri": "file:///etc/passwd"}),
        ),
        Some(&session),
    );
    assert_eq!(
        messages(&unknown.body)[0]["error"]["code"],
        -32002,
        "{}",
        unknown.body
    );

    fx.write("kelp.md", "Kelp forests grow in cold water.");
    fx.ingest_all("notes");
    assert!(
        heard(&events, uri, PATIENCE),
        "no update after a new generation"
    );

    let unsubscribed = post(
        &frame(4, "resources/unsubscribe", json!({"uri": uri})),
        Some(&session),
    );
    assert_eq!(messages(&unsubscribed.body)[0]["result"], json!({}));
    fx.write("otters.md", "Otters hunt urchins.");
    fx.ingest_all("notes");
    assert!(
        !heard(&events, uri, Duration::from_secs(3)),
        "an update after unsubscribing"
    );

    // A stateless client follows resources with `subscriptions/listen` instead: the handshake
    // era's methods are not answered to it.
    let discover = post(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "server/discover",
                "params": {"_meta": modern_meta()}})
        .to_string(),
        Some("stateless"),
    );
    assert_eq!(
        messages(&discover.body)[0]["result"]["capabilities"]["resources"]["subscribe"],
        true,
        "{}",
        discover.body
    );
    let stateless = post(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "resources/subscribe",
                "params": {"uri": uri, "_meta": modern_meta()}})
        .to_string(),
        Some("stateless"),
    );
    assert_eq!(
        messages(&stateless.body)[0]["error"]["code"],
        -32601,
        "{}",
        stateless.body
    );
}

/// `grk serve --stdio`, its output lines read on a thread.
struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl StdioServer {
    fn start(fx: &Fixture) -> Self {
        let mut child = fx
            .grk()
            .args(["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn grk serve --stdio");
        let stdin = child.stdin.take().expect("stdin");
        let stdout: ChildStdout = child.stdout.take().expect("stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = send.send(serde_json::from_str(&line).expect("a JSON line"));
            }
        });
        Self {
            child,
            stdin: Some(stdin),
            lines,
        }
    }

    fn send(&mut self, frame: &str) {
        self.stdin
            .as_mut()
            .expect("input open")
            .write_all(format!("{frame}\n").as_bytes())
            .expect("write a frame");
    }

    /// The answer to request `id` (notifications that come first are skipped).
    fn answer(&self, id: impl Into<Value>) -> Value {
        let id = id.into();
        loop {
            let line = self.lines.recv_timeout(PATIENCE).expect("an answer");
            if line["id"] == id {
                return line;
            }
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_stdio_client_that_follows_a_collection_hears_of_each_generation() {
    let fx = notes();
    let mut server = StdioServer::start(&fx);
    server.send(&initialize_frame(1, "2025-11-25"));
    let answer = server.answer(1);
    assert_eq!(
        answer["result"]["capabilities"]["resources"]["subscribe"],
        true
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    for uri in ["grk://notes/status", "grk://collections"] {
        server.send(&frame(2, "resources/subscribe", json!({"uri": uri})));
        assert_eq!(server.answer(2)["result"], json!({}));
    }
    // A new generation: the status changes. A new collection: the list changes too.
    fx.write("kelp.md", "Kelp forests grow in cold water.");
    fx.ingest_all("notes");
    assert!(heard(&server.lines, "grk://notes/status", PATIENCE));
    fx.ingest_all("more");
    assert!(heard(&server.lines, "grk://collections", PATIENCE));
}

/// A stateless `subscriptions/listen` frame with id `id` following `uris`.
fn listen_frame(id: &str, uris: &[&str]) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": uris, "toolsListChanged": true},
        "_meta": modern_meta(),
    }})
    .to_string()
}

/// The acknowledgement of listen request `id`, honouring `uris`.
fn acknowledged(id: &str, uris: &[&str]) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
        "notifications": {"resourceSubscriptions": uris},
        "_meta": {"io.modelcontextprotocol/subscriptionId": id},
    }})
}

#[test]
fn a_stateless_listen_over_http_is_acknowledged_then_hears_of_each_generation() {
    let fx = notes();
    let server = ServerProcess::spawn(fx.grk().args(["serve", "--port", "0"]))
        .unwrap_or_else(|(status, log)| panic!("grk serve exited ({status}): {log}"));
    let addr = server.loopback();
    let body = listen_frame("listen-1", &["grk://notes/status", "file:///etc/passwd"]);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    let events = open_events(addr, head.into_bytes());
    let next = || events.recv_timeout(PATIENCE).expect("an event");
    assert_eq!(next(), json!({"status": "200"}));
    // Only what the server serves is honoured; no list ever changes here.
    assert_eq!(next(), acknowledged("listen-1", &["grk://notes/status"]));
    fx.write("kelp.md", "Kelp forests grow in cold water.");
    fx.ingest_all("notes");
    assert_eq!(
        next(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {
            "uri": "grk://notes/status",
            "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"},
        }})
    );
}

#[test]
fn a_stateless_listen_over_stdio_hears_of_each_generation_and_ends_with_the_input() {
    let fx = notes();
    let mut server = StdioServer::start(&fx);
    server.send(&listen_frame("l1", &["grk://notes/status"]));
    let ack = server
        .lines
        .recv_timeout(PATIENCE)
        .expect("an acknowledgement");
    assert_eq!(ack, acknowledged("l1", &["grk://notes/status"]));
    fx.write("kelp.md", "Kelp forests grow in cold water.");
    fx.ingest_all("notes");
    let update = server.lines.recv_timeout(PATIENCE).expect("an update");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "l1"
    );
    assert_eq!(update["params"]["uri"], "grk://notes/status");
    // The input ends: the listen is answered, closed, and the server exits.
    server.stdin = None;
    let closed = server.answer("l1");
    assert_eq!(
        closed["result"],
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": "l1"}, "resultType": "complete"})
    );
    assert!(server.child.wait().expect("exit").success());
}
