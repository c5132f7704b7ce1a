//! The backend conformance suite: one corpus ingested locally, published to the cluster, and the
//! same questions asked of both implementations of `retrieval::Backend` (`LocalBackend` and
//! `ClusterBackend`), which must give the same answers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use groundkit_opensearch::{Cluster, ClusterBackend, ClusterConfig, PublishOptions, publish};
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::eval::{EvalQuery, Qrels};
use groundkit_retrieval::{
    self as retrieval, Backend, FusionMethod, IngestOptions, LocalBackend, NoProgress, SearchMode,
    SearchParams, SearchResponse, Verification,
};

use serde_json::json;

use super::{TestCluster, cluster, http};
use crate::retrieval::Fixture;

/// Notes on tides and tea, with enough overlap between them that rankings are not trivial.
fn corpus(fx: &Fixture) {
    fx.write("tides.md", "Spring tides follow the new and the full moon. Neap tides come between them, when the sun and moon pull at right angles.");
    fx.write("pools.txt", "Tide pools hold sea anemones, crabs and snails. Each low tide exposes the pools, and the sun warms their water.");
    fx.write("tea.txt", "Green tea is steeped at 80 degrees for two minutes; black tea takes boiling water and four minutes.");
    fx.write("moon.md", "The moon's gravity raises a bulge of water on the near side of the earth and another on the far side.");
    fx.write("travel.md", "Crossing time zones disrupts the circadian rhythm: light in the morning helps the body clock adjust.");
    fx.write("kelp.txt", "Kelp forests grow in cold coastal water, anchored to rock; otters hunt urchins that graze the kelp.");
}

const QUERIES: [&str; 6] = [
    "moon and tides",
    "water temperature for tea",
    "what lives in tide pools",
    "jet lag and the body clock",
    "otters kelp urchins",
    "sun moon water",
];

fn options() -> PublishOptions {
    PublishOptions {
        shards: 2,
        replicas: 1,
        ..PublishOptions::default()
    }
}

fn backend(cluster: &TestCluster, fx: &Fixture, node: usize) -> ClusterBackend {
    let client = Cluster::connect(&ClusterConfig::new(cluster.url(node))).expect("connect");
    ClusterBackend::new(client, &fx.base, Some(fx.index.clone()))
}

fn ingest(fx: &Fixture, name: &str, embedder: Option<Arc<dyn Embedder>>) {
    let mut options: IngestOptions = fx.options(name, &[&fx.base]);
    options.embedder = embedder;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");
}

fn publish_now(cluster: &TestCluster, fx: &Fixture, name: &str) -> groundkit_opensearch::Published {
    let client = Cluster::connect(&ClusterConfig::new(cluster.url(0))).expect("connect");
    let cache = fx.cache();
    let open = cache.acquire(name).expect("open");
    publish(&client, &open, &cache, options()).expect("publish")
}

fn params(query: &str, mode: SearchMode) -> SearchParams {
    SearchParams {
        query: query.to_owned(),
        top_k: 10,
        mode,
        fusion: Default::default(),
        filter: None,
    }
}

fn local(
    fx: &Fixture,
    name: &str,
    p: &SearchParams,
    embedder: Option<&dyn Embedder>,
) -> SearchResponse {
    let local: &dyn Backend = &LocalBackend::new(fx.cache());
    local.search(name, p, embedder).expect("local search")
}

fn ranking(response: &SearchResponse) -> Vec<(String, f32)> {
    response
        .results
        .iter()
        .map(|r| (r.chunk_id.clone(), r.score))
        .collect()
}

/// Same chunks in the same order, scores equal to `tolerance` (relative), same citations.
fn assert_same(local: &SearchResponse, remote: &SearchResponse, tolerance: f32, what: &str) {
    let (l, r) = (ranking(local), ranking(remote));
    assert_eq!(
        l.iter().map(|x| &x.0).collect::<Vec<_>>(),
        r.iter().map(|x| &x.0).collect::<Vec<_>>(),
        "{what}: local {l:?} cluster {r:?}"
    );
    for ((_, a), (_, b)) in l.iter().zip(&r) {
        assert!(
            (a - b).abs() <= tolerance * a.abs().max(1e-3),
            "{what}: scores {a} and {b}"
        );
    }
    for (a, b) in local.results.iter().zip(&remote.results) {
        assert_eq!(a.citation, b.citation, "{what}");
        assert_eq!(a.content, b.content, "{what}");
        assert_eq!(a.scope, b.scope, "{what}");
        assert_eq!(a.rank, b.rank, "{what}");
    }
    assert_eq!(
        local.metadata.generation, remote.metadata.generation,
        "{what}"
    );
    assert_eq!(
        local.metadata.query_terms, remote.metadata.query_terms,
        "{what}"
    );
    assert!(!remote.results.is_empty(), "{what}: nothing found");
}

