//! Filtered search is exact: over a generated corpus, every filter (paths kept and left out,
//! prefixes and globs, source classes, formats, document ids, and their combinations) returns in
//! `lexical`, `dense` and `hybrid` mode exactly the best of the chunks that pass, scored as the
//! unfiltered search scores them; which chunks pass is decided here by hand-written rules, not by
//! the filter code. Through an HNSW graph, a selective filter is answered exactly.

use std::collections::HashSet;
use std::sync::Arc;

use groundkit_core::Error;
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::filter::Filter;
use groundkit_retrieval::{
    self as retrieval, Fusion, MAX_RANK_DEPTH, NoProgress, SearchMode, SearchParams, SearchResponse,
};
use serde_json::json;

use super::Fixture;
use crate::embed::minilm;

const WORDS: [&str; 16] = [
    "tide", "harbour", "socket", "packet", "lantern", "glacier", "compiler", "orchard", "ferry",
    "router", "meadow", "kernel", "beacon", "quarry", "signal", "pebble",
];

const DIRS: [&str; 6] = [
    "src/net",
    "src/net/tcp",
    "src/network",
    "docs",
    "docs/guide",
    "notes",
];

const EXTENSIONS: [&str; 4] = ["md", "txt", "yml", "html"];

/// A small deterministic generator (xorshift), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// 96 files over the directories and extensions, each of a few sentences of [`WORDS`], cut into
/// chunks of at most 160 bytes.
fn corpus(rng: &mut Rng) -> Fixture {
    let fx = Fixture::new();
    for i in 0..96 {
        let dir = DIRS[i % DIRS.len()];
        let ext = EXTENSIONS[(i / DIRS.len()) % EXTENSIONS.len()];
        let mut text = String::new();
        for _ in 0..(2 + rng.below(5)) {
            let sentence: Vec<&str> = (0..(4 + rng.below(6)))
                .map(|_| WORDS[rng.below(WORDS.len())])
                .collect();
            text.push_str(&sentence.join(" "));
            text.push_str(". ");
        }
        let body = if ext == "html" {
            format!("<html><body><p>{text}</p></body></html>")
        } else {
            text
        };
        fx.write(&format!("{dir}/f{i}.{ext}"), body);
    }
    fx
}

fn ingest(fx: &Fixture, collection: &str, embedder: Arc<dyn Embedder>, graph_min: usize) {
    let mut options = fx.options(collection, &[&fx.base]);
    options.max_chunk_bytes = 160;
    options.embedder = Some(embedder);
    options.graph_min_vectors = graph_min;
    let summary = retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
}

fn search(
    fx: &Fixture,
    collection: &str,
    query: &str,
    top_k: u32,
    mode: SearchMode,
    filter: Option<Filter>,
) -> Result<SearchResponse, Error> {
    let open = fx.cache().acquire(collection).expect("open");
    let params = SearchParams {
        query: query.to_owned(),
        top_k,
        mode,
        fusion: Default::default(),
        filter,
    };
    retrieval::search(&open, &params, Some(minilm().as_ref() as &dyn Embedder))
}

/// A chunk as the comparison sees it: its id, its source, its document, its score.
type Hit = (String, String, String, f32);

fn hits(response: &SearchResponse) -> Vec<Hit> {
    response
        .results
        .iter()
        .map(|r| {
            (
                r.chunk_id.clone(),
                r.citation.source.clone(),
                r.document_id.clone(),
                r.score,
            )
        })
        .collect()
}

/// Whether a chunk of `source` in document `document` passes: decided without the filter code.
type Rule = Box<dyn Fn(&str, &str) -> bool>;

fn under(dir: &'static str) -> impl Fn(&str) -> bool {
    move |s: &str| s == dir || s.starts_with(&format!("{dir}/"))
}

/// One condition of a filter, with its rule.
fn conditions(documents: &[String]) -> Vec<(&'static str, serde_json::Value, Rule)> {
    let picked: HashSet<String> = documents.iter().step_by(7).cloned().collect();
    let picked_list: Vec<String> = picked.iter().cloned().collect();
    vec![
        (
            "paths",
            json!(["src/net"]),
            Box::new(|s: &str, _: &str| under("src/net")(s)),
        ),
        (
            "paths",
            json!(["src/net/tcp/", "notes"]),
            Box::new(|s: &str, _: &str| s.starts_with("src/net/tcp/") || under("notes")(s)),
        ),
        (
            "paths",
            json!(["**/*.md"]),
            Box::new(|s: &str, _: &str| s.ends_with(".md")),
        ),
        (
            "paths",
            json!(["docs/*.txt", "{src,notes}/**/*.yml"]),
            Box::new(|s: &str, _: &str| {
                (s.starts_with("docs/") && s.ends_with(".txt") && s[5..].find('/').is_none())
                    || ((s.starts_with("src/") || s.starts_with("notes/")) && s.ends_with(".yml"))
            }),
        ),
        (
            "exclude_paths",
            json!(["src/**"]),
            Box::new(|s: &str, _: &str| !s.starts_with("src/")),
        ),
        (
            "exclude_paths",
            json!(["docs/guide", "*/*.html"]),
            Box::new(|s: &str, _: &str| {
                let top_level_html = s.matches('/').count() == 1 && s.ends_with(".html");
                !(under("docs/guide")(s) || top_level_html)
            }),
        ),
        (
            "source_class",
            json!(["extracted"]),
            Box::new(|s: &str, _: &str| s.ends_with(".html")),
        ),
        (
            "format",
            json!(["markdown", "yaml"]),
            Box::new(|s: &str, _: &str| s.ends_with(".md") || s.ends_with(".yml")),
        ),
        (
            "document_ids",
            json!(picked_list),
            Box::new(move |_: &str, d: &str| picked.contains(d)),
        ),
    ]
}

