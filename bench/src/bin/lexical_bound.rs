//! What bounding lexical search with champion lists costs in quality and gains in time, against
//! the exact search, on one collection (ingested without champion lists). For each bound, the
//! example writes the champion lists in memory (timing it) and opens them against the
//! collection's searcher; then, in interleaved rounds, runs every BEIR query single-threaded the
//! exact way and, for each bound and each number of rescored candidates, the bounded way, for the
//! top 10. Prints JSON per way: the median seconds of a round, p50/p99 milliseconds of a query
//! over all rounds, nDCG@10 against the qrels (the top 10 chunks' documents, first appearance
//! kept), and how far the top 10 is from the exact one (mean shared chunks; queries whose top 10
//! differs). Used by `bench/README.md` ("Bounded lexical search"); run it with `--release`.
//!
//! `lexical_bound INDEX_DIR COLLECTION QUERIES_JSONL QRELS_TSV BOUNDS RESCORED [ROUNDS]`
//! (BOUNDS and RESCORED are comma-separated lists; an empty BOUNDS times the exact search alone).

use std::collections::HashSet;
use std::time::Instant;

use groundkit_retrieval::eval::{ndcg_at, read_qrels, read_queries};
use groundkit_retrieval::lexical::champions::{self, Champions};
use groundkit_retrieval::lexical::{LexicalIndex, bounded_top_k};
use groundkit_retrieval::model::SearchMode;
use groundkit_retrieval::{Fusion, OpenCollection, query_terms, ranked_hits};
use tantivy::directory::OwnedBytes;
use tantivy::schema::Value;
use tantivy::{DocAddress, Score, TantivyDocument};

type Hits = Vec<(Score, DocAddress)>;

