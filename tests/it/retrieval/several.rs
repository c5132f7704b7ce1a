//! Several collections searched as one rank their chunks as one collection holding them all
//! would: the same chunks, the same scores, in every mode. A collection's size alone does not
//! lift its hits: the same text scores the same in a collection of three notes and in one of
//! three hundred.

use std::sync::Arc;

use groundkit_core::Error;
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::{
    self as retrieval, Backend, LocalBackend, MAX_RANK_DEPTH, NoProgress, SearchMode, SearchParams,
    SearchResponse,
};

use super::Fixture;
use crate::embed::minilm;

const WORDS: [&str; 12] = [
    "tide", "harbour", "socket", "packet", "lantern", "glacier", "compiler", "orchard", "ferry",
    "router", "meadow", "kernel",
];

/// Notes of a few sentences of [`WORDS`], `count` of them under `dir`.
fn notes(fx: &Fixture, dir: &str, count: usize, seed: u64) {
    notes_of(fx, dir, count, seed, &WORDS);
}

/// Notes of `words`, `count` of them under `dir`.
fn notes_of(fx: &Fixture, dir: &str, count: usize, seed: u64, words: &[&str]) {
    let mut state = seed;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for i in 0..count {
        let text: Vec<&str> = (0..(6 + next(30)))
            .map(|_| words[next(words.len())])
            .collect();
        fx.write(&format!("{dir}/n{i}.txt"), text.join(" "));
    }
}

fn ingest(fx: &Fixture, name: &str, dirs: &[&str], embedder: &Arc<dyn Embedder>) {
    let inputs: Vec<std::path::PathBuf> = dirs.iter().map(|d| fx.base.join(d)).collect();
    let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    let mut options = fx.options(name, &inputs);
    options.embedder = Some(embedder.clone());
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");
}

fn params(query: &str, mode: SearchMode, top_k: u32) -> SearchParams {
    SearchParams {
        query: query.to_owned(),
        top_k,
        mode,
        fusion: Default::default(),
        filter: None,
    }
}

/// Every hit as `(chunk id, score)`, ordered by id: a whole ranking as a set.
fn hits(response: &SearchResponse) -> Vec<(String, f32)> {
    let mut hits: Vec<(String, f32)> = response
        .results
        .iter()
        .map(|r| (r.chunk_id.clone(), r.score))
        .collect();
    hits.sort_by(|a, b| a.0.cmp(&b.0));
    hits
}

#[test]
fn two_collections_searched_as_one_rank_like_one_collection_holding_both() {
    let fx = Fixture::new();
    notes(&fx, "a", 40, 0x51);
    notes(&fx, "b", 120, 0x9e37);
    let embedder: Arc<dyn Embedder> = minilm();
    ingest(&fx, "a", &["a"], &embedder);
    ingest(&fx, "b", &["b"], &embedder);
    ingest(&fx, "both", &["a", "b"], &embedder);
    let backend = LocalBackend::new(fx.cache());
    let names = ["a".to_owned(), "b".to_owned()];
    for query in ["tide socket", "glacier meadow lantern ferry", "kernel"] {
        for mode in [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid] {
            let p = params(query, mode, MAX_RANK_DEPTH);
            let several = backend
                .search_collections(&names, &p, Some(embedder.as_ref()))
                .expect("several");
            let one = backend
                .search("both", &p, Some(embedder.as_ref()))
                .expect("one");
            let (got, expected) = (hits(&several), hits(&one));
            if mode == SearchMode::Lexical {
                // The same statistics: the same scores to the bit, hence the same order.
                assert_eq!(got, expected, "{mode:?} {query}");
                let order =
                    |r: &SearchResponse| r.results.iter().map(|h| h.score).collect::<Vec<_>>();
                assert_eq!(order(&several), order(&one), "{query}");
            } else {
                // Vectors of separate ingests differ in the last bits (texts batched apart).
                assert_eq!(got.len(), expected.len(), "{mode:?} {query}");
                for ((a, x), (b, y)) in got.iter().zip(&expected) {
                    assert_eq!(a, b, "{mode:?} {query}");
                    assert!((x - y).abs() < 1e-4, "{mode:?} {query}: {x} {y}");
                }
            }
            assert!(!several.results.is_empty());
            for hit in &several.results {
                let expected = &hit.citation.source[..1];
                assert_eq!(
                    hit.collection.as_deref(),
                    Some(expected),
                    "{mode:?} {query}"
                );
            }
            let generations = &several.metadata.generations;
            assert_eq!(generations.get("a"), Some(&1));
            assert_eq!(
                several.metadata.generation,
                generations.values().sum::<u64>()
            );
        }
    }
}

#[test]
fn a_collections_size_alone_does_not_lift_its_hits() {
    let fx = Fixture::new();
    let note = "harbour ferry timetables change with the tide";
    fx.write("small/copy.txt", note);
    fx.write("small/other.txt", "orchard meadow kernel");
    notes_of(
        &fx,
        "large",
        300,
        0x77,
        &["orchard", "meadow", "kernel", "lantern", "glacier"],
    );
    fx.write("large/copy.txt", note);
    let embedder: Arc<dyn Embedder> = minilm();
    ingest(&fx, "small", &["small"], &embedder);
    ingest(&fx, "large", &["large"], &embedder);
    let backend = LocalBackend::new(fx.cache());
    let p = params("harbour ferry tide", SearchMode::Lexical, 10);
    let score_of = |response: &SearchResponse| {
        response
            .results
            .iter()
            .find(|r| r.citation.source.ends_with("copy.txt"))
            .map(|r| r.score)
            .expect("the copy is found")
    };
    // Each collection alone scores the same note differently: its words are rarer in the
    // large one, so searched apart and merged by score, the large collection's copy would
    // come first for that alone.
    let small = backend.search("small", &p, None).expect("small");
    let large = backend.search("large", &p, None).expect("large");
    let (apart_small, apart_large) = (score_of(&small), score_of(&large));
    assert!(
        apart_large > apart_small * 1.2,
        "{apart_small} {apart_large}"
    );
    // Searched together, both copies score alike, and both come first.
    let names = ["small".to_owned(), "large".to_owned()];
    let together = backend
        .search_collections(&names, &p, None)
        .expect("together");
    let copies: Vec<(&str, f32)> = together.results[..2]
        .iter()
        .map(|r| (r.collection.as_deref().unwrap_or_default(), r.score))
        .collect();
    assert_eq!(copies.len(), 2);
    assert_eq!(copies[0].1, copies[1].1, "{copies:?}");
    assert!(
        together.results[..2]
            .iter()
            .all(|r| r.citation.source.ends_with("copy.txt"))
    );
    // Ties go to the collection named first.
    assert_eq!(copies[0].0, "small");
}

#[test]
fn a_missing_collection_fails_the_search_with_its_name() {
    let fx = Fixture::new();
    notes(&fx, "a", 5, 3);
    fx.ingest_all("a");
    let backend = LocalBackend::new(fx.cache());
    let names = ["a".to_owned(), "nope".to_owned()];
    match backend.search_collections(&names, &params("tide", SearchMode::Lexical, 5), None) {
        Err(Error::CollectionNotFound { name }) => assert_eq!(name, "nope"),
        other => panic!("{other:?}"),
    }
}
