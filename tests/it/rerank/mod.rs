//! Rerankers: the in-process cross-encoder against `transformers`, and reranking through the
//! service.
//!
//! What this module guards:
//!
//! - The in-process cross-encoder scores as `transformers` does, alone or in a batch:
//!   `golden::every_pair_scores_as_transformers_scores_it`,
//!   `golden::a_batch_scores_each_passage_as_it_scores_alone`.
//! - The endpoint reranker keeps the endpoint embedder's rules (outbound opt-in, the key never
//!   shown, no provider text in a failure):
//!   `http::loopback_endpoints_need_the_opt_in_and_are_not_contacted_without_it`,
//!   `http::the_api_key_is_sent_and_never_shown`,
//!   `http::server_errors_are_retried_and_the_final_failure_shows_no_provider_text`.
//! - A reranker that fails fails the search alike on every transport:
//!   `http::an_endpoint_that_goes_away_fails_the_search_on_every_transport_alike`.

mod golden;
mod http;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use groundkit_embed::CrossEncoder;

use crate::embed::repo_root;

/// The committed tiny cross-encoder (`tests/rerank/make_fixture.py`): random weights, real
/// architecture, tokenizer and layout.
pub(crate) fn tiny_dir() -> PathBuf {
    repo_root().join("tests/fixtures/rerank/tiny-cross-encoder")
}

pub(crate) fn tiny() -> Arc<CrossEncoder> {
    static MODEL: OnceLock<Arc<CrossEncoder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            Arc::new(CrossEncoder::load(&tiny_dir(), 2).expect("load the tiny cross-encoder"))
        })
        .clone()
}

/// The committed tiny XLM-RoBERTa cross-encoder (the family of bge-reranker-base).
pub(crate) fn tiny_xlm_roberta() -> Arc<CrossEncoder> {
    static MODEL: OnceLock<Arc<CrossEncoder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = repo_root().join("tests/fixtures/rerank/tiny-xlm-roberta");
            Arc::new(CrossEncoder::load(&dir, 2).expect("load the tiny XLM-RoBERTa cross-encoder"))
        })
        .clone()
}
