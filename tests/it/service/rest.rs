//! The service over REST: results, verdicts and every error path with its `kind`.

use std::sync::Arc;

use groundkit_core::{Error, Registry, SideEffect};
use groundkit_retrieval::{MAX_QUERY_CHARS, MAX_TOP_K};
use groundkit_server::service::{Reranker, ServiceContext};
use groundkit_tests::{Response, TestServer, access_line, captured_logs};
use serde_json::{Value, json};

use super::{corpus, server, state};
use crate::retrieval::snapshot_tree;

#[test]
fn the_service_is_exactly_four_read_only_tools() {
    let registry = Registry::<ServiceContext>::collect().expect("service registry");
    let tools: Vec<(&str, String)> = registry
        .tools()
        .iter()
        .map(|spec| {
            (
                spec.name(),
                format!("{} {}", spec.route().method, spec.route().path),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [
            (
                "fetch_chunk",
                "GET /collections/{collection}/chunks/{chunk_id}".to_owned()
            ),
            (
                "index_status",
                "GET /collections/{collection}/status".to_owned()
            ),
            ("list_collections", "GET /collections".to_owned()),
            ("search", "POST /search".to_owned()),
        ]
    );
    assert!(
        registry
            .tools()
            .iter()
            .all(|spec| spec.side_effect() == SideEffect::ReadOnly)
    );
}

#[test]
fn no_request_carries_paths_urls_or_provider_settings() {
    let registry = Registry::<ServiceContext>::collect().expect("service registry");
    let forbidden = [
        "dir", "path", "url", "uri", "base", "endpoint", "provider", "model", "key", "embed",
        "host", "file",
    ];
    for spec in registry.tools() {
        let schema = spec.input_schema();
        let fields: Vec<&String> = schema["properties"]
            .as_object()
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        for field in fields {
            let lower = field.to_ascii_lowercase();
            assert!(
                !forbidden.iter().any(|word| lower.contains(word)),
                "{}: request field `{field}` looks like server configuration",
                spec.name()
            );
        }
    }
}

/// `POST /search` with `body`.
pub(super) fn search(server: &TestServer, body: Value) -> Response {
    server.post_json("/search", &body.to_string())
}

#[test]
fn search_returns_ranked_chunks_with_citations() {
    let fx = corpus();
    let server = server(&fx);
    let response = search(
        &server,
        json!({"collection": "papers", "query": "COVID-19 antigen tests", "top_k": 2}),
    );
    assert_eq!(response.status, 200, "{}", response.body);
    let body = response.json();
    let first = &body["results"][0];
    assert_eq!(first["rank"], 1);
    assert_eq!(first["citation"]["source"], "covid.md");
    assert_eq!(first["citation"]["source_class"], "text");
    assert!(
        first["content"]
            .as_str()
            .expect("content")
            .contains("antigen tests")
    );
    assert!(first["score"].as_f64().expect("score") > 0.0);
    assert_eq!(body["metadata"]["reranked"], false);
    assert_eq!(
        body["total_results"],
        body["results"].as_array().expect("results").len()
    );
}

#[test]
fn fetch_chunk_verifies_and_a_later_edit_is_drifted_without_content() {
    let fx = corpus();
    let server = server(&fx);
    let hit = search(
        &server,
        json!({"collection": "papers", "query": "green tea steeped", "top_k": 1}),
    )
    .json();
    let chunk_id = hit["results"][0]["chunk_id"]
        .as_str()
        .expect("chunk id")
        .to_owned();
    let path = format!("/collections/papers/chunks/{chunk_id}");

    let fetched = server.get(&path);
    assert_eq!(fetched.status, 200, "{}", fetched.body);
    assert_eq!(fetched.json()["verification"], "verified");
    assert_eq!(fetched.json()["content"], hit["results"][0]["content"]);

    fx.write(
        "tea.txt",
        "Green tea is steeped at 95 degrees for five minutes.\n",
    );
    let again = search(
        &server,
        json!({"collection": "papers", "query": "green tea steeped", "top_k": 1}),
    )
    .json();
    assert_eq!(
        again["results"][0]["content"], hit["results"][0]["content"],
        "search serves the indexed text"
    );
    let drifted = server.get(&path);
    assert_eq!(drifted.status, 200);
    assert_eq!(drifted.json()["verification"], "drifted");
    assert!(
        drifted.json().get("content").is_none_or(Value::is_null),
        "{}",
        drifted.body
    );
}

#[test]
fn list_and_status_describe_without_paths() {
    let fx = corpus();
    let server = server(&fx);
    assert_eq!(
        server.get("/collections").json(),
        json!({"collections": ["papers"]})
    );
    let status = server.get("/collections/papers/status");
    assert_eq!(status.status, 200);
    let body = status.json();
    assert_eq!(
        (
            body["document_count"].as_u64(),
            body["chunk_count"].as_u64()
        ),
        (Some(3), Some(3))
    );
    // Ingested without an embedder: no identity, and no dense search here.
    assert_eq!(body["dense_search_available"], false);
    for gone in ["embedding", "cache_enabled"] {
        assert!(body.get(gone).is_none(), "{gone}: {body}");
    }
    assert_eq!(body["generation"], 1);
    assert!(body["retriever_acquires"].as_u64().expect("acquires") >= 1);
    for leak in [
        fx.base.to_string_lossy().as_ref(),
        fx.index.to_string_lossy().as_ref(),
        "covid.md",
        "tea.txt",
    ] {
        assert!(
            !status.body.contains(leak),
            "status leaks {leak}: {}",
            status.body
        );
    }
}

/// Every error path, with its status and kind; the bodies are returned for the leak scan.
fn error_cases(server: &TestServer) -> Vec<(String, u16, &'static str, Response)> {
    let long_query = "q".repeat(MAX_QUERY_CHARS + 1);
    let cases: Vec<(String, u16, &'static str, Response)> = vec![
        (
            "unknown collection (status)".into(),
            404,
            "collection_not_found",
            server.get("/collections/nope/status"),
        ),
        (
            "unknown collection (search)".into(),
            404,
            "collection_not_found",
            search(server, json!({"collection": "nope", "query": "tea"})),
        ),
        (
            "traversal name (status)".into(),
            422,
            "validation_error",
            server.get("/collections/..%2Foutside/status"),
        ),
        (
            "traversal name (search)".into(),
            422,
            "validation_error",
            search(server, json!({"collection": "../outside", "query": "tea"})),
        ),
        (
            "unknown chunk".into(),
            404,
            "chunk_not_found",
            server.get("/collections/papers/chunks/0000000000"),
        ),
        (
            "unknown field".into(),
            400,
            "invalid_request",
            search(
                server,
                json!({"collection": "papers", "query": "tea", "index_dir": "/etc"}),
            ),
        ),
        (
            "top_k 0".into(),
            422,
            "validation_error",
            search(
                server,
                json!({"collection": "papers", "query": "tea", "top_k": 0}),
            ),
        ),
        (
            "top_k past max".into(),
            422,
            "validation_error",
            search(
                server,
                json!({"collection": "papers", "query": "tea", "top_k": MAX_TOP_K + 1}),
            ),
        ),
        (
            "empty query".into(),
            422,
            "validation_error",
            search(server, json!({"collection": "papers", "query": ""})),
        ),
        (
            "query past max".into(),
            422,
            "validation_error",
            search(server, json!({"collection": "papers", "query": long_query})),
        ),
        (
            "rerank without reranker".into(),
            409,
            "reranker_not_configured",
            search(
                server,
                json!({"collection": "papers", "query": "tea", "rerank": true}),
            ),
        ),
        (
            "dense search of a collection without vectors".into(),
            409,
            "dense_unavailable",
            search(
                server,
                json!({"collection": "papers", "query": "tea", "mode": "dense"}),
            ),
        ),
        (
            "a mode that does not exist".into(),
            400,
            "invalid_request",
            search(
                server,
                json!({"collection": "papers", "query": "tea", "mode": "fuzzy"}),
            ),
        ),
    ];
    cases
}

#[test]
fn every_error_path_has_its_kind_and_leaks_nothing() {
    let fx = corpus();
    let server = server(&fx);
    let files = |fx: &crate::retrieval::Fixture| -> Vec<std::path::PathBuf> {
        snapshot_tree(&fx.index)
            .into_iter()
            .map(|(path, _, _)| path)
            .collect()
    };
    let index_before = files(&fx);
    let outside = fx.outside();
    for (case, status, kind, response) in error_cases(&server) {
        assert_eq!(response.status, status, "{case}: {}", response.body);
        assert_eq!(response.json()["kind"], kind, "{case}: {}", response.body);
        for leak in [
            fx.base.to_string_lossy().as_ref(),
            fx.index.to_string_lossy().as_ref(),
            outside.to_string_lossy().as_ref(),
            "/tmp",
            "os error",
            "panicked",
            "groundkit_core",
            "groundkit_server",
            "rusqlite",
            "tantivy",
            "http://",
            "https://",
        ] {
            assert!(
                !response.body.contains(leak),
                "{case} leaks `{leak}`: {}",
                response.body
            );
        }
    }
    assert_eq!(files(&fx), index_before, "a read created a file");
    assert!(!fx.index.join("nope.sqlite3").exists());
}

#[test]
fn a_traversal_name_is_refused_the_same_whether_or_not_its_target_exists() {
    let fx = corpus();
    let server = server(&fx);
    let probe = |server: &TestServer| {
        let mut body = server
            .get("/collections/..%2Foutside%2Fplanted/status")
            .json();
        body.as_object_mut().expect("object").remove("request_id");
        body
    };
    let before = probe(&server);
    std::fs::copy(
        fx.index.join("papers.sqlite3"),
        fx.outside().join("planted.sqlite3"),
    )
    .expect("plant");
    assert_eq!(probe(&server), before);
    assert_eq!(before["kind"], "validation_error");
}

#[test]
fn the_access_log_of_a_search_never_holds_the_query() {
    groundkit_tests::capture_logs();
    let fx = corpus();
    let server = server(&fx);
    let response = search(
        &server,
        json!({"collection": "papers", "query": "bicycle sentinelquery7731"}),
    );
    assert_eq!(response.status, 200);
    let line = access_line(&response);
    let logs = captured_logs();
    assert!(
        line.contains("tool=\"search\"") && line.contains("results="),
        "{line}"
    );
    assert!(
        !logs.contains("sentinelquery7731"),
        "query text reached the INFO log"
    );
}

/// Reverses the lexical order: easy to recognise in a test.
struct Reverse;

impl Reranker for Reverse {
    fn model(&self) -> &str {
        "reverse-v1"
    }
    fn score(&self, _query: &str, passages: &[&str]) -> Result<Vec<f32>, Error> {
        Ok((0..passages.len()).map(|i| i as f32).collect())
    }
}

#[test]
fn rerank_sees_the_pinned_depth_and_reports_it() {
    let fx = corpus();
    let server = TestServer::start(state(&fx, Some(Arc::new(Reverse))));
    let plain = search(
        &server,
        json!({"collection": "papers", "query": "tea chain tests", "top_k": 3}),
    )
    .json();
    let reranked = search(
        &server,
        json!({"collection": "papers", "query": "tea chain tests", "top_k": 1, "rerank": true}),
    )
    .json();
    let plain_ids: Vec<&Value> = plain["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| &r["chunk_id"])
        .collect();
    assert_eq!(plain_ids.len(), 3);
    assert_eq!(reranked["results"].as_array().expect("results").len(), 1);
    assert_eq!(
        &reranked["results"][0]["chunk_id"], plain_ids[2],
        "the reranker's first is the lexical last"
    );
    assert_eq!(reranked["results"][0]["rank"], 1);
    assert_eq!(reranked["metadata"]["reranked"], true);
    assert_eq!(reranked["metadata"]["rerank_model"], "reverse-v1");
    assert_eq!(reranked["metadata"]["rerank_input_depth"], 3);
    assert_eq!(reranked["metadata"]["top_k"], 1);
}

/// Holds each search it reranks until the test releases it, announcing when one is held.
struct Gate {
    entered: std::sync::Mutex<std::sync::mpsc::Sender<()>>,
    release: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl Reranker for Gate {
    fn model(&self) -> &str {
        "gate"
    }
    fn score(&self, _query: &str, passages: &[&str]) -> Result<Vec<f32>, Error> {
        let _ = self.entered.lock().expect("entered").send(());
        let _ = self.release.lock().expect("release").recv();
        Ok(vec![0.0; passages.len()])
    }
}

#[test]
fn corpus_scans_are_bounded_at_the_limit_and_refused_one_past_it() {
    use std::sync::mpsc;
    use std::time::Duration;

    let fx = corpus();
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let gate = Arc::new(Gate {
        entered: entered_tx.into(),
        release: release_rx.into(),
    });
    let context = ServiceContext::new(fx.cache())
        .with_reranker(gate)
        .with_scan_limit(2, Duration::from_millis(300));
    let server = Arc::new(TestServer::start(super::state_with(context)));

    // Two scans at once: the limit. Both are admitted and held inside the reranker.
    let held: Vec<_> = (0..2)
        .map(|_| {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                search(
                    &server,
                    json!({"collection": "papers", "query": "tea", "rerank": true}),
                )
                .status
            })
        })
        .collect();
    for _ in 0..2 {
        entered_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a scan reached the reranker");
    }

    // One past the limit: refused once the permit wait runs out, with nothing queued.
    let refused = search(&server, json!({"collection": "papers", "query": "tea"}));
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.json()["kind"], "overloaded");
    let status = server.get("/collections/papers/status");
    assert_eq!(
        status.json()["kind"],
        "overloaded",
        "index_status takes a scan permit too"
    );
    // Listing and fetching are not corpus scans.
    assert_eq!(server.get("/collections").status, 200);

    for _ in 0..2 {
        release_tx.send(()).expect("release");
    }
    for scan in held {
        assert_eq!(scan.join().expect("scan thread"), 200);
    }
    assert_eq!(
        search(&server, json!({"collection": "papers", "query": "tea"})).status,
        200
    );
}
