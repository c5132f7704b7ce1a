//! The endpoint reranker against the real test server (`tests/rerank/rerank_server.py`, the tiny
//! cross-encoder in numpy): agreement with the in-process model in both request shapes,
//! batching, retries, timeouts, the API key, the outbound address policy, and reranking through
//! `grk` and through a server whose endpoint has gone away or is not up yet.

use std::process::Command;
use std::time::Duration;

use groundkit_embed::{HttpReranker, HttpRerankerConfig, RerankApi};
use groundkit_retrieval::rerank::Reranker;
use serde_json::{Value, json};

use super::{tiny, tiny_dir};
use crate::embed::http::assert_hides;
use crate::embed::server::{Spawned, get_json, spawn_listening};
use crate::embed::{embed_python, json_output, repo_root};
use crate::service::transports::grk;

const SECRET: &str = "secret-provider-detail";

/// The reranked search the command-line tests run, after the reranker's options.
const SEARCH: [&str; 8] = [
    "search",
    "-c",
    "papers",
    "tea chain tests",
    "--top-k",
    "3",
    "--rerank",
    "--json",
];

/// A running `rerank_server.py` on 127.0.0.1; killed on drop.
struct RerankServer {
    server: Spawned,
}

impl RerankServer {
    fn start(flags: &[&str]) -> Self {
        let mut command = Command::new(embed_python());
        command
            .arg(repo_root().join("tests/rerank/rerank_server.py"))
            .arg("--model-dir")
            .arg(tiny_dir())
            .args(["--host", "127.0.0.1", "--port", "0"])
            .args(flags);
        Self {
            server: spawn_listening(command),
        }
    }

    fn url(&self, api: RerankApi) -> String {
        let path = match api {
            RerankApi::Cohere => "/v1/rerank",
            RerankApi::Tei => "/rerank",
        };
        format!("http://127.0.0.1:{}{path}", self.server.port)
    }

    /// POSTs that arrived, and passages scored.
    fn stats(&self) -> (u64, u64) {
        let stats = get_json(self.server.port, "/stats");
        let count = |name: &str| stats[name].as_u64().expect("a count");
        (count("requests"), count("inputs"))
    }
}

fn config(url: &str, api: RerankApi) -> HttpRerankerConfig {
    let mut config = HttpRerankerConfig::new(url, "tiny-cross-encoder", api);
    config.allow_private = true;
    config.timeout = Duration::from_secs(30);
    config
}

fn passages() -> Vec<String> {
    let golden: Value = serde_json::from_slice(
        &std::fs::read(repo_root().join("tests/fixtures/rerank/tiny-cross-encoder.golden.json"))
            .expect("golden"),
    )
    .expect("json");
    golden["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .filter(|p| p["query"] == "bone cancer treatment")
        .map(|p| p["passage"].as_str().expect("passage").to_owned())
        .collect()
}

#[test]
fn scores_agree_with_the_in_process_model_in_both_shapes_and_batches() {
    let server = RerankServer::start(&[]);
    let passages = passages();
    let passages: Vec<&str> = passages.iter().map(String::as_str).collect();
    assert_eq!(passages.len(), 8);
    let want = tiny()
        .score("bone cancer treatment", &passages)
        .expect("in process");
    for api in [RerankApi::Cohere, RerankApi::Tei] {
        let mut config = config(&server.url(api), api);
        config.batch_size = 3;
        let before = server.stats().0;
        let reranker = HttpReranker::connect(config).expect("connect");
        assert_eq!(reranker.model(), "tiny-cross-encoder");
        let got = reranker
            .score("bone cancer treatment", &passages)
            .expect("score");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-4,
                "{api:?} passage {i}: {g} against {w}"
            );
        }
        assert_eq!(
            server.stats().0 - before,
            1 + 3,
            "{api:?}: the probe, then 8 passages in batches of 3"
        );
    }
}

#[test]
fn server_errors_are_retried_and_the_final_failure_shows_no_provider_text() {
    let flaky = RerankServer::start(&["--fail-first", "2", "--fail-status", "503"]);
    let reranker =
        HttpReranker::connect(config(&flaky.url(RerankApi::Tei), RerankApi::Tei)).expect("retried");
    assert_eq!(flaky.stats().0, 3, "two failures, then the probe succeeded");
    assert_eq!(reranker.score("q", &["a", "b"]).expect("score").len(), 2);

    let down = RerankServer::start(&["--fail-first", "1000", "--fail-status", "500"]);
    let url = down.url(RerankApi::Cohere);
    let err = HttpReranker::connect(config(&url, RerankApi::Cohere)).expect_err("fails");
    assert_eq!(err.kind(), "rerank_error");
    assert!(err.to_string().contains("HTTP 500"), "{err}");
    assert_eq!(down.stats().0, 3, "one attempt and two retries");
    let port = down.server.port.to_string();
    assert_hides(&err, &[SECRET, "reranker pod", &port, "/v1/rerank"]);
    assert_eq!(
        err.public_detail(),
        groundkit_core::error::GENERIC_DETAIL,
        "a caller sees nothing of it"
    );

    let unauthorised = RerankServer::start(&["--fail-first", "1", "--fail-status", "400"]);
    let err = HttpReranker::connect(config(&unauthorised.url(RerankApi::Tei), RerankApi::Tei))
        .expect_err("client errors are not retried");
    assert_eq!(unauthorised.stats().0, 1);
    assert_hides(&err, &[SECRET]);
}

