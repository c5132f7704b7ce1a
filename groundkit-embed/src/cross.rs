//! The in-process reranker: a cross-encoder with one label, of the BERT family
//! (`BertForSequenceClassification`: ms-marco-MiniLM-L-6-v2 and the like) or the RoBERTa family
//! (`XLMRobertaForSequenceClassification`: bge-reranker-base, bge-reranker-v2-m3), loaded from
//! its directory in the layout `transformers` saves (`config.json`, `tokenizer.json`,
//! `model.safetensors`, optionally `tokenizer_config.json`) and run on the same encoder as the
//! embedder.
//!
//! A query and a passage are one sequence as the model's own tokenizer file joins them
//! (`[CLS] query [SEP] passage [SEP]` with the passage in segment 1 for BERT,
//! `<s> query </s></s> passage </s>` for RoBERTa). What does not fit the model's length is cut from the passage, never the query,
//! as these models were trained; only a query too long to leave the passage any room is cut too
//! (longest first). The score is the classifier's single logit.

use std::path::Path;

use serde::Deserialize;
use tokenizers::{
    EncodeInput, Encoding, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy,
};

use groundkit_core::Error;
use groundkit_retrieval::rerank::Reranker;

use crate::batch;
use crate::bert::{Bert, BertConfig, ClassifierHead, Sequence};
use crate::model_dir::ModelDir;
use crate::setting::{Names, Setting};

/// The `transformers` architectures this loader runs.
const ARCHITECTURES: [&str; 3] = [
    "BertForSequenceClassification",
    "XLMRobertaForSequenceClassification",
    "RobertaForSequenceClassification",
];

/// What `config.json` says about the head.
#[derive(Deserialize)]
struct HeadConfig {
    #[serde(default)]
    architectures: Vec<String>,
    num_labels: Option<usize>,
    #[serde(default)]
    id2label: std::collections::BTreeMap<String, String>,
}

/// What `tokenizer_config.json` says about length (`transformers` writes a huge number when the
/// tokenizer itself sets no limit).
#[derive(Deserialize, Default)]
struct TokenizerConfig {
    model_max_length: Option<f64>,
}

/// A cross-encoder run in this process.
pub struct CrossEncoder {
    bert: Bert,
    head: ClassifierHead,
    /// Truncates the passage only.
    passage_first: Tokenizer,
    /// Truncates the longer of the two, for a query that leaves the passage no room.
    longest_first: Tokenizer,
    max_tokens: usize,
    model: String,
    threads: usize,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder")
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl CrossEncoder {
    /// Loads the cross-encoder in `dir`, to run on `threads` threads.
    pub fn load(dir: &Path, threads: usize) -> Result<Self, Error> {
        Self::load_as(dir, threads, Setting::field)
    }

    /// [`load`](Self::load), with errors naming the directory's setting as `names` does.
    pub fn load_as(dir: &Path, threads: usize, names: Names) -> Result<Self, Error> {
        let files = ModelDir::new(dir, names(Setting::ModelDir));
        let config_bytes = files.read("config.json")?;
        let config: BertConfig = files.parse_json("config.json", &config_bytes)?;
        let head_config: HeadConfig = files.parse_json("config.json", &config_bytes)?;
        if !head_config
            .architectures
            .iter()
            .any(|a| ARCHITECTURES.contains(&a.as_str()))
        {
            return Err(files.invalid(format_args!(
                "not a cross-encoder this build runs: config.json's architectures name none of {}",
                ARCHITECTURES.join(", ")
            )));
        }
        let labels = head_config
            .num_labels
            .unwrap_or(match head_config.id2label.len() {
                0 => 1,
                n => n,
            });
        if labels != 1 {
            return Err(files.invalid(format_args!(
                "the classifier has {labels} labels; a reranker gives one relevance score (1 label)"
            )));
        }
        let limits: TokenizerConfig = files.read_optional_json("tokenizer_config.json")?;
        let weights = files.read("model.safetensors")?;
        let head = ClassifierHead::load(&config, &weights, 1).map_err(|m| files.invalid(m))?;
        let bert = Bert::load(config, &weights).map_err(|m| files.invalid(m))?;
        let positions = bert.max_positions();
        let max_tokens = limits
            .model_max_length
            .filter(|n| n.is_finite() && *n >= 4.0 && *n <= positions as f64)
            .map_or(positions, |n| n as usize);
        // Read once; the two tokenizers (one per truncation strategy) parse the same bytes.
        let tokenizer_bytes = files.read("tokenizer.json")?;
        let tokenizer = |strategy| {
            let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
                .map_err(|err| files.invalid(format_args!("tokenizer.json is not valid: {err}")))?;
            tokenizer
                .with_truncation(Some(TruncationParams {
                    direction: TruncationDirection::Right,
                    max_length: max_tokens,
                    strategy,
                    stride: 0,
                }))
                .map_err(|err| files.invalid(format_args!("cannot set truncation: {err}")))?;
            tokenizer.with_padding(None);
            Ok::<_, Error>(tokenizer)
        };
        let passage_first = tokenizer(TruncationStrategy::OnlySecond)?;
        let longest_first = tokenizer(TruncationStrategy::LongestFirst)?;
        Ok(Self {
            bert,
            head,
            passage_first,
            longest_first,
            max_tokens,
            model: files.model_name(),
            threads: threads.max(1),
        })
    }

    /// The longest sequence (query, passage and special tokens) the model sees.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The token ids and segments of `(query, passage)` as the model sees them.
    pub fn pair_tokens(&self, query: &str, passage: &str) -> Result<(Vec<u32>, Vec<u32>), Error> {
        let encoding = self.encode(query, passage)?;
        Ok((
            encoding.get_ids().to_vec(),
            encoding.get_type_ids().to_vec(),
        ))
    }

    fn encode(&self, query: &str, passage: &str) -> Result<Encoding, Error> {
        let pair = || EncodeInput::Dual(query.into(), passage.into());
        self.passage_first
            .encode(pair(), true)
            .or_else(|_| self.longest_first.encode(pair(), true))
            .map_err(|err| Error::rerank(format!("tokenization failed: {err}"), None))
    }
}

impl Reranker for CrossEncoder {
    fn model(&self) -> &str {
        &self.model
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, Error> {
        let encodings = passages
            .iter()
            .map(|passage| self.encode(query, passage))
            .collect::<Result<Vec<_>, _>>()?;
        let sequences: Vec<Sequence<'_>> = encodings
            .iter()
            .map(|e| Sequence {
                ids: e.get_ids(),
                types: e.get_type_ids(),
            })
            .collect();
        let h = self.bert.hidden_size();
        let logit = |states: &[f32], start: usize, _len: usize| {
            self.head.logits(&states[start * h..(start + 1) * h])[0]
        };
        Ok(batch::run(&self.bert, &sequences, self.threads, &logit))
    }
}
