//! Support for the workspace-level tests: a real HTTP server on loopback and a raw HTTP/1.1
//! client that can send exactly the bytes a test means (duplicated or missing `Host`, foreign
//! `Origin`), which a high-level client would normalise away.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use groundkit_server::{AllowedHosts, AppState, BindTarget, HostPolicy};

/// A server running on a loopback port in a background thread; stopped on drop.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    handle: actix_web::dev::ServerHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// Serve `state` on 127.0.0.1 with an OS-chosen port, with the Host policy `serve::run`
    /// derives for that bind (unless the test set another one on the state).
    pub fn start<Ctx: Send + Sync + 'static>(mut state: AppState<Ctx>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        if state.hosts == HostPolicy::default() {
            state.hosts = HostPolicy::derive(
                &BindTarget::Loopback(addr.ip()),
                addr,
                &AllowedHosts::default(),
            );
        }
        Self::serve(Arc::new(state), listener)
    }

    /// Serve an already shared `state` (its Host policy as it is) on an OS-chosen port.
    pub fn start_shared<Ctx: Send + Sync + 'static>(state: Arc<AppState<Ctx>>) -> Self {
        Self::serve(
            state,
            TcpListener::bind("127.0.0.1:0").expect("bind a loopback port"),
        )
    }

    /// Run `serve::http_server` (the server `serve::run` runs) on `listener` in a thread.
    fn serve<Ctx: Send + Sync + 'static>(state: Arc<AppState<Ctx>>, listener: TcpListener) -> Self {
        let addr = listener.local_addr().expect("local address");
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let server = groundkit_server::serve::http_server(state, listener).expect("listen");
                tx.send(server.handle()).expect("send handle");
                let _ = server.await;
            });
        });
        let handle = rx.recv().expect("server started");
        Self {
            addr,
            handle,
            thread: Some(thread),
        }
    }

    /// Send `raw` (a whole HTTP/1.1 request; `{addr}` is replaced by this server's address).
    pub fn raw(&self, raw: &str) -> Response {
        send_raw(self.addr, &raw.replace("{addr}", &self.addr.to_string()))
    }

    /// `GET path` with a correct `Host`.
    pub fn get(&self, path: &str) -> Response {
        get(self.addr, path)
    }

    /// `POST path` with a JSON body and a correct `Host`.
    pub fn post_json(&self, path: &str, body: &str) -> Response {
        post_json(self.addr, path, body)
    }
}

/// `GET path` to `addr`, with `Host: addr`.
pub fn get(addr: SocketAddr, path: &str) -> Response {
    send_raw(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

/// `POST path` to `addr` with a JSON body, with `Host: addr`.
pub fn post_json(addr: SocketAddr, path: &str, body: &str) -> Response {
    send_raw(
        addr,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let stop = self.handle.stop(false);
        std::thread::spawn(move || actix_web::rt::System::new().block_on(stop));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A parsed HTTP response.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: String,
}

impl Response {
    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("body is not JSON ({err}): {}", self.body))
    }
}

/// A serving process (`grk serve`, an example binary) spawned with `--port 0`, its address read
/// from the line it logs when it starts serving; killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// Where it listens, as it logged it (a wildcard bind logs `0.0.0.0` or `[::]`).
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Spawn `command` (it must log at INFO on stderr) and wait until it serves, or until it
    /// exits: then its exit status and everything it wrote to stderr.
    pub fn spawn(command: &mut Command) -> Result<Self, (ExitStatus, String)> {
        let mut child = command
            .env("GROUNDKIT_LOG", "info")
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the server");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut log = String::new();
        let addr = loop {
            let mut line = String::new();
            if stderr.read_line(&mut line).expect("read the log") == 0 {
                let status = child.wait().expect("reap the server");
                return Err((status, log));
            }
            log.push_str(&line);
            if let Some(rest) = line.split("serving REST on http://").nth(1) {
                let addr = rest.split_whitespace().next().expect("an address");
                break addr.parse().expect("a socket address");
            }
        };
        // Keep reading the log so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in stderr.lines() {});
        Ok(Self { child, addr })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The same port on `127.0.0.1`: where a client on this machine reaches a wildcard bind.
    pub fn loopback(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.addr.port()))
    }

    /// `GET path` on [`loopback`](Self::loopback), with that `Host`.
    pub fn get(&self, path: &str) -> Response {
        get(self.loopback(), path)
    }

    /// `POST path` on [`loopback`](Self::loopback) with a JSON body, with that `Host`.
    pub fn post_json(&self, path: &str, body: &str) -> Response {
        post_json(self.loopback(), path, body)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Send raw bytes and read the whole response (the request should say `Connection: close`).
pub fn send_raw(addr: SocketAddr, raw: &str) -> Response {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    stream.write_all(raw.as_bytes()).expect("write request");
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse_response(&bytes)
}

/// Parse one whole HTTP/1.1 response (chunked bodies are de-chunked).
pub fn parse_response(bytes: &[u8]) -> Response {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// Everything the process logged at INFO and above since [`capture_logs`] was first called.
pub fn captured_logs() -> String {
    let buffer = capture_logs();
    String::from_utf8_lossy(&buffer.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
}

/// The access-log line of the request `response` answered (found by its `X-Request-ID`).
///
/// Call [`capture_logs`] before the request is sent.
pub fn access_line(response: &Response) -> String {
    let request_id = response
        .header("x-request-id")
        .expect("an X-Request-ID header");
    let logs = captured_logs();
    logs.lines()
        .find(|line| line.contains(request_id) && line.contains("groundkit::access"))
        .unwrap_or_else(|| panic!("no access line for {request_id} in:\n{logs}"))
        .to_owned()
}

/// Install (once) a process-wide subscriber that records INFO logs into a buffer.
pub fn capture_logs() -> Arc<std::sync::Mutex<Vec<u8>>> {
    static BUFFER: std::sync::OnceLock<Arc<std::sync::Mutex<Vec<u8>>>> = std::sync::OnceLock::new();
    BUFFER
        .get_or_init(|| {
            let buffer = Arc::new(std::sync::Mutex::new(Vec::new()));
            let sink = Arc::clone(&buffer);
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(tracing::Level::INFO)
                .with_ansi(false)
                .with_writer(move || LogSink(Arc::clone(&sink)))
                .finish();
            let _ = tracing::subscriber::set_global_default(subscriber);
            buffer
        })
        .clone()
}

struct LogSink(Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The problem JSON of an MCP `tools/call` error result, checked for the shape clients expect:
/// `isError: true`, the problem in the one text block, and no `structuredContent` (which would
/// not match the tool's `outputSchema`).
pub fn tool_error(result: &serde_json::Value) -> serde_json::Value {
    assert_eq!(result["isError"], true, "an error result: {result}");
    assert!(
        result.get("structuredContent").is_none(),
        "an error result carries no structuredContent: {result}"
    );
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text block: {result}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("problem JSON in the text ({e}): {text}"))
}
