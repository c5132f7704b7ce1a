//! groundkit's embedders, the implementations of `groundkit_core::retrieval::embed::Embedder`:
//!
//! - [`LocalEmbedder`] runs a sentence-transformers model of the BERT family in this process,
//!   on the CPU, in pure Rust: `bert` is the encoder's forward pass, `kernels` its element-wise
//!   arithmetic, `matmul` the one (checked) call into the `gemm` crate, `local` the
//!   sentence-transformers layout around it.
//!
//! A separate crate so that builds which do not embed (the framework, a lexical-only server)
//! compile none of it, and so that its arithmetic can be optimised in debug builds too.

mod bert;
mod kernels;
mod local;
mod matmul;

pub use local::LocalEmbedder;
