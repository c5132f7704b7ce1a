//! A test client for library authors (feature `testing`): serve a registry in process, call its
//! tools as REST, MCP over HTTP and MCP over stdio framing, and assert that the three agree.
//!
//! [`TestClient::start`] serves the state on a loopback port (the server `serve::run` runs, in a
//! thread of its own) and over an in-memory stdio pipe (the `mcp::stdio` transport, in another),
//! and opens an MCP session on each. Calls block, so the client works from any test, with or
//! without an async runtime. Each call answers a [`Called`]: the tool's JSON output, or the
//! `kind` (and `field`) of the error it failed with, as the transport rendered them. Three lines
//! in a library author's test:
//!
//! ```
//! # use garde::Validate;
//! # use groundkit_core::{Error, Registry, openapi::ApiInfo, tool};
//! # use groundkit_server::{AppState, Limits, testing::TestClient};
//! # use schemars::JsonSchema;
//! # use serde::{Deserialize, Serialize};
//! # pub struct Ctx;
//! # /// Whom to greet.
//! # #[derive(Deserialize, JsonSchema, Validate)]
//! # #[serde(deny_unknown_fields)]
//! # pub struct Whom {
//! #     /// A name.
//! #     #[garde(length(chars, min = 1, max = 16))]
//! #     pub name: String,
//! # }
//! # /// A greeting.
//! # #[derive(Serialize, JsonSchema)]
//! # pub struct Greeting {
//! #     /// The greeting.
//! #     pub message: String,
//! # }
//! # /// Greet someone.
//! # #[tool(read_only, rest = "POST /greet")]
//! # pub async fn greet(_: &Ctx, whom: Whom) -> Result<Greeting, Error> {
//! #     Ok(Greeting { message: format!("Hello, {}!", whom.name) })
//! # }
//! # let info = ApiInfo { title: "doc".into(), version: "0".into() };
//! # let state = AppState::new(Registry::<Ctx>::collect().unwrap(), Ctx, info, Limits::default());
//! let mut client = TestClient::start(state);
//! let greeting = client.assert_parity("greet", serde_json::json!({"name": "Ada"}));
//! assert_eq!(greeting.output()["message"], "Hello, Ada!");
//! # let refused = client.assert_parity("greet", serde_json::json!({"name": ""}));
//! # assert_eq!(refused.error_kind(), Some("validation_error"));
//! ```

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use groundkit_core::HttpMethod;
use serde_json::{Value, json};

use crate::guard::{AllowedHosts, BindTarget, HostPolicy};
use crate::state::AppState;

/// What a call answered, normalised across transports.
#[derive(Debug, Clone, PartialEq)]
pub enum Called {
    /// The tool's output.
    Output(Value),
    /// The call failed: its error's `kind` and `field`.
    Failed {
        /// The error's stable kind.
        kind: String,
        /// The request field to fix, when there is one.
        field: Option<String>,
    },
}

impl Called {
    /// The output.
    ///
    /// # Panics
    ///
    /// If the call failed.
    pub fn output(&self) -> &Value {
        match self {
            Called::Output(output) => output,
            Called::Failed { kind, .. } => panic!("the call failed with `{kind}`"),
        }
    }

    /// The error's kind, if the call failed.
    pub fn error_kind(&self) -> Option<&str> {
        match self {
            Called::Output(_) => None,
            Called::Failed { kind, .. } => Some(kind),
        }
    }

    fn failed(problem: &Value) -> Self {
        Called::Failed {
            kind: problem["kind"].as_str().unwrap_or("-").to_owned(),
            field: problem["field"].as_str().map(str::to_owned),
        }
    }
}

/// A registry served in process over REST, MCP over HTTP and MCP over stdio framing.
pub struct TestClient {
    tools: Vec<(&'static str, groundkit_core::tool::RestRoute)>,
    addr: SocketAddr,
    agent: ureq::Agent,
    session: String,
    server: actix_web::dev::ServerHandle,
    stdin: std::io::PipeWriter,
    stdout: BufReader<std::io::PipeReader>,
    next_id: u64,
}

impl TestClient {
    /// Serve `state` and open an MCP session on HTTP and on stdio.
    ///
    /// # Panics
    ///
    /// If a loopback port cannot be bound or the server does not answer `initialize`.
    pub fn start<Ctx: Send + Sync + 'static>(mut state: AppState<Ctx>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        state.hosts = HostPolicy::derive(
            &BindTarget::Loopback(addr.ip()),
            addr,
            &AllowedHosts::default(),
        );
        let tools = state
            .registry
            .tools()
            .iter()
            .map(|spec| (spec.name(), spec.route()))
            .collect();
        let state = Arc::new(state);
        let server = serve_http(Arc::clone(&state), listener);
        let (stdin, stdout) = serve_stdio(state);
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut client = Self {
            tools,
            addr,
            agent,
            session: String::new(),
            server,
            stdin,
            stdout: BufReader::new(stdout),
            next_id: 0,
        };
        let initialize = client.frame("initialize", initialize_params());
        let (headers, answer) = client.post_mcp(&initialize);
        assert!(
            answer.get("result").is_some(),
            "initialize over HTTP: {answer}"
        );
        client.session = headers.expect("a session id on the initialize response");
        let answer = client.stdio(&initialize);
        assert!(
            answer.get("result").is_some(),
            "initialize over stdio: {answer}"
        );
        client.stdio_notify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    /// Call `tool` on its REST route.
    ///
    /// # Panics
    ///
    /// If the registry has no such tool, or the server does not answer.
    pub fn rest(&self, tool: &str, arguments: Value) -> Called {
        let (_, route) = self
            .tools
            .iter()
            .find(|(name, _)| *name == tool)
            .unwrap_or_else(|| panic!("the registry has no tool `{tool}`"));
        let mut body = match arguments {
            Value::Object(object) => object,
            other => panic!("tool arguments are an object, not {other}"),
        };
        let mut path = route.path.to_owned();
        for param in route.params {
            let value = body.remove(*param).unwrap_or(Value::Null);
            let text = value.as_str().unwrap_or_default();
            path = path.replace(&format!("{{{param}}}"), &encode_segment(text));
        }
        let url = format!("http://{}{path}", self.addr);
        let response = match route.method {
            HttpMethod::Get => self.agent.get(&url).call(),
            HttpMethod::Post => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(Value::Object(body).to_string()),
        };
        let mut response = response.expect("the REST route answers");
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().expect("a body");
        let json: Value = serde_json::from_str(&text).expect("a JSON body");
        if status == 200 {
            Called::Output(json)
        } else {
            Called::failed(&json)
        }
    }

