//! The cost of ranking alone: every BEIR query run single-threaded through the exact lexical
//! ranking (`ranked_hits`, top 10, no stored content read) in rounds. Prints JSON: the chunk
//! count, the median seconds of a round, p50/p99 milliseconds of a query over all rounds, and
//! nDCG@10 against the qrels (the top 10 chunks' documents, first appearance kept). Used by
//! `bench/lucene_compare.sh` beside Lucene's `IndexSearcher.search(query, 10)`; run it with
//! `--release`.
//!
//! `lexical_exact INDEX_DIR COLLECTION QUERIES_JSONL QRELS_TSV [ROUNDS]`

use std::collections::HashSet;
use std::time::Instant;

use groundkit_retrieval::eval::{ndcg_at, read_qrels, read_queries};
use groundkit_retrieval::{
    CollectionCache, Fusion, SearchMode, hit_document_id, index_status, ranked_hits,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, index_dir, collection, queries, qrels, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: lexical_exact INDEX_DIR COLLECTION QUERIES_JSONL QRELS_TSV [ROUNDS]".into(),
        );
    };
    let rounds: usize = rest.first().map(|r| r.parse()).transpose()?.unwrap_or(3);
    let cache = CollectionCache::new(index_dir, ".", 1);
    let open = cache.acquire(collection)?;
    let qrels = read_qrels(qrels.as_ref())?;
    let queries = read_queries(queries.as_ref())?;
    let mut round_seconds = Vec::new();
    let mut query_ms = Vec::new();
    let mut ndcg = 0.0;
    let mut judged = 0;
    for round in 0..rounds {
        let started = Instant::now();
        for query in &queries {
            let one = Instant::now();
            let ranked = ranked_hits(
                &open,
                &query.text,
                10,
                SearchMode::Lexical,
                None,
                Fusion::default(),
                None,
            )?;
            query_ms.push(one.elapsed().as_secs_f64() * 1e3);
            if round == 0
                && let Some(grades) = qrels.get(&query.id)
            {
                let mut seen = HashSet::new();
                let mut documents = Vec::new();
                for (_, address) in ranked.hits {
                    let id = hit_document_id(&open, address)?;
                    if seen.insert(id.clone()) {
                        documents.push(id);
                    }
                }
                ndcg += ndcg_at(&documents, grades, 10);
                judged += 1;
            }
        }
        round_seconds.push(started.elapsed().as_secs_f64());
    }
    query_ms.sort_by(f64::total_cmp);
    round_seconds.sort_by(f64::total_cmp);
    let status = index_status(&open, &cache, None)?;
    println!(
        "{}",
        serde_json::json!({
            "chunks": status.chunk_count,
            "queries": queries.len(),
            "rounds": rounds,
            "round_seconds_median": round_seconds[round_seconds.len() / 2],
            "p50_ms": query_ms[query_ms.len() / 2],
            "p99_ms": query_ms[query_ms.len() * 99 / 100],
            "ndcg_at_10": ndcg / f64::from(judged.max(1)),
            "judged_queries": judged,
        })
    );
    Ok(())
}