#[test]
fn lexical_search_in_the_cluster_ranks_and_scores_like_the_local_engine() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    ingest(&fx, "lexical", None);
    let published = publish_now(&cluster, &fx, "lexical");
    assert_eq!(published.index, "groundkit-lexical--g1");
    assert_eq!(published.chunks, 6);
    let remote = backend(&cluster, &fx, 1);
    for query in QUERIES {
        let p = params(query, SearchMode::Lexical);
        let answer = remote.search("lexical", &p, None).expect("cluster search");
        assert_same(&local(&fx, "lexical", &p, None), &answer, 1e-3, query);
        // Every corpus file is one line: the cluster cites it as the local engine does.
        let lines: Vec<_> = answer
            .results
            .iter()
            .map(|r| (r.citation.start_line, r.citation.end_line))
            .collect();
        assert!(lines.iter().all(|l| *l == (Some(1), Some(1))), "{lines:?}");
    }
    // The same evaluation through either backend.
    let queries: Vec<EvalQuery> = QUERIES
        .iter()
        .enumerate()
        .map(|(i, text)| EvalQuery {
            id: format!("q{i}"),
            text: (*text).to_owned(),
        })
        .collect();
    let qrels: Qrels = [
        ("q0", "moon.md"),
        ("q1", "tea.txt"),
        ("q2", "pools.txt"),
        ("q4", "kelp.txt"),
    ]
    .into_iter()
    .map(|(q, d)| (q.to_owned(), [(d.to_owned(), 1)].into()))
    .collect();
    let local_backend = LocalBackend::new(fx.cache());
    let [a, b] = [&local_backend as &dyn Backend, &remote].map(|backend| {
        retrieval::evaluate_backend(
            backend,
            "lexical",
            &queries,
            &qrels,
            SearchMode::Lexical,
            Default::default(),
            None,
        )
        .expect("evaluate")
    });
    assert_eq!(a.queries, 4);
    assert!(a.ndcg_at_10 > 0.5, "{a:?}");
    assert!((a.ndcg_at_10 - b.ndcg_at_10).abs() < 1e-9 && (a.mrr_at_10 - b.mrr_at_10).abs() < 1e-9);

    // Only stop words: no terms, no results, on both.
    let p = params("the and of", SearchMode::Lexical);
    let answer = remote.search("lexical", &p, None).expect("cluster search");
    assert!(answer.results.is_empty());
    assert_eq!(answer.metadata.query_terms, 0);
    // Without vectors, dense is refused as it is locally.
    let err = remote
        .search("lexical", &params("tides", SearchMode::Dense), None)
        .expect_err("no vectors");
    assert_eq!(err.kind(), "dense_unavailable");
}

#[test]
fn dense_and_hybrid_in_the_cluster_rank_like_the_local_engine() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    let model = crate::embed::minilm();
    ingest(&fx, "dense", Some(model.clone()));
    publish_now(&cluster, &fx, "dense");
    let remote = backend(&cluster, &fx, 2);
    for query in QUERIES {
        for (mode, fusion) in [
            (SearchMode::Dense, FusionMethod::Rrf),
            (SearchMode::Hybrid, FusionMethod::Rrf),
            (SearchMode::Hybrid, FusionMethod::MinMax),
        ] {
            let p = SearchParams {
                fusion,
                ..params(query, mode)
            };
            let answer = remote
                .search("dense", &p, Some(model.as_ref()))
                .expect("cluster search");
            let expected = local(&fx, "dense", &p, Some(model.as_ref()));
            let what = format!("{mode:?} {fusion:?} {query}");
            assert_same(&expected, &answer, 1e-3, &what);
            assert_eq!(answer.metadata.fusion, expected.metadata.fusion, "{what}");
        }
    }
    let status = remote
        .index_status("dense", Some(model.as_ref()))
        .expect("status");
    assert!(status.dense_search_available);
    assert_eq!(status.embedding.as_ref().map(|e| e.dimension), Some(384));
    let without = remote.index_status("dense", None).expect("status");
    assert!(!without.dense_search_available);
    let err = remote
        .search("dense", &params("tides", SearchMode::Hybrid), None)
        .expect_err("no embedder");
    assert_eq!(err.kind(), "dense_unavailable");
}

