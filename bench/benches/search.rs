//! In-process search path: `search()` top-10 with content over a collection built in a temporary
//! directory. With `GROUNDKIT_BENCH_SCIFACT=path/to/scifact` the BEIR SciFact corpus and queries
//! are used; otherwise a generated corpus of 5,000 short documents.
//!
//! `cargo bench -p groundkit-bench --bench search`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use groundkit_retrieval::{
    self as retrieval, CollectionCache, IngestOptions, InputFormat, NoProgress, SearchMode,
    SearchParams,
};

const WORDS: &[&str] = &[
    "protein",
    "cell",
    "gene",
    "expression",
    "tumor",
    "immune",
    "response",
    "receptor",
    "patients",
    "risk",
    "mutation",
    "pathway",
    "signaling",
    "clinical",
    "trial",
    "mouse",
    "brain",
    "neurons",
    "vaccine",
    "infection",
    "virus",
    "therapy",
    "dose",
    "blood",
    "insulin",
    "glucose",
    "cancer",
];

fn generated_corpus(dir: &std::path::Path) -> (PathBuf, Vec<String>) {
    let mut lines = String::new();
    let mut state = 0x2545_f491_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        WORDS[(state % WORDS.len() as u64) as usize]
    };
    for i in 0..5000 {
        let text: Vec<&str> = (0..150).map(|_| next()).collect();
        lines.push_str(
            &serde_json::json!({"_id": i.to_string(), "title": "", "text": text.join(" ")})
                .to_string(),
        );
        lines.push('\n');
    }
    let queries = (0..300)
        .map(|_| (0..6).map(|_| next()).collect::<Vec<_>>().join(" "))
        .collect();
    let path = dir.join("corpus.jsonl");
    std::fs::write(&path, lines).expect("write corpus");
    (path, queries)
}

fn bench_search(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (corpus, queries) = match std::env::var_os("GROUNDKIT_BENCH_SCIFACT") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let queries = retrieval::eval::read_queries(&dir.join("queries.jsonl"))
                .expect("queries")
                .into_iter()
                .map(|q| q.text)
                .collect();
            (
                dir.join("corpus.jsonl").canonicalize().expect("corpus"),
                queries,
            )
        }
        None => generated_corpus(tmp.path()),
    };
    let base = corpus.parent().expect("corpus dir").to_path_buf();
    let index = tmp.path().join("index");
    let mut options =
        IngestOptions::new(&index, &base, "bench", vec![corpus.display().to_string()]);
    options.format = InputFormat::Beir;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    let runtime = CollectionCache::new(&index, &base, 1);
    let open = runtime.acquire("bench").expect("open");
    let mut i = 0;
    c.bench_function("search_top10_with_content", |b| {
        b.iter(|| {
            i = (i + 1) % queries.len();
            let params = SearchParams {
                query: queries[i].clone(),
                top_k: 10,
                mode: SearchMode::Lexical,
                fusion: Default::default(),
                filter: None,
            };
            black_box(retrieval::search(&open, &params, None).expect("search"))
        })
    });
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
