//! The HNSW graph of a large generation: built by the ingest, published with the generation,
//! used by dense search and reported by `index_status`; its recall against exact search, and its
//! file checked when it is read.

use std::path::Path;

use groundkit_retrieval::vectors::graph::{self, Graph, exact_nearest};
use groundkit_retrieval::{
    self as retrieval, DenseIndex, IngestOptions, NoProgress, SearchMode, SearchParams,
};

use super::Fixture;
use crate::embed::minilm;

const NOTES: &[(&str, &str)] = &[
    (
        "travel.md",
        "Crossing time zones disrupts the circadian rhythm; morning daylight resets it.",
    ),
    (
        "tea.txt",
        "Green tea is steeped at 80 degrees for two minutes.",
    ),
    (
        "bikes.md",
        "Clean the bicycle chain, then oil each link sparingly.",
    ),
    (
        "bm25.md",
        "BM25 ranks documents by the query terms they contain.",
    ),
    (
        "bread.md",
        "Knead the dough until it springs back, then let it rise for an hour.",
    ),
    (
        "tides.md",
        "Tides follow the moon: two highs and two lows a day on most coasts.",
    ),
    (
        "sleep.md",
        "Adults need seven to nine hours of sleep; naps help after a short night.",
    ),
    (
        "rust.md",
        "The borrow checker rejects a mutable and a shared reference at once.",
    ),
];

fn generation_dir(index: &Path, collection: &str) -> std::path::PathBuf {
    let tantivy = index.join(format!("{collection}.tantivy"));
    let mut published: Vec<_> = std::fs::read_dir(&tantivy)
        .expect("generations")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_none())
        .collect();
    assert_eq!(
        published.len(),
        1,
        "one published generation: {published:?}"
    );
    published.pop().expect("one")
}

fn ingest(fx: &Fixture, collection: &str, graph_min_vectors: usize) -> retrieval::IngestSummary {
    let mut options: IngestOptions = fx.options(collection, &[&fx.base]);
    options.embedder = Some(minilm());
    options.graph_min_vectors = graph_min_vectors;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest")
}

#[test]
fn a_generation_at_the_threshold_searches_through_its_graph_and_says_so() {
    let fx = Fixture::new();
    for (name, text) in NOTES {
        fx.write(name, text);
    }
    let count = NOTES.len();
    ingest(&fx, "exact", count + 1);
    ingest(&fx, "graph", count);
    assert!(
        !generation_dir(&fx.index, "exact")
            .join("vectors.hnsw")
            .exists()
    );
    assert!(
        generation_dir(&fx.index, "graph")
            .join("vectors.hnsw")
            .is_file()
    );

    let embedder = minilm();
    let cache = fx.cache();
    for (collection, expected) in [("exact", DenseIndex::Exact), ("graph", DenseIndex::Hnsw)] {
        let open = cache.acquire(collection).expect("open");
        let status =
            retrieval::index_status(&open, &cache, Some(embedder.as_ref())).expect("status");
        assert_eq!(status.dense_index, Some(expected), "{collection}");
        assert!(status.dense_search_available);
    }
    // Eight vectors: the graph links every one to every other, so its answers are the exact
    // ones, in the same order. The two collections were embedded by separate ingests, whose
    // writer threads can hand the chunks to the embedder in different orders; a chunk's layers
    // are then computed by the few-rows kernel or by `gemm` depending on its batch's size, so
    // its vector (and score) can differ in the last bits between the collections.
    for query in [
        "what helps with jet lag",
        "baking",
        "ocean and moon",
        "memory safety",
    ] {
        let [exact, approximate] = ["exact", "graph"].map(|c| dense(&cache, c, query, 5));
        assert_eq!(sources(&exact), sources(&approximate), "{query}");
        for (e, a) in exact.results.iter().zip(&approximate.results) {
            assert!(
                (e.score - a.score).abs() < 1e-6,
                "{query}: {} scores {} exactly and {} through the graph",
                e.citation.source,
                e.score,
                a.score
            );
        }
        assert_eq!(approximate.results.len(), 5);
    }

    // An edit makes a new generation with a new graph; only the edited chunk is embedded.
    fx.write("tea.txt", "Black tea wants boiling water and four minutes.");
    let summary = ingest(&fx, "graph", count);
    assert_eq!(
        (summary.embedded, summary.reused_vectors),
        (1, count as u64 - 1)
    );
    assert!(
        generation_dir(&fx.index, "graph")
            .join("vectors.hnsw")
            .is_file()
    );
    let open = fx.cache().acquire("graph").expect("open");
    let params = SearchParams {
        query: "brewing black tea".to_owned(),
        top_k: 1,
        mode: SearchMode::Dense,
        fusion: Default::default(),
        filter: None,
    };
    let hit = retrieval::search(&open, &params, Some(embedder.as_ref())).expect("dense");
    assert_eq!(hit.results[0].citation.source, "tea.txt");
    assert!(hit.results[0].text().starts_with("Black tea"));
}