#[test]
fn vectors_a_new_generation_brings_are_searched_at_once_by_a_server_that_saw_the_old_one() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    ingest(&fx, "later", None);
    publish_now(&cluster, &fx, "later");
    let remote = backend(&cluster, &fx, 1);
    let model = crate::embed::minilm();
    let p = params("moon and tides", SearchMode::Dense);
    let err = remote
        .search("later", &p, Some(model.as_ref()))
        .expect_err("generation 1 has no vectors");
    assert_eq!(err.kind(), "dense_unavailable");
    ingest(&fx, "later", Some(model.clone()));
    publish_now(&cluster, &fx, "later");
    let answer = remote
        .search("later", &p, Some(model.as_ref()))
        .expect("generation 2 has vectors");
    assert_eq!(answer.metadata.generation, 2);
    assert_same(
        &local(&fx, "later", &p, Some(model.as_ref())),
        &answer,
        1e-3,
        "dense after the flip",
    );
}

#[test]
fn a_new_generation_moves_the_alias_at_once_and_an_old_citation_stays_fetchable() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    ingest(&fx, "moves", None);
    publish_now(&cluster, &fx, "moves");
    let remote = backend(&cluster, &fx, 0);
    let before = remote
        .search("moves", &params("green tea", SearchMode::Lexical), None)
        .expect("search");
    let old_chunk = before.results[0].chunk_id.clone();
    let fetched = remote.fetch_chunk("moves", &old_chunk).expect("fetch");
    assert_eq!(fetched.verification, Verification::Verified);
    assert_eq!(fetched.citation, before.results[0].citation);
    assert_eq!(fetched.citation.start_line, Some(1));
    assert!(!fetched.superseded);
    assert_eq!(fetched.content.as_deref(), Some(before.results[0].text()));

    fx.write(
        "tea.txt",
        "Oolong tea is steeped at 90 degrees, several short times.",
    );
    ingest(&fx, "moves", None);
    let second = publish_now(&cluster, &fx, "moves");
    assert_eq!(second.index, "groundkit-moves--g2");
    assert!(
        second.removed.is_empty(),
        "the old generation is kept for the retention window"
    );
    let after = remote
        .search("moves", &params("oolong tea", SearchMode::Lexical), None)
        .expect("search");
    assert_eq!(after.metadata.generation, 2);
    assert_eq!(after.results[0].citation.source, "tea.txt");
    assert!(after.results[0].text().starts_with("Oolong"));
    // The replaced chunk is still in generation 1: fetched as superseded, and its source has
    // changed since, so it drifted.
    let old = remote.fetch_chunk("moves", &old_chunk).expect("fetch old");
    assert!(old.superseded);
    assert_eq!(old.verification, Verification::Drifted);
    assert!(old.content.is_none());
    let status = remote.index_status("moves", None).expect("status");
    assert_eq!(
        (status.generation, status.document_count, status.chunk_count),
        (2, 6, 6)
    );
    let err = remote
        .fetch_chunk("moves", "no-such-chunk")
        .expect_err("missing");
    assert_eq!(err.kind(), "chunk_not_found");

    // More replicas than the cluster has other nodes never all start: the publish fails and the
    // alias stays where it was.
    fx.write("tea.txt", "Rooibos is steeped at 100 degrees.");
    ingest(&fx, "moves", None);
    let client = Cluster::connect(&ClusterConfig::new(cluster.url(0))).expect("connect");
    let cache = fx.cache();
    let open = cache.acquire("moves").expect("open");
    let err = publish(
        &client,
        &open,
        &cache,
        PublishOptions {
            replicas: 3,
            start_timeout: Duration::from_secs(2),
            ..options()
        },
    )
    .expect_err("three replicas on three nodes");
    assert_eq!(err.field(), Some("opensearch-replicas"));
    assert_eq!(
        remote
            .index_status("moves", None)
            .expect("status")
            .generation,
        2
    );
    drop(open);

    // Publishing generation 3 replaces what that attempt left; with no retention, generations
    // 1 and 2 go.
    let open = cache.acquire("moves").expect("open");
    let again = publish(
        &client,
        &open,
        &cache,
        PublishOptions {
            retention: Duration::ZERO,
            ..options()
        },
    )
    .expect("publish again");
    assert!(!again.unchanged);
    assert_eq!(again.index, "groundkit-moves--g3");
    assert_eq!(
        again.removed,
        ["--g3", "--g1", "--g2"].map(|g| format!("groundkit-moves{g}"))
    );
    // The same generation again: nothing to load, nothing to remove.
    let same = publish(&client, &open, &cache, options()).expect("publish the same");
    assert!(same.unchanged && same.removed.is_empty(), "{same:?}");
    assert_eq!(
        (same.index.as_str(), same.chunks),
        ("groundkit-moves--g3", 6)
    );
    let err = remote
        .fetch_chunk("moves", &old_chunk)
        .expect_err("expired");
    assert_eq!(err.kind(), "chunk_not_found");
}