#[test]
fn a_slow_endpoint_times_out_as_a_rerank_error() {
    let slow = RerankServer::start(&["--delay-ms", "3000"]);
    let mut config = config(&slow.url(RerankApi::Tei), RerankApi::Tei);
    config.timeout = Duration::from_millis(300);
    config.max_retries = 0;
    let err = HttpReranker::connect(config).expect_err("timed out");
    assert_eq!(err.kind(), "rerank_error");
    assert!(err.to_string().contains("timed out"), "{err}");
}

#[test]
fn the_api_key_is_sent_and_never_shown() {
    let key = "sk-rerank-test-key-4242";
    let server = RerankServer::start(&["--require-key", key]);
    let url = server.url(RerankApi::Cohere);
    let err = HttpReranker::connect(config(&url, RerankApi::Cohere)).expect_err("no key");
    assert!(err.to_string().contains("check the API key"), "{err}");
    let mut wrong = config(&url, RerankApi::Cohere);
    wrong.api_key = Some("sk-wrong-key-1717".to_owned());
    let err = HttpReranker::connect(wrong.clone()).expect_err("wrong key");
    assert_hides(&err, &["sk-wrong-key-1717"]);
    assert!(!format!("{wrong:?}").contains("sk-wrong-key-1717"));
    let mut right = config(&url, RerankApi::Cohere);
    right.api_key = Some(key.to_owned());
    let reranker = HttpReranker::connect(right).expect("the key is sent");
    assert_eq!(reranker.score("q", &["a"]).expect("score").len(), 1);
}

#[test]
fn loopback_endpoints_need_the_opt_in_and_are_not_contacted_without_it() {
    let server = RerankServer::start(&[]);
    for url in [
        server.url(RerankApi::Tei),
        server.url(RerankApi::Tei).replace("127.0.0.1", "localhost"),
    ] {
        let mut strict = config(&url, RerankApi::Tei);
        strict.allow_private = false;
        let err = HttpReranker::connect(strict).expect_err("refused");
        assert_eq!(err.kind(), "validation_error");
        assert_eq!(
            err.field(),
            Some("url"),
            "named as the configuration's field"
        );
        assert!(err.to_string().contains("set allow_private"), "{err}");
    }
    assert_eq!(server.stats().0, 0, "nothing was sent");
    for (url, wrong) in [
        ("ftp://127.0.0.1/rerank", "http"),
        ("http://user:pw@127.0.0.1/rerank", "credentials"),
        ("http://127.0.0.1/v1/embeddings", "/rerank"),
        ("http://127.0.0.1/rerank?x=1", "query"),
    ] {
        let err = HttpReranker::connect(config(url, RerankApi::Tei)).expect_err(url);
        assert_eq!(err.kind(), "validation_error", "{url}");
        assert!(err.to_string().contains(wrong), "{url}: {err}");
        assert_hides(&err, &["pw"]);
    }
}

