//! Rerankers: models that score a query against each candidate passage, behind one trait, and
//! the one function that reorders a search's results by those scores.
//!
//! The implementations live in the `groundkit-embed` crate (a cross-encoder in process, or a
//! rerank API over HTTP). Only the operator's configuration chooses a reranker; a request can
//! only ask for the configured one.

use crate::Error;
use crate::retrieval::model::RetrievalResult;

/// Scores passages for a query.
pub trait Reranker: Send + Sync {
    /// The model's name, reported in search metadata (`rerank_model`).
    fn model(&self) -> &str;

    /// One score per passage, in order; higher means more relevant. Scores compare only within
    /// one call.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, Error>;
}

/// Reorders `results` by `reranker`'s scores for `query`, best first, and keeps the best
/// `top_k`: each result's `score` becomes the reranker's and `rank` its new position. Equal
/// scores keep the incoming order. A reranker that returns the wrong number of scores, or a
/// score that is not a number, is an error, never a silently shorter or unordered list.
pub fn rerank(
    reranker: &dyn Reranker,
    query: &str,
    results: Vec<RetrievalResult>,
    top_k: usize,
) -> Result<Vec<RetrievalResult>, Error> {
    let passages: Vec<&str> = results.iter().map(|r| r.content.as_str()).collect();
    let scores = if passages.is_empty() {
        Vec::new()
    } else {
        reranker.score(query, &passages)?
    };
    if scores.len() != results.len() {
        return Err(Error::rerank(
            format!(
                "the reranker returned {} scores for {} passages",
                scores.len(),
                results.len()
            ),
            None,
        ));
    }
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(Error::rerank(
            "the reranker returned a score that is not a finite number",
            None,
        ));
    }
    let mut scored: Vec<(f32, RetrievalResult)> = scores.into_iter().zip(results).collect();
    // A stable sort: equal scores keep the retrieval order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    Ok(scored
        .into_iter()
        .take(top_k)
        .enumerate()
        .map(|(i, (score, mut result))| {
            result.score = score;
            result.rank = i as u32 + 1;
            result
        })
        .collect())
}
