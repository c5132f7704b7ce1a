//! The in-process cross-encoder reproduces `transformers`' `BertForSequenceClassification`:
//! golden logits for 27 (query, passage) pairs, made once by `tests/rerank/make_fixture.py` and
//! committed as `tests/fixtures/rerank/tiny-cross-encoder.golden.json`.

use groundkit_core::retrieval::rerank::{Reranker, rerank};
use groundkit_core::retrieval::{Citation, RetrievalResult, SourceClass};
use serde::Deserialize;

use super::{tiny, tiny_dir};
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

fn golden() -> Golden {
    let path = repo_root().join("tests/fixtures/rerank/tiny-cross-encoder.golden.json");
    serde_json::from_slice(&std::fs::read(path).expect("golden fixture")).expect("golden json")
}

#[test]
fn every_pair_scores_as_transformers_scores_it() {
    let golden = golden();
    let model = tiny();
    for pair in &golden.pairs {
        let got = model.score(&pair.query, &[&pair.passage]).expect("score");
        assert!(
            (got[0] - pair.logit).abs() <= 1e-4,
            "{} / {}: {} against {}",
            pair.query,
            pair.passage,
            got[0],
            pair.logit
        );
    }
}

#[test]
fn the_passage_loses_tokens_not_the_query() {
    let golden = golden();
    let model = tiny();
    assert_eq!(model.max_tokens(), golden.max_positions);
    let mut truncated = 0;
    for pair in &golden.pairs {
        let (ids, types) = model
            .pair_tokens(&pair.query, &pair.passage)
            .expect("tokens");
        assert_eq!(ids.len(), pair.tokens, "{} / {}", pair.query, pair.passage);
        // [CLS] query [SEP] are segment 0.
        let query_tokens = types.iter().filter(|&&t| t == 0).count() - 2;
        assert_eq!(query_tokens, pair.query_tokens, "{}", pair.query);
        if ids.len() == golden.max_positions {
            truncated += 1;
        }
    }
    assert!(truncated >= 4, "the fixture exercises truncation");
    // A long passage keeps the whole query.
    let long = "jet lag travel light ".repeat(40);
    let query = "what helps with jet lag";
    let (ids, types) = model.pair_tokens(query, &long).expect("tokens");
    assert_eq!(ids.len(), golden.max_positions);
    let (alone, _) = model.pair_tokens(query, "x").expect("tokens");
    assert_eq!(
        types.iter().filter(|&&t| t == 0).count(),
        alone.len() - 2,
        "every query token survives"
    );
}

#[test]
fn a_batch_scores_each_passage_as_it_scores_alone() {
    let golden = golden();
    let model = tiny();
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
        content: content.to_owned(),
        citation: Citation {
            document_id: format!("d{i}"),
            chunk_id: format!("c{i}"),
            source: format!("doc{i}.txt"),
            source_class: SourceClass::Text,
            extractor: None,
            start_offset: 0,
            end_offset: content.len() as u64,
        },
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
    let err = groundkit_embed::CrossEncoder::load(&crate::embed::model_dir(), 1)
        .expect_err("an embedding model is not a cross-encoder");
    assert_eq!(err.kind(), "validation_error");
    assert!(
        err.to_string().contains("BertForSequenceClassification"),
        "{err}"
    );
    let missing = tiny_dir().join("absent");
    let err = groundkit_embed::CrossEncoder::load(&missing, 1).expect_err("no directory");
    assert_eq!(err.kind(), "validation_error");
}
