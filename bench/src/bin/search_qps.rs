//! Single-threaded lexical search throughput and latency of an existing collection: the BEIR
//! queries run one at a time, top-10 with content, for several passes. Prints JSON: queries per
//! second of each pass and their median, and the p50/p99 of every query's latency. Used by
//! `bench/search_vs_bm25s.py` and `bench/growth.sh`; run it with `--release`.
//!
//! `search_qps INDEX_DIR COLLECTION QUERIES_JSONL [PASSES]`

use std::time::Instant;

use groundkit_retrieval::{self as retrieval, CollectionCache, SearchMode, SearchParams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, index_dir, collection, queries, rest @ ..] = args.as_slice() else {
        return Err("usage: search_qps INDEX_DIR COLLECTION QUERIES_JSONL [PASSES]".into());
    };
    let passes: usize = rest.first().map(|p| p.parse()).transpose()?.unwrap_or(5);
    let queries = retrieval::eval::read_queries(queries.as_ref())?;
    let runtime = CollectionCache::new(index_dir, ".", 1);
    let open = runtime.acquire(collection)?;
    let mut qps = Vec::new();
    let mut latencies = Vec::new();
    let mut checksum = 0usize;
    for _ in 0..passes {
        let started = Instant::now();
        for query in &queries {
            let begin = Instant::now();
            let params = SearchParams {
                query: query.text.clone(),
                top_k: 10,
                mode: SearchMode::Lexical,
                fusion: Default::default(),
                filter: None,
            };
            let response = retrieval::search(&open, &params, None)?;
            checksum += response
                .results
                .iter()
                .map(|r| r.text().len())
                .sum::<usize>();
            latencies.push(begin.elapsed().as_secs_f64() * 1e3);
        }
        qps.push(queries.len() as f64 / started.elapsed().as_secs_f64());
    }
    let mut sorted = qps.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    println!(
        "{}",
        serde_json::json!({
            "engine": "groundkit",
            "queries": queries.len(),
            "passes_qps": qps,
            "median_qps": median,
            "p50_ms": pct(0.50),
            "p99_ms": pct(0.99),
            "content_bytes_checksum": checksum,
        })
    );
    Ok(())
}
