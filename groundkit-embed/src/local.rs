//! The in-process embedder: a sentence-transformers model of the BERT family, loaded from a
//! directory in the sentence-transformers layout and run on the CPU.
//!
//! Everything that decides a vector comes from the model's own files: the architecture from
//! `config.json`, the tokenizer from `tokenizer.json`, the maximum length from
//! `sentence_bert_config.json`, the pooling from the pooling module's `config.json`, unit
//! normalisation from a `Normalize` entry in `modules.json`, query and document prompts from
//! `config_sentence_transformers.json`. The truncation and padding that `tokenizer.json` itself
//! carries are replaced: some models ship one that truncates below the model's limit (the
//! tokenizer of all-MiniLM-L6-v2 stops at 128 tokens, the model at 256), and sequences are never
//! padded (see `bert`).

use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use groundkit_core::Error;
use groundkit_retrieval::embed::{Embedder, Role, normalize};
use groundkit_retrieval::{EmbedderKind, EmbeddingIdentity};

use crate::batch;
use crate::bert::{Bert, BertConfig, Sequence};
use crate::model_dir::ModelDir;
use crate::setting::{Names, Setting};

/// How token states become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    Mean,
    Cls,
    Max,
    MeanSqrtLen,
}

impl Pooling {
    fn as_str(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
            Pooling::Max => "max",
            Pooling::MeanSqrtLen => "mean_sqrt_len",
        }
    }
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

#[derive(Deserialize)]
struct Module {
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize, Default)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
    #[serde(default)]
    do_lower_case: bool,
}

#[derive(Deserialize, Default)]
struct SentenceTransformersConfig {
    #[serde(default)]
    prompts: std::collections::BTreeMap<String, String>,
}

