//! The service over every transport: REST, MCP Streamable HTTP and MCP stdio answer the same
//! input with the same JSON, and refuse bad input with the same `kind`.

use groundkit_retrieval::MAX_TOP_K;
use groundkit_tests::captured_logs;
use serde_json::{Value, json};

use std::sync::Arc;

use groundkit_retrieval::embed::Embedder;
use groundkit_server::service::ServiceContext;

use super::{corpus, state_with};
use crate::mcp::support::{Response, Server, Stdio, events, initialize_frame};

/// One server (HTTP: REST and `/mcp`) and one in-process stdio connection over the same corpus.
pub(crate) struct Surfaces {
    http: Server,
    session: String,
    stdio: Stdio,
    next_id: i64,
}

impl Surfaces {
    /// Serve `fx`'s collections over HTTP and, with a second state over the same files, stdio.
    async fn start(fx: &crate::retrieval::Fixture) -> Self {
        Self::start_with(fx, None).await
    }

    /// [`Surfaces::start`], embedding queries with `embedder`.
    async fn start_with(
        fx: &crate::retrieval::Fixture,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Self {
        Self::start_with_context(|| {
            let context = ServiceContext::new(fx.cache());
            match &embedder {
                Some(embedder) => context.with_embedder(Arc::clone(embedder)),
                None => context,
            }
        })
        .await
    }

    /// Both servers, each with a context from `context`.
    pub(crate) async fn start_with_context(context: impl Fn() -> ServiceContext) -> Self {
        let http = Server::start(state_with(context()));
        let session = http.initialize();
        let mut stdio = Stdio::start(state_with(context()));
        stdio.send(&initialize_frame(0, "2025-11-25")).await;
        let _ = stdio.recv().await;
        stdio
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        Self {
            http,
            session,
            stdio,
            next_id: 1,
        }
    }

    fn rest(&self, tool: &str, arguments: &Value) -> Response {
        let host = self.http.host();
        let collection = arguments["collection"].as_str().unwrap_or_default();
        let (method, path, body) = match tool {
            "search" => ("POST", "/search".to_owned(), arguments.to_string()),
            "fetch_chunk" => (
                "GET",
                format!(
                    "/collections/{collection}/chunks/{}",
                    arguments["chunk_id"].as_str().unwrap_or_default()
                ),
                String::new(),
            ),
            "index_status" => (
                "GET",
                format!("/collections/{collection}/status"),
                String::new(),
            ),
            "list_collections" => ("GET", "/collections".to_owned(), String::new()),
            other => panic!("no REST route for {other}"),
        };
        let mut headers = vec![("Host", host.as_str())];
        if method == "POST" {
            headers.push(("Content-Type", "application/json"));
        }
        crate::mcp::support::request(self.http.addr, method, &path, &headers, body.as_bytes())
    }

    fn call_frame(&mut self, tool: &str, arguments: &Value) -> String {
        self.next_id += 1;
        json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
            .to_string()
    }

    fn mcp_http(&mut self, tool: &str, arguments: &Value) -> Value {
        let frame = self.call_frame(tool, arguments);
        self.http_result(&frame)
    }

    /// `resources/read` of `uri` over MCP HTTP: its result.
    pub(crate) fn read_resource(&mut self, uri: &str) -> Value {
        self.next_id += 1;
        let frame = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "resources/read", "params": {"uri": uri}})
            .to_string();
        self.http_result(&frame)
    }

    /// The result of request `frame` over MCP HTTP, in this session.
    fn http_result(&mut self, frame: &str) -> Value {
        let session = self.session.clone();
        let response = self.http.mcp(
            frame,
            &[
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
        );
        assert_eq!(response.status, 200, "{}", response.body);
        message(&response)["result"].clone()
    }

    async fn mcp_stdio(&mut self, tool: &str, arguments: &Value) -> Value {
        let frame = self.call_frame(tool, arguments);
        self.stdio.send(&frame).await;
        self.stdio.recv().await["result"].clone()
    }

    /// The same call on all three surfaces: (REST response, MCP HTTP result, MCP stdio result).
    pub(crate) async fn everywhere(
        &mut self,
        tool: &str,
        arguments: Value,
    ) -> (Response, Value, Value) {
        let rest = self.rest(tool, &arguments);
        let http = self.mcp_http(tool, &arguments);
        let stdio = self.mcp_stdio(tool, &arguments).await;
        (rest, http, stdio)
    }
}

/// The JSON-RPC message of an MCP HTTP response, sent as JSON or as the last SSE event.
fn message(response: &Response) -> Value {
    if response
        .header("content-type")
        .is_some_and(|c| c.starts_with("text/event-stream"))
    {
        events(response).pop().expect("a response event")
    } else {
        response.json()
    }
}