/// A comma-separated list; empty when `arg` is.
fn list(arg: &str) -> Result<Vec<usize>, std::num::ParseIntError> {
    arg.split(',')
        .filter(|a| !a.is_empty())
        .map(str::parse)
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [
        _,
        index_dir,
        collection,
        queries,
        qrels,
        bounds,
        rescored,
        rest @ ..,
    ] = args.as_slice()
    else {
        return Err(
            "usage: lexical_bound INDEX_DIR COLLECTION QUERIES_JSONL QRELS_TSV \
                    BOUNDS RESCORED [ROUNDS]"
                .into(),
        );
    };
    let rounds: usize = rest.first().map(|r| r.parse()).transpose()?.unwrap_or(3);
    let open = OpenCollection::open(index_dir.as_ref(), ".".as_ref(), collection)?;
    let index = open
        .lexical()
        .ok_or("the collection has no lexical index")?;
    if index.champions.is_some() {
        return Err(
            "the collection was ingested with champion lists: its exact search is not".into(),
        );
    }
    let qrels = read_qrels(qrels.as_ref())?;
    let queries: Vec<(String, String, Vec<String>)> = read_queries(queries.as_ref())?
        .into_iter()
        .map(|q| {
            let terms = query_terms(&q.text);
            (q.id, q.text, terms)
        })
        .collect();
    // The exact way: what a search of a collection without champion lists ranks.
    let exact = |text: &str| {
        ranked_hits(
            &open,
            text,
            10,
            SearchMode::Lexical,
            None,
            Fusion::default(),
        )
    };
    let mut built = Vec::new();
    for bound in list(bounds)? {
        let started = Instant::now();
        let mut bytes = Vec::new();
        let lists = champions::write(
            &index.searcher,
            index.fields.content,
            bound as u32,
            &mut bytes,
        )?;
        let seconds = started.elapsed().as_secs_f64();
        let size = bytes.len();
        let opened = Champions::from_bytes(OwnedBytes::new(bytes), &index.searcher)?;
        built.push((bound, opened, lists, size, seconds));
    }
    // Way 0 is exact; then every (bound, rescored) pair.
    let mut ways: Vec<Option<(usize, usize)>> = vec![None];
    for (i, _) in built.iter().enumerate() {
        for depth in list(rescored)? {
            ways.push(Some((i, depth)));
        }
    }
    let mut round_seconds = vec![Vec::new(); ways.len()];
    let mut query_ms = vec![Vec::new(); ways.len()];
    let mut tops: Vec<Vec<Hits>> = vec![Vec::new(); ways.len()];
    for round in 0..rounds {
        for (w, way) in ways.iter().enumerate() {
            let started = Instant::now();
            for (_, text, terms) in &queries {
                let one = Instant::now();
                let hits = match way {
                    None => exact(text)?.hits,
                    Some((b, depth)) => {
                        match bounded_top_k(
                            &index.searcher,
                            index.fields.content,
                            &built[*b].1,
                            terms,
                            10,
                            *depth,
                        )? {
                            Some(hits) => hits,
                            None => exact(text)?.hits,
                        }
                    }
                };
                query_ms[w].push(one.elapsed().as_secs_f64() * 1e3);
                if round == 0 {
                    tops[w].push(hits);
                }
            }
            round_seconds[w].push(started.elapsed().as_secs_f64());
        }
    }
    let report: Vec<serde_json::Value> = ways
        .iter()
        .enumerate()
        .map(
            |(w, way)| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
                let mut ndcg = 0.0;
                let mut judged = 0;
                let (mut shared, mut differ) = (0usize, 0usize);
                for (q, (id, _, _)) in queries.iter().enumerate() {
                    let top = &tops[w][q];
                    let exact: HashSet<DocAddress> = tops[0][q].iter().map(|h| h.1).collect();
                    shared += top.iter().filter(|h| exact.contains(&h.1)).count();
                    differ += usize::from(addresses(top) != addresses(&tops[0][q]));
                    if let Some(grades) = qrels.get(id) {
                        ndcg += ndcg_at(&documents(index, top)?, grades, 10);
                        judged += 1;
                    }
                }
                let mut ms = query_ms[w].clone();
                ms.sort_by(f64::total_cmp);
                let mut secs = round_seconds[w].clone();
                secs.sort_by(f64::total_cmp);
                let mut entry = serde_json::json!({
                    "round_seconds_median": secs[secs.len() / 2],
                    "p50_ms": ms[ms.len() / 2],
                    "p99_ms": ms[ms.len() * 99 / 100],
                    "ndcg_at_10": ndcg / judged.max(1) as f64,
                    "judged_queries": judged,
                    "mean_shared_with_exact_top10": shared as f64 / queries.len() as f64,
                    "top10_differs_from_exact": differ,
                });
                entry["way"] = match way {
                    None => "exact".into(),
                    Some((b, depth)) => {
                        let (bound, _, lists, size, seconds) = &built[*b];
                        serde_json::json!({
                            "bound": bound, "rescored": depth, "lists": lists,
                            "file_bytes": size, "write_seconds": seconds,
                        })
                    }
                };
                Ok(entry)
            },
        )
        .collect::<Result<_, _>>()?;
    println!(
        "{}",
        serde_json::json!({
            "chunks": index.searcher.num_docs(),
            "segments": index.searcher.segment_readers().len(),
            "queries": queries.len(),
            "rounds": rounds,
            "ways": report,
        })
    );
    Ok(())
}

fn addresses(hits: &Hits) -> Vec<DocAddress> {
    hits.iter().map(|h| h.1).collect()
}

/// The documents of `hits`, in order, each at its first appearance.
fn documents(index: &LexicalIndex, hits: &Hits) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut seen = HashSet::new();
    let mut ranked = Vec::new();
    for (_, address) in hits {
        let doc: TantivyDocument = index.searcher.doc(*address)?;
        let id = doc
            .get_first(index.fields.document_id)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned();
        if seen.insert(id.clone()) {
            ranked.push(id);
        }
    }
    Ok(ranked)
}