/// A sentence-transformers model run in this process.
pub struct LocalEmbedder {
    bert: Bert,
    tokenizer: Tokenizer,
    pooling: Pooling,
    normalize: bool,
    lowercase: bool,
    query_prompt: String,
    document_prompt: String,
    identity: EmbeddingIdentity,
    threads: usize,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl LocalEmbedder {
    /// Loads the model in `dir` (sentence-transformers layout), to run on `threads` threads.
    pub fn load(dir: &Path, threads: usize) -> Result<Self, Error> {
        Self::load_as(dir, threads, Setting::field)
    }

    /// [`load`](Self::load), with errors naming the directory's setting as `names` does.
    pub fn load_as(dir: &Path, threads: usize, names: Names) -> Result<Self, Error> {
        let files = ModelDir::new(dir, names(Setting::ModelDir));
        let config_bytes = files.read("config.json")?;
        let config: BertConfig = files.parse_json("config.json", &config_bytes)?;
        let modules: Vec<Module> = files.read_optional_json("modules.json")?;
        let pooling_dir = modules
            .iter()
            .find(|m| m.kind.ends_with("models.Pooling"))
            .map_or_else(|| "1_Pooling".to_owned(), |m| m.path.clone());
        let pooling = pooling_mode(
            &files,
            &files.read_json(&format!("{pooling_dir}/config.json"))?,
        )?;
        let normalize = modules.iter().any(|m| m.kind.ends_with("models.Normalize"));
        let st_config: SentenceBertConfig =
            files.read_optional_json("sentence_bert_config.json")?;
        let prompts: SentenceTransformersConfig =
            files.read_optional_json("config_sentence_transformers.json")?;
        let max_tokens = st_config
            .max_seq_length
            .unwrap_or(config.max_position_embeddings)
            .min(config.max_position_embeddings);
        let tokenizer_bytes = files.read("tokenizer.json")?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|err| files.invalid(format_args!("tokenizer.json is not valid: {err}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|err| files.invalid(format_args!("cannot set truncation: {err}")))?;
        tokenizer.with_padding(None);
        let weights = files.read("model.safetensors")?;
        let query_prompt = prompts.prompts.get("query").cloned().unwrap_or_default();
        let document_prompt = ["document", "passage", "corpus"]
            .iter()
            .find_map(|name| prompts.prompts.get(*name).cloned())
            .unwrap_or_default();
        let fingerprint = {
            let mut hash = Sha256::new();
            for part in [&weights, &tokenizer_bytes, &config_bytes] {
                hash.update(Sha256::digest(part));
            }
            hash.update(
                format!(
                    "pooling={};normalize={normalize};max_tokens={max_tokens};lowercase={};query={query_prompt:?};document={document_prompt:?}",
                    pooling.as_str(),
                    st_config.do_lower_case
                )
                .as_bytes(),
            );
            let digest = hash.finalize();
            digest[..8]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let bert = Bert::load(config, &weights).map_err(|message| files.invalid(message))?;
        let identity = EmbeddingIdentity {
            kind: EmbedderKind::InProcess,
            model: files.model_name(),
            fingerprint,
            dimension: bert.hidden_size() as u32,
            pooling: pooling.as_str().to_owned(),
            normalized: normalize,
            max_tokens: Some(max_tokens.min(bert.max_positions()) as u32),
        };
        Ok(Self {
            bert,
            tokenizer,
            pooling,
            normalize,
            lowercase: st_config.do_lower_case,
            query_prompt,
            document_prompt,
            identity,
            threads: threads.max(1),
        })
    }

    /// The token ids of `texts` as the model sees them (prompt, truncation and special tokens
    /// applied).
    pub fn token_ids(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<u32>>, Error> {
        let prompt = match role {
            Role::Query => &self.query_prompt,
            Role::Document => &self.document_prompt,
        };
        let inputs: Vec<String> = texts
            .iter()
            .map(|t| {
                let text = format!("{prompt}{t}");
                if self.lowercase {
                    text.to_lowercase()
                } else {
                    text
                }
            })
            .collect();
        let encodings = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|err| Error::embedding(format!("tokenization failed: {err}"), None))?;
        Ok(encodings.iter().map(|e| e.get_ids().to_vec()).collect())
    }

    fn pool(&self, states: &[f32], start: usize, len: usize) -> Vec<f32> {
        let h = self.bert.hidden_size();
        let rows = states[start * h..(start + len) * h].chunks_exact(h);
        let mut out = vec![0.0f32; h];
        match self.pooling {
            Pooling::Cls => out.copy_from_slice(&states[start * h..start * h + h]),
            Pooling::Max => {
                out.fill(f32::NEG_INFINITY);
                for row in rows {
                    for (o, v) in out.iter_mut().zip(row) {
                        *o = o.max(*v);
                    }
                }
            }
            Pooling::Mean | Pooling::MeanSqrtLen => {
                for row in rows {
                    for (o, v) in out.iter_mut().zip(row) {
                        *o += v;
                    }
                }
                let divisor = match self.pooling {
                    Pooling::Mean => len as f32,
                    _ => (len as f32).sqrt(),
                };
                for o in &mut out {
                    *o /= divisor.max(1.0);
                }
            }
        }
        if self.normalize {
            normalize(&mut out);
        }
        out
    }
}

impl Embedder for LocalEmbedder {
    fn identity(&self) -> &EmbeddingIdentity {
        &self.identity
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, Error> {
        let ids = self.token_ids(texts, role)?;
        let sequences: Vec<Sequence<'_>> = ids.iter().map(|ids| Sequence::untyped(ids)).collect();
        let pool = |states: &[f32], start, len| self.pool(states, start, len);
        Ok(batch::run(&self.bert, &sequences, self.threads, &pool))
    }
}

fn pooling_mode(files: &ModelDir<'_>, config: &PoolingConfig) -> Result<Pooling, Error> {
    let modes = [
        (config.pooling_mode_mean_tokens, Some(Pooling::Mean)),
        (config.pooling_mode_cls_token, Some(Pooling::Cls)),
        (config.pooling_mode_max_tokens, Some(Pooling::Max)),
        (
            config.pooling_mode_mean_sqrt_len_tokens,
            Some(Pooling::MeanSqrtLen),
        ),
        (config.pooling_mode_weightedmean_tokens, None),
        (config.pooling_mode_lasttoken, None),
    ];
    let chosen: Vec<Option<Pooling>> = modes
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, m)| *m)
        .collect();
    match chosen.as_slice() {
        [Some(mode)] => Ok(*mode),
        [None] => {
            Err(files
                .invalid("the pooling mode is not supported (mean, cls, max or mean_sqrt_len)"))
        }
        [] => Err(files.invalid("the pooling configuration enables no mode")),
        _ => Err(files
            .invalid("the pooling configuration combines several modes, which is not supported")),
    }
}