/// Notes beside [`NOTES`], so a graph has enough entries for one edit to be a small part of it.
const MORE_NOTES: &[(&str, &str)] = &[
    (
        "garden.md",
        "Tomatoes want six hours of sun and deep, rare watering.",
    ),
    (
        "chess.md",
        "Control the centre early and castle before the middlegame.",
    ),
    (
        "coffee.md",
        "Espresso is brewed at nine bars in under thirty seconds.",
    ),
    (
        "running.md",
        "Build weekly mileage by no more than a tenth at a time.",
    ),
    (
        "git.md",
        "A rebase rewrites commits onto a new base; a merge keeps both histories.",
    ),
    (
        "stars.md",
        "A red giant is a star that has exhausted the hydrogen in its core.",
    ),
    (
        "knots.md",
        "A bowline makes a fixed loop that does not slip under load.",
    ),
    (
        "violin.md",
        "Rosin the bow before playing so the strings grip the hair.",
    ),
    (
        "paint.md",
        "Sand between coats of varnish for a smooth finish.",
    ),
    (
        "birds.md",
        "Swifts sleep on the wing and land only to nest.",
    ),
    (
        "tax.md",
        "Keep receipts for deductible expenses for at least five years.",
    ),
    (
        "sql.md",
        "An index speeds up reads of a column at the cost of slower writes.",
    ),
];

fn graph_file(index: &Path, collection: &str) -> std::path::PathBuf {
    generation_dir(index, collection).join("vectors.hnsw")
}

fn sources(response: &retrieval::SearchResponse) -> Vec<String> {
    response
        .results
        .iter()
        .map(|h| h.citation.source.clone())
        .collect()
}

fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).expect("graph file").ino()
}

fn dense(
    cache: &retrieval::CollectionCache,
    collection: &str,
    query: &str,
    top_k: u32,
) -> retrieval::SearchResponse {
    let params = SearchParams {
        query: query.to_owned(),
        top_k,
        mode: SearchMode::Dense,
        fusion: Default::default(),
        filter: None,
    };
    let open = cache.acquire(collection).expect("open");
    retrieval::search(&open, &params, Some(minilm().as_ref())).expect("dense")
}

#[test]
fn an_edit_carries_the_graph_and_searches_what_it_lacks_exactly() {
    let fx = Fixture::new();
    for (name, text) in NOTES.iter().chain(MORE_NOTES) {
        fx.write(name, text);
    }
    // A copy: the same input, so one entry of the graph for two chunks.
    let bread = NOTES
        .iter()
        .find(|(name, _)| *name == "bread.md")
        .expect("bread")
        .1;
    fx.write("bread-copy.md", bread);
    let rows = NOTES.len() + MORE_NOTES.len() + 1;
    let built = ingest(&fx, "graph", rows);
    assert_eq!(built.vector_graph, retrieval::VectorGraph::Built);
    let file = graph_file(&fx.index, "graph");
    let (_, keys) = Graph::read_keys(std::fs::File::open(&file).expect("graph"))
        .expect("keys")
        .expect("current format");
    assert_eq!(keys.len(), rows - 1, "one entry per input");
    let (first_inode, first_bytes) = (inode(&file), std::fs::read(&file).expect("graph"));
    // A server with the first generation open: the next one shares its graph in memory.
    let cache = fx.cache();
    assert_eq!(
        dense(&cache, "graph", "brewing green tea", 1).results.len(),
        1
    );

    // One edit: the chunk is embedded, the graph carried (the same file, linked) and the new
    // chunk searched exactly beside it; the old text, still in the graph, is never an answer.
    fx.write("tea.txt", "Black tea wants boiling water and four minutes.");
    let carried = ingest(&fx, "graph", rows);
    assert_eq!(carried.vector_graph, retrieval::VectorGraph::Carried);
    assert_eq!(
        (carried.embedded, carried.reused_vectors),
        (1, rows as u64 - 1)
    );
    let file = graph_file(&fx.index, "graph");
    assert_eq!(
        inode(&file),
        first_inode,
        "the previous generation's file, linked"
    );
    assert_eq!(std::fs::read(&file).expect("graph"), first_bytes);
    let open = fx.cache().acquire("graph").expect("open");
    let status =
        retrieval::index_status(&open, &fx.cache(), Some(minilm().as_ref())).expect("status");
    assert_eq!(status.dense_index, Some(DenseIndex::Hnsw));

    let hit = dense(&cache, "graph", "brewing black tea", 1);
    assert_eq!(hit.results[0].citation.source, "tea.txt");
    assert!(hit.results[0].text().starts_with("Black tea"));
    let everything = dense(
        &cache,
        "graph",
        "green tea steeped at 80 degrees",
        rows as u32,
    );
    assert_eq!(everything.results.len(), rows, "every chunk, once");
    assert!(
        everything
            .results
            .iter()
            .all(|h| !h.text().starts_with("Green tea")),
        "the replaced chunk is not an answer"
    );
    // Both chunks of the shared entry are found.
    let baking = dense(&cache, "graph", "kneading dough and letting it rise", 2);
    let mut baked: Vec<_> = baking
        .results
        .iter()
        .map(|h| h.citation.source.as_str())
        .collect();
    baked.sort_unstable();
    assert_eq!(baked, ["bread-copy.md", "bread.md"]);

    // The same answers as exact search over the same files.
    ingest(&fx, "exact", rows + 1);
    for query in [
        "what helps with jet lag",
        "brewing black tea",
        "ocean and moon",
        "databases",
    ] {
        let [exact, approximate] = ["exact", "graph"].map(|c| dense(&cache, c, query, 5));
        assert_eq!(sources(&exact), sources(&approximate), "{query}");
    }

    // Three files removed: more than a tenth of the graph's entries are nobody's now, so the
    // next generation gets a graph of its own.
    for name in ["chess.md", "knots.md", "tax.md"] {
        std::fs::remove_file(fx.base.join(name)).expect("remove");
    }
    let rebuilt = ingest(&fx, "graph", rows - 3);
    assert_eq!(rebuilt.vector_graph, retrieval::VectorGraph::Built);
    let file = graph_file(&fx.index, "graph");
    assert_ne!(inode(&file), first_inode, "a new graph");
    let (_, keys) = Graph::read_keys(std::fs::File::open(&file).expect("graph"))
        .expect("keys")
        .expect("current format");
    assert_eq!(keys.len(), rows - 4);
}

