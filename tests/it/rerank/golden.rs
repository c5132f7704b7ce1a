//! The in-process cross-encoder reproduces `transformers`' `BertForSequenceClassification` and
//! `XLMRobertaForSequenceClassification`: golden logits for 27 (query, passage) pairs per model,
//! made once by `tests/rerank/make_fixture.py` and committed beside the models in
//! `tests/fixtures/rerank/`.

use std::sync::Arc;

use groundkit_retrieval::rerank::{Reranker, rerank};
use groundkit_retrieval::{Citation, RetrievalResult, SourceClass};
use serde::Deserialize;

use groundkit_embed::CrossEncoder;

use super::{tiny, tiny_dir, tiny_xlm_roberta};
use crate::embed::repo_root;

#[derive(Deserialize)]
struct Golden {
    max_positions: usize,
    pairs: Vec<Pair>,
}

#[derive(Deserialize)]
struct Pair {
    query: String,
    passage: String,
    logit: f32,
    tokens: usize,
    query_tokens: usize,
}

fn golden_of(name: &str) -> Golden {
    let path = repo_root().join(format!("tests/fixtures/rerank/{name}.golden.json"));
    serde_json::from_slice(&std::fs::read(path).expect("golden fixture")).expect("golden json")
}

fn golden() -> Golden {
    golden_of("tiny-cross-encoder")
}

/// Each committed model, its name and its golden logits.
fn models() -> [(&'static str, Arc<CrossEncoder>, Golden); 2] {
    [
        ("bert", tiny(), golden()),
        (
            "xlm-roberta",
            tiny_xlm_roberta(),
            golden_of("tiny-xlm-roberta"),
        ),
    ]
}

/// The query's tokens in a pair's ids: those before the first separator (which is also the
/// pair's last token), after the first token.
fn query_tokens(ids: &[u32]) -> usize {
    let separator = ids.last().expect("a separator");
    ids.iter()
        .position(|id| id == separator)
        .expect("separator")
        - 1
}

#[test]
fn every_pair_scores_as_transformers_scores_it() {
    for (name, model, golden) in models() {
        every_pair_scores(name, &model, &golden);
    }
}

fn every_pair_scores(name: &str, model: &CrossEncoder, golden: &Golden) {
    for pair in &golden.pairs {
        let got = model.score(&pair.query, &[&pair.passage]).expect("score");
        assert!(
            (got[0] - pair.logit).abs() <= 1e-4,
            "{name}: {} / {}: {} against {}",
            pair.query,
            pair.passage,
            got[0],
            pair.logit
        );
    }
}

#[test]
fn the_passage_loses_tokens_not_the_query() {
    for (name, model, golden) in models() {
        assert_eq!(model.max_tokens(), golden.max_positions, "{name}");
        let mut truncated = 0;
        for pair in &golden.pairs {
            let (ids, _) = model
                .pair_tokens(&pair.query, &pair.passage)
                .expect("tokens");
            let at = format!("{name}: {} / {}", pair.query, pair.passage);
            assert_eq!(ids.len(), pair.tokens, "{at}");
            assert_eq!(query_tokens(&ids), pair.query_tokens, "{at}");
            if ids.len() == golden.max_positions {
                truncated += 1;
            }
        }
        assert!(truncated >= 4, "{name}: the fixture exercises truncation");
        // A long passage keeps the whole query.
        let long = "jet lag travel light ".repeat(40);
        let query = "what helps with jet lag";
        let (ids, _) = model.pair_tokens(query, &long).expect("tokens");
        assert_eq!(ids.len(), golden.max_positions, "{name}");
        let (alone, _) = model.pair_tokens(query, "x").expect("tokens");
        assert_eq!(
            query_tokens(&ids),
            query_tokens(&alone),
            "{name}: every query token survives"
        );
    }
    // BERT marks the passage as segment 1.
    let (_, types) = tiny()
        .pair_tokens("bone cancer", "light travel")
        .expect("tokens");
    assert_eq!(types, [0, 0, 0, 0, 1, 1, 1]);
}

#[test]
fn a_batch_scores_each_passage_as_it_scores_alone() {
    for (_, model, golden) in models() {
        batch_scores_as_alone(&model, &golden);
    }
}

fn batch_scores_as_alone(model: &CrossEncoder, golden: &Golden) {
    let query = &golden.pairs[0].query;
    let passages: Vec<&str> = golden
        .pairs
        .iter()
        .filter(|p| &p.query == query)
        .map(|p| p.passage.as_str())
        .collect();
    assert!(passages.len() >= 8);
    let batch = model.score(query, &passages).expect("batch");
    for (passage, in_batch) in passages.iter().zip(&batch) {
        let alone = model.score(query, &[passage]).expect("alone")[0];
        assert!(
            (alone - in_batch).abs() <= 1e-5,
            "{passage}: {alone} vs {in_batch}"
        );
    }
}

fn result(i: usize, content: &str) -> RetrievalResult {
    RetrievalResult {
        chunk_id: format!("c{i}"),
        document_id: format!("d{i}"),
        score: 100.0 - i as f32,
        rank: i as u32 + 1,
        content: Some(content.to_owned()),
        content_truncated: false,
        snippet: None,
        citation: Citation {
            document_id: format!("d{i}"),
            chunk_id: format!("c{i}"),
            source: format!("doc{i}.txt"),
            source_class: SourceClass::Text,
            extractor: None,
            start_offset: 0,
            end_offset: content.len() as u64,
            start_line: None,
            end_line: None,
        },
        scope: None,
        collection: None,
    }
}

#[test]
fn rerank_orders_by_the_models_scores_and_keeps_top_k() {
    let golden = golden();
    let query = golden.pairs[8].query.clone();
    let pairs: Vec<&Pair> = golden.pairs.iter().filter(|p| p.query == query).collect();
    let results: Vec<RetrievalResult> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| result(i, &p.passage))
        .collect();
    let mut want: Vec<(f32, String)> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| (p.logit, format!("c{i}")))
        .collect();
    want.sort_by(|a, b| b.0.total_cmp(&a.0));
    let got = rerank(tiny().as_ref(), &query, results, 3).expect("rerank");
    assert_eq!(got.len(), 3);
    for (rank, (result, (logit, id))) in got.iter().zip(&want).enumerate() {
        assert_eq!(&result.chunk_id, id, "rank {}", rank + 1);
        assert_eq!(result.rank, rank as u32 + 1);
        assert!((result.score - logit).abs() <= 1e-4);
    }
    assert!(
        rerank(tiny().as_ref(), &query, Vec::new(), 3)
            .expect("empty")
            .is_empty()
    );
}

#[test]
fn a_model_without_a_classification_head_is_refused() {
    let err = CrossEncoder::load(&crate::embed::model_dir(), 1)
        .expect_err("an embedding model is not a cross-encoder");
    assert_eq!(err.kind(), "validation_error");
    assert!(
        err.to_string().contains("BertForSequenceClassification"),
        "{err}"
    );
    let missing = tiny_dir().join("absent");
    let err = CrossEncoder::load(&missing, 1).expect_err("no directory");
    assert_eq!(err.kind(), "validation_error");
}
