//! Dense and hybrid search with the real all-MiniLM-L6-v2 model: vectors written with each
//! generation, reused on re-ingest, the identity reported and checked.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use groundkit_core::Error;
use groundkit_embed::LocalEmbedder;
use groundkit_retrieval::embed::{Embedder, Role};
use groundkit_retrieval::{
    self as retrieval, EmbeddingIdentity, FusionMethod, IngestOptions, NoProgress, SearchMode,
    SearchParams, SearchResponse,
};

use super::Fixture;
use crate::embed::{minilm, model_dir};

/// The real embedder, counting the texts it is asked to embed and keeping the documents'.
struct Counting {
    inner: Arc<LocalEmbedder>,
    texts: AtomicU64,
    documents: Mutex<Vec<String>>,
}

impl Embedder for Counting {
    fn identity(&self) -> &EmbeddingIdentity {
        self.inner.identity()
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, Error> {
        self.texts.fetch_add(texts.len() as u64, Ordering::SeqCst);
        if role == Role::Document {
            let mut documents = self.documents.lock().expect("documents");
            documents.extend(texts.iter().map(|t| (*t).to_owned()));
        }
        self.inner.embed(texts, role)
    }
}

fn counting() -> Arc<Counting> {
    Arc::new(Counting {
        inner: minilm(),
        texts: AtomicU64::new(0),
        documents: Mutex::new(Vec::new()),
    })
}

const TRAVEL: &str = "Crossing several time zones disrupts the circadian rhythm. Morning daylight \
    and a little melatonin in the evening shift the body clock to the new local time.";

fn corpus() -> Fixture {
    let fx = Fixture::new();
    fx.write("travel.md", TRAVEL);
    fx.write(
        "tea.txt",
        "Green tea is steeped at 80 degrees for two minutes.",
    );
    fx.write(
        "bikes.md",
        "Clean the bicycle chain, then oil each link sparingly.",
    );
    fx.write(
        "bm25.md",
        "BM25 ranks documents by the query terms they contain.",
    );
    fx
}

fn ingest(fx: &Fixture, embedder: Arc<dyn Embedder>) -> Result<retrieval::IngestSummary, Error> {
    let mut options: IngestOptions = fx.options("c", &[&fx.base]);
    options.embedder = Some(embedder);
    retrieval::ingest(&options, &mut NoProgress)
}

fn ingest_lexical(fx: &Fixture) -> Result<retrieval::IngestSummary, Error> {
    retrieval::ingest(&fx.options("c", &[&fx.base]), &mut NoProgress)
}

fn search(
    fx: &Fixture,
    query: &str,
    mode: SearchMode,
    embedder: Option<&dyn Embedder>,
) -> Result<SearchResponse, Error> {
    search_fused(fx, query, mode, Default::default(), embedder)
}

fn search_fused(
    fx: &Fixture,
    query: &str,
    mode: SearchMode,
    fusion: FusionMethod,
    embedder: Option<&dyn Embedder>,
) -> Result<SearchResponse, Error> {
    let open = fx.cache().acquire("c").expect("open");
    let params = SearchParams {
        query: query.to_owned(),
        top_k: 3,
        mode,
        fusion,
        filter: None,
    };
    retrieval::search(&open, &params, embedder)
}

fn first_source(response: &SearchResponse) -> Option<&str> {
    response.results.first().map(|r| r.citation.source.as_str())
}

#[test]
fn dense_and_hybrid_find_what_the_words_do_not_say() {
    let fx = corpus();
    let embedder = minilm();
    let summary = ingest(&fx, embedder.clone()).expect("ingest");
    assert_eq!((summary.embedded, summary.reused_vectors), (4, 0));
    let query = "what helps with jet lag";
    let lexical = search(&fx, query, SearchMode::Lexical, None).expect("lexical");
    assert_ne!(
        first_source(&lexical),
        Some("travel.md"),
        "no query word is in travel.md"
    );
    let dense = search(&fx, query, SearchMode::Dense, Some(embedder.as_ref())).expect("dense");
    assert_eq!(first_source(&dense), Some("travel.md"));
    assert_eq!(dense.metadata.mode, SearchMode::Dense);
    assert!(dense.results.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(
        dense
            .results
            .iter()
            .all(|r| (-1.0..=1.0).contains(&r.score))
    );
    assert_eq!(
        dense.results[0].text(),
        TRAVEL,
        "a dense hit carries its chunk and citation"
    );
    assert_eq!(dense.results[0].citation.end_offset, TRAVEL.len() as u64);
    // Reciprocal Rank Fusion: the first dense place alone, or first in both rankings.
    let rrf = |query| {
        search_fused(
            &fx,
            query,
            SearchMode::Hybrid,
            FusionMethod::Rrf,
            Some(embedder.as_ref()),
        )
        .expect("hybrid")
    };
    let hybrid = rrf(query);
    assert_eq!(first_source(&hybrid), Some("travel.md"));
    assert_eq!(hybrid.metadata.fusion, Some(FusionMethod::Rrf));
    let (k, first) = (retrieval::fusion::RRF_K, hybrid.results[0].score);
    let weight = retrieval::fusion::DENSE_WEIGHT;
    let both_first = (1.0 + weight) / (k + 1.0);
    assert!(
        (weight.min(1.0) / (k + 1.0)..=both_first).contains(&first),
        "{first}"
    );
    // A query both rankings agree on.
    let both = rrf("steeping green tea");
    assert_eq!(first_source(&both), Some("tea.txt"));
    let top = both.results[0].score;
    assert!(
        (top - both_first).abs() < 1e-6,
        "first in both rankings: {top}"
    );

    // Min-max fusion, the default: the best of both rankings scores 1 + the dense weight; a
    // chunk no query word is in scores its scaled dense score alone, at most the weight.
    let weight = retrieval::fusion::MIN_MAX_DENSE_WEIGHT;
    let hybrid = search(&fx, query, SearchMode::Hybrid, Some(embedder.as_ref())).expect("hybrid");
    assert_eq!(hybrid.metadata.fusion, Some(FusionMethod::MinMax));
    let travel = hybrid
        .results
        .iter()
        .find(|r| r.citation.source == "travel.md")
        .expect("travel.md is found by meaning");
    assert!((travel.score - weight).abs() < 1e-6, "{}", travel.score);
    let both = search(
        &fx,
        "steeping green tea",
        SearchMode::Hybrid,
        Some(embedder.as_ref()),
    )
    .expect("hybrid");
    assert_eq!(first_source(&both), Some("tea.txt"));
    assert!((both.results[0].score - (1.0 + weight)).abs() < 1e-6);
}

#[test]
fn status_reports_the_identity_and_whether_this_server_can_search_by_vectors() {
    let fx = corpus();
    let embedder = minilm();
    ingest(&fx, embedder.clone()).expect("ingest");
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let status = retrieval::index_status(&open, &cache, Some(embedder.as_ref())).expect("status");
    assert_eq!(status.embedding.as_ref(), Some(embedder.identity()));
    assert!(status.dense_search_available);
    let without = retrieval::index_status(&open, &cache, None).expect("status");
    assert_eq!(without.embedding.as_ref(), Some(embedder.identity()));
    assert!(!without.dense_search_available);
    let err = search(&fx, "tea", SearchMode::Dense, None).expect_err("no server embedder");
    assert_eq!(err.kind(), "dense_unavailable");
    assert!(err.public_detail().contains("without an embedder"));
}

#[test]
fn a_collection_without_vectors_refuses_dense_and_hybrid_and_keeps_serving_lexical() {
    let fx = corpus();
    ingest_lexical(&fx).expect("ingest");
    let embedder = minilm();
    for mode in [SearchMode::Dense, SearchMode::Hybrid] {
        let err = search(&fx, "tea", mode, Some(embedder.as_ref())).expect_err("no vectors");
        assert_eq!(err.kind(), "dense_unavailable", "{mode:?}");
        assert!(err.public_detail().contains("no vectors"));
    }
    let lexical =
        search(&fx, "tea", SearchMode::Lexical, Some(embedder.as_ref())).expect("lexical");
    assert_eq!(first_source(&lexical), Some("tea.txt"));
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let status = retrieval::index_status(&open, &cache, Some(embedder.as_ref())).expect("status");
    assert_eq!(status.embedding, None);
    assert!(!status.dense_search_available);
}

/// The same weights configured differently (a 128-token limit): another fingerprint.
fn other_embedder(dir: &Path) -> LocalEmbedder {
    let model = model_dir();
    for entry in std::fs::read_dir(&model).expect("model dir") {
        let entry = entry.expect("entry");
        std::os::unix::fs::symlink(entry.path(), dir.join(entry.file_name())).expect("link");
    }
    std::fs::remove_file(dir.join("sentence_bert_config.json")).expect("unlink");
    std::fs::write(
        dir.join("sentence_bert_config.json"),
        r#"{"max_seq_length": 128, "do_lower_case": false}"#,
    )
    .expect("config");
    LocalEmbedder::load(dir, 1).expect("load")
}

#[test]
fn a_server_with_another_embedder_refuses_dense_with_a_typed_error_and_keeps_lexical() {
    let fx = corpus();
    ingest(&fx, minilm()).expect("ingest");
    let dir = tempfile::tempdir().expect("tmp");
    let other = other_embedder(dir.path());
    assert_ne!(
        other.identity().fingerprint,
        minilm().identity().fingerprint
    );
    for mode in [SearchMode::Dense, SearchMode::Hybrid] {
        let err = search(&fx, "tea", mode, Some(&other)).expect_err("mismatch");
        assert_eq!(err.kind(), "embedding_mismatch", "{mode:?}");
        let detail = err.public_detail();
        assert!(
            detail.contains(&minilm().identity().fingerprint),
            "{detail}"
        );
        assert!(detail.contains(&other.identity().fingerprint), "{detail}");
        assert!(
            !detail.contains(&*dir.path().to_string_lossy()),
            "no path: {detail}"
        );
    }
    let lexical = search(&fx, "tea", SearchMode::Lexical, Some(&other)).expect("lexical");
    assert_eq!(first_source(&lexical), Some("tea.txt"));
    // Re-ingesting with the other embedder re-embeds every chunk.
    let summary = ingest(&fx, Arc::new(other)).expect("re-embed");
    assert_eq!((summary.embedded, summary.reused_vectors), (4, 0));
    assert_eq!(
        summary.generation, 2,
        "a new embedder makes a new generation"
    );
}

#[test]
fn re_ingest_embeds_only_the_chunks_whose_text_changed() {
    let fx = corpus();
    for i in 0..20 {
        fx.write(
            &format!("notes/{i}.md"),
            format!("Note number {i} about topic {}.", i * 7),
        );
    }
    let embedder = counting();
    let first = ingest(&fx, embedder.clone()).expect("ingest");
    assert_eq!(first.embedded, 24);
    assert_eq!(embedder.texts.load(Ordering::SeqCst), 24);

    let unchanged = ingest(&fx, embedder.clone()).expect("unchanged");
    assert_eq!(
        (unchanged.generation, unchanged.embedded),
        (1, 0),
        "nothing to do"
    );
    assert_eq!(embedder.texts.load(Ordering::SeqCst), 24);

    fx.write(
        "notes/3.md",
        "Note number three, rewritten about lighthouses.",
    );
    fx.write("moved.md", "Note number 5 about topic 35."); // same text as notes/5.md
    let second = ingest(&fx, embedder.clone()).expect("re-ingest");
    assert_eq!(second.generation, 2);
    assert_eq!(
        (second.embedded, second.reused_vectors),
        (1, 24),
        "only the edited note"
    );
    assert_eq!(embedder.texts.load(Ordering::SeqCst), 25);
    let hit = search(
        &fx,
        "lighthouse keeper",
        SearchMode::Dense,
        Some(embedder.as_ref()),
    )
    .expect("dense");
    assert_eq!(
        first_source(&hit),
        Some("notes/3.md"),
        "the new vector is searched"
    );
}

/// A document of several chunks whose first line is a paragraph of its own.
fn with_heading(heading: &str) -> String {
    let paragraphs: Vec<String> = (0..12)
        .map(|i| format!("Paragraph {i} tells of the keeper's watch over the lamp and the rocks."))
        .collect();
    format!("{heading}\n\n{}", paragraphs.join("\n\n"))
}

#[test]
fn later_chunks_are_embedded_under_their_documents_heading_and_cited_as_their_own_bytes() {
    let fx = Fixture::new();
    fx.write("lighthouse.md", with_heading("# The lighthouse"));
    fx.write(
        "plain.md",
        with_heading("no heading here,\nthis line runs on"),
    );
    let embedder = counting();
    let mut options = fx.options("c", &[&fx.base]);
    options.max_chunk_bytes = 300;
    options.embedder = Some(embedder.clone());
    let summary = retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    assert!(summary.chunks >= 6, "several chunks each: {summary:?}");

    let inputs = embedder.documents.lock().expect("documents").clone();
    let (headed, plain): (Vec<&String>, Vec<&String>) = inputs
        .iter()
        .partition(|t| t.starts_with("# The lighthouse"));
    let first = headed
        .iter()
        .filter(|t| !t.starts_with("# The lighthouse\n\nParagraph"));
    assert_eq!(first.count(), 0, "{headed:?}");
    assert!(headed.len() >= 3, "every chunk of the document: {headed:?}");
    assert!(
        plain.iter().all(|t| !t.contains("# The lighthouse")),
        "a heading stays in its document"
    );
    assert!(
        plain
            .iter()
            .filter(|t| t.starts_with("no heading here"))
            .count()
            == 1,
        "a first line inside a paragraph is no heading: {plain:?}"
    );

    let open = fx.cache().acquire("c").expect("open");
    let params = SearchParams {
        query: "keeper's watch".to_owned(),
        top_k: 50,
        mode: SearchMode::Lexical,
        fusion: Default::default(),
        filter: None,
    };
    let hits = retrieval::search(&open, &params, None).expect("lexical");
    let later = hits
        .results
        .iter()
        .find(|r| r.citation.source == "lighthouse.md" && r.citation.start_offset > 0)
        .expect("a later chunk of the headed document");
    let bytes = std::fs::read(fx.base.join("lighthouse.md")).expect("source");
    let (start, end) = (
        later.citation.start_offset as usize,
        later.citation.end_offset as usize,
    );
    assert_eq!(
        later.text().as_bytes(),
        &bytes[start..end],
        "cited as its own bytes"
    );
    assert!(!later.text().contains("# The lighthouse"));

    // A new heading (of the same length, so the chunks keep their bounds) changes what every
    // chunk of that document is embedded as, and only those.
    fx.write("lighthouse.md", with_heading("# The watchtower"));
    let before = embedder.texts.load(Ordering::SeqCst);
    let second = retrieval::ingest(&options, &mut NoProgress).expect("re-ingest");
    let redone = embedder.texts.load(Ordering::SeqCst) - before;
    assert_eq!(redone, headed.len() as u64, "that document's chunks only");
    assert_eq!(second.embedded, redone);
}

#[test]
fn ingest_without_the_embedder_refuses_to_drop_vectors_unless_asked() {
    let fx = corpus();
    ingest(&fx, minilm()).expect("ingest");
    fx.write("more.md", "Another document.");
    let err = ingest_lexical(&fx).expect_err("would drop vectors");
    assert_eq!(err.kind(), "validation_error");
    assert_eq!(err.field(), Some("embedder"));
    assert_eq!(
        fx.cache().acquire("c").expect("open").generation(),
        1,
        "nothing written"
    );

    let mut options = fx.options("c", &[&fx.base]);
    options.drop_vectors = true;
    let summary = retrieval::ingest(&options, &mut NoProgress).expect("drop vectors");
    assert_eq!(summary.generation, 2);
    let err = search(&fx, "tea", SearchMode::Dense, Some(minilm().as_ref())).expect_err("gone");
    assert_eq!(err.kind(), "dense_unavailable");
}