/// Deterministic clustered unit vectors (SplitMix64, Box-Muller), row after row.
fn clustered(count: usize, dimension: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 + 1e-7
    };
    let mut normal = move || {
        let (u, v) = (next(), next());
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    };
    let centres: Vec<f32> = (0..50 * dimension).map(|_| normal()).collect();
    let mut out = Vec::with_capacity(count * dimension);
    for i in 0..count {
        let centre = &centres[(i % 50) * dimension..(i % 50 + 1) * dimension];
        let mut v: Vec<f32> = centre.iter().map(|c| c + 0.6 * normal()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        out.extend(v);
    }
    out
}

#[test]
fn the_graph_finds_the_exact_nearest_and_survives_its_file_format() {
    let (count, dimension) = (3_000, 32);
    let rows = clustered(count, dimension, 1);
    let queries = clustered(100, dimension, 2);
    let key = |entry: usize| (entry as u128).to_le_bytes();
    let graph = Graph::build(
        rows.chunks_exact(dimension)
            .enumerate()
            .map(|(entry, vector)| (key(entry), vector)),
        dimension,
    );
    assert_eq!(graph.len(), count);
    assert_eq!(
        graph.vector(1234),
        &rows[1234 * dimension..1235 * dimension]
    );
    assert_eq!(graph.keys()[1234], key(1234));
    let mut bytes = Vec::new();
    graph.write_to(&mut bytes).expect("write");
    let reread = Graph::read_from(bytes.as_slice(), dimension)
        .expect("read")
        .expect("the current format");
    let (read_dimension, keys) = Graph::read_keys(bytes.as_slice())
        .expect("read the keys")
        .expect("the current format");
    assert_eq!((read_dimension, keys.as_slice()), (dimension, graph.keys()));

    let mut found = 0;
    for query in queries.chunks_exact(dimension) {
        let exact = exact_nearest(&rows, dimension, query, 10);
        let approximate = graph.nearest(query, 10);
        assert_eq!(
            approximate,
            reread.nearest(query, 10),
            "the file holds the same graph"
        );
        assert_eq!(approximate.len(), 10);
        assert!(
            approximate.windows(2).all(|w| w[0].0 >= w[1].0),
            "best first"
        );
        for (score, row) in &approximate {
            let at = *row as usize * dimension;
            let cosine: f32 = rows[at..at + dimension]
                .iter()
                .zip(query)
                .map(|(a, b)| a * b)
                .sum();
            assert!((cosine - score).abs() < 1e-5, "the score is the cosine");
        }
        found += approximate
            .iter()
            .filter(|(_, row)| exact.iter().any(|(_, r)| r == row))
            .count();
    }
    let recall = found as f64 / 1000.0;
    assert!(recall >= 0.95, "recall@10 {recall}");
    // The most a search returns (at least the deepest search the service makes: a compile-time
    // assertion in `retrieval::search`).
    let deep = graph.nearest(&queries[..dimension], usize::MAX);
    assert_eq!(deep.len(), graph::EF_SEARCH);

    for (bytes, dimension, what) in [
        (&bytes[..], dimension + 1, "another dimension"),
        (&bytes[..bytes.len() / 2], dimension, "truncated"),
        (&b"GRKVEC01 not a graph"[..], dimension, "another file"),
    ] {
        let err = Graph::read_from(bytes, dimension).expect_err(what);
        assert_eq!(err.kind(), "storage_error", "{what}");
    }
    // A graph of the earlier format, whose entries were rows, is not read: its generation is
    // searched exactly until an ingest builds a graph again.
    let mut earlier = b"GRKHNSW1".to_vec();
    earlier.extend_from_slice(&bytes[8..]);
    assert!(
        Graph::read_from(earlier.as_slice(), dimension)
            .expect("read")
            .is_none()
    );
    assert!(
        Graph::read_keys(earlier.as_slice())
            .expect("read")
            .is_none()
    );
}
