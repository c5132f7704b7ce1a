//! Retrieval quality on BEIR-format queries and qrels: nDCG@10, Recall@100 and MRR@10. A query
//! judged by document ids is measured at document level (a document ranks where its best chunk
//! ranks); one judged by lines (`PATH#L10-L42`, a function of a source file) at the level of
//! those lines ([`lines`]).

pub mod lines;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::embed::Embedder;
use crate::model::SearchMode;
use crate::open::OpenCollection;
use crate::search::{ChunkAddress, Fusion, hit_document_id, hit_place, ranked_hits};
use groundkit_core::Error;

/// One query.
#[derive(Debug, Clone, Deserialize)]
pub struct EvalQuery {
    /// Query id, as in the qrels.
    #[serde(rename = "_id")]
    pub id: String,
    /// Query text.
    pub text: String,
}

/// Relevance judgements: query id -> document id -> grade.
pub type Qrels = HashMap<String, HashMap<String, u32>>;

/// The measured quality.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalReport {
    /// Queries evaluated (those with at least one relevant document).
    pub queries: u32,
    /// Mean nDCG@10 (linear gains).
    pub ndcg_at_10: f64,
    /// Mean Recall@100.
    pub recall_at_100: f64,
    /// Mean reciprocal rank of the first relevant document within the top 10.
    pub mrr_at_10: f64,
    /// Wall-clock seconds of the retrieval.
    pub seconds: f64,
    /// The ranking mode evaluated.
    pub mode: SearchMode,
}

/// How an evaluation ranks.
#[derive(Clone, Copy)]
pub struct Ranking<'a> {
    /// The mode.
    pub mode: SearchMode,
    /// The query embedder (`dense` and `hybrid`).
    pub embedder: Option<&'a dyn Embedder>,
    /// Hybrid parameters.
    pub fusion: Fusion,
}

impl Ranking<'_> {
    /// Lexical ranking.
    pub fn lexical() -> Self {
        Self {
            mode: SearchMode::Lexical,
            embedder: None,
            fusion: Fusion::default(),
        }
    }
}

fn bad(field: &str, message: String) -> Error {
    Error::InvalidRequest {
        field: Some(field.to_owned()),
        message,
    }
}

/// Reads a BEIR `queries.jsonl`.
pub fn read_queries(path: &Path) -> Result<Vec<EvalQuery>, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|_| bad("queries", "cannot be read".into()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .map_err(|err| bad("queries", format!("line {}: {err}", i + 1)))
        })
        .collect()
}

/// Reads a BEIR qrels TSV (`query-id corpus-id score`, optional header line).
pub fn read_qrels(path: &Path) -> Result<Qrels, Error> {
    let text = std::fs::read_to_string(path).map_err(|_| bad("qrels", "cannot be read".into()))?;
    let mut qrels: Qrels = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
        if cols.len() < 3 {
            if line.trim().is_empty() {
                continue;
            }
            return Err(bad(
                "qrels",
                format!("line {}: expected three tab-separated columns", i + 1),
            ));
        }
        let Ok(grade) = cols[2].parse::<u32>() else {
            if i == 0 {
                continue; // header
            }
            return Err(bad(
                "qrels",
                format!("line {}: score is not a number", i + 1),
            ));
        };
        qrels
            .entry(cols[0].to_owned())
            .or_default()
            .insert(cols[1].to_owned(), grade);
    }
    Ok(qrels)
}

/// The `depth` best documents for `query`, each ranked by its best chunk.
pub fn ranked_documents(
    open: &OpenCollection,
    query: &str,
    depth: usize,
    how: &Ranking<'_>,
) -> Result<Vec<String>, Error> {
    ranked_units(open, query, depth, how, |address, _| {
        hit_document_id(open, address)
    })
}

/// The `depth` best targets and chunks for `query` in a ranking judged by the lines `judged`
/// names ([`lines`]), each target ranked by its best chunk.
pub fn ranked_targets(
    open: &OpenCollection,
    query: &str,
    depth: usize,
    how: &Ranking<'_>,
    judged: &HashMap<String, u32>,
) -> Result<Vec<String>, Error> {
    ranked_units(open, query, depth, how, |address, ranked| {
        Ok(lines::ranked_unit(
            &hit_place(open, address)?,
            judged,
            ranked,
        ))
    })
}

