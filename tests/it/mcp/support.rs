//! Helpers for the MCP and serving-safety tests: real servers on loopback, a raw HTTP/1.1
//! client (so Host, Origin and framing are exactly what the test says, byte for byte), an
//! in-process stdio connection, and a small tool set with a gate, a panic and progress, and
//! resources that count their reads or panic.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use garde::Validate;
use groundkit_core::openapi::ApiInfo;
use groundkit_core::progress;
use groundkit_core::{Content, Error, Registry, RequestContext, resource, tool};
use groundkit_examples::hello::HelloContext;
use groundkit_server::{AppState, Limits, mcp};
pub use groundkit_tests::Response;
use groundkit_tests::{TestServer, parse_response};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Semaphore;

// ---------------------------------------------------------------------------------------------
// A tool set for exercising the call path: a gated call, blocking work, a panic, progress.

/// Context of the test tools: a gate the `gated` tool waits on, a count of finished calls, and
/// how many `hold` calls hold a blocking thread now and at most.
#[derive(Clone)]
pub struct TestContext {
    /// `gated` waits for a permit here; add permits to let calls finish.
    pub gate: Arc<Semaphore>,
    /// Calls of `gated` that have started (each holds a call permit until it finishes).
    pub started: Arc<AtomicUsize>,
    /// Calls of `gated` that ran to completion.
    pub finished: Arc<AtomicUsize>,
    /// `hold` calls on a blocking thread now.
    pub holding: Arc<AtomicUsize>,
    /// Most `hold` calls seen on blocking threads at once.
    pub most_holding: Arc<AtomicUsize>,
    /// Reads of the `file` resource that reached its function.
    pub reads: Arc<AtomicUsize>,
    /// `watch_cancel` calls whose blocking work is running.
    pub watching: Arc<AtomicUsize>,
    /// `watch_cancel` calls whose blocking work saw the call cancelled.
    pub cancels_seen: Arc<AtomicUsize>,
}

impl Default for TestContext {
    fn default() -> Self {
        Self {
            gate: Arc::new(Semaphore::new(0)),
            started: Arc::default(),
            finished: Arc::default(),
            holding: Arc::default(),
            most_holding: Arc::default(),
            reads: Arc::default(),
            watching: Arc::default(),
            cancels_seen: Arc::default(),
        }
    }
}

/// How long to sleep after passing the gate.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct GatedRequest {
    /// Milliseconds to sleep once through the gate.
    #[garde(range(max = 60_000))]
    pub sleep_ms: u64,
}

/// An empty request.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

/// A call's outcome.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Done {
    /// Always true.
    pub done: bool,
}

/// Wait for the test's gate, sleep, and count the call as finished.
#[tool(read_only, rest = "POST /test/gated")]
pub async fn gated(ctx: &TestContext, request: GatedRequest) -> Result<Done, Error> {
    ctx.started.fetch_add(1, Ordering::SeqCst);
    let permit = ctx.gate.acquire().await;
    drop(permit);
    tokio::time::sleep(Duration::from_millis(request.sleep_ms)).await;
    ctx.finished.fetch_add(1, Ordering::SeqCst);
    Ok(Done { done: true })
}

/// Hold a blocking thread (`spawn_blocking`) for `sleep_ms`, counting the holds at once.
#[tool(read_only, rest = "POST /test/hold")]
pub async fn hold(ctx: &TestContext, request: GatedRequest) -> Result<Done, Error> {
    let (holding, most) = (Arc::clone(&ctx.holding), Arc::clone(&ctx.most_holding));
    tokio::task::spawn_blocking(move || {
        let now = holding.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(request.sleep_ms));
        holding.fetch_sub(1, Ordering::SeqCst);
    })
    .await
    .map_err(|_| Error::internal("the blocking task failed"))?;
    Ok(Done { done: true })
}

/// Panic with a message naming a secret path, which must never reach a caller.
#[tool(read_only, rest = "GET /test/boom")]
pub async fn boom(_ctx: &TestContext, _request: Nothing) -> Result<Done, Error> {
    panic!("cannot open /srv/secret/index.sqlite3")
}

/// Report progress 1, 1 (dropped: not increasing), 2 and 3 of 3.
#[tool(read_only, rest = "GET /test/progress")]
pub async fn stepper(_ctx: &TestContext, _request: Nothing) -> Result<Done, Error> {
    for step in [1.0, 1.0, 2.0, 3.0] {
        progress::report(step, Some(3.0), Some("stepping"));
        tokio::task::yield_now().await;
    }
    Ok(Done { done: true })
}