#[test]
fn filtered_search_returns_exactly_the_best_passing_chunks_in_every_mode() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let fx = corpus(&mut rng);
    ingest(&fx, "c", minilm(), usize::MAX);
    let everything = |query: &str, mode| {
        let all = search(&fx, "c", query, MAX_RANK_DEPTH, mode, None).expect("unfiltered");
        hits(&all)
    };
    let all_lexical = everything("tide socket", SearchMode::Lexical);
    let mut documents: Vec<String> = all_lexical.iter().map(|h| h.2.clone()).collect();
    documents.sort();
    documents.dedup();
    let singles = conditions(&documents);
    // Every condition alone, and random pairs of conditions on different fields.
    let n = singles.len();
    let mut picks: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    while picks.len() < n + 12 {
        let (a, b) = (rng.below(n), rng.below(n));
        if singles[a].0 != singles[b].0 {
            picks.push(vec![a, b]);
        }
    }
    let mut passing_counts = Vec::new();
    for pick in &picks {
        let mut filter = serde_json::Map::new();
        for &i in pick {
            filter.insert(singles[i].0.to_owned(), singles[i].1.clone());
        }
        let filter: Filter = serde_json::from_value(json!(filter)).expect("a filter");
        let keeps = |s: &str, d: &str| pick.iter().all(|&i| (singles[i].2)(s, d));
        for query in ["tide socket", "glacier meadow lantern", "compiler"] {
            for mode in [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid] {
                let full = everything(query, mode);
                for k in [1usize, 5, 20] {
                    let got = search(&fx, "c", query, k as u32, mode, Some(filter.clone()))
                        .expect("filtered search");
                    let expected: Vec<Hit> = match mode {
                        SearchMode::Hybrid => {
                            let lexical = everything(query, SearchMode::Lexical);
                            let dense = everything(query, SearchMode::Dense);
                            fused(&lexical, &dense, &keeps, k)
                        }
                        _ => full
                            .iter()
                            .filter(|(_, s, d, _)| keeps(s, d))
                            .take(k)
                            .cloned()
                            .collect(),
                    };
                    assert_eq!(hits(&got), expected, "{filter:?} {query:?} {mode:?} k {k}");
                    if k == 20 && mode == SearchMode::Lexical {
                        passing_counts.push(expected.len());
                    }
                }
            }
        }
    }
    // The filters range from selective to broad, and some keep nothing a query matches.
    assert!(passing_counts.contains(&20), "{passing_counts:?}");
    assert!(passing_counts.iter().any(|&n| n < 20), "{passing_counts:?}");
}

/// The hybrid ranking of the passing chunks of two full rankings, as a search fuses them.
fn fused(lexical: &[Hit], dense: &[Hit], keeps: &dyn Fn(&str, &str) -> bool, k: usize) -> Vec<Hit> {
    let fusion = Fusion::default();
    let (lexical_depth, dense_depth) = fusion.depths(k);
    let pass = |ranking: &[Hit], depth: usize| -> Vec<(f32, usize)> {
        ranking
            .iter()
            .enumerate()
            .filter(|(_, (_, s, d, _))| keeps(s, d))
            .take(depth)
            .map(|(i, h)| (h.3, i))
            .collect()
    };
    let lexical_ids: Vec<(f32, &str)> = pass(lexical, lexical_depth)
        .into_iter()
        .map(|(score, i)| (score, lexical[i].0.as_str()))
        .collect();
    let dense_ids: Vec<(f32, &str)> = pass(dense, dense_depth)
        .into_iter()
        .map(|(score, i)| (score, dense[i].0.as_str()))
        .collect();
    let by_id = |id: &str| {
        lexical
            .iter()
            .chain(dense)
            .find(|h| h.0 == id)
            .cloned()
            .expect("a ranked chunk")
    };
    fusion
        .fuse(&lexical_ids, &dense_ids, k)
        .into_iter()
        .map(|(score, id)| {
            let (chunk, source, document, _) = by_id(id);
            (chunk, source, document, score)
        })
        .collect()
}

