//! The endpoint embedder against the real test server (`server::EmbedServer`): agreement with the
//! in-process model, batching, retries, the API key, redirects, and the outbound address policy.
//! Every server here is on loopback, so the embedder needs `allow_private` to reach it; the
//! policy tests check that without it nothing is contacted.

use std::time::{Duration, Instant};

use groundkit_core::Error;
use groundkit_embed::{HttpEmbedder, HttpEmbedderConfig};
use groundkit_retrieval::EmbedderKind;
use groundkit_retrieval::embed::{Embedder, Role, dot};

use super::minilm;
use super::server::{EmbedServer, Relay};

const SECRET: &str = "secret-provider-detail";

/// A configuration for `url` that may reach loopback, with a test-sized timeout.
fn config(url: &str) -> HttpEmbedderConfig {
    let mut config = HttpEmbedderConfig::new(url, "all-MiniLM-L6-v2");
    config.allow_private = true;
    config.timeout = Duration::from_secs(60);
    config
}

fn connect(config: HttpEmbedderConfig) -> Result<HttpEmbedder, Error> {
    HttpEmbedder::connect(config)
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt())
}

/// Asserts that neither the error's message, its caller-facing detail nor its debug form
/// contains any of `secrets`.
pub(crate) fn assert_hides(err: &Error, secrets: &[&str]) {
    for shown in [
        err.to_string(),
        err.public_detail().into_owned(),
        format!("{err:?}"),
    ] {
        for secret in secrets {
            assert!(!shown.contains(secret), "{secret:?} in {shown:?}");
        }
    }
}

#[test]
fn vectors_agree_with_the_in_process_model_and_the_identity_is_the_endpoints() {
    let server = EmbedServer::start(&[]);
    let embedder = connect(config(&server.base())).expect("connect");
    let identity = embedder.identity();
    assert_eq!(identity.kind, EmbedderKind::Http);
    assert_eq!(identity.model, "all-MiniLM-L6-v2");
    assert_eq!(identity.dimension, 384);
    assert_eq!(identity.pooling, "provider");
    assert!(identity.normalized, "all-MiniLM-L6-v2 returns unit vectors");
    assert_eq!(identity.max_tokens, None);
    assert_eq!(identity.fingerprint.len(), 16);

    let golden: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            super::repo_root().join("tests/fixtures/embed/all-minilm-l6-v2.golden.json"),
        )
        .expect("golden fixture"),
    )
    .expect("golden json");
    let texts: Vec<&str> = golden["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .map(|t| t.as_str().expect("a text"))
        .collect();
    let remote = embedder
        .embed(&texts, Role::Document)
        .expect("embed over http");
    let local = minilm()
        .embed(&texts, Role::Document)
        .expect("embed in process");
    assert_eq!(remote.len(), texts.len());
    for ((text, a), b) in texts.iter().zip(&remote).zip(&local) {
        let cos = cosine(a, b);
        assert!(cos >= 0.9999, "cosine {cos} for {text:?}");
    }
    assert_eq!(
        embedder.embed(&[], Role::Query).expect("nothing"),
        Vec::<Vec<f32>>::new()
    );
}

#[test]
fn texts_are_sent_in_batches_and_come_back_in_order() {
    let server = EmbedServer::start(&[]);
    let mut config = config(&server.base());
    config.batch_size = 4;
    let embedder = connect(config).expect("connect");
    assert_eq!(server.stats(), (1, 1), "the probe");
    let texts: Vec<String> = (0..10)
        .map(|i| {
            format!(
                "sentence number {i} is about topic {}",
                ["rivers", "stars", "bread"][i % 3]
            )
        })
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&texts, Role::Document).expect("embed");
    assert_eq!(
        server.stats(),
        (1 + 3, 1 + 10),
        "three requests of 4, 4 and 2 texts"
    );
    let local = minilm()
        .embed(&texts, Role::Document)
        .expect("embed in process");
    for (i, (a, b)) in vectors.iter().zip(&local).enumerate() {
        assert!(cosine(a, b) >= 0.9999, "text {i} out of place");
    }
}

