//! The operator's choice of embedder: the `--embed-*` options of `grk`, and loading the
//! embedder they name. A request can never choose or change it.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use groundkit_core::Error;
use groundkit_core::retrieval::embed::Embedder;
use groundkit_embed::LocalEmbedder;

/// Embedder options, accepted by every `grk` command that embeds: `ingest` (chunks), `serve`,
/// `search`, `status` and `eval` (queries).
#[derive(Debug, Clone, Default, Args)]
pub struct EmbedArgs {
    /// Embed with the sentence-transformers model (BERT family) in DIR, run in this process:
    /// config.json, tokenizer.json, model.safetensors and the pooling configuration.
    #[arg(long, global = true, value_name = "DIR")]
    pub embed_model: Option<PathBuf>,
    /// Threads for in-process embedding (default: every core).
    #[arg(long, global = true, value_name = "N")]
    pub embed_threads: Option<usize>,
}

impl EmbedArgs {
    /// The embedder these options name, loaded; `None` when they name none.
    pub fn load(&self) -> Result<Option<Arc<dyn Embedder>>, Error> {
        let Some(dir) = &self.embed_model else {
            return Ok(None);
        };
        let threads = self.embed_threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let embedder = LocalEmbedder::load(dir, threads)?;
        tracing::info!(identity = ?embedder.identity(), "embedder loaded");
        Ok(Some(Arc::new(embedder)))
    }
}
