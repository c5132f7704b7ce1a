//! groundkit's embedders, the implementations of `groundkit_retrieval::embed::Embedder`:
//!
//! - [`LocalEmbedder`] runs a sentence-transformers model of the BERT family in this process,
//!   on the CPU, in pure Rust: `bert` is the encoder's forward pass, `linear` its dense layers,
//!   `kernels` its element-wise arithmetic, `matmul` the one (checked) call into the `gemm`
//!   crate, `local` the sentence-transformers layout around it.
//! - [`HttpEmbedder`] (feature `http`, on by default) calls an OpenAI-compatible embeddings
//!   endpoint over http or https (`http`); [`outbound`] decides which addresses it may connect
//!   to.
//! - [`CrossEncoder`] (`cross`) is the in-process reranker, an implementation of
//!   `groundkit_retrieval::rerank::Reranker`: a BERT cross-encoder on the same encoder.
//!   `batch` runs the encoder over many sequences for both; `model_dir` reads their files.
//! - [`hub`] (feature `http`) finds a model by name in the Hugging Face Hub's cache, or
//!   downloads it there, for [`LocalEmbedder`] and [`CrossEncoder`].
//!
//! Errors about the configuration name its settings as the caller does ([`setting`]).
//!
//! A separate crate so that builds which do not embed (the framework, a lexical-only server)
//! compile none of it, and so that its arithmetic can be optimised in debug builds too.

mod batch;
mod bert;
mod cross;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub mod hub;
mod kernels;
mod linear;
mod local;
mod matmul;
mod model_dir;
pub mod outbound;
pub mod setting;

pub use cross::CrossEncoder;
#[cfg(feature = "http")]
pub use http::{HttpEmbedder, HttpEmbedderConfig, HttpReranker, HttpRerankerConfig, RerankApi};
pub use local::LocalEmbedder;
