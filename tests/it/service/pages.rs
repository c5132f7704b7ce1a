//! Pages: a walk through a search's pages, on any transport and the command line, is the ranking
//! of one deep search, cut into pages with no duplicate and no gap; a cursor is refused once
//! its collection changed, and when it is not a cursor of the search it is sent with.

use std::sync::Arc;

use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::{self as retrieval, SearchMode, SearchParams};
use groundkit_server::service::ServiceContext;
use serde_json::{Value, json};

use super::transports::Surfaces;
use crate::retrieval::Fixture;

/// `count` notes about harbours, each mentioning the word a different number of times in text
/// of a different length, so their BM25 scores spread out (with ties among equals).
fn harbours(count: usize) -> Fixture {
    let fx = Fixture::new();
    for i in 0..count {
        let mentions = "harbour ".repeat(1 + i % 7);
        let filler = "tide and rope ".repeat(i % 13);
        fx.write(
            &format!("harbours/{i:04}.txt"),
            format!("Note {i}: {mentions}{filler}boats moor at the quay.\n"),
        );
    }
    fx.ingest_all("harbours");
    fx
}

/// The chunk ids of the engine's own ranking of `query`, `depth` deep: the one deep search the
/// pages must cut up.
fn deep_ranking(
    fx: &Fixture,
    query: &str,
    mode: SearchMode,
    depth: u32,
    embedder: Option<&dyn Embedder>,
) -> Vec<String> {
    filtered_ranking(fx, query, mode, depth, embedder, None)
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

/// [`deep_ranking`] among the chunks `filter` keeps, with each chunk's source.
fn filtered_ranking(
    fx: &Fixture,
    query: &str,
    mode: SearchMode,
    depth: u32,
    embedder: Option<&dyn Embedder>,
    filter: Option<&Value>,
) -> Vec<(String, String)> {
    let open = fx.cache().acquire("harbours").expect("open");
    let params = SearchParams {
        query: query.to_owned(),
        top_k: depth,
        mode,
        fusion: Default::default(),
        filter: filter.map(|f| serde_json::from_value(f.clone()).expect("a filter")),
    };
    groundkit_retrieval::search(&open, &params, embedder)
        .expect("search")
        .results
        .into_iter()
        .map(|r| (r.chunk_id, r.citation.source))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filtered_walk_is_the_filtered_ranking_cut_up() {
    let fx = harbours(300);
    let mut surfaces = Surfaces::start_with_context(|| ServiceContext::new(fx.cache())).await;
    let query = "harbour quay";
    let filter = json!({"paths": ["harbours/00[0-9]*.txt"], "exclude_paths": ["**/*5.txt"]});
    let deep = filtered_ranking(&fx, query, SearchMode::Lexical, 1_001, None, Some(&filter));
    // Notes 0 to 99, less the ten whose number ends in 5.
    assert_eq!(deep.len(), 90);
    for (_, source) in &deep {
        let number: u32 = source["harbours/".len()..source.len() - ".txt".len()]
            .parse()
            .expect("a note number");
        assert!(number < 100 && number % 10 != 5, "{source}");
    }
    let ids: Vec<String> = deep.into_iter().map(|(id, _)| id).collect();
    let arguments = json!({"collection": "harbours", "query": query, "top_k": 7, "filter": filter});
    for surface in [Surface::Rest, Surface::McpStdio] {
        let (hits, pages) = walk(&mut surfaces, surface, &arguments).await;
        assert_eq!(hits, ranked(&ids), "{surface:?}");
        assert_eq!(pages, 90_usize.div_ceil(7), "{surface:?}");
    }
    // A cursor belongs to its filter.
    let (first, _, _) = surfaces.everywhere("search", arguments.clone()).await;
    let cursor = first.json()["next_cursor"]
        .as_str()
        .expect("more")
        .to_owned();
    let mut other = arguments.clone();
    other["filter"] = json!({"paths": ["harbours"]});
    other["cursor"] = json!(cursor);
    let (refused, _, _) = surfaces.everywhere("search", other).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.json()["field"], "cursor");
}

/// Where a walk is sent.
#[derive(Clone, Copy, Debug)]
enum Surface {
    Rest,
    McpHttp,
    McpStdio,
}

/// Every page of `arguments` on `surface`, first to last: the chunk ids with their ranks, and
/// the number of pages.
async fn walk(
    surfaces: &mut Surfaces,
    surface: Surface,
    arguments: &Value,
) -> (Vec<(u64, String)>, usize) {
    let mut hits = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let mut request = arguments.clone();
        if let Some(cursor) = &cursor {
            request["cursor"] = json!(cursor);
        }
        let (rest, http, stdio) = surfaces.everywhere("search", request.clone()).await;
        assert_eq!(rest.status, 200, "{request}: {}", rest.body);
        let answer = match surface {
            Surface::Rest => rest.json(),
            Surface::McpHttp => http["structuredContent"].clone(),
            Surface::McpStdio => stdio["structuredContent"].clone(),
        };
        pages += 1;
        for hit in answer["results"].as_array().expect("results") {
            hits.push((
                hit["rank"].as_u64().expect("rank"),
                hit["chunk_id"].as_str().expect("id").to_owned(),
            ));
        }
        match answer["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        assert!(pages < 200, "the walk ends");
    }
    (hits, pages)
}

/// `ids` ranked from 1, as a walk collects them.
fn ranked(ids: &[String]) -> Vec<(u64, String)> {
    (1..).zip(ids.iter().cloned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_through_the_pages_is_the_deep_ranking_cut_up_on_every_transport() {
    let fx = harbours(1_200);
    let mut surfaces = Surfaces::start_with_context(|| ServiceContext::new(fx.cache())).await;
    let query = "harbour quay";
    let deep = deep_ranking(&fx, query, SearchMode::Lexical, 1_001, None);
    assert_eq!(deep.len(), 1_001, "more hits than a walk reads");
    let thousand = ranked(&deep[..1_000]);

    for (surface, top_k, detail) in [
        (Surface::Rest, 100, "ids"),
        (Surface::McpHttp, 37, "snippets"),
        (Surface::McpStdio, 100, "ids"),
    ] {
        let arguments =
            json!({"collection": "harbours", "query": query, "top_k": top_k, "detail": detail});
        let (hits, pages) = walk(&mut surfaces, surface, &arguments).await;
        assert_eq!(
            hits, thousand,
            "{surface:?}: the walk ends after 1,000 hits"
        );
        assert_eq!(pages, 1_000_usize.div_ceil(top_k), "{surface:?}");
    }

    // Pages cut by the budget continue right after their last hit.
    let arguments =
        json!({"collection": "harbours", "query": query, "top_k": 60, "max_chars": 4000});
    let (hits, pages) = walk(&mut surfaces, Surface::Rest, &arguments).await;
    assert_eq!(hits, thousand);
    assert!(pages > 1_000 / 60 + 1, "the budget cut pages: {pages}");

    // The command line continues a cursor the REST answer gave.
    let (first, _, _) = surfaces
        .everywhere(
            "search",
            json!({"collection": "harbours", "query": query, "top_k": 5}),
        )
        .await;
    let cursor = first.json()["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();
    let second: Value = serde_json::from_slice(&fx.grk_ok(&[
        "search", "-c", "harbours", query, "--top-k", "5", "--cursor", &cursor, "--json",
    ]))
    .expect("JSON");
    let ids: Vec<&str> = second["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["chunk_id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ids,
        deep[5..10].iter().map(String::as_str).collect::<Vec<_>>()
    );
    let human = String::from_utf8(fx.grk_ok(&["search", "-c", "harbours", query, "--top-k", "5"]))
        .expect("UTF-8");
    assert!(
        human.contains(&format!("more: --cursor {cursor}")),
        "{human}"
    );

    // A search with fewer hits than a page has no cursor.
    let (few, _, _) = surfaces
        .everywhere(
            "search",
            json!({"collection": "harbours", "query": "1017", "top_k": 100}),
        )
        .await;
    let few = few.json();
    assert!(few.get("next_cursor").is_none(), "{}", few["metadata"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dense_and_hybrid_pages_cut_up_their_deep_rankings() {
    let fx = Fixture::new();
    for i in 0..120 {
        fx.write(
            &format!("harbours/{i:03}.txt"),
            format!(
                "Note {i}: ships wait {} hours for the tide at harbour {}.",
                i % 9,
                i % 11
            ),
        );
    }
    let embedder = crate::embed::minilm();
    let mut options = fx.options("harbours", &[&fx.base]);
    options.embedder = Some(embedder.clone());
    groundkit_retrieval::ingest(&options, &mut groundkit_retrieval::NoProgress).expect("ingest");
    let shared: Arc<dyn Embedder> = embedder.clone();
    let mut surfaces = Surfaces::start_with_context(|| {
        ServiceContext::new(fx.cache()).with_embedder(Arc::clone(&shared))
    })
    .await;
    for (mode, name) in [(SearchMode::Dense, "dense"), (SearchMode::Hybrid, "hybrid")] {
        let deep = deep_ranking(
            &fx,
            "waiting for high water",
            mode,
            1_001,
            Some(embedder.as_ref()),
        );
        assert_eq!(deep.len(), 120, "{name}: every chunk is ranked");
        let arguments = json!({"collection": "harbours", "query": "waiting for high water",
            "mode": name, "top_k": 25, "detail": "ids"});
        let (hits, pages) = walk(&mut surfaces, Surface::McpStdio, &arguments).await;
        assert_eq!(hits, ranked(&deep), "{name}");
        assert_eq!(pages, 5, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cursor_continues_its_own_ranking_after_the_collection_changes_then_expires() {
    let fx = harbours(40);
    let mut surfaces = Surfaces::start_with_context(|| ServiceContext::new(fx.cache())).await;
    let search = json!({"collection": "harbours", "query": "harbour", "top_k": 10});
    let (first, _, _) = surfaces.everywhere("search", search.clone()).await;
    let cursor = first.json()["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();

    // Another query, another min_score, another collection's name, an altered check: a
    // validation error, as is a cursor not of the form the schema states.
    let mut altered = cursor.clone().into_bytes();
    let last = altered.len() - 1;
    altered[last] = if altered[last] == b'0' { b'1' } else { b'0' };
    let altered = String::from_utf8(altered).expect("hex");
    let refusals = [
        json!({"query": "quay"}),
        json!({"min_score": 0.1}),
        json!({"cursor": altered}),
        json!({"cursor": "00"}),
        json!({"cursor": cursor.to_uppercase()}),
    ];
    for change in refusals {
        let mut request = search.clone();
        request["cursor"] = json!(cursor);
        for (key, value) in change.as_object().expect("object") {
            request[key] = value.clone();
        }
        let (rest, http, stdio) = surfaces.everywhere("search", request.clone()).await;
        assert_eq!(rest.status, 422, "{request}: {}", rest.body);
        assert_eq!(rest.json()["field"], "cursor", "{request}");
        for result in [&http, &stdio] {
            assert_eq!(
                groundkit_tests::tool_error(result)["field"],
                "cursor",
                "{request}"
            );
        }
    }
    // A cursor of another collection is refused with that collection, which does not exist.
    let mut elsewhere = search.clone();
    elsewhere["cursor"] = json!(cursor);
    elsewhere["collection"] = json!("other");
    let (rest, _, _) = surfaces.everywhere("search", elsewhere).await;
    assert_eq!(rest.json()["kind"], "collection_not_found");

    // The page after the first; then the collection changes. The next page still continues
    // the ranking the cursor was cut from: the server keeps that generation open for pages.
    let mut next = search.clone();
    next["cursor"] = json!(cursor);
    let (second, _, _) = surfaces.everywhere("search", next.clone()).await;
    assert_eq!(second.status, 200, "{}", second.body);
    let ranked_at = second.json()["metadata"]["generation"].clone();
    fx.write("harbours/new.txt", "A harbour harbour harbour note.\n");
    fx.ingest_all("harbours");
    let (again, http, stdio) = surfaces.everywhere("search", next.clone()).await;
    assert_eq!(again.status, 200, "{}", again.body);
    for answer in [
        again.json(),
        http["structuredContent"].clone(),
        stdio["structuredContent"].clone(),
    ] {
        assert_eq!(answer["results"], second.json()["results"], "the same page");
        assert_eq!(answer["metadata"]["generation"], ranked_at);
    }
    // A new search ranks the new generation, where the new note is on the first page.
    let (fresh, _, _) = surfaces.everywhere("search", search.clone()).await;
    let fresh = fresh.json();
    assert_ne!(fresh["metadata"]["generation"], ranked_at);
    let new_note = |page: &Value| {
        page["results"]
            .as_array()
            .expect("results")
            .iter()
            .any(|hit| hit["document_id"] == "harbours/new.txt")
    };
    assert!(new_note(&fresh), "{fresh}");
    assert!(!new_note(&second.json()));
    assert_ne!(fresh["next_cursor"], json!(cursor));

    // Two more generations, each paged: a server keeps at most two replaced generations of a
    // collection for pages, those it was asked for last, so the first cursor has expired.
    for round in 0..retrieval::PAGES_KEPT {
        fx.write(
            &format!("harbours/round{round}.txt"),
            "Another harbour note.\n",
        );
        fx.ingest_all("harbours");
        let (paged, _, _) = surfaces.everywhere("search", search.clone()).await;
        assert!(paged.json()["next_cursor"].is_string());
    }
    let (rest, http, stdio) = surfaces.everywhere("search", next).await;
    assert_eq!(rest.status, 409, "{}", rest.body);
    let problem = rest.json();
    assert_eq!(problem["kind"], "cursor_expired");
    for result in [&http, &stdio] {
        assert_eq!(
            groundkit_tests::tool_error(result)["kind"],
            "cursor_expired"
        );
    }
}