#[test]
fn through_the_graph_a_selective_filter_is_answered_exactly() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let fx = corpus(&mut rng);
    ingest(&fx, "exact", minilm(), usize::MAX);
    ingest(&fx, "graph", minilm(), 1);
    let status = |name| {
        retrieval::index_status(&fx.cache().acquire(name).expect("open"), &fx.cache(), None)
            .expect("status")
            .dense_index
    };
    assert_eq!(status("exact"), Some(retrieval::model::DenseIndex::Exact));
    assert_eq!(status("graph"), Some(retrieval::model::DenseIndex::Hnsw));
    // Two files of chunks: fewer than the 20 asked for, so no graph candidate list holds them.
    let filter: Filter =
        serde_json::from_value(json!({"paths": ["notes/f5.md", "docs/f3.md"]})).expect("filter");
    for query in ["tide socket", "glacier meadow lantern"] {
        let graph = search(
            &fx,
            "graph",
            query,
            20,
            SearchMode::Dense,
            Some(filter.clone()),
        )
        .expect("graph");
        let exact = search(
            &fx,
            "exact",
            query,
            20,
            SearchMode::Dense,
            Some(filter.clone()),
        )
        .expect("exact");
        assert!(!graph.results.is_empty());
        assert!(graph.results.iter().all(|r| {
            let s = &r.citation.source;
            s == "notes/f5.md" || s == "docs/f3.md"
        }));
        assert_eq!(hits(&graph), hits(&exact), "{query}");
    }
}

/// Sets the modification time of `path` to midnight UTC of day `date` (`YYYY-MM-DD`).
fn set_modified(path: &std::path::Path, unix_seconds: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open to set its time");
    file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_seconds))
        .expect("set the modification time");
}

#[test]
fn modification_times_and_front_matter_filter_exactly() {
    const DAY: u64 = 86_400;
    // 2026-01-01, 2026-06-01, 2026-09-01, 2026-11-01 at midnight UTC.
    let (jan, jun, sep, nov) = (1_767_225_600, 1_780_272_000, 1_788_220_800, 1_793_491_200);
    let fx = Fixture::new();
    let files = [
        (
            "a.md",
            "---\ntitle: Harbour tides\ntags: [rust, cli]\ndraft: false\nrevision: 3\n---\n\
             The harbour tide tables.\n",
            jan,
        ),
        (
            "b.md",
            "+++\ntags = [\"tea\"]\ndraft = true\n+++\nA harbour cafe serves tea at high tide.\n",
            jun,
        ),
        (
            "c.md",
            "The harbour master reads the tide each morning.\n",
            sep,
        ),
        (
            "d.txt",
            "---\ntags: [rust]\n---\nNot Markdown: the harbour tide has no front matter here.\n",
            nov,
        ),
    ];
    for (name, text, time) in files {
        let path = fx.write(name, text);
        set_modified(&path, time);
    }
    fx.ingest_all("c");
    let found = |filter: serde_json::Value| -> Vec<String> {
        let filter: Filter = serde_json::from_value(filter).expect("a filter");
        let answer = search(
            &fx,
            "c",
            "harbour tide",
            10,
            SearchMode::Lexical,
            Some(filter),
        )
        .expect("search");
        let mut sources: Vec<String> = answer
            .results
            .into_iter()
            .map(|r| r.citation.source)
            .collect();
        sources.sort();
        sources
    };
    let cases = [
        (json!({"metadata": {"tags": "rust"}}), &["a.md"][..]),
        (
            json!({"metadata": {"tags": ["tea", "cli"]}}),
            &["a.md", "b.md"],
        ),
        (json!({"metadata": {"draft": false}}), &["a.md"]),
        (
            json!({"metadata": {"draft": true, "tags": "tea"}}),
            &["b.md"],
        ),
        (json!({"metadata": {"revision": 3}}), &["a.md"]),
        (json!({"metadata": {"title": "Harbour tides"}}), &["a.md"]),
        (json!({"metadata": {"title": "harbour tides"}}), &[]),
        (
            json!({"modified_after": "2026-06-01"}),
            &["b.md", "c.md", "d.txt"],
        ),
        (json!({"modified_before": "2026-06-01"}), &["a.md"]),
        (
            json!({"modified_after": "2026-06-01T00:00:01Z", "modified_before": "2026-11-01"}),
            &["c.md"],
        ),
        (
            json!({"modified_after": "2026-05-31", "format": ["markdown"], "metadata": {"draft": true}}),
            &["b.md"],
        ),
    ];
    for (filter, expected) in cases {
        assert_eq!(found(filter.clone()), expected, "{filter}");
    }
    // The time is the file's when ingest read its content: an unchanged file keeps it.
    set_modified(&fx.base.join("a.md"), nov + DAY);
    fx.ingest_all("c");
    assert_eq!(found(json!({"modified_before": "2026-06-01"})), ["a.md"]);
    // A changed file is read again, with its new time and front matter.
    let path = fx.write(
        "a.md",
        "---\ntags: [go]\n---\nThe harbour tide, rewritten.\n",
    );
    set_modified(&path, nov + DAY);
    fx.ingest_all("c");
    assert_eq!(found(json!({"modified_after": "2026-11-02"})), ["a.md"]);
    assert_eq!(
        found(json!({"metadata": {"tags": "rust"}})),
        Vec::<String>::new()
    );
    assert_eq!(found(json!({"metadata": {"tags": "go"}})), ["a.md"]);
}
