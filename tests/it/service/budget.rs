//! Answers sized to a budget: `detail`, snippets whose matches read back from the source,
//! `max_chars` on every transport and the command line, `min_score`.

use serde_json::{Value, json};

use groundkit_server::service::ServiceContext;
use groundkit_tests::{Response, TestServer};

use super::server;
use super::transports::Surfaces;
use crate::retrieval::Fixture;

/// A search over REST that succeeds: the response.
fn search(server: &TestServer, arguments: Value) -> Response {
    let response = server.post_json("/search", &arguments.to_string());
    assert_eq!(response.status, 200, "{arguments}: {}", response.body);
    response
}

/// Thirty notes that all mention lighthouses, at lengths from a line to a few kilobytes, with
/// the characters JSON escapes and multi-byte ones; and a Rust file.
fn corpus() -> Fixture {
    let fx = Fixture::new();
    for i in 0..30 {
        let filler =
            "Keepers logged \"storms\"\tand fog; the café served 灯台 tea.\n".repeat(i * 3);
        fx.write(
            &format!("notes/light{i:02}.md"),
            format!("# Lighthouse {i}\n\n{filler}The lighthouse lamp turned {i} times.\n"),
        );
    }
    fx.write(
        "src/header.rs",
        "/// Reads the Host header of a request.\npub fn parseHostHeader(raw: &str) -> Option<&str> {\n    raw.strip_prefix(\"Host: \")\n}\n",
    );
    fx.ingest_all("notes");
    fx
}

/// A small deterministic generator (xorshift), so a failure names the case that failed.
struct Cases(u64);

impl Cases {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_exceeds_its_budget_on_any_transport_and_each_is_a_prefix_of_the_ranking() {
    let fx = corpus();
    let mut surfaces = Surfaces::start_with_context(|| ServiceContext::new(fx.cache())).await;
    let query = "lighthouse keepers storms";
    let (whole, _, _) = surfaces
        .everywhere(
            "search",
            json!({"collection": "notes", "query": query, "top_k": 100, "max_chars": 1_000_000}),
        )
        .await;
    assert_eq!(whole.status, 200, "{}", whole.body);
    let whole = whole.json();
    assert_eq!(whole["metadata"]["truncated"], false);
    let ranking = whole["results"].as_array().expect("results").clone();
    assert!(ranking.len() >= 30, "{}", ranking.len());

    let mut cases = Cases(0x9e37_79b9_7f4a_7c15);
    let mut cut_content = 0;
    let mut left_out = 0;
    for case in 0..40 {
        let max_chars = 1_000 + cases.below(60_000);
        let top_k = 1 + cases.below(100);
        let detail = ["ids", "snippets", "full"][cases.below(3) as usize];
        let arguments = json!({"collection": "notes", "query": query, "top_k": top_k,
            "detail": detail, "max_chars": max_chars});
        let (rest, http, stdio) = surfaces.everywhere("search", arguments).await;
        let context = format!("case {case}: max_chars {max_chars}, top_k {top_k}, {detail}");
        assert_eq!(rest.status, 200, "{context}: {}", rest.body);
        assert!(
            rest.body.chars().count() as u64 <= max_chars,
            "{context}: {} characters",
            rest.body.chars().count()
        );
        let answer = rest.json();
        for (surface, result) in [("MCP HTTP", &http), ("MCP stdio", &stdio)] {
            assert_eq!(
                result["structuredContent"], answer,
                "{context} over {surface}"
            );
            let text = result["content"][0]["text"].as_str().expect("text");
            assert!(
                text.chars().count() as u64 <= max_chars,
                "{context} over {surface}"
            );
        }
        let results = answer["results"].as_array().expect("results");
        let meta = &answer["metadata"];
        let asked = (top_k as usize).min(ranking.len());
        assert_eq!(
            meta["omitted_results"].as_u64(),
            Some((asked - results.len()) as u64),
            "{context}"
        );
        let cut = results.iter().any(|r| r["content_truncated"] == true);
        assert_eq!(meta["truncated"], cut || results.len() < asked, "{context}");
        assert_eq!(meta["max_chars"], max_chars, "{context}");
        for (got, want) in results.iter().zip(&ranking) {
            assert_eq!(got["chunk_id"], want["chunk_id"], "{context}");
            assert_eq!(got["citation"], want["citation"], "{context}");
            let whole_text = want["content"].as_str().expect("full content");
            match detail {
                "full" if got["content_truncated"] == true => {
                    let part = got["content"].as_str().expect("content");
                    assert!(
                        whole_text.starts_with(part) && part.len() < whole_text.len(),
                        "{context}"
                    );
                }
                "full" => assert_eq!(got["content"], want["content"], "{context}"),
                _ => assert!(got.get("content").is_none(), "{context}"),
            }
            assert_eq!(
                got.get("snippet").is_some(),
                detail == "snippets",
                "{context}"
            );
        }
        cut_content += usize::from(cut);
        left_out += usize::from(results.len() < asked);
    }
    // The cases cover both ways of fitting.
    assert!(cut_content > 0 && left_out > 0, "{cut_content} {left_out}");

