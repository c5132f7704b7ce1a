//! The BERT encoder's forward pass on the CPU: weights from a safetensors file, token ids in,
//! one hidden state per token out; and the sequence-classification head of cross-encoders.
//! RoBERTa-family checkpoints (`roberta.` tensors, positions after the padding id) run on the
//! same encoder.
//!
//! Sequences are packed, never padded: the dense layers run once over the tokens of every
//! sequence in a batch, one after another, and attention runs per sequence and head over that
//! sequence's own tokens. A padding token therefore cannot reach a real token's attention or a
//! pooled vector, which is what the attention mask exists to prevent in a padded batch.

use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};

use crate::kernels::{gelu_in_place, layer_norm_in_place, softmax_rows};
use crate::linear::Linear;
use crate::matmul::{View, matmul};

/// The architecture, from the model's `config.json`.
#[derive(Debug, Clone, serde::Deserialize)]
pub(crate) struct BertConfig {
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub(crate) type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub(crate) layer_norm_eps: f32,
    #[serde(default = "default_act")]
    pub(crate) hidden_act: String,
    #[serde(default = "default_position_type")]
    pub(crate) position_embedding_type: String,
    /// `bert`, or `roberta` / `xlm-roberta`, whose positions start after the padding id.
    #[serde(default)]
    pub(crate) model_type: String,
    #[serde(default)]
    pub(crate) pad_token_id: Option<usize>,
}

impl BertConfig {
    /// Whether this is a RoBERTa-family model (`roberta`, `xlm-roberta`, `camembert`): the same
    /// encoder, with positions counted from the padding id + 1 and its tensors under
    /// `roberta.`.
    pub(crate) fn is_roberta(&self) -> bool {
        matches!(
            self.model_type.as_str(),
            "roberta" | "xlm-roberta" | "camembert"
        )
    }

    /// The position-embedding row of a sequence's first token: 0 for BERT, the padding id + 1
    /// for RoBERTa (which numbers real tokens after the padding position).
    fn position_offset(&self) -> usize {
        if self.is_roberta() {
            self.pad_token_id.unwrap_or(1) + 1
        } else {
            0
        }
    }
}

fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f32 {
    1e-12
}
fn default_act() -> String {
    "gelu".to_owned()
}
fn default_position_type() -> String {
    "absolute".to_owned()
}

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    /// Query, key and value projections fused into one `[3H, H]` layer.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// A loaded BERT encoder.
pub(crate) struct Bert {
    config: BertConfig,
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    vocab_size: usize,
}

/// Why weights could not be loaded (operator-facing).
pub(crate) type LoadError = String;

struct Tensors<'a> {
    st: SafeTensors<'a>,
    prefix: &'static str,
}