#[test]
fn an_index_a_dead_publish_left_is_never_served_and_the_next_publish_removes_it() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    ingest(&fx, "orphan", None);
    publish_now(&cluster, &fx, "orphan");
    // What a publish killed while loading generation 2 leaves: an index no alias names, with
    // part of the chunks.
    let port = cluster.http[0];
    let created = http(
        port,
        "PUT",
        "/groundkit-orphan--g2",
        r#"{"mappings":{"properties":{"content":{"type":"text"}}}}"#,
    );
    assert_eq!(created.map(|(s, _)| s), Some(200));
    let put = http(
        port,
        "PUT",
        "/groundkit-orphan--g2/_doc/x?refresh=true",
        r#"{"content":"green tea half loaded"}"#,
    );
    assert_eq!(put.map(|(s, _)| s), Some(201));
    let remote = backend(&cluster, &fx, 0);
    let answer = remote
        .search("orphan", &params("green tea", SearchMode::Lexical), None)
        .expect("search");
    assert_eq!(answer.metadata.generation, 1);
    assert!(answer.results.iter().all(|r| r.chunk_id != "x"));
    assert_eq!(
        remote
            .list_collections()
            .expect("list")
            .iter()
            .filter(|c| *c == "orphan")
            .count(),
        1
    );

    // Its chunk was never served, so it cannot be fetched either.
    let err = remote.fetch_chunk("orphan", "x").expect_err("never served");
    assert_eq!(err.kind(), "chunk_not_found");

    fx.write("tea.txt", "White tea is steeped cool, at 75 degrees.");
    ingest(&fx, "orphan", None);
    let next = publish_now(&cluster, &fx, "orphan");
    assert_eq!(next.index, "groundkit-orphan--g2");
    assert_eq!(next.removed, vec!["groundkit-orphan--g2".to_owned()]);
    let answer = remote
        .search("orphan", &params("white tea", SearchMode::Lexical), None)
        .expect("search");
    assert_eq!(answer.metadata.generation, 2);
    assert!(answer.results[0].text().starts_with("White tea"));
    assert!(remote.fetch_chunk("orphan", "x").is_err());

    // A search goes to the alias, not to the generation it named last time: once the alias is
    // gone, the collection is gone, though generation 2's index is still there.
    let removed = http(
        port,
        "DELETE",
        "/groundkit-orphan--g2/_alias/groundkit-orphan",
        "",
    );
    assert_eq!(removed.map(|(s, _)| s), Some(200));
    let err = remote
        .search("orphan", &params("white tea", SearchMode::Lexical), None)
        .expect_err("no alias");
    assert_eq!(err.kind(), "collection_not_found");
}

#[test]
fn any_node_answers_and_a_killed_node_does_not_stop_the_answers() {
    let mut cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    ingest(&fx, "replicas", None);
    publish_now(&cluster, &fx, "replicas");
    let p = params("moon and tides", SearchMode::Lexical);
    let expected = local(&fx, "replicas", &p, None);
    let through: Vec<ClusterBackend> = (0..3).map(|i| backend(&cluster, &fx, i)).collect();
    for remote in &through {
        assert_same(
            &expected,
            &remote.search("replicas", &p, None).expect("search"),
            1e-3,
            "any node",
        );
    }
    // Queries keep coming through node 0 while node 2 is killed: every answer is complete.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let answers = std::thread::scope(|scope| {
        let asking = scope.spawn(|| {
            let mut answers = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                answers.push(through[0].search("replicas", &p, None).map(|r| ranking(&r)));
            }
            answers
        });
        std::thread::sleep(Duration::from_millis(300));
        cluster.kill(2);
        std::thread::sleep(Duration::from_secs(3));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        asking.join().expect("asking thread")
    });
    let after_kill = through[1].search("replicas", &p, None).map(|r| ranking(&r));
    cluster.restart(2);
    assert!(answers.len() > 5, "only {} answers", answers.len());
    for answer in answers.iter().chain([&after_kill]) {
        let ids: Vec<String> = answer
            .as_ref()
            .expect("answered")
            .iter()
            .map(|x| x.0.clone())
            .collect();
        let want: Vec<String> = expected
            .results
            .iter()
            .map(|r| r.chunk_id.clone())
            .collect();
        assert_eq!(ids, want);
    }
}