    // The command line fits the same answer, and says so.
    let args = [
        "search",
        "-c",
        "notes",
        query,
        "--top-k",
        "60",
        "--max-chars",
        "7000",
    ];
    let cli: Value =
        serde_json::from_slice(&fx.grk_ok(&[&args[..], &["--json"]].concat())).expect("JSON");
    let (rest, _, _) = surfaces
        .everywhere(
            "search",
            json!({"collection": "notes", "query": query, "top_k": 60, "max_chars": 7000}),
        )
        .await;
    assert_eq!(cli, rest.json());
    assert_eq!(cli["metadata"]["truncated"], true);
    let human = String::from_utf8(fx.grk_ok(&args)).expect("UTF-8");
    let omitted = cli["metadata"]["omitted_results"].as_u64().expect("count");
    assert!(
        human.contains(&format!(
            "cut to fit 7000 characters: {omitted} more results left out"
        )),
        "{human}"
    );
}

#[test]
fn a_default_search_is_fitted_to_the_default_budget() {
    let fx = corpus();
    let server = server(&fx);
    let response = search(
        &server,
        json!({"collection": "notes", "query": "lighthouse keepers", "top_k": 100}),
    );
    let answer = response.json();
    assert_eq!(answer["metadata"]["max_chars"], 32_000);
    assert_eq!(answer["metadata"]["detail"], "full");
    assert_eq!(answer["metadata"]["truncated"], true);
    assert!(response.body.chars().count() <= 32_000);
}

#[test]
fn snippets_mark_the_query_words_at_offsets_that_read_back_from_the_source() {
    let fx = corpus();
    let server = server(&fx);
    let answer = search(
        &server,
        json!({"collection": "notes", "query": "lighthouses turned", "detail": "snippets", "top_k": 30}),
    )
    .json();
    let results = answer["results"].as_array().expect("results");
    assert_eq!(results.len(), 30);
    for hit in results {
        let source = std::fs::read(
            fx.base
                .join(hit["citation"]["source"].as_str().expect("source")),
        )
        .expect("the source");
        let snippet = &hit["snippet"];
        let at = |v: &Value| v.as_u64().expect("offset") as usize;
        let (start, end) = (at(&snippet["start_offset"]), at(&snippet["end_offset"]));
        assert_eq!(
            &source[start..end],
            snippet["text"].as_str().expect("text").as_bytes()
        );
        assert!(end - start <= groundkit_retrieval::SNIPPET_BYTES);
        let cited = at(&hit["citation"]["start_offset"])..at(&hit["citation"]["end_offset"]);
        assert!(cited.contains(&start) && end <= cited.end, "{hit}");
        let words: Vec<String> = snippet["matches"]
            .as_array()
            .expect("matches")
            .iter()
            .map(|m| {
                String::from_utf8_lossy(&source[at(&m["start_offset"])..at(&m["end_offset"])])
                    .to_lowercase()
            })
            .collect();
        // "lighthouses" matches "Lighthouse" and "lighthouse" by its stem; "turned" matches.
        assert!(words.contains(&"turned".to_owned()), "{hit}");
        assert!(
            words
                .iter()
                .all(|w| ["lighthouse", "turned"].contains(&w.as_str())),
            "{words:?}"
        );
    }

    // In source code an identifier matches by its parts.
    let answer = search(
        &server,
        json!({"collection": "notes", "query": "host header", "detail": "snippets", "top_k": 1}),
    )
    .json();
    let hit = &answer["results"][0];
    assert_eq!(hit["citation"]["source"], "src/header.rs");
    let source = std::fs::read_to_string(fx.base.join("src/header.rs")).expect("source");
    let words: Vec<&str> = hit["snippet"]["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|m| {
            &source[m["start_offset"].as_u64().expect("start") as usize
                ..m["end_offset"].as_u64().expect("end") as usize]
        })
        .collect();
    assert_eq!(words, ["Host", "header", "parseHostHeader", "Host"]);