    /// Call `tool` with MCP over HTTP, in the client's session.
    pub fn mcp_http(&mut self, tool: &str, arguments: Value) -> Called {
        let frame = self.tool_call(tool, arguments);
        let (_, answer) = self.post_mcp(&frame);
        tool_result(&answer)
    }

    /// Call `tool` with MCP over stdio framing.
    pub fn mcp_stdio(&mut self, tool: &str, arguments: Value) -> Called {
        let frame = self.tool_call(tool, arguments);
        let answer = self.stdio(&frame);
        tool_result(&answer)
    }

    /// Call `tool` on all three transports and answer what they agree on.
    ///
    /// # Panics
    ///
    /// If the transports answer differently: another output, or another error kind or field.
    pub fn assert_parity(&mut self, tool: &str, arguments: Value) -> Called {
        let rest = self.rest(tool, arguments.clone());
        let http = self.mcp_http(tool, arguments.clone());
        let stdio = self.mcp_stdio(tool, arguments);
        assert_eq!(rest, http, "`{tool}`: REST and MCP over HTTP differ");
        assert_eq!(rest, stdio, "`{tool}`: REST and MCP over stdio differ");
        rest
    }

    fn frame(&mut self, method: &str, params: Value) -> String {
        self.next_id += 1;
        json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
            .to_string()
    }

    fn tool_call(&mut self, tool: &str, arguments: Value) -> String {
        self.frame("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// POST one frame to `/mcp`: the session id the response gives, and its JSON.
    fn post_mcp(&self, frame: &str) -> (Option<String>, Value) {
        let mut request = self
            .agent
            .post(format!("http://{}/mcp", self.addr))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if !self.session.is_empty() {
            request = request
                .header("Mcp-Session-Id", &self.session)
                .header("MCP-Protocol-Version", PROTOCOL_VERSION);
        }
        let mut response = request.send(frame).expect("/mcp answers");
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = response.body_mut().read_to_string().expect("a body");
        (
            session,
            serde_json::from_str(&text).expect("a JSON-RPC answer"),
        )
    }

    /// Send one frame over stdio and read the answer.
    fn stdio(&mut self, frame: &str) -> Value {
        self.stdio_notify(frame);
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("stdio answers");
        serde_json::from_str(&line).expect("a JSON-RPC answer")
    }

    fn stdio_notify(&mut self, frame: &str) {
        writeln!(self.stdin, "{frame}").expect("stdio is open");
        self.stdin.flush().expect("stdio is open");
    }
}

impl Drop for TestClient {
    fn drop(&mut self) {
        // Stopping is asynchronous; the server thread ends once it has stopped.
        drop(self.server.stop(false));
    }
}

/// The revision the client negotiates.
const PROTOCOL_VERSION: &str = "2025-11-25";

fn initialize_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "groundkit-test-client", "version": "0"},
    })
}

/// A `tools/call` answer as a [`Called`]: the structured output, or the problem a tool error
/// (`isError`) carries as its text, or a JSON-RPC error's `data`.
fn tool_result(answer: &Value) -> Called {
    let result = &answer["result"];
    if result["isError"] == json!(true) {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let problem: Value = serde_json::from_str(text).unwrap_or_default();
        return Called::failed(&problem);
    }
    match result.get("structuredContent") {
        Some(output) => Called::Output(output.clone()),
        None => Called::Failed {
            kind: answer["error"]["data"]["kind"].as_str().map_or_else(
                || format!("jsonrpc {}", answer["error"]["code"]),
                str::to_owned,
            ),
            field: None,
        },
    }
}

/// `text` as one URL path segment: everything but unreserved characters percent-encoded.
fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The HTTP server `serve::run` runs, on `listener`, in a thread of its own.
fn serve_http<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
    listener: TcpListener,
) -> actix_web::dev::ServerHandle {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let server = crate::serve::http_server(state, listener).expect("listen");
            let _ = tx.send(server.handle());
            let _ = server.await;
        });
    });
    rx.recv().expect("the server started")
}

/// The stdio transport over a pair of pipes, in a thread of its own: the client's ends.
fn serve_stdio<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
) -> (std::io::PipeWriter, std::io::PipeReader) {
    let (server_in, client_out) = std::io::pipe().expect("a pipe");
    let (client_in, server_out) = std::io::pipe().expect("a pipe");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            use tokio::net::unix::pipe;
            let input = pipe::Receiver::from_owned_fd(server_in.into()).expect("a pipe");
            let output = pipe::Sender::from_owned_fd(server_out.into()).expect("a pipe");
            let _ = crate::mcp::stdio::serve(state, input, output).await;
        });
    });
    (client_out, client_in)
}