/// What a surface's answer says, without `index_status`'s runtime counters: they count this
/// process's acquires and rebuild timings, which differ per server and per call by design.
pub(crate) fn stable(mut value: Value) -> Value {
    if let Some(object) = value.as_object_mut() {
        for counter in [
            "retriever_acquires",
            "retriever_rebuilds",
            "rebuild_seconds_total",
            "last_rebuild_seconds",
        ] {
            object.remove(counter);
        }
    }
    value
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_the_same_json_on_rest_and_both_mcp_transports() {
    let fx = corpus();
    let mut surfaces = Surfaces::start(&fx).await;
    let found = surfaces
        .rest(
            "search",
            &json!({"collection": "papers", "query": "tea", "top_k": 1}),
        )
        .json();
    let chunk_id = found["results"][0]["chunk_id"]
        .as_str()
        .expect("a chunk")
        .to_owned();
    let calls = [
        (
            "search",
            json!({"collection": "papers", "query": "COVID-19 antigen tests", "top_k": 3}),
        ),
        (
            "search",
            json!({"collection": "papers", "query": "green tea", "top_k": 2.0, "mode": "lexical"}),
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tests tea chain", "filter": {
                "paths": ["bikes", "*.txt"], "format": ["markdown", "text"]
            }}),
        ),
        (
            "fetch_chunk",
            json!({"collection": "papers", "chunk_id": chunk_id}),
        ),
        ("list_collections", json!({})),
        ("index_status", json!({"collection": "papers"})),
    ];
    for (tool, arguments) in calls {
        let (rest, http, stdio) = surfaces.everywhere(tool, arguments).await;
        assert_eq!(rest.status, 200, "{tool}: {}", rest.body);
        let rest = stable(rest.json());
        for (surface, result) in [("MCP HTTP", &http), ("MCP stdio", &stdio)] {
            assert_eq!(result["isError"], false, "{tool} over {surface}: {result}");
            assert_eq!(
                stable(result["structuredContent"].clone()),
                rest,
                "{tool} over {surface}"
            );
            let text: Value =
                serde_json::from_str(result["content"][0]["text"].as_str().expect("text block"))
                    .expect("the text block is JSON");
            assert_eq!(stable(text), rest, "{tool} over {surface}: text block");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_has_the_same_kind_on_rest_and_both_mcp_transports() {
    let fx = corpus();
    let mut surfaces = Surfaces::start(&fx).await;
    let cases = [
        (
            "index_status",
            json!({"collection": "nope"}),
            "collection_not_found",
        ),
        (
            "search",
            json!({"collection": "../outside", "query": "tea"}),
            "validation_error",
        ),
        (
            "fetch_chunk",
            json!({"collection": "papers", "chunk_id": "0000000000"}),
            "chunk_not_found",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "index_dir": "/etc"}),
            "invalid_request",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "top_k": 0}),
            "validation_error",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "top_k": MAX_TOP_K + 1}),
            "validation_error",
        ),
        (
            "search",
            json!({"collection": "papers", "query": ""}),
            "validation_error",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "rerank": true}),
            "reranker_not_configured",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "top_k": 2.5}),
            "invalid_request",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "top_k": null}),
            "invalid_request",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "mode": null}),
            "invalid_request",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "rerank": null}),
            "invalid_request",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "mode": {"lexical": null}}),
            "invalid_request",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "mode": {"lexical": []}}),
            "invalid_request",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "mode": "dense"}),
            "dense_unavailable",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "mode": "fuzzy"}),
            "invalid_request",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "filter": {"paths": ["src/[a"]}}),
            "validation_error",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "filter": {"author": "x"}}),
            "validation_error",
        ),
        (
            "search",
            json!({"collection": "papers", "query": "tea", "filter": {"paths": "bikes"}}),
            "invalid_request",
        ),
    ];
    for (tool, arguments, kind) in cases {
        let (rest, http, stdio) = surfaces.everywhere(tool, arguments.clone()).await;
        assert_eq!(
            rest.json()["kind"],
            kind,
            "{tool} {arguments} over REST: {}",
            rest.body
        );
        for (surface, result) in [("MCP HTTP", &http), ("MCP stdio", &stdio)] {
            let problem = groundkit_tests::tool_error(result);
            assert_eq!(problem["kind"], kind, "{tool} {arguments} over {surface}");
            assert_eq!(
                problem["detail"],
                rest.json()["detail"],
                "{tool} {arguments}: the same detail on {surface}"
            );
        }
    }
    assert!(!fx.index.join("nope.sqlite3").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_transport_logs_the_query_text_at_info() {
    groundkit_tests::capture_logs();
    let fx = corpus();
    let mut surfaces = Surfaces::start(&fx).await;
    let arguments = json!({"collection": "papers", "query": "bicycle mcpsentinel5521"});
    let (rest, http, stdio) = surfaces.everywhere("search", arguments).await;
    assert_eq!(rest.status, 200);
    assert_eq!(http["isError"], false);
    assert_eq!(stdio["isError"], false);
    let logs = captured_logs();
    assert!(
        logs.contains("tool=\"search\""),
        "no access line was captured:\n{logs}"
    );
    assert!(
        !logs.contains("mcpsentinel5521"),
        "query text reached the INFO log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_given_twice_is_refused_on_every_transport_not_read_as_its_last_value() {
    let fx = corpus();
    let mut surfaces = Surfaces::start(&fx).await;
    let arguments = r#"{"collection": "papers", "query": "tea", "top_k": 0, "top_k": 3}"#;
    let host = surfaces.http.host();
    let rest = crate::mcp::support::request(
        surfaces.http.addr,
        "POST",
        "/search",
        &[
            ("Host", host.as_str()),
            ("Content-Type", "application/json"),
        ],
        arguments.as_bytes(),
    );
    assert_eq!(rest.status, 400, "{}", rest.body);
    assert_eq!(rest.json()["kind"], "invalid_request");
    assert!(
        rest.json()["detail"]
            .as_str()
            .is_some_and(|d| d.contains("duplicate key `top_k`")),
        "{}",
        rest.body
    );
    let frame = format!(
        r#"{{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{{"name":"search","arguments":{arguments}}}}}"#
    );
    let session = surfaces.session.clone();
    let http = surfaces.http.mcp(
        &frame,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    let http = message(&http);
    surfaces.stdio.send(&frame).await;
    let stdio = surfaces.stdio.recv().await;
    for (surface, message) in [("MCP HTTP", &http), ("MCP stdio", &stdio)] {
        let problem = groundkit_tests::tool_error(&message["result"]);
        assert_eq!(problem["kind"], "invalid_request", "{surface}: {message}");
        assert_eq!(problem["detail"], rest.json()["detail"], "{surface}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dense_and_hybrid_answer_the_same_json_on_every_transport_and_the_command_line() {
    let fx = crate::retrieval::Fixture::new();
    fx.write(
        "travel.md",
        "Crossing time zones disrupts the circadian rhythm; morning light resets the body clock.",
    );
    fx.write(
        "tea.txt",
        "Green tea is steeped at 80 degrees for two minutes.",
    );
    fx.write(
        "bikes.md",
        "Clean the bicycle chain, then oil each link sparingly.",
    );
    let mut options = fx.options("papers", &[&fx.base]);
    options.embedder = Some(crate::embed::minilm());
    groundkit_retrieval::ingest(&options, &mut groundkit_retrieval::NoProgress)
        .expect("ingest with vectors");
    let mut surfaces = Surfaces::start_with(&fx, Some(crate::embed::minilm())).await;
    for (mode, fusion) in [("dense", None), ("hybrid", None), ("hybrid", Some("rrf"))] {
        let mut arguments = json!({"collection": "papers", "query": "what helps with jet lag", "top_k": 2, "mode": mode});
        if let Some(fusion) = fusion {
            arguments["fusion"] = json!(fusion);
        }
        let (rest, http, stdio) = surfaces.everywhere("search", arguments).await;
        assert_eq!(rest.status, 200, "{mode}: {}", rest.body);
        let rest = rest.json();
        assert_eq!(rest["metadata"]["mode"], mode);
        let fused = (mode == "hybrid").then(|| fusion.unwrap_or("min_max"));
        assert_eq!(
            rest["metadata"].get("fusion").and_then(Value::as_str),
            fused
        );
        assert_eq!(
            rest["results"][0]["citation"]["source"], "travel.md",
            "{mode}"
        );
        for (surface, result) in [("MCP HTTP", &http), ("MCP stdio", &stdio)] {
            assert_eq!(result["isError"], false, "{mode} over {surface}: {result}");
            assert_eq!(result["structuredContent"], rest, "{mode} over {surface}");
        }
        let cli = std::process::Command::new(env!("CARGO_BIN_EXE_grk-it"))
            .arg("--index-dir")
            .arg(&fx.index)
            .arg("--base-dir")
            .arg(&fx.base)
            .arg("--embed-model")
            .arg(crate::embed::model_dir())
            .args([
                "search",
                "-c",
                "papers",
                "what helps with jet lag",
                "--top-k",
                "2",
                "--json",
                "--mode",
                mode,
            ])
            .args(fusion.map_or(&[][..], |_| &["--fusion", "rrf"][..]))
            .output()
            .expect("run grk");
        assert!(
            cli.status.success(),
            "{}",
            String::from_utf8_lossy(&cli.stderr)
        );
        let cli: Value = serde_json::from_slice(&cli.stdout).expect("JSON");
        assert_eq!(cli, rest, "{mode} on the command line");
    }
    let (rest, http, stdio) = surfaces
        .everywhere("index_status", json!({"collection": "papers"}))
        .await;
    let rest = stable(rest.json());
    assert_eq!(rest["dense_search_available"], true);
    assert_eq!(
        rest["embedding"]["fingerprint"],
        crate::embed::minilm().identity().fingerprint.as_str()
    );
    for result in [&http, &stdio] {
        assert_eq!(stable(result["structuredContent"].clone()), rest);
    }

    // A server without the embedder: the same refusal everywhere, lexical still served.
    let mut plain = Surfaces::start(&fx).await;
    let arguments = json!({"collection": "papers", "query": "jet lag", "mode": "hybrid"});
    let (rest, http, stdio) = plain.everywhere("search", arguments).await;
    assert_eq!(rest.status, 409);
    assert_eq!(rest.json()["kind"], "dense_unavailable");
    for result in [&http, &stdio] {
        assert_eq!(result["isError"], true);
        let problem: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().expect("text"))
                .expect("json");
        assert_eq!(problem["kind"], "dense_unavailable");
    }
    let lexical = plain.rest(
        "search",
        &json!({"collection": "papers", "query": "green tea"}),
    );
    assert_eq!(lexical.status, 200);
}

/// One grk command line over `fx`'s directories; its exit status, stdout and stderr.
pub(crate) fn grk(fx: &crate::retrieval::Fixture, args: &[&str]) -> std::process::Output {
    fx.grk().args(args).output().expect("run grk")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reranked_search_is_the_same_on_every_transport_and_says_so() {
    let fx = corpus();
    let reranker = crate::rerank::tiny();
    let mut surfaces = Surfaces::start_with_context(|| {
        ServiceContext::new(fx.cache()).with_reranker(reranker.clone())
    })
    .await;
    let arguments =
        json!({"collection": "papers", "query": "tea chain tests", "top_k": 2, "rerank": true});
    let (rest, http, stdio) = surfaces.everywhere("search", arguments).await;
    assert_eq!(rest.status, 200, "{}", rest.body);
    let rest = rest.json();
    let results = rest["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert_eq!(rest["metadata"]["reranked"], true);
    assert_eq!(rest["metadata"]["rerank_model"], "tiny-cross-encoder");
    assert_eq!(rest["metadata"]["top_k"], 2);
    let depth = rest["metadata"]["rerank_input_depth"]
        .as_u64()
        .expect("depth");
    assert!(
        depth >= 3,
        "every candidate of the small corpus was scored: {depth}"
    );
    let scores: Vec<f64> = results
        .iter()
        .map(|r| r["score"].as_f64().expect("score"))
        .collect();
    assert!(scores[0] >= scores[1], "best first: {scores:?}");
    for (surface, result) in [("MCP HTTP", &http), ("MCP stdio", &stdio)] {
        assert_eq!(result["isError"], false, "over {surface}: {result}");
        assert_eq!(result["structuredContent"], rest, "over {surface}");
    }
    let tiny = crate::rerank::tiny_dir();
    let tiny = tiny.to_str().expect("utf-8 path");
    let cli = grk(
        &fx,
        &[
            "--rerank-model",
            tiny,
            "search",
            "-c",
            "papers",
            "tea chain tests",
            "--top-k",
            "2",
            "--rerank",
            "--json",
        ],
    );
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    let cli: Value = serde_json::from_slice(&cli.stdout).expect("JSON");
    assert_eq!(cli, rest, "on the command line");

    let (status, _, _) = surfaces
        .everywhere("index_status", json!({"collection": "papers"}))
        .await;
    assert_eq!(status.json()["rerank_model"], "tiny-cross-encoder");
    let cli = grk(&fx, &["--rerank-model", tiny, "status", "-c", "papers"]);
    let text = String::from_utf8_lossy(&cli.stdout);
    assert!(
        text.contains("reranker         tiny-cross-encoder"),
        "{text}"
    );

    // Without a reranker the command line refuses as the transports do.
    let cli = grk(
        &fx,
        &["search", "-c", "papers", "tea", "--rerank", "--json"],
    );
    assert_eq!(cli.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&cli.stderr);
    assert!(stderr.contains("without a reranker"), "{stderr}");
    let cli = grk(&fx, &["status", "-c", "papers"]);
    assert!(String::from_utf8_lossy(&cli.stdout).contains("reranker         none"));
}
