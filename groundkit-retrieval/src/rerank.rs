//! Rerankers: models that score a query against each candidate passage, behind one trait, and
//! the one function that reorders a search's results by those scores.
//!
//! The implementations live in the `groundkit-embed` crate (a cross-encoder in process, or a
//! rerank API over HTTP). Only the operator's configuration chooses a reranker; a request can
//! only ask for the configured one.

use crate::model::RetrievalResult;
use groundkit_core::Error;

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
    let passages: Vec<&str> = results.iter().map(|r| r.text()).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Citation, SourceClass};

    /// Answers with the scores it was built with, whatever it is asked.
    struct Fixed(Vec<f32>);

    impl Reranker for Fixed {
        fn model(&self) -> &str {
            "fixed"
        }
        fn score(&self, _query: &str, _passages: &[&str]) -> Result<Vec<f32>, Error> {
            Ok(self.0.clone())
        }
    }

    fn results(n: usize) -> Vec<RetrievalResult> {
        (0..n)
            .map(|i| RetrievalResult {
                chunk_id: format!("c{i}"),
                document_id: format!("d{i}"),
                score: 10.0 - i as f32,
                rank: i as u32 + 1,
                content: Some(format!("passage {i}")),
                content_truncated: false,
                snippet: None,
                scope: None,
                citation: Citation {
                    document_id: format!("d{i}"),
                    chunk_id: format!("c{i}"),
                    source: format!("d{i}.txt"),
                    source_class: SourceClass::Text,
                    extractor: None,
                    start_offset: 0,
                    end_offset: 9,
                    start_line: None,
                    end_line: None,
                },
                collection: None,
            })
            .collect()
    }

    fn ids(results: &[RetrievalResult]) -> Vec<&str> {
        results.iter().map(|r| r.chunk_id.as_str()).collect()
    }

    #[test]
    fn best_score_first_ties_keep_their_order_and_top_k_cuts() {
        let got = rerank(&Fixed(vec![0.1, 0.9, 0.5, 0.9]), "q", results(4), 3).expect("rerank");
        assert_eq!(ids(&got), ["c1", "c3", "c2"]);
        assert_eq!(got.iter().map(|r| r.rank).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(
            got.iter().map(|r| r.score).collect::<Vec<_>>(),
            [0.9, 0.9, 0.5]
        );
    }

    #[test]
    fn a_wrong_number_of_scores_or_a_non_number_is_an_error() {
        for scores in [vec![1.0], vec![1.0, 2.0, 3.0], vec![1.0, f32::NAN]] {
            let err = rerank(&Fixed(scores.clone()), "q", results(2), 2).expect_err("refused");
            assert_eq!(err.kind(), "rerank_error", "{scores:?}");
        }
        // Nothing to score: the reranker is not asked.
        let none = rerank(&Fixed(vec![1.0]), "q", Vec::new(), 2).expect("empty");
        assert!(none.is_empty());
    }
}