/// What a function saw of its call.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CallInfo {
    /// The request id.
    pub request_id: String,
    /// The transport's name.
    pub transport: String,
    /// The negotiated MCP revision; absent on REST.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Milliseconds left before the deadline.
    pub deadline_ms: u64,
}

/// Say what the call is: request id, transport, revision, time left.
#[tool(read_only, rest = "GET /test/call-info")]
pub async fn call_info(
    _ctx: &TestContext,
    _request: Nothing,
    call: RequestContext,
) -> Result<CallInfo, Error> {
    let deadline = call
        .deadline()
        .ok_or_else(|| Error::internal("no deadline"))?;
    Ok(CallInfo {
        request_id: call.request_id().to_owned(),
        transport: call.transport().as_str().to_owned(),
        protocol_version: call.protocol_version().map(str::to_owned),
        deadline_ms: deadline
            .saturating_duration_since(std::time::Instant::now())
            .as_millis() as u64,
    })
}

/// Start blocking work that runs until the call is cancelled (at most 30 s), counting what it
/// saw, and wait for it.
#[tool(read_only, rest = "GET /test/watch-cancel")]
pub async fn watch_cancel(
    ctx: &TestContext,
    _request: Nothing,
    call: RequestContext,
) -> Result<Done, Error> {
    let (watching, seen) = (Arc::clone(&ctx.watching), Arc::clone(&ctx.cancels_seen));
    tokio::task::spawn_blocking(move || {
        watching.fetch_add(1, Ordering::SeqCst);
        let until = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < until {
            if call.is_cancelled() {
                seen.fetch_add(1, Ordering::SeqCst);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        watching.fetch_sub(1, Ordering::SeqCst);
    })
    .await
    .map_err(|_| Error::internal("the blocking task failed"))?;
    Ok(Done { done: true })
}

/// The name of a file: letters, digits, `-`, `_` and inner dots, never `..` or `/`.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct FileParams {
    /// The file name.
    #[garde(
        length(min = 1, max = 64),
        pattern(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
    )]
    pub name: String,
}

/// A file by name: its name as text; counts the reads that reach it.
#[resource(read_only, uri = "test://files/{name}", mime_type = "text/plain")]
pub async fn file(ctx: &TestContext, params: FileParams) -> Result<Content, Error> {
    ctx.reads.fetch_add(1, Ordering::SeqCst);
    Ok(Content::Text(format!("contents of {}", params.name)))
}

/// Panic with a message naming a secret path, which must never reach a caller.
#[resource(read_only, uri = "test://boom", mime_type = "text/plain")]
pub async fn boom_resource(_ctx: &TestContext) -> Result<Content, Error> {
    panic!("cannot open /srv/secret/resource")
}

fn info(title: &str) -> ApiInfo {
    ApiInfo {
        title: title.into(),
        version: "0.0.0-test".into(),
    }
}

/// State serving the hello tools.
pub fn hello_state(limits: Limits) -> AppState<HelloContext> {
    let registry = Registry::<HelloContext>::collect().expect("hello registry");
    AppState::new(registry, HelloContext::default(), info("hello"), limits)
}

/// State serving the test tools, and a handle on their context.
pub fn test_state(limits: Limits) -> (AppState<TestContext>, TestContext) {
    let ctx = TestContext::default();
    let registry = Registry::<TestContext>::collect().expect("test registry");
    let state = AppState::new(registry, ctx.clone(), info("test"), limits);
    (state, ctx)
}

// ---------------------------------------------------------------------------------------------
// A real HTTP server on loopback.

/// An HTTP server on 127.0.0.1 ([`TestServer`]), stopped when dropped, with MCP helpers.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    _server: TestServer,
}

