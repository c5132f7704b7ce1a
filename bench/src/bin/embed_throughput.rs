//! Embedding throughput of the in-process embedder on a text corpus, and one-query latency.
//!
//! ```text
//! cargo run --release -p groundkit-bench --bin embed_throughput -- \
//!     MODEL_DIR CORPUS.jsonl [--limit N] [--threads N] [--queries QUERIES.jsonl]
//! ```
//!
//! `CORPUS.jsonl` is a BEIR corpus (`title` and `text` joined by a space) or one JSON string per
//! line. Prints one JSON line: texts/s and tokens/s over the corpus, and with `--queries` the
//! p50/p99 milliseconds of embedding one query at a time.

use std::time::Instant;

use groundkit_embed::LocalEmbedder;
use groundkit_retrieval::embed::{Embedder, Role};

fn text_of(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    match value {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Object(map) => {
            let field = |k: &str| map.get(k).and_then(|v| v.as_str()).unwrap_or("").to_owned();
            Some(
                format!("{} {}", field("title"), field("text"))
                    .trim()
                    .to_owned(),
            )
        }
        _ => None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let (Some(model), Some(corpus)) = (args.first(), args.get(1)) else {
        return Err("usage: embed_throughput MODEL_DIR CORPUS.jsonl [--limit N] [--threads N] [--queries FILE]".into());
    };
    let limit: usize = flag("--limit").map_or(Ok(usize::MAX), |v| v.parse())?;
    let threads: usize = flag("--threads").map_or(Ok(2), |v| v.parse())?;
    let embedder = LocalEmbedder::load(std::path::Path::new(model), threads)?;
    let texts: Vec<String> = std::fs::read_to_string(corpus)?
        .lines()
        .filter_map(text_of)
        .take(limit)
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = embedder
        .token_ids(&refs, Role::Document)?
        .iter()
        .map(Vec::len)
        .sum();
    // Warm-up, untimed: the first call sizes buffers and faults in the weights.
    embedder.embed(&refs[..refs.len().min(8)], Role::Document)?;
    let started = Instant::now();
    for batch in refs.chunks(256) {
        embedder.embed(batch, Role::Document)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut report = serde_json::json!({
        "texts": texts.len(),
        "tokens": tokens,
        "threads": threads,
        "seconds": seconds,
        "texts_per_second": texts.len() as f64 / seconds,
        "tokens_per_second": tokens as f64 / seconds,
    });
    if let Some(queries) = flag("--queries") {
        let queries: Vec<String> = std::fs::read_to_string(queries)?
            .lines()
            .filter_map(text_of)
            .collect();
        let mut ms = Vec::with_capacity(queries.len());
        for query in &queries {
            let started = Instant::now();
            embedder.embed(&[query.as_str()], Role::Query)?;
            ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
        report["query_p50_ms"] = at(0.5).into();
        report["query_p99_ms"] = at(0.99).into();
    }
    println!("{report}");
    Ok(())
}
