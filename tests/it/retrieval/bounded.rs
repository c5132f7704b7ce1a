//! Bounded lexical search: champion lists written by an ingest asked for them, what a search over
//! them returns beside the exact search of the same files, a bound changed or dropped by a later
//! ingest, and a champion lists file that does not belong to its generation.

use std::path::{Path, PathBuf};

use groundkit_retrieval::{
    self as retrieval, IngestOptions, NoProgress, OpenCollection, RetrievalResult, SearchMode,
    SearchParams, SearchResponse,
};

use super::Fixture;
use crate::embed::minilm;

const BOUND: u32 = 4;

/// Ten notes holding "river" once to ten times in as many words, so that each holds it more
/// densely than the one before; one note about something else; and a long note holding "delta"
/// once and "river" once among many other words, where "river" scores less than in any other.
fn write_notes(fx: &Fixture) {
    for i in 1..=10 {
        let mut words = vec!["river"; i];
        words.extend(std::iter::repeat_n("stone", 10 - i));
        fx.write(&format!("r{i:02}.txt"), words.join(" "));
    }
    fx.write("other.txt", "A note about bread and butter.");
    let filler: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
    fx.write("delta.txt", format!("river delta {}", filler.join(" ")));
}

fn ingest(fx: &Fixture, collection: &str, bound: u32) -> retrieval::IngestSummary {
    let mut options: IngestOptions = fx.options(collection, &[&fx.base]);
    options.lexical_bound = bound;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest")
}

fn ids_and_scores(response: &SearchResponse) -> Vec<(String, u32)> {
    response
        .results
        .iter()
        .map(|r| (r.document_id.clone(), r.score.to_bits()))
        .collect()
}

fn result<'a>(response: &'a SearchResponse, document: &str) -> Option<&'a RetrievalResult> {
    response.results.iter().find(|r| r.document_id == document)
}

fn generation_dir(fx: &Fixture, collection: &str, generation: u64) -> PathBuf {
    fx.index
        .join(format!("{collection}.tantivy"))
        .join(format!("g{generation}"))
}

#[test]
fn a_frequent_term_is_searched_through_its_champions_with_their_exact_scores() {
    let fx = Fixture::new();
    write_notes(&fx);
    ingest(&fx, "exact", 0);
    ingest(&fx, "bounded", BOUND);
    assert!(
        !generation_dir(&fx, "exact", 1)
            .join("champions.bin")
            .exists()
    );
    assert!(
        generation_dir(&fx, "bounded", 1)
            .join("champions.bin")
            .is_file()
    );

    let exact = fx.search("exact", "river", 10);
    let bounded = fx.search("bounded", "river", 10);
    // "river" is in 11 chunks, more than the bound: only its 4 champions can come back, and they
    // are the exact search's best 4, in its order, with the same scores to the bit.
    assert_eq!(exact.results.len(), 10);
    assert_eq!(bounded.results.len(), BOUND as usize);
    assert_eq!(
        ids_and_scores(&bounded),
        ids_and_scores(&exact)[..BOUND as usize]
    );
    assert_eq!(bounded.results[0].document_id, "r10.txt");
    assert!(result(&bounded, "delta.txt").is_none());
    assert_eq!(bounded.metadata.lexical_bound, Some(BOUND));
    assert_eq!(exact.metadata.lexical_bound, None);

    // A term in no more chunks than the bound has no champion list: its whole postings are read.
    let exact = fx.search("exact", "bread", 10);
    let bounded = fx.search("bounded", "bread", 10);
    assert_eq!(ids_and_scores(&bounded), ids_and_scores(&exact));
    assert_eq!(bounded.results.len(), 1);
    // ... and the response says the ranking was exact.
    assert_eq!(bounded.metadata.lexical_bound, None);
}

#[test]
fn a_chunk_found_through_a_rare_term_is_scored_for_the_frequent_ones_it_holds_too() {
    let fx = Fixture::new();
    write_notes(&fx);
    ingest(&fx, "exact", 0);
    ingest(&fx, "bounded", BOUND);
    let exact = fx.search("exact", "delta river", 10);
    let bounded = fx.search("bounded", "delta river", 10);
    // delta.txt is no champion of "river", but "delta" brings it up, and its score then counts
    // "river" as well: it is the exact BM25 score, above what "delta" alone gives it.
    let exact_delta = result(&exact, "delta.txt").expect("exact finds delta.txt");
    let bounded_delta = result(&bounded, "delta.txt").expect("bounded finds delta.txt");
    assert_eq!(bounded_delta.score.to_bits(), exact_delta.score.to_bits());
    let delta_alone = fx.search("exact", "delta", 1);
    assert!(bounded_delta.score > delta_alone.results[0].score);
    assert_eq!(bounded_delta.rank, exact_delta.rank);
}