#[test]
fn rate_limits_and_server_errors_are_retried() {
    groundkit_tests::capture_logs();
    for status in ["503", "429"] {
        let server = EmbedServer::start(&["--fail-first", "2", "--fail-status", status]);
        let embedder = connect(config(&server.base())).expect("succeeds on the third attempt");
        assert_eq!(
            server.requests(),
            3,
            "HTTP {status}: two failures and the probe"
        );
        embedder
            .embed(&["after the retries"], Role::Query)
            .expect("embed");
        assert_eq!(server.requests(), 4);
    }
    let logs = groundkit_tests::captured_logs();
    assert!(
        logs.contains("HTTP 503") && logs.contains("HTTP 429"),
        "{logs}"
    );
    assert!(!logs.contains(SECRET), "{logs}");
}

#[test]
fn retries_stop_at_the_limit_and_the_failure_shows_no_provider_text() {
    let server = EmbedServer::start(&["--fail-first", "10", "--fail-status", "500"]);
    let mut config = config(&server.base());
    config.max_retries = 2;
    let err = connect(config).expect_err("three failures");
    assert_eq!(err.kind(), "embedding_error");
    assert_eq!(server.requests(), 3, "the first attempt and two retries");
    assert!(err.to_string().contains("HTTP 500"), "{err}");
    assert_hides(&err, &[SECRET, "/v1/embeddings"]);
}

#[test]
fn client_errors_are_not_retried() {
    for status in ["400", "401", "404"] {
        let server = EmbedServer::start(&["--fail-first", "5", "--fail-status", status]);
        let err = connect(config(&server.base())).expect_err("refused");
        assert_eq!(err.kind(), "embedding_error");
        assert_eq!(server.requests(), 1, "HTTP {status} is not retried");
        assert_hides(&err, &[SECRET]);
    }
}

#[test]
fn the_api_key_is_sent_and_never_shown() {
    let server = EmbedServer::start(&["--require-key", "k-123"]);
    let err = connect(config(&server.base())).expect_err("no key");
    assert_eq!(err.kind(), "embedding_error");
    assert_eq!(server.requests(), 1, "a 401 is not retried");

    let mut wrong = config(&server.base());
    wrong.api_key = Some("k-wrong-456".to_owned());
    let err = connect(wrong).expect_err("wrong key");
    assert!(err.to_string().contains("401"), "{err}");
    assert_hides(&err, &["k-wrong-456"]);

    let mut right = config(&server.base());
    right.api_key = Some("k-123".to_owned());
    let embedder = connect(right.clone()).expect("the right key");
    let vectors = embedder.embed(&["with a key"], Role::Query).expect("embed");
    assert_eq!(vectors[0].len(), 384);
    assert!(!format!("{embedder:?}").contains("k-123"));
    assert!(!format!("{right:?}").contains("k-123"));

    // A failure while the right key is configured shows it nowhere either.
    let failing = EmbedServer::start(&["--require-key", "k-123", "--fail-first", "9"]);
    let mut keyed = config(&failing.base());
    keyed.api_key = Some("k-123".to_owned());
    keyed.max_retries = 0;
    let err = connect(keyed).expect_err("a server error");
    assert_hides(&err, &["k-123", SECRET]);
}

#[test]
fn redirects_are_never_followed() {
    let target = EmbedServer::start(&[]);
    let redirect_to = format!("{}/v1/embeddings", target.base());
    let redirecting = EmbedServer::start(&["--redirect-to", &redirect_to]);
    let err = connect(config(&redirecting.base())).expect_err("a redirect");
    assert_eq!(err.kind(), "embedding_error");
    assert!(err.to_string().contains("307"), "{err}");
    assert_eq!(redirecting.requests(), 1, "not retried");
    assert_eq!(target.requests(), 0, "the redirect target is never called");
}