/// The `depth` best distinct units for `query`, `unit` naming what each ranked chunk stands for
/// given those ranked before it.
fn ranked_units(
    open: &OpenCollection,
    query: &str,
    depth: usize,
    how: &Ranking<'_>,
    mut unit: impl FnMut(ChunkAddress, &HashSet<String>) -> Result<String, Error>,
) -> Result<Vec<String>, Error> {
    if open.lexical().is_none() {
        return Ok(Vec::new());
    }
    let mut limit = depth * 2;
    loop {
        let hits = ranked_hits(open, query, limit, how.mode, how.embedder, how.fusion, None)?.hits;
        let mut seen = HashSet::new();
        let mut units = Vec::with_capacity(depth);
        for (_, address) in &hits {
            let id = unit(*address, &seen)?;
            if seen.insert(id.clone()) {
                units.push(id);
                if units.len() == depth {
                    return Ok(units);
                }
            }
        }
        if hits.len() < limit {
            return Ok(units);
        }
        limit *= 4;
    }
}

/// nDCG@k with linear gains.
pub fn ndcg_at(ranked: &[String], judged: &HashMap<String, u32>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, doc)| f64::from(judged.get(doc).copied().unwrap_or(0)) / ((i + 2) as f64).log2())
        .sum();
    let mut ideal: Vec<u32> = judged.values().copied().filter(|g| *g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| f64::from(*g) / ((i + 2) as f64).log2())
        .sum();
    if idcg == 0.0 { 0.0 } else { dcg / idcg }
}

/// Recall@k.
pub fn recall_at(ranked: &[String], judged: &HashMap<String, u32>, k: usize) -> f64 {
    let relevant = judged.values().filter(|g| **g > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranked
        .iter()
        .take(k)
        .filter(|d| judged.get(*d).is_some_and(|g| *g > 0))
        .count();
    found as f64 / relevant as f64
}

/// Reciprocal rank of the first relevant document within the top k.
pub fn mrr_at(ranked: &[String], judged: &HashMap<String, u32>, k: usize) -> f64 {
    ranked
        .iter()
        .take(k)
        .position(|d| judged.get(d).is_some_and(|g| *g > 0))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// Evaluates the collection on `queries` judged by `qrels`: by document, or by lines for a query
/// whose judgements all name lines.
pub fn evaluate(
    open: &OpenCollection,
    queries: &[EvalQuery],
    qrels: &Qrels,
    how: &Ranking<'_>,
) -> Result<EvalReport, Error> {
    evaluate_judged(queries, qrels, how.mode, |query, judged| {
        if lines::judges_lines(judged) {
            ranked_targets(open, query, 100, how, judged)
        } else {
            ranked_documents(open, query, 100, how)
        }
    })
}

/// Evaluates a ranking on `queries` judged by `qrels`: `rank` gives each query's documents,
/// best first (at least 100 when there are that many).
pub fn evaluate_with(
    queries: &[EvalQuery],
    qrels: &Qrels,
    mode: SearchMode,
    mut rank: impl FnMut(&str) -> Result<Vec<String>, Error>,
) -> Result<EvalReport, Error> {
    evaluate_judged(queries, qrels, mode, |query, _| rank(query))
}

/// [`evaluate_with`], `rank` also given the query's judgements.
pub fn evaluate_judged(
    queries: &[EvalQuery],
    qrels: &Qrels,
    mode: SearchMode,
    mut rank: impl FnMut(&str, &HashMap<String, u32>) -> Result<Vec<String>, Error>,
) -> Result<EvalReport, Error> {
    let started = Instant::now();
    let (mut n, mut ndcg, mut recall, mut mrr) = (0u32, 0.0, 0.0, 0.0);
    for query in queries {
        let Some(judged) = qrels.get(&query.id) else {
            continue;
        };
        if !judged.values().any(|g| *g > 0) {
            continue;
        }
        let ranked = rank(&query.text, judged)?;
        n += 1;
        ndcg += ndcg_at(&ranked, judged, 10);
        recall += recall_at(&ranked, judged, 100);
        mrr += mrr_at(&ranked, judged, 10);
    }
    let mean = |x: f64| if n == 0 { 0.0 } else { x / f64::from(n) };
    Ok(EvalReport {
        queries: n,
        ndcg_at_10: mean(ndcg),
        recall_at_100: mean(recall),
        mrr_at_10: mean(mrr),
        seconds: started.elapsed().as_secs_f64(),
        mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_match_hand_computed_values() {
        let judged: HashMap<String, u32> = [("a".to_owned(), 1), ("b".to_owned(), 1)].into();
        let ranked: Vec<String> = ["x", "a", "y", "b"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((ndcg_at(&ranked, &judged, 10) - dcg / idcg).abs() < 1e-12);
        assert!((mrr_at(&ranked, &judged, 10) - 0.5).abs() < 1e-12);
        assert!((recall_at(&ranked, &judged, 2) - 0.5).abs() < 1e-12);
    }
}