#[test]
fn changing_the_bound_makes_a_new_generation_and_no_bound_makes_search_exact_again() {
    let fx = Fixture::new();
    write_notes(&fx);
    let count = |fx: &Fixture| fx.search("c", "river", 10).results.len();
    assert_eq!(ingest(&fx, "c", BOUND).generation, 1);
    assert_eq!(count(&fx), 4);
    // Nothing changed, the bound included: no new generation.
    assert_eq!(ingest(&fx, "c", BOUND).generation, 1);
    // No document changed, but the bound did: each is a new generation.
    assert_eq!(ingest(&fx, "c", 6).generation, 2);
    assert_eq!(count(&fx), 6);
    assert_eq!(ingest(&fx, "c", 0).generation, 3);
    assert_eq!(count(&fx), 10);
    assert!(!generation_dir(&fx, "c", 3).join("champions.bin").exists());
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let status = retrieval::index_status(&open, &cache, None).expect("status");
    assert_eq!(status.lexical_bound, None);
    assert_eq!(fx.search("c", "river", 10).metadata.lexical_bound, None);
}

#[test]
fn a_hybrid_ranking_says_its_lexical_half_was_bounded_and_a_dense_one_does_not() {
    let fx = Fixture::new();
    write_notes(&fx);
    let mut options: IngestOptions = fx.options("c", &[&fx.base]);
    options.lexical_bound = BOUND;
    let embedder = minilm();
    options.embedder = Some(embedder.clone());
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let bound_of = |query: &str, mode| {
        let params = SearchParams {
            query: query.to_owned(),
            top_k: 10,
            mode,
        };
        retrieval::search(&open, &params, Some(embedder.as_ref()))
            .expect("search")
            .metadata
            .lexical_bound
    };
    assert_eq!(bound_of("river", SearchMode::Hybrid), Some(BOUND));
    assert_eq!(bound_of("bread", SearchMode::Hybrid), None);
    assert_eq!(bound_of("river", SearchMode::Dense), None);
}

fn open_error(fx: &Fixture, collection: &str) -> groundkit_core::Error {
    OpenCollection::open(&fx.index, &fx.base, collection).expect_err("the open fails")
}

fn replace(path: &Path, bytes: &[u8]) {
    std::fs::remove_file(path).expect("remove");
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn champion_lists_that_do_not_belong_to_their_generation_are_refused() {
    let fx = Fixture::new();
    write_notes(&fx);
    ingest(&fx, "a", BOUND);
    fx.write("more.txt", "river river mouth");
    ingest(&fx, "b", BOUND);
    let file = generation_dir(&fx, "a", 1).join("champions.bin");
    let theirs = std::fs::read(generation_dir(&fx, "b", 1).join("champions.bin")).expect("read");
    let ours = std::fs::read(&file).expect("read");

    // Another collection's lists: written for other segments.
    replace(&file, &theirs);
    let err = open_error(&fx, "a");
    assert_eq!(err.kind(), "storage_error");
    assert!(
        err.to_string().contains("written for other segments"),
        "{err}"
    );
    assert!(
        !err.to_string().contains(&*fx.index.to_string_lossy()),
        "{err}"
    );

    // Truncated: refused, whichever byte it ends at.
    for len in [0, 12, ours.len() / 2, ours.len() - 1] {
        replace(&file, &ours[..len]);
        let err = open_error(&fx, "a");
        assert_eq!(err.kind(), "storage_error", "{len}");
        assert!(err.to_string().contains("champion lists"), "{len}: {err}");
    }

    // Restored: the collection opens and searches within its bound again.
    replace(&file, &ours);
    assert_eq!(fx.search("a", "river", 10).results.len(), BOUND as usize);
}

#[test]
fn the_cli_writes_champion_lists_when_asked_and_refuses_them_for_a_cluster() {
    let fx = Fixture::new();
    write_notes(&fx);
    let run = |args: &[&str]| fx.grk().args(args).output().expect("grk runs");
    let out = run(&["ingest", "--collection", "c", "--lexical-bound", "4", "."]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fx.search("c", "river", 10).results.len(), 4);
    let search = run(&["search", "--collection", "c", "river"]);
    let search = String::from_utf8_lossy(&search.stdout);
    assert!(
        search.contains("lexical ranking bounded: at most 4 postings per query term"),
        "{search}"
    );
    let search = run(&["search", "--collection", "c", "bread"]);
    let search = String::from_utf8_lossy(&search.stdout);
    assert!(
        search.contains("other.txt") && !search.contains("bounded"),
        "{search}"
    );
    let status = run(&["status", "--collection", "c"]);
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("lexical search   bounded, 4 postings per query term"),
        "{status}"
    );
    let status = run(&["status", "--collection", "c", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).expect("JSON status");
    assert_eq!(status["lexical_bound"], 4);

    let out = run(&[
        "ingest",
        "--collection",
        "d",
        "--backend",
        "opensearch",
        "--opensearch-url",
        "http://127.0.0.1:9",
        "--lexical-bound",
        "4",
        ".",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--lexical-bound applies to the local backend only"),
        "{stderr}"
    );
    assert!(!fx.index.join("d.sqlite3").exists());
}