impl Server {
    /// Serve `state` on a free loopback port, with the Host policy `serve::run` derives for that
    /// bind (unless the test set another one on the state).
    pub fn start<Ctx: Send + Sync + 'static>(state: AppState<Ctx>) -> Self {
        Self::wrap(TestServer::start(state))
    }

    /// Serve an already shared `state` (its Host policy as it is) on a free loopback port.
    pub fn start_shared<Ctx: Send + Sync + 'static>(state: Arc<AppState<Ctx>>) -> Self {
        Self::wrap(TestServer::start_shared(state))
    }

    fn wrap(server: TestServer) -> Self {
        Server {
            addr: server.addr,
            _server: server,
        }
    }

    /// `127.0.0.1:<port>`, the Host a well-behaved local client sends.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }

    /// POST one JSON-RPC frame to `/mcp` with the usual client headers plus `extra`.
    pub fn mcp(&self, body: &str, extra: &[(&str, &str)]) -> Response {
        let host = self.host();
        let mut headers = vec![
            ("Host", host.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        headers.extend_from_slice(extra);
        request(self.addr, "POST", "/mcp", &headers, body.as_bytes())
    }

    /// Initialize a handshake-era session; returns its id.
    pub fn initialize(&self) -> String {
        let response = self.mcp(&initialize_frame(1, "2025-11-25"), &[]);
        assert_eq!(response.status, 200, "{}", response.body);
        response
            .header("mcp-session-id")
            .expect("a session id on the initialize response")
            .to_owned()
    }
}

/// An `initialize` request frame.
pub fn initialize_frame(id: i64, version: &str) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": { "name": "groundkit-tests", "version": "0" }
        }
    })
    .to_string()
}

/// The `_meta` of a stateless-era (2026-07-28) request.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// The `data:` payloads of an event-stream response body, as JSON.
pub fn events(response: &Response) -> Vec<Value> {
    response
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| serde_json::from_str(data.trim()).expect("event data is JSON"))
        .collect()
}

/// Send one HTTP/1.1 request with exactly these headers (plus `Content-Length` when there is a
/// body and `Connection: close`) and read the whole response.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    raw(addr, &bytes)
}

/// Send raw bytes and read the whole response (the server closes the connection).
pub fn raw(addr: SocketAddr, bytes: &[u8]) -> Response {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    stream.write_all(bytes).expect("write request");
    read_response(&mut stream)
}

/// Limits short enough that a test sees every timer fire in a few seconds: a 0.5 s keep-alive
/// and 1 s for a head, a body and a call, so a connection the server writes nothing to is
/// closed after 3.5 s (`Limits::write_deadline`).
pub fn short_limits() -> Limits {
    Limits {
        keep_alive: Duration::from_millis(500),
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(1),
        ..Limits::default()
    }
}

/// Send `bytes` on one connection and read every response until the server closes it, as
/// (status, body) pairs; panics when it is still open after 20 s.
pub fn until_closed(addr: SocketAddr, bytes: &[u8]) -> Vec<(u16, String)> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    stream.write_all(bytes).expect("write");
    let mut all = Vec::new();
    stream
        .read_to_end(&mut all)
        .expect("the server closes the connection within 20 s");
    let all = String::from_utf8(all).expect("UTF-8 responses");
    let (responses, used) = answers(&all);
    assert_eq!(&all[used..], "", "nothing after the last response");
    responses
}

/// The whole answers at the start of `text`, each with a `Content-Length`, as (status, body)
/// pairs, and how many bytes they take.
pub fn answers(text: &str) -> (Vec<(u16, String)>, usize) {
    let mut responses = Vec::new();
    let mut used = 0;
    while let Some(head_end) = text[used..].find("\r\n\r\n") {
        let head = &text[used..used + head_end];
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().expect("length"))
            })
            .expect("a Content-Length on every answer");
        let body_start = used + head_end + 4;
        let Some(body) = text.get(body_start..body_start + length) else {
            break;
        };
        responses.push((head[9..12].parse().expect("status"), body.to_owned()));
        used = body_start + length;
    }
    (responses, used)
}

/// Read one response from `stream`: the head, then as much body as `Content-Length` or the
/// chunked encoding says (or everything until the server closes the connection).
pub fn read_response(stream: &mut TcpStream) -> Response {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if complete(&data) {
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
    parse_response(&data)
}

/// Whether `data` holds a whole response.
fn complete(data: &[u8]) -> bool {
    let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
    let body = &data[end + 4..];
    if let Some(len) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return body.len() >= len;
    }
    if head.contains("transfer-encoding: chunked") {
        return body.ends_with(b"0\r\n\r\n");
    }
    false
}

// ---------------------------------------------------------------------------------------------
// stdio, in process.

/// One end of an in-process stdio connection to a server.
pub struct Stdio {
    to_server: Option<DuplexStream>,
    from_server: BufReader<DuplexStream>,
    /// Resolves when the server returns (after end of input).
    pub done: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Stdio {
    /// Serve `state` over an in-process pipe pair.
    pub fn start<Ctx: Send + Sync + 'static>(state: AppState<Ctx>) -> Self {
        Self::start_shared(Arc::new(state))
    }

