//! Single-threaded search throughput of an existing collection: the BEIR queries run one at a
//! time, top-10 with content, for several passes. Prints JSON. Used by
//! `bench/search_vs_bm25s.py`; run it with `--release`.
//!
//! `search_qps INDEX_DIR COLLECTION QUERIES_JSONL [PASSES]`

use std::time::Instant;

use groundkit_core::retrieval::{self, CollectionCache, SearchMode, SearchParams};

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
    let mut checksum = 0usize;
    for _ in 0..passes {
        let started = Instant::now();
        for query in &queries {
            let params = SearchParams {
                query: query.text.clone(),
                top_k: 10,
                mode: SearchMode::Lexical,
            };
            let response = retrieval::search(&open, &params, None)?;
            checksum += response
                .results
                .iter()
                .map(|r| r.content.len())
                .sum::<usize>();
        }
        qps.push(queries.len() as f64 / started.elapsed().as_secs_f64());
    }
    let mut sorted = qps.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    println!(
        "{}",
        serde_json::json!({
            "engine": "groundkit",
            "queries": queries.len(),
            "passes_qps": qps,
            "median_qps": median,
            "content_bytes_checksum": checksum,
        })
    );
    Ok(())
}