#[test]
fn cluster_failures_are_storage_errors_that_show_nothing_of_the_cluster() {
    let fx = Fixture::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let client =
        Cluster::connect(&ClusterConfig::new(format!("http://127.0.0.1:{port}"))).expect("connect");
    let remote = ClusterBackend::new(client, &fx.base, None);
    let err = remote
        .search("anything", &params("tides", SearchMode::Lexical), None)
        .expect_err("nothing listens");
    assert_eq!(err.kind(), "storage_error");
    let shown = err.public_detail();
    assert!(
        !shown.contains("127.0.0.1") && !shown.contains(&port.to_string()),
        "{shown}"
    );

    // Names the cluster cannot hold are refused before anything is sent.
    let err = remote.fetch_chunk("Upper", "x").expect_err("uppercase");
    assert_eq!(err.kind(), "collection_not_found");
    for (url, field) in [
        ("ftp://x", "opensearch-url"),
        ("not a url", "opensearch-url"),
    ] {
        let err = Cluster::connect(&ClusterConfig::new(url)).expect_err("bad url");
        assert_eq!(err.field(), Some(field));
    }
    let mut config = ClusterConfig::new("http://127.0.0.1:9200");
    config.username = Some("grk".to_owned());
    config.password_env = Some("GROUNDKIT_TEST_UNSET_PASSWORD_VARIABLE".to_owned());
    let err = Cluster::connect(&config).expect_err("unset password variable");
    assert_eq!(err.field(), Some("opensearch-password-env"));
}

#[test]
fn chunks_a_busy_cluster_rejects_are_sent_again_until_it_takes_them() {
    let cluster = cluster();
    let fx = Fixture::new();
    // Forty notes of about 2 KB: their bulk request is about 100 KB.
    for i in 0..40 {
        let text = format!("Note {i}: {}", "tide pools and kelp forests. ".repeat(70));
        fx.write(&format!("note{i}.txt"), &text);
    }
    ingest(&fx, "busy", None);
    let local: &dyn Backend = &LocalBackend::new(fx.cache());
    let chunks = local
        .index_status("busy", None)
        .expect("status")
        .chunk_count;
    let port = cluster.http[0];
    // A flood-stage disk block makes the cluster refuse every write to an index with HTTP 429
    // until it is lifted. An index template puts it on the new generation from its creation,
    // so the first bulk load is refused whatever the machine's speed; the block comes off 1.5 s
    // after the index appears. Nothing else the publish sends is refused.
    let pattern = "groundkit-busy--g*";
    let template = format!(
        r#"{{"index_patterns":["{pattern}"],"priority":500,
            "template":{{"settings":{{"index.blocks.read_only_allow_delete":true}}}}}}"#
    );
    assert_eq!(
        http(port, "PUT", "/_index_template/busy", &template).map(|(status, _)| status),
        Some(200)
    );
    let lift = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while http(port, "GET", &format!("/{pattern}"), "").map(|(_, body)| body)
            == Some("{}".to_owned())
        {
            assert!(
                Instant::now() < deadline,
                "the new generation never appeared"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(1500));
        let settings = format!("/{pattern}/_settings/index.blocks.read_only_allow_delete");
        let blocked = http(port, "GET", &settings, "")
            .is_some_and(|(_, body)| body.contains(r#""read_only_allow_delete":"true""#));
        let body = r#"{"index.blocks.read_only_allow_delete":null}"#;
        let lifted = http(port, "PUT", &format!("/{pattern}/_settings"), body);
        (blocked, lifted.map(|(status, _)| status))
    });
    let client = Cluster::connect(&ClusterConfig::new(cluster.url(0))).expect("connect");
    let cache = fx.cache();
    let open = cache.acquire("busy").expect("open");
    let published = publish(&client, &open, &cache, options());
    let (blocked, lifted) = lift.join().expect("lift");
    assert!(blocked, "the new generation was created refusing writes");
    assert_eq!(lifted, Some(200));
    assert_eq!(
        http(port, "DELETE", "/_index_template/busy", "").map(|(status, _)| status),
        Some(200)
    );
    // The block was on from the index's creation, so the publish succeeded only by sending
    // the refused chunks again.
    let published = published.expect("published once the cluster takes the chunks");
    assert_eq!(published.chunks, chunks);
    let answer = backend(&cluster, &fx, 1)
        .search("busy", &params("kelp forests", SearchMode::Lexical), None)
        .expect("search");
    assert_eq!(answer.results.len(), 10);
}