    /// Serve an already shared `state` over an in-process pipe pair.
    pub fn start_shared<Ctx: Send + Sync + 'static>(state: Arc<AppState<Ctx>>) -> Self {
        let (client_out, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_in) = tokio::io::duplex(64 * 1024);
        let done = tokio::spawn(mcp::stdio::serve(state, server_in, server_out));
        Stdio {
            to_server: Some(client_out),
            from_server: BufReader::new(client_in),
            done,
        }
    }

    /// Send one line.
    pub async fn send(&mut self, line: &str) {
        let pipe = self.to_server.as_mut().expect("input still open");
        pipe.write_all(line.as_bytes()).await.expect("write");
        pipe.write_all(b"\n").await.expect("write");
    }

    /// The next line, as JSON; panics after `wait` without one.
    pub async fn recv_within(&mut self, wait: Duration) -> Value {
        self.try_recv(wait)
            .await
            .unwrap_or_else(|| panic!("no frame within {wait:?}"))
    }

    /// The next line, as JSON (waiting up to 10 s).
    pub async fn recv(&mut self) -> Value {
        self.recv_within(Duration::from_secs(10)).await
    }

    /// The next line within `wait`, if any.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        let mut line = String::new();
        match tokio::time::timeout(wait, self.from_server.read_line(&mut line)).await {
            Ok(Ok(n)) if n > 0 => Some(
                serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}")),
            ),
            _ => None,
        }
    }

    /// Close the server's input (end of file).
    pub fn close(&mut self) {
        self.to_server = None;
    }
}

// ---------------------------------------------------------------------------------------------
// The real example binaries.

/// Path of the `hello` binary, built on first use ([`example_bin`]).
pub fn hello_bin() -> PathBuf {
    example_bin("hello")
}

/// Path of the example binary `name`, the example binaries all built on first use.
///
/// The tests package cannot see another package's `CARGO_BIN_EXE_*`, so the first test that
/// needs one runs `cargo build -p groundkit-examples --bins` (a no-op when up to date) with the
/// same cargo that runs the tests, and finds it next to this test binary's `deps/` folder.
pub fn example_bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let profile_dir = BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-q", "-p", "groundkit-examples", "--bins"])
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building the example binaries failed");
        let exe = std::env::current_exe().expect("test binary path");
        exe.parent()
            .and_then(|deps| deps.parent())
            .expect("target/<profile>/deps")
            .to_owned()
    });
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{name} binary not found at {}",
        path.display()
    );
    path
}

/// The `GET /mcp` stream of session `session` at `addr`, read as [`open_events`] reads it.
pub fn event_stream(addr: SocketAddr, session: &str) -> Events {
    let head = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n",
        addr.port()
    );
    open_events(addr, head.into_bytes())
}

/// An answer's events as [`open_events`] reads them; dropping it closes the connection.
pub struct Events {
    rx: std::sync::mpsc::Receiver<Value>,
    socket: TcpStream,
}

impl std::ops::Deref for Events {
    type Target = std::sync::mpsc::Receiver<Value>;

    fn deref(&self) -> &Self::Target {
        &self.rx
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
    }
}

/// Sends `request` (a whole HTTP/1.1 request) to `addr` and reads its answer's events on a
/// thread: first `{"status": "<code>"}`, then `{"priming": true}` for an event without data,
/// each event's data as JSON, and `{"end": true}` when the server ends the stream.
pub fn open_events(addr: SocketAddr, request: Vec<u8>) -> Events {
    use std::io::BufRead;
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.write_all(&request).expect("send the request");
    let socket = stream
        .try_clone()
        .expect("a second handle on the connection");
    let (send, events) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).expect("status line");
        let _ = send.send(json!({"status": status.split(' ').nth(1)}));
        for line in reader.lines().map_while(Result::ok) {
            // The last chunk of a chunked body is empty: the stream has ended.
            let event = match line.strip_prefix("data:").map(str::trim) {
                Some("") => json!({"priming": true}),
                Some(data) => serde_json::from_str(data).expect("JSON data"),
                None if line == "0" => json!({"end": true}),
                None => continue,
            };
            if send.send(event).is_err() {
                return;
            }
        }
        let _ = send.send(json!({"end": true}));
    });
    Events { rx: events, socket }
}