impl Tensors<'_> {
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, LoadError> {
        let full = format!("{}{name}", self.prefix);
        let view = self
            .st
            .tensor(&full)
            .map_err(|_| format!("the weights have no tensor `{full}`"))?;
        if view.shape() != shape {
            return Err(format!(
                "tensor `{full}` has shape {:?}, the configuration implies {shape:?}",
                view.shape()
            ));
        }
        if view.dtype() != Dtype::F32 {
            return Err(format!(
                "tensor `{full}` is {:?}; only F32 weights are supported",
                view.dtype()
            ));
        }
        Ok(view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// A dense layer's checkpoint weight (`[outputs, inputs]`) and bias.
    fn dense(
        &self,
        name: &str,
        outputs: usize,
        inputs: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), LoadError> {
        Ok((
            self.get(&format!("{name}.weight"), &[outputs, inputs])?,
            self.get(&format!("{name}.bias"), &[outputs])?,
        ))
    }

    fn linear(&self, name: &str, outputs: usize, inputs: usize) -> Result<Linear, LoadError> {
        let (weight, bias) = self.dense(name, outputs, inputs)?;
        Ok(Linear::new(&weight, bias, inputs, outputs))
    }

    fn norm(&self, name: &str, size: usize) -> Result<LayerNorm, LoadError> {
        Ok(LayerNorm {
            gamma: self.get(&format!("{name}.weight"), &[size])?,
            beta: self.get(&format!("{name}.bias"), &[size])?,
        })
    }
}

impl Bert {
    /// Loads the encoder described by `config` from the bytes of a safetensors file. Tensor names
    /// are those of `transformers`' `BertModel`, with or without a leading `bert.`.
    pub(crate) fn load(config: BertConfig, weights: &[u8]) -> Result<Self, LoadError> {
        if !matches!(config.hidden_act.as_str(), "gelu" | "gelu_python") {
            return Err(format!(
                "activation `{}` is not supported (only the exact `gelu`)",
                config.hidden_act
            ));
        }
        if config.position_embedding_type != "absolute" {
            return Err(format!(
                "position embeddings `{}` are not supported (only `absolute`)",
                config.position_embedding_type
            ));
        }
        let h = config.hidden_size;
        if config.num_attention_heads == 0 || !h.is_multiple_of(config.num_attention_heads) {
            return Err("hidden_size is not a multiple of num_attention_heads".to_owned());
        }
        let st = SafeTensors::deserialize(weights)
            .map_err(|err| format!("the weights are not a safetensors file: {err}"))?;
        let prefix = ["bert.", "roberta."]
            .into_iter()
            .find(|p| {
                st.tensor(&format!("{p}embeddings.word_embeddings.weight"))
                    .is_ok()
            })
            .unwrap_or("");
        let t = Tensors { st, prefix };
        let word_view =
            t.st.tensor(&format!("{prefix}embeddings.word_embeddings.weight"))
                .map_err(|_| "the weights have no word embeddings".to_owned())?;
        let vocab_size = word_view.shape().first().copied().unwrap_or(0);
        let word = t.get("embeddings.word_embeddings.weight", &[vocab_size, h])?;
        let position = t.get(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?;
        let token_type = t.get(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?;
        let embedding_norm = t.norm("embeddings.LayerNorm", h)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let [q, k, v] = ["query", "key", "value"]
                .map(|part| t.dense(&format!("{p}.attention.self.{part}"), h, h));
            let (q, k, v) = (q?, k?, v?);
            let qkv = Linear::new(
                &[q.0, k.0, v.0].concat(),
                [q.1, k.1, v.1].concat(),
                h,
                3 * h,
            );
            layers.push(Layer {
                qkv,
                attention_out: t.linear(&format!("{p}.attention.output.dense"), h, h)?,
                attention_norm: t.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
                intermediate: t.linear(
                    &format!("{p}.intermediate.dense"),
                    config.intermediate_size,
                    h,
                )?,
                output: t.linear(&format!("{p}.output.dense"), h, config.intermediate_size)?,
                output_norm: t.norm(&format!("{p}.output.LayerNorm"), h)?,
            });
        }
        Ok(Self {
            config,
            word,
            position,
            token_type,
            embedding_norm,
            layers,
            vocab_size,
        })
    }

    /// The width of a hidden state.
    pub(crate) fn hidden_size(&self) -> usize {
        self.config.hidden_size
    }

    /// The longest sequence the position embeddings cover.
    pub(crate) fn max_positions(&self) -> usize {
        self.config
            .max_position_embeddings
            .saturating_sub(self.config.position_offset())
    }

    /// The last hidden state of every token of every sequence, packed: the rows of sequence `i`
    /// follow those of sequence `i - 1`. Ids and segments outside the vocabulary, and sequences
    /// longer than the position embeddings, are the tokenizer's to prevent; they are clamped
    /// here.
    pub(crate) fn forward(&self, sequences: &[Sequence<'_>], threads: usize) -> Vec<f32> {
        let h = self.config.hidden_size;
        let eps = self.config.layer_norm_eps;
        let spans = spans(sequences, self.max_positions());
        let offset = self.config.position_offset();
        let rows = spans.last().map_or(0, |&(start, len)| start + len);
        let mut x = vec![0.0f32; rows * h];
        let types = self.config.type_vocab_size.max(1);
        for (sequence, &(start, len)) in sequences.iter().zip(&spans) {
            for (pos, &id) in sequence.ids.iter().take(len).enumerate() {
                let id = (id as usize).min(self.vocab_size.saturating_sub(1));
                let kind = sequence
                    .types
                    .get(pos)
                    .map_or(0, |&t| (t as usize).min(types - 1));
                let row = &mut x[(start + pos) * h..(start + pos + 1) * h];
                let word = &self.word[id * h..(id + 1) * h];
                let at = pos + offset;
                let position = &self.position[at * h..(at + 1) * h];
                let token_type = &self.token_type[kind * h..(kind + 1) * h];
                for (((out, w), p), t) in row.iter_mut().zip(word).zip(position).zip(token_type) {
                    *out = w + p + t;
                }
            }
        }
        let norm = &self.embedding_norm;
        layer_norm_in_place(&mut x, h, &norm.gamma, &norm.beta, eps, threads);
        let mut scratch = Scratch::default();
        for layer in &self.layers {
            self.layer(layer, &mut x, rows, &spans, &mut scratch, threads);
        }
        x
    }

    fn layer(
        &self,
        layer: &Layer,
        x: &mut [f32],
        rows: usize,
        spans: &[(usize, usize)],
        s: &mut Scratch,
        threads: usize,
    ) {
        let h = self.config.hidden_size;
        let eps = self.config.layer_norm_eps;
        layer.qkv.apply(x, rows, &mut s.qkv, threads);
        self.attention(&s.qkv, spans, &mut s.by_head, &mut s.context, threads);
        layer
            .attention_out
            .apply(&s.context, rows, &mut s.hidden, threads);
        for (out, input) in s.hidden.iter_mut().zip(x.iter()) {
            *out += input;
        }
        let norm = &layer.attention_norm;
        layer_norm_in_place(&mut s.hidden, h, &norm.gamma, &norm.beta, eps, threads);
        layer
            .intermediate
            .apply(&s.hidden, rows, &mut s.intermediate, threads);
        gelu_in_place(&mut s.intermediate, threads);
        let mut out = std::mem::take(&mut s.qkv);
        layer.output.apply(&s.intermediate, rows, &mut out, threads);
        for ((dst, o), residual) in x.iter_mut().zip(&out).zip(&s.hidden) {
            *dst = o + residual;
        }
        s.qkv = out;
        let norm = &layer.output_norm;
        layer_norm_in_place(x, h, &norm.gamma, &norm.beta, eps, threads);
    }

    /// Multi-head self-attention of every sequence over its own tokens; writes the concatenated
    /// heads, row-major `[rows, H]`, into `context`. `by_head` is scratch space.
    fn attention(
        &self,
        qkv: &[f32],
        spans: &[(usize, usize)],
        by_head: &mut Vec<f32>,
        context: &mut Vec<f32>,
        threads: usize,
    ) {
        let h = self.config.hidden_size;
        let heads = self.config.num_attention_heads;
        let d = h / heads;
        let rows = spans.last().map_or(0, |&(start, len)| start + len);
        let head = Head {
            qkv,
            h,
            d,
            scale: 1.0 / (d as f32).sqrt(),
        };
        // Every element of `context` is written below.
        context.resize(rows * h, 0.0);
        if threads == 1 {
            let mut scores = Vec::new();
            for index in 0..heads {
                for &(start, len) in spans {
                    let out = View {
                        offset: start * h + index * d,
                        rows: len,
                        cols: d,
                        row_stride: h,
                        col_stride: 1,
                    };
                    head.attend(index, start, len, &mut scores, context, out);
                }
            }
            return;
        }
        // Heads in parallel: each writes its own contiguous block of a head-major buffer, copied
        // into `context` afterwards.
        by_head.resize(heads * rows * d, 0.0);
        by_head
            .par_chunks_mut(rows * d)
            .enumerate()
            .with_max_len(1)
            .for_each(|(index, block)| {
                let mut scores = Vec::new();
                for &(start, len) in spans {
                    let out = View {
                        offset: start * d,
                        ..View::dense(len, d)
                    };
                    head.attend(index, start, len, &mut scores, block, out);
                }
            });
        for (index, block) in by_head.chunks(rows * d).enumerate() {
            for (row, values) in block.chunks(d).enumerate() {
                context[row * h + index * d..row * h + index * d + d].copy_from_slice(values);
            }
        }
    }
}

/// What every attention head reads: the fused projection (`[rows, 3H]`, queries then keys then
/// values) and the head's width and score scale.
struct Head<'a> {
    qkv: &'a [f32],
    h: usize,
    d: usize,
    scale: f32,
}

impl Head<'_> {
    /// Head `index` of the sequence at rows `start..start + len`: `softmax(Q Kᵀ · scale) V`,
    /// written to `out` in `dst`.
    fn attend(
        &self,
        index: usize,
        start: usize,
        len: usize,
        scores: &mut Vec<f32>,
        dst: &mut [f32],
        out: View,
    ) {
        let (h, d) = (self.h, self.d);
        let view = |third: usize| View {
            offset: start * 3 * h + third * h + index * d,
            rows: len,
            cols: d,
            row_stride: 3 * h,
            col_stride: 1,
        };
        // Every element is written by the product below (which does not read `scores`).
        scores.resize(len * len, 0.0);
        let (q, k, v) = (view(0), view(1), view(2));
        let square = View::dense(len, len);
        matmul(
            scores,
            square,
            self.qkv,
            q,
            self.qkv,
            k.t(),
            self.scale,
            false,
            1,
        );
        softmax_rows(scores, len);
        matmul(dst, out, scores, square, self.qkv, v, 1.0, false, 1);
    }
}

/// The sequence-classification head of `transformers`' `BertForSequenceClassification` and
/// `XLMRobertaForSequenceClassification`: a dense layer and `tanh` on the first token's state
/// (BERT's pooler, RoBERTa's `classifier.dense`), then a linear layer to the labels (BERT's
/// `classifier`, RoBERTa's `classifier.out_proj`).
pub(crate) struct ClassifierHead {
    pooler: Linear,
    classifier: Linear,
}

impl ClassifierHead {
    /// Loads the head for `labels` outputs, named as `config`'s family names it.
    pub(crate) fn load(
        config: &BertConfig,
        weights: &[u8],
        labels: usize,
    ) -> Result<Self, LoadError> {
        let h = config.hidden_size;
        let tensors = |prefix| {
            SafeTensors::deserialize(weights)
                .map(|st| Tensors { st, prefix })
                .map_err(|err| format!("the weights are not a safetensors file: {err}"))
        };
        if config.is_roberta() {
            let t = tensors("classifier.")?;
            return Ok(Self {
                pooler: t.linear("dense", h, h)?,
                classifier: t.linear("out_proj", labels, h)?,
            });
        }
        let bert = tensors("bert.")?;
        let pooler = if bert.st.tensor("bert.pooler.dense.weight").is_ok() {
            bert.linear("pooler.dense", h, h)?
        } else {
            tensors("")?.linear("pooler.dense", h, h)?
        };
        let classifier = tensors("")?.linear("classifier", labels, h)?;
        Ok(Self { pooler, classifier })
    }

    /// The logits for one sequence, from its first token's last hidden state.
    pub(crate) fn logits(&self, first: &[f32]) -> Vec<f32> {
        let mut pooled = Vec::new();
        self.pooler.apply(first, 1, &mut pooled, 1);
        for v in &mut pooled {
            *v = v.tanh();
        }
        let mut logits = Vec::new();
        self.classifier.apply(&pooled, 1, &mut logits, 1);
        logits
    }
}

/// One tokenized input: token ids and, for a pair of texts, each token's segment (`types`;
/// empty means every token is in segment 0).
pub(crate) struct Sequence<'a> {
    pub(crate) ids: &'a [u32],
    pub(crate) types: &'a [u32],
}

impl<'a> Sequence<'a> {
    /// A single text: every token in segment 0.
    pub(crate) fn untyped(ids: &'a [u32]) -> Self {
        Self { ids, types: &[] }
    }
}

/// `(first row, length)` of each sequence in the packed layout, lengths capped at `max_len`.
fn spans(sequences: &[Sequence<'_>], max_len: usize) -> Vec<(usize, usize)> {
    let mut start = 0;
    sequences
        .iter()
        .map(|s| {
            let len = s.ids.len().min(max_len);
            let span = (start, len);
            start += len;
            span
        })
        .collect()
}

/// Buffers reused across layers.
#[derive(Default)]
struct Scratch {
    qkv: Vec<f32>,
    context: Vec<f32>,
    by_head: Vec<f32>,
    hidden: Vec<f32>,
    intermediate: Vec<f32>,
}