#[test]
fn loopback_endpoints_need_the_opt_in_and_are_not_contacted_without_it() {
    let server = EmbedServer::start(&[]);
    let relay = Relay::to_v4(server.port);
    let mut urls = vec![
        format!("http://127.0.0.1:{}", server.port),
        format!("http://localhost:{}", server.port),
    ];
    // The test server listens on IPv4 only; `[::1]` is reached through a relay, and checked
    // only where this machine can listen on ::1.
    if let Some(relay) = &relay {
        urls.push(format!("http://[::1]:{}", relay.port));
    }
    for url in &urls {
        let mut strict = config(url);
        strict.allow_private = false;
        let err = connect(strict).expect_err("loopback refused by default");
        assert_eq!(err.kind(), "validation_error", "{url}");
        assert_eq!(
            err.field(),
            Some("url"),
            "named as the configuration's field"
        );
        let message = err.to_string();
        assert!(message.contains("set allow_private"), "{message}");
        assert!(!message.contains("/v1"), "{message}");
        assert_eq!(server.requests(), 0, "{url}: nothing was sent");
    }
    assert_eq!(
        relay.as_ref().map_or(0, Relay::accepted),
        0,
        "no connection to ::1"
    );

    for (i, url) in urls.iter().enumerate() {
        let embedder = connect(config(url)).expect("allowed with the opt-in");
        embedder.embed(&["allowed"], Role::Query).expect("embed");
        assert_eq!(
            server.requests(),
            2 * (i as u64 + 1),
            "{url}: probe and embed"
        );
    }
    assert_eq!(relay.as_ref().map_or(1, |r| r.accepted().min(1)), 1);
}

#[test]
fn a_private_literal_is_refused_before_any_connection() {
    // 10.255.255.1 is never contacted: the policy refuses it before a socket is opened (with
    // the opt-in it would be a real private-network call, which this test must never make).
    let mut strict = config("http://10.255.255.1:9/");
    strict.allow_private = false;
    let started = Instant::now();
    let err = connect(strict).expect_err("refused");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "no connection attempt"
    );
    assert_eq!(err.kind(), "validation_error");
    let message = err.to_string();
    assert!(message.contains("10.255.255.1") && message.contains("set allow_private"));
}

#[test]
fn https_is_spoken_and_a_failed_handshake_is_not_retried() {
    // TLS to a server that speaks plain HTTP: the handshake fails, as a certificate failure
    // would, and another attempt would fail the same way.
    let server = EmbedServer::start(&[]);
    let err = connect(config(&format!("https://127.0.0.1:{}", server.port))).expect_err("no TLS");
    assert_eq!(err.kind(), "embedding_error");
    assert!(err.to_string().contains("TLS"), "{err}");
    assert_eq!(server.requests(), 0);
}

