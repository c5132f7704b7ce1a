//! Rerankers: the in-process cross-encoder against `transformers`, and reranking through the
//! service.

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