/// Source code in the cluster is matched as the local engine matches it: by its scope and by
/// its identifiers' parts and whole words, with the same scores.
#[test]
fn source_code_in_the_cluster_is_found_by_its_identifiers_and_scopes_like_the_local_engine() {
    let cluster = cluster();
    let fx = Fixture::new();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/code");
    for entry in std::fs::read_dir(&fixtures).expect("code fixtures") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("name");
        fx.write(name, std::fs::read(&path).expect("read fixture"));
    }
    crate::retrieval::code::write_host_parsers(&fx);
    ingest(&fx, "code", None);
    publish_now(&cluster, &fx, "code");
    let remote = backend(&cluster, &fx, 1);
    for query in [
        "parse host header",
        "parseHostHeader",
        "parse_host_header",
        "backoff attempt",
        "session close",
        "garden tomatoes",
    ] {
        let p = params(query, SearchMode::Lexical);
        let answer = remote.search("code", &p, None).expect("cluster search");
        assert_same(&local(&fx, "code", &p, None), &answer, 1e-3, query);
    }
    for query in ["parse host header", "parseHostHeader", "parse_host_header"] {
        let answer = remote
            .search("code", &params(query, SearchMode::Lexical), None)
            .expect("cluster search");
        let mut first_two: Vec<&str> = answer.results[..2]
            .iter()
            .map(|r| r.document_id.as_str())
            .collect();
        first_two.sort_unstable();
        assert_eq!(first_two, ["host.js", "host.py"], "{query}");
    }
    let backoff = remote
        .search(
            "code",
            &params("backoff attempt", SearchMode::Lexical),
            None,
        )
        .expect("cluster search");
    let top = &backoff.results[0];
    assert_eq!(top.document_id, "session.py");
    assert!(
        top.scope
            .as_deref()
            .is_some_and(|s| s.starts_with("class Session")),
        "{top:?}"
    );
}

#[test]
fn filters_in_the_cluster_keep_what_the_local_engine_keeps() {
    let cluster = cluster();
    let fx = Fixture::new();
    let files = [
        (
            "coast/tides.md",
            "Spring tides follow the new and the full moon; neap tides come between.",
        ),
        (
            "coast/pools.txt",
            "Tide pools hold anemones and crabs; each low tide exposes the pools to the sun.",
        ),
        (
            "coast/kelp/forest.txt",
            "Kelp forests grow in cold coastal water; otters hunt urchins in the kelp at low tide.",
        ),
        (
            "coast/notes.html",
            "<html><body><p>The tide tables list high and low water for each day.</p></body></html>",
        ),
        (
            "kitchen/tea.txt",
            "Green tea is steeped at 80 degrees; the water should not boil like a spring tide.",
        ),
        (
            "sky/moon.md",
            "The moon's pull raises the tide on the near and the far side of the earth.",
        ),
        (
            "sky/moon notes [draft].md",
            "A draft about the moon, the sun and the tide between them.",
        ),
        (
            "travel/jet lag.md",
            "Crossing time zones disrupts the body clock; morning light resets it.",
        ),
    ];
    for (i, (path, text)) in files.into_iter().enumerate() {
        let written = fx.write(path, text);
        // A day apart from 2026-01-01 on, in the order of the list.
        let time = 1_767_225_600 + 86_400 * i as u64;
        std::fs::File::options()
            .write(true)
            .open(&written)
            .and_then(|f| f.set_modified(std::time::UNIX_EPOCH + Duration::from_secs(time)))
            .expect("set the modification time");
    }
    let model = crate::embed::minilm();
    ingest(&fx, "filtered", Some(model.clone()));
    publish_now(&cluster, &fx, "filtered");
    let remote = backend(&cluster, &fx, 0);
    let filters = [
        json!({"paths": ["coast"]}),
        json!({"paths": ["coast/"], "exclude_paths": ["coast/kelp"]}),
        json!({"paths": ["**/*.md"]}),
        json!({"paths": ["sky/moon notes [[]draft].md", "{kitchen,travel}/*"]}),
        json!({"exclude_paths": ["*/*.txt"]}),
        json!({"source_class": ["extracted"]}),
        json!({"format": ["markdown"], "exclude_paths": ["sky/**"]}),
        json!({"document_ids": ["coast/pools.txt", "sky/moon.md"]}),
        json!({"metadata": {"tags": "moon"}}),
        json!({"metadata": {"tags": ["sea", "x"], "draft": false}}),
        json!({"modified_after": "2026-01-03", "modified_before": "2026-01-06T00:00:00Z"}),
        json!({"modified_before": "2026-01-02"}),
        json!({"paths": ["coast/tides.md"]}),
        json!({"modified_before": "2026-01-02", "paths": ["coast"]}),
        json!({"paths": ["nowhere"]}),
    ];
    for filter in filters {
        for mode in [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid] {
            let p = SearchParams {
                filter: Some(serde_json::from_value(filter.clone()).expect("a filter")),
                ..params("tide and moon", mode)
            };
            let answer = remote
                .search("filtered", &p, Some(model.as_ref()))
                .expect("cluster search");
            let expected = local(&fx, "filtered", &p, Some(model.as_ref()));
            let what = format!("{mode:?} {filter}");
            let (l, r) = (ranking(&expected), ranking(&answer));
            assert_eq!(
                l.iter().map(|x| &x.0).collect::<Vec<_>>(),
                r.iter().map(|x| &x.0).collect::<Vec<_>>(),
                "{what}"
            );
            for ((_, a), (_, b)) in l.iter().zip(&r) {
                assert!((a - b).abs() <= 1e-3 * a.abs().max(1e-3), "{what}: {a} {b}");
            }
            if filter["paths"] == json!(["nowhere"]) {
                assert!(answer.results.is_empty(), "{what}");
            }
        }
    }
    let bad: groundkit_retrieval::filter::Filter =
        serde_json::from_value(json!({"paths": ["coast/[x"]})).expect("parsed");
    let err = remote
        .search(
            "filtered",
            &SearchParams {
                filter: Some(bad),
                ..params("tide", SearchMode::Lexical)
            },
            None,
        )
        .expect_err("a malformed glob");
    assert_eq!(err.kind(), "validation_error");
}

