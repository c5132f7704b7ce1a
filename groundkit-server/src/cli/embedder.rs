//! The operator's choice of embedder: the `--embed-*` options of `grk`, and loading the
//! embedder they name. A request can never choose or change it.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use groundkit_core::Error;
use groundkit_embed::hub::HubModelKind;
use groundkit_embed::setting::Setting;
use groundkit_embed::{HttpEmbedder, HttpEmbedderConfig, LocalEmbedder};
use groundkit_retrieval::embed::Embedder;

use super::source::{Chosen, ModelSource, threads};

/// Embedder options, accepted by every `grk` command that embeds: `ingest` (chunks), `serve`,
/// `search`, `status` and `eval` (queries).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct EmbedArgs {
    /// Embed with the sentence-transformers model (BERT family) in DIR, run in this process:
    /// config.json, tokenizer.json, model.safetensors and the pooling configuration.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) embed_model: Option<PathBuf>,
    /// Embed with the sentence-transformers model named `OWNER/NAME[@REVISION]` on the Hugging
    /// Face Hub, run in this process: taken from the Hub's local cache, or downloaded into it
    /// first (`HF_ENDPOINT`, `HF_HUB_CACHE`, `HF_HOME` and `HF_HUB_OFFLINE` are honoured).
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) embed_hub_model: Option<String>,
    /// Threads for in-process embedding (default: every core).
    #[arg(long, global = true, value_name = "N")]
    pub(crate) embed_threads: Option<usize>,
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
    pub(crate) embed_url: Option<String>,
    /// The model name the endpoint is asked for.
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) embed_api_model: Option<String>,
    /// The environment variable holding the endpoint's API key (sent as a bearer token; never
    /// logged or shown).
    #[arg(long, global = true, value_name = "VAR")]
    pub(crate) embed_api_key_env: Option<String>,
    /// Let `--embed-url` reach loopback and private-network addresses (a local Ollama, say).
    /// Without it, an endpoint whose host resolves to any non-public address is refused.
    #[arg(long, global = true)]
    pub(crate) embed_allow_private: bool,
}

impl EmbedArgs {
    /// The embedder these options name, loaded; `None` when they name none. With
    /// `keep_trying`, an endpoint that does not answer is probed again in the background
    /// rather than being an error (see [`HttpEmbedder::connect_or_keep_trying`]).
    pub(crate) fn load(&self, keep_trying: bool) -> Result<Option<Arc<dyn Embedder>>, Error> {
        let source = ModelSource {
            prefix: "embed",
            dir: self.embed_model.as_deref(),
            hub_model: self.embed_hub_model.as_deref(),
            url: self.embed_url.as_deref(),
            api_model: self.embed_api_model.as_deref(),
            api_key_env: self.embed_api_key_env.as_deref(),
            endpoint_only: &[
                ("api-key-env", self.embed_api_key_env.is_some()),
                ("allow-private", self.embed_allow_private),
            ],
            kind: HubModelKind::Embedder,
            names: embed_names,
        };
        let dir = match source.choose()? {
            None => return Ok(None),
            Some(Chosen::Dir(dir)) => dir,
            Some(Chosen::Endpoint {
                url,
                model,
                api_key,
            }) => {
                let mut config = HttpEmbedderConfig::new(url.to_owned(), model.to_owned());
                config.allow_private = self.embed_allow_private;
                config.api_key = api_key;
                config.names = embed_names;
                let embedder: Arc<dyn Embedder> = if keep_trying {
                    HttpEmbedder::connect_or_keep_trying(config)?
                } else {
                    Arc::new(HttpEmbedder::connect(config)?)
                };
                if embedder.ready().is_ok() {
                    tracing::info!(identity = ?embedder.identity(), "embedder connected");
                }
                return Ok(Some(embedder));
            }
        };
        let embedder = LocalEmbedder::load_as(&dir, threads(self.embed_threads), embed_names)?;
        tracing::info!(identity = ?embedder.identity(), "embedder loaded");
        Ok(Some(Arc::new(embedder)))
    }
}

impl EmbedArgs {
    /// These options as a command line gives them, for a `grk` process that must embed as this
    /// one does (the watcher `serve --watch` runs).
    pub(crate) fn to_args(&self) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = Vec::new();
        let mut pair = |name: &str, value: Option<std::ffi::OsString>| {
            if let Some(value) = value {
                args.push(name.into());
                args.push(value);
            }
        };
        pair("--embed-model", self.embed_model.clone().map(Into::into));
        pair(
            "--embed-hub-model",
            self.embed_hub_model.clone().map(Into::into),
        );
        pair(
            "--embed-threads",
            self.embed_threads.map(|n| n.to_string().into()),
        );
        pair("--embed-url", self.embed_url.clone().map(Into::into));
        pair(
            "--embed-api-model",
            self.embed_api_model.clone().map(Into::into),
        );
        pair(
            "--embed-api-key-env",
            self.embed_api_key_env.clone().map(Into::into),
        );
        if self.embed_allow_private {
            args.push("--embed-allow-private".into());
        }
        args
    }
}

/// What `grk` calls each embedder setting in an error: its option. The settings it has no
/// option for keep the embed crate's names.
pub(super) fn embed_names(setting: Setting) -> &'static str {
    match setting {
        Setting::Url => "--embed-url",
        Setting::Model => "--embed-api-model",
        Setting::ApiKey => "--embed-api-key-env",
        Setting::AllowPrivate => "--embed-allow-private",
        Setting::HubModel => "--embed-hub-model",
        Setting::ModelDir => "--embed-model",
        Setting::BatchSize | Setting::Timeout => setting.field(),
    }
}
