//! The cost of a filter: lexical, dense and hybrid searches of one collection, unfiltered and
//! with a selective and a broad path filter, in interleaved rounds. Prints JSON: per mode and
//! filter, the p50 and p99 latency (top 10, content read) and the p50 as a multiple of the
//! unfiltered search's in the same rounds.
//!
//! ```text
//! filter_cost build CORPUS_DIR INDEX_DIR    # ingest CORPUS_DIR/p*/corpus.jsonl as collection `f`
//! filter_cost run INDEX_DIR QUERIES_JSONL [ROUNDS]
//! ```
//!
//! The corpus is a BEIR corpus split into 100 files `p00` to `p99` (`bench/filter_cost.sh`), so a
//! chunk's source names its part: `{"paths": ["p07"]}` keeps 1 % of the chunks,
//! `{"paths": ["p[0-4]*/**"]}` half of them. Vectors come from a stand-in embedder, a
//! pseudo-random unit vector per text (a hash of it seeds the generator), because embedding
//! 500,000 chunks with a model takes hours; what is measured is the cost of finding the nearest
//! vectors, exactly or through the graph an ingest of that size builds, not their relevance.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

use groundkit_core::Error;
use groundkit_retrieval::embed::{Embedder, Role};
use groundkit_retrieval::filter::Filter;
use groundkit_retrieval::{
    self as retrieval, CollectionCache, EmbedderKind, EmbeddingIdentity, IngestOptions,
    InputFormat, NoProgress, SearchMode, SearchParams,
};

const DIMENSION: usize = 384;

/// A pseudo-random unit vector per text.
struct Stand {
    identity: EmbeddingIdentity,
}

impl Stand {
    fn new() -> Self {
        Self {
            identity: EmbeddingIdentity {
                kind: EmbedderKind::InProcess,
                model: "bench-pseudo-random".to_owned(),
                fingerprint: "bench-pseudo-random-384".to_owned(),
                dimension: DIMENSION as u32,
                pooling: "none".to_owned(),
                normalized: true,
                max_tokens: None,
            },
        }
    }
}

impl Embedder for Stand {
    fn identity(&self) -> &EmbeddingIdentity {
        &self.identity
    }

    fn embed(&self, texts: &[&str], _role: Role) -> Result<Vec<Vec<f32>>, Error> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut hasher = DefaultHasher::new();
                text.hash(&mut hasher);
                let mut state = hasher.finish() | 1;
                let mut vector: Vec<f32> = (0..DIMENSION)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                    })
                    .collect();
                retrieval::embed::normalize(&mut vector);
                vector
            })
            .collect())
    }
}

fn build(corpus: &str, index_dir: &str) -> Result<(), Box<dyn std::error::Error>> {
    let mut inputs: Vec<String> = std::fs::read_dir(corpus)?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("corpus.jsonl"))
        .filter(|p| p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    inputs.sort();
    let mut options = IngestOptions::new(index_dir, corpus, "f", inputs);
    options.format = InputFormat::Beir;
    options.embedder = Some(Arc::new(Stand::new()));
    let started = Instant::now();
    let summary = retrieval::ingest(&options, &mut NoProgress)?;
    eprintln!(
        "{} chunks in {:.1} s",
        summary.chunks,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn run(index_dir: &str, queries: &str, rounds: usize) -> Result<(), Box<dyn std::error::Error>> {
    let queries = retrieval::eval::read_queries(queries.as_ref())?;
    let cache = CollectionCache::new(index_dir, ".", 1);
    let open = cache.acquire("f")?;
    let embedder = Stand::new();
    let filters: [(&str, Option<Filter>); 3] = [
        ("none", None),
        (
            "selective",
            Some(serde_json::from_str(r#"{"paths": ["p07"]}"#)?),
        ),
        (
            "broad",
            Some(serde_json::from_str(r#"{"paths": ["p[0-4]*/**"]}"#)?),
        ),
    ];
    let modes = [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid];
    let mut latencies: BTreeMap<(String, &str), Vec<f64>> = BTreeMap::new();
    let mut checksum = 0usize;
    for _ in 0..rounds {
        for mode in modes {
            for (name, filter) in &filters {
                let times = latencies
                    .entry((format!("{mode:?}").to_lowercase(), name))
                    .or_default();
                for query in &queries {
                    let params = SearchParams {
                        query: query.text.clone(),
                        top_k: 10,
                        mode,
                        fusion: Default::default(),
                        filter: filter.clone(),
                    };
                    let begin = Instant::now();
                    let response = retrieval::search(&open, &params, Some(&embedder))?;
                    times.push(begin.elapsed().as_secs_f64() * 1e3);
                    checksum += response.results.len();
                }
            }
        }
    }
    let pct = |times: &mut Vec<f64>, p: f64| {
        times.sort_by(f64::total_cmp);
        times[((times.len() - 1) as f64 * p).round() as usize]
    };
    let mut report = serde_json::Map::new();
    for mode in modes {
        let mode = format!("{mode:?}").to_lowercase();
        let base = pct(
            latencies
                .get_mut(&(mode.clone(), "none"))
                .ok_or("no unfiltered run")?,
            0.5,
        );
        for (name, _) in &filters {
            let times = latencies.get_mut(&(mode.clone(), name)).ok_or("no run")?;
            let p50 = pct(times, 0.5);
            report.insert(
                format!("{mode}/{name}"),
                serde_json::json!({
                    "p50_ms": p50,
                    "p99_ms": pct(times, 0.99),
                    "p50_vs_unfiltered": p50 / base,
                }),
            );
        }
    }
    report.insert("results_checksum".into(), checksum.into());
    println!("{}", serde_json::Value::Object(report));
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.as_slice() {
        [_, cmd, corpus, index_dir] if cmd == "build" => build(corpus, index_dir),
        [_, cmd, index_dir, queries, rest @ ..] if cmd == "run" => {
            let rounds = rest.first().map(|r| r.parse()).transpose()?.unwrap_or(3);
            run(index_dir, queries, rounds)
        }
        _ => Err(
            "usage: filter_cost build CORPUS_DIR INDEX_DIR | run INDEX_DIR QUERIES [ROUNDS]".into(),
        ),
    }
}
