//! `collection` as a list (or `"*"`): several collections searched as one on every transport and
//! the command line; each hit names its collection and links to its own chunk resource; a
//! missing collection, or a bad list, is refused alike everywhere.

use groundkit_server::service::{MAX_COLLECTIONS, ServiceContext};
use serde_json::{Value, json};

use super::corpus;
use super::transports::{Surfaces, stable};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_collections_answer_as_one_on_every_transport() {
    let fx = corpus();
    fx.write(
        "more/kettle.txt",
        "A kettle for green tea stops short of boiling.\n",
    );
    fx.write(
        "more/harbour.md",
        "The harbour tide tables are posted at the quay.\n",
    );
    let more = fx.base.join("more");
    let summary = groundkit_retrieval::ingest(
        &fx.options("more", &[more.as_path()]),
        &mut groundkit_retrieval::NoProgress,
    )
    .expect("ingest");
    assert_eq!(summary.documents, 2);
    let mut surfaces = Surfaces::start_with_context(|| ServiceContext::new(fx.cache())).await;

    let arguments = json!({"collection": ["papers", "more"], "query": "green tea", "top_k": 5});
    let (rest, http, stdio) = surfaces.everywhere("search", arguments).await;
    assert_eq!(rest.status, 200, "{}", rest.body);
    let answer = rest.json();
    for result in [&http, &stdio] {
        assert_eq!(
            stable(result["structuredContent"].clone()),
            stable(answer.clone())
        );
    }
    let hits = answer["results"].as_array().expect("results");
    let named: Vec<(&str, &str)> = hits
        .iter()
        .map(|h| {
            let collection = h["collection"]
                .as_str()
                .expect("each hit names its collection");
            (
                collection,
                h["citation"]["source"].as_str().expect("source"),
            )
        })
        .collect();
    assert!(named.contains(&("papers", "tea.txt")), "{named:?}");
    assert!(named.contains(&("more", "more/kettle.txt")), "{named:?}");
    let generations = &answer["metadata"]["generations"];
    assert_eq!(generations, &json!({"more": 1, "papers": 1}));
    assert_eq!(answer["metadata"]["generation"], 2);
    // Over MCP, each hit links to the chunk resource of its own collection.
    let links: Vec<&str> = http["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter(|b| b["type"] == "resource_link")
        .map(|b| b["uri"].as_str().expect("uri"))
        .collect();
    let expected: Vec<String> = hits
        .iter()
        .map(|h| {
            format!(
                "grk://{}/chunks/{}",
                h["collection"].as_str().unwrap_or_default(),
                h["chunk_id"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(links, expected);

    // `"*"` is every collection, and pages continue across them.
    let every = json!({"collection": "*", "query": "green tea", "top_k": 5});
    let (all, _, _) = surfaces.everywhere("search", every).await;
    assert_eq!(all.json()["results"], answer["results"]);
    let first = json!({"collection": ["papers", "more"], "query": "green tea", "top_k": 1});
    let (page, _, _) = surfaces.everywhere("search", first.clone()).await;
    let mut next = first;
    next["cursor"] = page.json()["next_cursor"].clone();
    let (second, _, _) = surfaces.everywhere("search", next).await;
    assert_eq!(second.json()["results"][0]["chunk_id"], hits[1]["chunk_id"]);

    // The command line names several with a repeated --collection.
    let out = fx
        .grk()
        .args([
            "search",
            "--collection",
            "papers",
            "--collection",
            "more",
            "green tea",
        ])
        .args(["--top-k", "5", "--json"])
        .output()
        .expect("grk");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(cli["results"], answer["results"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_list_of_collections_is_refused_alike_everywhere() {
    let fx = corpus();
    let mut surfaces = Surfaces::start_with_context(|| ServiceContext::new(fx.cache())).await;
    let cases = [
        (
            json!({"collection": ["papers", "nope"], "query": "tea"}),
            "collection_not_found",
            None,
        ),
        (
            json!({"collection": [], "query": "tea"}),
            "validation_error",
            Some("collection"),
        ),
        (
            json!({"collection": ["*", "papers"], "query": "tea"}),
            "validation_error",
            Some("collection"),
        ),
        (
            json!({"collection": ["../etc"], "query": "tea"}),
            "validation_error",
            Some("collection"),
        ),
        (
            json!({"collection": "../etc", "query": "tea"}),
            "validation_error",
            Some("collection"),
        ),
        (
            json!({"collection": ["papers", 3], "query": "tea"}),
            "invalid_request",
            Some("collection"),
        ),
        (
            json!({"query": "tea"}),
            "invalid_request",
            Some("collection"),
        ),
    ];
    let names = |n: usize| -> Vec<String> { (0..n).map(|i| format!("c{i}")).collect() };
    let at_limit = json!({"collection": names(MAX_COLLECTIONS), "query": "tea"});
    let (at, _, _) = surfaces.everywhere("search", at_limit).await;
    assert_eq!(
        at.json()["kind"],
        "collection_not_found",
        "32 names are read: {}",
        at.body
    );
    let past = json!({"collection": names(MAX_COLLECTIONS + 1), "query": "tea"});
    let (past, _, _) = surfaces.everywhere("search", past).await;
    assert_eq!(past.json()["field"], "collection", "{}", past.body);
    for (arguments, kind, field) in cases {
        let (rest, http, stdio) = surfaces.everywhere("search", arguments.clone()).await;
        let problem = rest.json();
        assert_eq!(problem["kind"], kind, "{arguments}: {}", rest.body);
        if let Some(field) = field {
            assert_eq!(problem["field"], field, "{arguments}");
        } else {
            assert!(
                problem["detail"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("nope"),
                "{problem}"
            );
        }
        for result in [&http, &stdio] {
            let error = groundkit_tests::tool_error(result);
            assert_eq!(error["kind"], kind, "{arguments}");
            assert_eq!(error["detail"], problem["detail"], "{arguments}");
        }
    }
}