#[test]
fn several_collections_in_the_cluster_rank_like_the_local_engine() {
    let cluster = cluster();
    let fx = Fixture::new();
    fx.write(
        "shore/tides.md",
        "Spring tides follow the new and the full moon.",
    );
    fx.write(
        "shore/pools.txt",
        "Tide pools hold anemones; each low tide exposes them.",
    );
    // Notes of different lengths, so that no two score alike (the cluster breaks ties by its
    // own order).
    for i in 0..30 {
        let text = format!("Note {i}: the moon rises{} later.", " quietly".repeat(i));
        fx.write(&format!("sky/note{i}.txt"), text);
    }
    fx.write(
        "sky/tide.md",
        "The moon's pull raises the tide on both sides of the earth.",
    );
    let model = crate::embed::minilm();
    for (name, dir) in [("shore", "shore"), ("sky", "sky")] {
        let input = fx.base.join(dir);
        let mut options: IngestOptions = fx.options(name, &[input.as_path()]);
        options.embedder = Some(model.clone());
        retrieval::ingest(&options, &mut NoProgress).expect("ingest");
        publish_now(&cluster, &fx, name);
    }
    let remote = backend(&cluster, &fx, 1);
    let local = LocalBackend::new(fx.cache());
    let names = ["shore".to_owned(), "sky".to_owned()];
    for filter in [None, Some(json!({"exclude_paths": ["**/pools.txt"]}))] {
        for mode in [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid] {
            let p = SearchParams {
                filter: filter
                    .clone()
                    .map(|f| serde_json::from_value(f).expect("a filter")),
                ..params("tide and moon", mode)
            };
            let answer = remote
                .search_collections(&names, &p, Some(model.as_ref()))
                .expect("cluster search");
            let expected = local
                .search_collections(&names, &p, Some(model.as_ref()))
                .expect("local search");
            let what = format!("{mode:?} {filter:?}");
            assert_same(&expected, &answer, 1e-3, &what);
            let collections = |r: &SearchResponse| -> Vec<Option<String>> {
                r.results.iter().map(|h| h.collection.clone()).collect()
            };
            assert_eq!(collections(&answer), collections(&expected), "{what}");
            assert_eq!(
                answer.metadata.generations, expected.metadata.generations,
                "{what}"
            );
        }
    }
    let missing = ["shore".to_owned(), "nope".to_owned()];
    match remote.search_collections(&missing, &params("tide", SearchMode::Lexical), None) {
        Err(groundkit_core::Error::CollectionNotFound { name }) => assert_eq!(name, "nope"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_new_generation_is_grown_from_the_last_sending_only_the_documents_that_changed() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    let model = crate::embed::minilm();
    ingest(&fx, "grow", Some(model.clone()));
    let first = publish_now(&cluster, &fx, "grow");
    assert_eq!((first.grown_from.as_deref(), first.loaded), (None, 6));
    let remote = backend(&cluster, &fx, 1);
    let kelp = remote
        .search(
            "grow",
            &params("otters kelp urchins", SearchMode::Lexical),
            None,
        )
        .expect("search")
        .results[0]
        .chunk_id
        .clone();

    // One file changed, one new, one gone: two documents sent, two removed from the copy.
    fx.write(
        "tea.txt",
        "Oolong tea is steeped at 90 degrees, several short times.",
    );
    fx.write(
        "reef.md",
        "Coral reefs shelter fish in warm shallow water near the tide line.",
    );
    std::fs::remove_file(fx.base.join("kelp.txt")).expect("delete");
    ingest(&fx, "grow", Some(model.clone()));
    let second = publish_now(&cluster, &fx, "grow");
    assert_eq!(second.grown_from.as_deref(), Some("groundkit-grow--g1"));
    assert_eq!(
        (second.loaded, second.deleted_documents, second.chunks),
        (2, 2, 6)
    );
    assert_holds_the_generation(&fx, &remote, model.as_ref());
    let gone = remote
        .fetch_chunk("grow", &kelp)
        .expect("the old generation keeps it");
    assert!(gone.superseded);
    let status = remote.index_status("grow", None).expect("status");
    assert_eq!((status.generation, status.document_count), (2, 6));

    // An index of an earlier layout is not grown from: every chunk is loaded once, and the
    // next generation grows from that one.
    let port = cluster.http[0];
    let call = |method: &str, path: &str, body: serde_json::Value| -> serde_json::Value {
        let (status, answer) = http(port, method, path, &body.to_string()).expect("the cluster");
        assert_eq!(status, 200, "{method} {path}: {answer}");
        serde_json::from_str(&answer).expect("JSON")
    };
    let index = "groundkit-grow--g2";
    let mapping = call("GET", &format!("/{index}/_mapping"), json!({}));
    let mut meta = mapping[index]["mappings"]["_meta"].clone();
    meta["groundkit"]["layout"] = json!(2);
    let settings = format!("/{index}/_settings");
    call("PUT", &settings, json!({ "index.blocks.write": false }));
    call(
        "PUT",
        &format!("/{index}/_mapping"),
        json!({ "_meta": meta }),
    );
    call("PUT", &settings, json!({ "index.blocks.write": true }));
    fx.write("moon.md", "The moon turns the same face to the earth.");
    ingest(&fx, "grow", Some(model.clone()));
    let third = publish_now(&cluster, &fx, "grow");
    assert_eq!((third.grown_from, third.loaded), (None, 6));
    fx.write(
        "travel.md",
        "Jet lag fades by a day for each time zone crossed.",
    );
    ingest(&fx, "grow", Some(model.clone()));
    let fourth = publish_now(&cluster, &fx, "grow");
    assert_eq!(
        (
            fourth.grown_from.as_deref(),
            fourth.loaded,
            fourth.deleted_documents
        ),
        (Some("groundkit-grow--g3"), 1, 1)
    );
    assert_holds_the_generation(&fx, &remote, model.as_ref());

    // A change of embedder loads every chunk again.
    let mut options: IngestOptions = fx.options("grow", &[&fx.base]);
    options.drop_vectors = true;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    let fifth = publish_now(&cluster, &fx, "grow");
    assert_eq!((fifth.grown_from, fifth.loaded), (None, 6));
}

/// The cluster holds the local generation of collection "grow" exactly: every chunk, current and
/// verified as the local engine verifies it; the same chunks found for each query (the scores of
/// a grown index count its deleted chunks until the cluster merges them away, as the local
/// engine's count its own, so the order is compared where it does not depend on them: dense).
fn assert_holds_the_generation(fx: &Fixture, remote: &ClusterBackend, model: &dyn Embedder) {
    let local_backend = LocalBackend::new(fx.cache());
    for chunk_id in fx.chunk_ids("grow") {
        let expected = local_backend
            .fetch_chunk("grow", &chunk_id)
            .expect("local fetch");
        let answer = remote
            .fetch_chunk("grow", &chunk_id)
            .expect("cluster fetch");
        assert!(!answer.superseded, "{chunk_id}");
        assert_eq!(answer.verification, Verification::Verified, "{chunk_id}");
        assert_eq!(
            (&answer.citation, &answer.content),
            (&expected.citation, &expected.content)
        );
    }
    for query in QUERIES
        .iter()
        .chain(&["oolong tea", "coral reef fish", "jet lag"])
    {
        let p = params(query, SearchMode::Dense);
        let answer = remote
            .search("grow", &p, Some(model))
            .expect("cluster search");
        assert_same(&local(fx, "grow", &p, Some(model)), &answer, 1e-3, query);
        let p = params(query, SearchMode::Lexical);
        let mut found = ranking(&remote.search("grow", &p, None).expect("cluster search"));
        let mut expected = ranking(&local(fx, "grow", &p, None));
        found.sort_by(|a, b| a.0.cmp(&b.0));
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            found.iter().map(|c| &c.0).collect::<Vec<_>>(),
            expected.iter().map(|c| &c.0).collect::<Vec<_>>(),
            "{query}"
        );
    }
}
