//! How a collection's lexical top-10 is best computed: every matching chunk scored, tantivy's
//! `TopDocs` with block-max WAND per segment, and `lexical::top_k` (MaxScore over windows bounded
//! by window maxima, one top-k across segments: what `retrieval::search` runs). The BEIR queries
//! run one at a time, single thread, in interleaved rounds; `top_k` computes each term's window
//! maxima when it first needs them, in the first round, as a server does. Prints JSON: each way's
//! total seconds per round, how many queries' top-10 differ from the exhaustive one (the pruned
//! ways may differ in a score's last bit), and, per number of query terms, the mean milliseconds
//! of the exhaustive way and of `top_k` over the rounds after the first. Used by
//! `bench/README.md` ("Growth"); run it with `--release`.
//!
//! `lexical_pruning INDEX_DIR COLLECTION QUERIES_JSONL [ROUNDS]`

use std::collections::BTreeMap;
use std::time::Instant;

use groundkit_retrieval::lexical::{WindowMaxima, top_k};
use groundkit_retrieval::{self as retrieval, OpenCollection, query_terms};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocId, Score, SegmentReader, Term};

type Hits = Vec<(Score, DocAddress)>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, index_dir, collection, queries, rest @ ..] = args.as_slice() else {
        return Err("usage: lexical_pruning INDEX_DIR COLLECTION QUERIES_JSONL [ROUNDS]".into());
    };
    let rounds: usize = rest.first().map(|p| p.parse()).transpose()?.unwrap_or(3);
    let open = OpenCollection::open(index_dir.as_ref(), ".".as_ref(), collection)?;
    let index = open
        .lexical()
        .ok_or("the collection has no lexical index")?;
    let searcher = &index.searcher;
    // The query `retrieval::search` builds: one clause per distinct analysed term.
    let queries: Vec<(Vec<String>, BooleanQuery)> =
        retrieval::eval::read_queries(queries.as_ref())?
            .iter()
            .map(|q| {
                let terms = query_terms(&q.text);
                let clauses = terms
                    .iter()
                    .map(|t| {
                        let term = Term::from_field_text(index.fields.content, t);
                        let clause: Box<dyn Query> =
                            Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                        (Occur::Should, clause)
                    })
                    .collect();
                (terms, BooleanQuery::new(clauses))
            })
            .collect();
    let exhaustive = |query: &BooleanQuery| -> tantivy::Result<Hits> {
        let every =
            TopDocs::with_limit(10).tweak_score(|_: &SegmentReader| |_: DocId, score: Score| score);
        searcher.search(query, &every)
    };
    let per_segment = |query: &BooleanQuery| -> tantivy::Result<Hits> {
        searcher.search(query, &TopDocs::with_limit(10).order_by_score())
    };
    let maxima = WindowMaxima::default();
    let mut seconds = [const { Vec::new() }; 3];
    let mut differ = [0usize; 2];
    // Per number of query terms: queries, and seconds of the exhaustive way and of `top_k`.
    let mut by_terms: BTreeMap<usize, (usize, f64, f64)> = BTreeMap::new();
    for round in 0..rounds {
        let mut totals = [0.0f64; 3];
        for (terms, query) in &queries {
            let started = Instant::now();
            let reference = exhaustive(query)?;
            let whole = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let pruned = per_segment(query)?;
            totals[1] += started.elapsed().as_secs_f64();
            let started = Instant::now();
            let shared = top_k(searcher, index.fields.content, terms, &maxima, 10)?;
            let wand = started.elapsed().as_secs_f64();
            totals[0] += whole;
            totals[2] += wand;
            if round > 0 {
                let cell = by_terms.entry(terms.len()).or_default();
                *cell = (cell.0 + 1, cell.1 + whole, cell.2 + wand);
            }
            if round == 0 {
                differ[0] += usize::from(addresses(&pruned) != addresses(&reference));
                differ[1] += usize::from(addresses(&shared) != addresses(&reference));
            }
        }
        for (way, total) in totals.into_iter().enumerate() {
            seconds[way].push(total);
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "queries": queries.len(),
            "segments": searcher.segment_readers().len(),
            "exhaustive_seconds": seconds[0],
            "per_segment_wand_seconds": seconds[1],
            "window_maxscore_top_k_seconds": seconds[2],
            "per_segment_wand_top10_differs": differ[0],
            "window_maxscore_top_k_top10_differs": differ[1],
            "by_terms": by_terms
                .iter()
                .map(|(terms, &(n, whole, wand))| serde_json::json!({
                    "terms": terms,
                    "queries": n / (rounds - 1).max(1),
                    "exhaustive_ms": 1e3 * whole / n as f64,
                    "top_k_ms": 1e3 * wand / n as f64,
                }))
                .collect::<Vec<_>>(),
        })
    );
    Ok(())
}

fn addresses(hits: &Hits) -> Vec<DocAddress> {
    hits.iter().map(|(_, address)| *address).collect()
}
