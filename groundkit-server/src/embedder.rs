//! The operator's choice of embedder: the `--embed-*` options of `grk`, and loading the
//! embedder they name. A request can never choose or change it.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use groundkit_core::Error;
use groundkit_embed::hub::{Hub, HubModel};
use groundkit_embed::{HttpEmbedder, HttpEmbedderConfig, LocalEmbedder};
use groundkit_retrieval::embed::Embedder;

/// Embedder options, accepted by every `grk` command that embeds: `ingest` (chunks), `serve`,
/// `search`, `status` and `eval` (queries).
#[derive(Debug, Clone, Default, Args)]
pub struct EmbedArgs {
    /// Embed with the sentence-transformers model (BERT family) in DIR, run in this process:
    /// config.json, tokenizer.json, model.safetensors and the pooling configuration.
    #[arg(long, global = true, value_name = "DIR")]
    pub embed_model: Option<PathBuf>,
    /// Embed with the sentence-transformers model named `OWNER/NAME[@REVISION]` on the Hugging
    /// Face Hub, run in this process: taken from the Hub's local cache, or downloaded into it
    /// first (`HF_ENDPOINT`, `HF_HUB_CACHE`, `HF_HOME` and `HF_HUB_OFFLINE` are honoured).
    #[arg(long, global = true, value_name = "NAME")]
    pub embed_hub_model: Option<String>,
    /// Threads for in-process embedding (default: every core).
    #[arg(long, global = true, value_name = "N")]
    pub embed_threads: Option<usize>,
    /// Embed through the OpenAI-compatible `/v1/embeddings` endpoint at URL (Ollama, vLLM,
    /// Text Embeddings Inference, LM Studio, llama.cpp's server, hosted APIs); needs
    /// `--embed-api-model`.
    #[arg(
        long,
        global = true,
        value_name = "URL",
        conflicts_with = "embed_model",
        requires = "embed_api_model"
    )]
    pub embed_url: Option<String>,
    /// The model name the endpoint is asked for.
    #[arg(long, global = true, value_name = "NAME")]
    pub embed_api_model: Option<String>,
    /// The environment variable holding the endpoint's API key (sent as a bearer token; never
    /// logged or shown).
    #[arg(long, global = true, value_name = "VAR")]
    pub embed_api_key_env: Option<String>,
    /// Let `--embed-url` reach loopback and private-network addresses (a local Ollama, say).
    /// Without it, an endpoint whose host resolves to any non-public address is refused.
    #[arg(long, global = true)]
    pub embed_allow_private: bool,
}

impl EmbedArgs {
    /// The embedder these options name, loaded; `None` when they name none.
    pub fn load(&self) -> Result<Option<Arc<dyn Embedder>>, Error> {
        // Checked here rather than by the parser: its cross-argument rules misjudge global
        // options given on both sides of the subcommand.
        let usage = |field: &str, message: &str| Error::Validation {
            field: field.to_owned(),
            message: message.to_owned(),
        };
        let chosen = [
            self.embed_url.is_some(),
            self.embed_model.is_some(),
            self.embed_hub_model.is_some(),
        ];
        if chosen.iter().filter(|c| **c).count() > 1 {
            return Err(usage(
                "embed-model",
                "give one of --embed-model, --embed-hub-model and --embed-url",
            ));
        }
        if self.embed_url.is_some() != self.embed_api_model.is_some() {
            return Err(usage(
                "embed-api-model",
                "--embed-url and --embed-api-model go together",
            ));
        }
        if self.embed_url.is_none()
            && (self.embed_api_key_env.is_some() || self.embed_allow_private)
        {
            return Err(usage(
                "embed-url",
                "--embed-api-key-env and --embed-allow-private apply to --embed-url only",
            ));
        }
        if let Some(url) = &self.embed_url {
            let mut config = HttpEmbedderConfig::new(
                url.clone(),
                self.embed_api_model.clone().unwrap_or_default(),
            );
            config.allow_private = self.embed_allow_private;
            if let Some(var) = &self.embed_api_key_env {
                let key = std::env::var(var).map_err(|_| Error::Validation {
                    field: "embed-api-key-env".to_owned(),
                    message: format!("the environment variable {var} is not set (or not UTF-8)"),
                })?;
                config.api_key = Some(key);
            }
            let embedder = HttpEmbedder::connect(config)?;
            tracing::info!(identity = ?embedder.identity(), "embedder connected");
            return Ok(Some(Arc::new(embedder)));
        }
        let dir = match (&self.embed_model, &self.embed_hub_model) {
            (Some(dir), _) => dir.clone(),
            (None, Some(name)) => Hub::from_env()?.snapshot(&HubModel::parse(name)?)?,
            (None, None) => return Ok(None),
        };
        let threads = self.embed_threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let embedder = LocalEmbedder::load(&dir, threads)?;
        tracing::info!(identity = ?embedder.identity(), "embedder loaded");
        Ok(Some(Arc::new(embedder)))
    }
}