#[test]
fn grk_reranks_through_an_endpoint_as_it_does_in_process() {
    let fx = crate::service::corpus();
    let server = RerankServer::start(&["--model-name", "tiny-served"]);
    let url = server.url(RerankApi::Tei);
    let search = |reranker: &[&str]| grk(&fx, &[reranker, &SEARCH[..]].concat());
    let endpoint = [
        "--rerank-url",
        &url,
        "--rerank-api",
        "tei",
        "--rerank-api-model",
        "tiny-served",
    ];
    let tiny = tiny_dir();
    let remote = json_output(search(
        &[&endpoint[..], &["--rerank-allow-private"]].concat(),
    ));
    let local = json_output(search(&["--rerank-model", tiny.to_str().expect("utf-8")]));
    assert_eq!(remote["metadata"]["rerank_model"], "tiny-served");
    assert_eq!(local["metadata"]["rerank_model"], "tiny-cross-encoder");
    let results = |v: &Value| v["results"].as_array().expect("results").clone();
    assert_eq!(results(&remote).len(), 3);
    for (a, b) in results(&remote).iter().zip(&results(&local)) {
        assert_eq!(
            a["chunk_id"], b["chunk_id"],
            "the same order from both rerankers"
        );
        let (a, b) = (
            a["score"].as_f64().expect("score"),
            b["score"].as_f64().expect("score"),
        );
        assert!((a - b).abs() <= 1e-4, "{a} against {b}");
    }

    // Loopback without the opt-in: refused at start, a usage error, nothing sent.
    let before = server.stats().0;
    let refused = search(&endpoint);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--rerank-allow-private"));
    assert_eq!(server.stats().0, before);

    // Endpoint options without an endpoint are a usage error, not silently ignored.
    for stray in [
        &["--rerank-api", "tei"][..],
        &["--rerank-allow-private"][..],
    ] {
        let refused = search(
            &[
                &["--rerank-model", tiny.to_str().expect("utf-8")][..],
                stray,
            ]
            .concat(),
        );
        assert_eq!(refused.status.code(), Some(2), "{stray:?}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains("apply to --rerank-url only"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_that_goes_away_fails_the_search_on_every_transport_alike() {
    use groundkit_server::service::ServiceContext;
    use std::sync::Arc;

    let fx = crate::service::corpus();
    let server = RerankServer::start(&[]);
    let mut config = config(&server.url(RerankApi::Tei), RerankApi::Tei);
    config.max_retries = 1;
    let reranker: Arc<dyn Reranker> = Arc::new(HttpReranker::connect(config).expect("connect"));
    drop(server);
    let mut surfaces = crate::service::transports::Surfaces::start_with_context(|| {
        ServiceContext::new(fx.cache()).with_reranker(reranker.clone())
    })
    .await;
    let arguments = json!({"collection": "papers", "query": "tea", "rerank": true});
    let (rest, http, stdio) = surfaces.everywhere("search", arguments).await;
    assert_eq!(rest.status, 502, "{}", rest.body);
    let rest = rest.json();
    assert_eq!(rest["kind"], "rerank_error");
    assert_eq!(rest["detail"], groundkit_core::error::GENERIC_DETAIL);
    for (surface, result) in [("MCP HTTP", &http), ("MCP stdio", &stdio)] {
        let problem = groundkit_tests::tool_error(result);
        assert_eq!(problem["kind"], "rerank_error", "over {surface}");
        assert_eq!(problem["detail"], rest["detail"], "over {surface}");
        assert!(
            !result.to_string().contains("127.0.0.1"),
            "over {surface}: {result}"
        );
    }
}

#[test]
fn grk_reranks_with_a_cross_encoder_named_on_the_hub() {
    let repo = "groundkit-it/tiny-cross-encoder";
    let hub = crate::embed::hub::HubServer::serve(&tiny_dir(), repo, &[]);
    let cache = tempfile::tempdir().expect("cache");
    let fx = crate::service::corpus();
    let search = |reranker: &[&str]| {
        fx.grk()
            .env("HF_ENDPOINT", hub.endpoint())
            .env("HF_HUB_CACHE", cache.path())
            .env_remove("HF_HUB_OFFLINE")
            .args([reranker, &SEARCH[..]].concat())
            .output()
            .expect("run grk")
    };
    let named = json_output(search(&["--rerank-hub-model", repo]));
    let asked = hub.requests();
    assert!(asked > 0, "the model was downloaded");
    let tiny = tiny_dir();
    let local = json_output(search(&["--rerank-model", tiny.to_str().expect("utf-8")]));
    assert_eq!(named["metadata"]["rerank_model"], repo);
    for (a, b) in named["results"]
        .as_array()
        .expect("results")
        .iter()
        .zip(local["results"].as_array().expect("results"))
    {
        assert_eq!(a["chunk_id"], b["chunk_id"]);
        assert_eq!(a["score"], b["score"], "the same files, the same scores");
    }
    json_output(search(&["--rerank-hub-model", repo]));
    assert_eq!(hub.requests(), asked, "a later run loads from the cache");
}

/// `grk serve` whose rerank endpoint does not answer at start-up starts anyway: searches that
/// do not rerank are served, one that reranks answers 502 `rerank_error`, and once the endpoint
/// answers, reranked searches are served, with nothing restarted.
#[test]
fn a_server_starts_while_its_rerank_endpoint_is_down_and_reranks_once_it_answers() {
    let fx = crate::service::corpus();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/rerank");
    let mut command = fx.grk();
    command
        .args(["--rerank-url", &url, "--rerank-api", "tei"])
        .args([
            "--rerank-api-model",
            "tiny-served",
            "--rerank-allow-private",
        ])
        .args(["serve", "--port", "0"]);
    let server = groundkit_tests::ServerProcess::spawn(&mut command)
        .unwrap_or_else(|(status, log)| panic!("grk serve exited ({status}): {log}"));
    let search = |rerank: bool| {
        let body = json!({"collection": "papers", "query": "tea", "rerank": rerank});
        server.post_json("/search", &body.to_string())
    };
    assert_eq!(search(false).status, 200, "a search that does not rerank");
    let down = search(true);
    assert_eq!(down.status, 502, "{}", down.body);
    assert_eq!(down.json()["kind"], "rerank_error");

    let _endpoint = RerankServer::start(&["--port", &port.to_string()]);
    let up = search(true);
    assert_eq!(up.status, 200, "{}", up.body);
    assert_eq!(up.json()["metadata"]["rerank_model"], "tiny-served");
}