/// `grk` with an endpoint embedder: the key comes from the environment variable the operator
/// names, a loopback endpoint needs `--embed-allow-private`, and the collection's vectors are
/// the endpoint's (its identity, not the in-process model's).
#[test]
fn grk_ingests_and_searches_through_an_endpoint_named_on_the_command_line() {
    let server = EmbedServer::start(&["--require-key", "k-from-env"]);
    let fx = super::two_notes();
    let grk = |private: bool, args: &[&str]| {
        let mut cmd = fx.grk();
        cmd.args(["--embed-url", &server.base(), "--embed-api-model", "minilm"])
            .args(["--embed-api-key-env", "GRK_IT_EMBED_KEY"])
            .env("GRK_IT_EMBED_KEY", "k-from-env")
            .args(args);
        if private {
            cmd.arg("--embed-allow-private");
        }
        cmd.output().expect("run grk")
    };
    let refused = grk(false, &["ingest", "-c", "c", "--json", "."]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "a loopback endpoint is a usage error"
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--embed-allow-private"), "{stderr}");
    assert!(!stderr.contains("k-from-env"));
    assert_eq!(server.requests(), 0, "nothing was sent");

    super::ingest_and_search_by_meaning(|args| grk(true, args));
    let status = grk(true, &["status", "-c", "c", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).expect("json");
    assert_eq!(status["embedding"]["kind"], "http");
    assert_eq!(status["embedding"]["model"], "minilm");
    assert_eq!(status["dense_search_available"], true);
}

/// An endpoint whose vectors hold `1e39` (a JSON number, infinite as `f32`): the embedder
/// refuses the answer, so no ingest stores such a vector and no search answers with a score
/// that is not a number (which JSON would carry as `null`, against the output schema).
#[test]
fn a_vector_value_beyond_f32_is_an_embedding_error_at_ingest_and_at_query() {
    let good = EmbedServer::start(&[]);
    let overflowing = EmbedServer::start(&["--overflow-after", "1"]);
    let embedder = connect(config(&overflowing.base())).expect("the probe is finite");
    let err = embedder
        .embed(&["tea"], Role::Query)
        .expect_err("an infinite value is refused");
    assert_eq!(err.kind(), "embedding_error");
    assert!(err.to_string().contains("not a finite number"), "{err}");

    let fx = super::two_notes();
    let grk = |server: &EmbedServer, args: &[&str]| {
        fx.grk()
            .args(["--embed-url", &server.base(), "--embed-api-model", "minilm"])
            .arg("--embed-allow-private")
            .args(args)
            .output()
            .expect("run grk")
    };
    let refused = grk(&overflowing, &["ingest", "-c", "c", "--json", "."]);
    assert!(!refused.status.success(), "the ingest fails");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("not a finite number"), "{stderr}");
    assert!(
        !fx.index.join("c.sqlite3").exists(),
        "a failed first ingest leaves no collection"
    );

    super::ingest_and_search_by_meaning(|args| grk(&good, args));
    let search = ["search", "-c", "c", "jet lag", "--mode", "dense", "--json"];
    let refused = grk(&overflowing, &search);
    assert!(!refused.status.success(), "the search fails");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("embedding"), "{stderr}");
    assert!(refused.stdout.is_empty(), "no results are printed");
    let found = super::json_output(grk(&good, &search));
    assert!(found["results"][0]["score"].is_number(), "{found}");
}

/// `grk serve` whose embedding endpoint does not answer at start-up starts anyway: lexical
/// search is served at once, dense search answers 502 `embedding_error` and `index_status`
/// says dense search is unavailable, until the endpoint answers a background probe; then
/// dense search is served, with nothing restarted.
#[test]
fn a_server_starts_while_its_endpoint_is_down_and_serves_dense_search_once_it_answers() {
    let fx = super::two_notes();
    {
        let up = EmbedServer::start(&[]);
        let summary = super::json_output(
            fx.grk()
                .args(["--embed-url", &up.base(), "--embed-api-model", "minilm"])
                .args(["--embed-allow-private", "ingest", "-c", "c", "--json", "."])
                .output()
                .expect("run grk"),
        );
        assert_eq!(summary["embedded"], 2);
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let mut command = fx.grk();
    command
        .args(["--embed-url", &base, "--embed-api-model", "minilm"])
        .arg("--embed-allow-private");
    command.args(["serve", "--port", "0"]);
    let server = groundkit_tests::ServerProcess::spawn(&mut command)
        .unwrap_or_else(|(status, log)| panic!("grk serve exited ({status}): {log}"));
    let search = |mode: &str| {
        let body = serde_json::json!({"collection": "c", "query": "jet lag", "mode": mode});
        server.post_json("/search", &body.to_string())
    };
    assert_eq!(
        search("lexical").status,
        200,
        "lexical search needs no embedder"
    );
    let down = search("dense");
    assert_eq!(down.status, 502, "{}", down.body);
    assert_eq!(down.json()["kind"], "embedding_error");
    let status = server.get("/collections/c/status");
    assert_eq!(status.json()["dense_search_available"], false);

    let _endpoint = EmbedServer::start(&["--port", &port.to_string()]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let found = loop {
        let answer = search("dense");
        if answer.status == 200 {
            break answer.json();
        }
        assert_eq!(answer.json()["kind"], "embedding_error");
        assert!(Instant::now() < deadline, "dense search never came up");
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(found["results"][0]["citation"]["source"], "travel.md");
    let status = server.get("/collections/c/status");
    assert_eq!(status.json()["dense_search_available"], true);
}