    // `ids` carries neither text nor snippet.
    let answer = search(
        &server,
        json!({"collection": "notes", "query": "lighthouse", "detail": "ids"}),
    )
    .json();
    for hit in answer["results"].as_array().expect("results") {
        assert!(
            hit.get("content").is_none() && hit.get("snippet").is_none(),
            "{hit}"
        );
        assert!(hit["chunk_id"].is_string() && hit["citation"].is_object());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_score_leaves_out_weaker_hits_and_bad_budgets_are_refused_alike_everywhere() {
    let fx = corpus();
    let mut surfaces = Surfaces::start_with_context(|| ServiceContext::new(fx.cache())).await;
    let query = json!({"collection": "notes", "query": "lighthouse lamp turned", "top_k": 40, "detail": "ids"});
    let (all, _, _) = surfaces.everywhere("search", query.clone()).await;
    let all = all.json();
    let scores: Vec<f64> = all["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["score"].as_f64().expect("score"))
        .collect();
    let threshold = scores[5];
    let mut arguments = query.clone();
    arguments["min_score"] = json!(threshold);
    let (some, _, _) = surfaces.everywhere("search", arguments).await;
    let kept: Vec<f64> = some.json()["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["score"].as_f64().expect("score"))
        .collect();
    let expected: Vec<f64> = scores.iter().copied().filter(|&s| s >= threshold).collect();
    assert_eq!(kept, expected);
    assert!(kept.len() >= 6 && kept.len() < scores.len(), "{kept:?}");

    // A bad value is a validation error, a value of the wrong shape an invalid request: each
    // names its field, the same on every transport.
    for (arguments, status, kind, field) in [
        (
            json!({"collection": "notes", "query": "lamp", "max_chars": 999}),
            422,
            "validation_error",
            "max_chars",
        ),
        (
            json!({"collection": "notes", "query": "lamp", "detail": "summary"}),
            400,
            "invalid_request",
            "detail",
        ),
    ] {
        let (rest, http, stdio) = surfaces.everywhere("search", arguments.clone()).await;
        assert_eq!(rest.status, status, "{arguments}: {}", rest.body);
        let problem = rest.json();
        assert_eq!(problem["kind"], kind, "{arguments}");
        assert_eq!(problem["field"], field, "{arguments}: {problem}");
        for result in [&http, &stdio] {
            assert_eq!(result["isError"], true, "{arguments}");
            let text: Value =
                serde_json::from_str(result["content"][0]["text"].as_str().expect("text"))
                    .expect("JSON");
            assert_eq!(text["kind"], kind, "{arguments}");
            assert_eq!(text["field"], field, "{arguments}");
        }
    }
}
