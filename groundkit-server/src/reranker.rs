//! The operator's choice of reranker: the `--rerank-*` options of `grk`, and loading the
//! reranker they name. A request can only ask for it (`rerank: true`), never choose or change
//! it.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use groundkit_core::Error;
use groundkit_embed::hub::{Hub, HubModel, HubModelKind};
use groundkit_embed::{CrossEncoder, HttpReranker, HttpRerankerConfig, RerankApi};
use groundkit_retrieval::rerank::Reranker;

use crate::service::{DEFAULT_RERANK_DEPTH, ServiceContext};

/// Reranker options, accepted by `grk serve` and `grk search`.
#[derive(Debug, Clone, Default, Args)]
pub struct RerankArgs {
    /// Rerank with the cross-encoder (`BertForSequenceClassification`, one label) in DIR, run in
    /// this process: config.json, tokenizer.json, model.safetensors.
    #[arg(long, global = true, value_name = "DIR")]
    pub rerank_model: Option<PathBuf>,
    /// Rerank with the cross-encoder named `OWNER/NAME[@REVISION]` on the Hugging Face Hub
    /// (`cross-encoder/ms-marco-MiniLM-L-6-v2`, say), run in this process: taken from the Hub's
    /// local cache, or downloaded into it first, as `--embed-hub-model` does.
    #[arg(long, global = true, value_name = "NAME")]
    pub rerank_hub_model: Option<String>,
    /// Threads for in-process reranking (default: every core).
    #[arg(long, global = true, value_name = "N")]
    pub rerank_threads: Option<usize>,
    /// Candidates a reranked search scores: the first N results of the requested mode, whatever
    /// `top_k` asked for (at least `top_k`). At most 100.
    #[arg(long, global = true, value_name = "N", default_value_t = DEFAULT_RERANK_DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rerank_depth: u32,
    /// Rerank through the rerank endpoint at URL, ending in `/rerank` (Text Embeddings
    /// Inference, Infinity, Jina, Cohere); needs `--rerank-api-model`.
    #[arg(long, global = true, value_name = "URL")]
    pub rerank_url: Option<String>,
    /// The request shape `--rerank-url` takes: `cohere` (`documents`: Cohere, Jina, Infinity's
    /// `/v1/rerank`; the default) or `tei` (`texts`: Text Embeddings Inference).
    #[arg(long, global = true, value_enum)]
    pub rerank_api: Option<ApiArg>,
    /// The model name the endpoint is asked for, reported as `rerank_model`.
    #[arg(long, global = true, value_name = "NAME")]
    pub rerank_api_model: Option<String>,
    /// The environment variable holding the endpoint's API key (sent as a bearer token; never
    /// logged or shown).
    #[arg(long, global = true, value_name = "VAR")]
    pub rerank_api_key_env: Option<String>,
    /// Let `--rerank-url` reach loopback and private-network addresses (a local Text Embeddings
    /// Inference, say). Without it, an endpoint whose host resolves to any non-public address is
    /// refused.
    #[arg(long, global = true)]
    pub rerank_allow_private: bool,
}

/// `--rerank-api`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ApiArg {
    /// `{"model", "query", "documents"}`.
    #[default]
    Cohere,
    /// `{"query", "texts"}`.
    Tei,
}

/// A loaded reranker and the depth it reranks.
#[derive(Clone)]
pub struct Reranking {
    reranker: Arc<dyn Reranker>,
    depth: u32,
}

impl Reranking {
    /// `context` with this reranker.
    pub fn apply(&self, context: ServiceContext) -> ServiceContext {
        context
            .with_reranker(Arc::clone(&self.reranker))
            .with_rerank_depth(self.depth)
    }
}

impl RerankArgs {
    /// Whether any `--rerank-*` option was given (`--rerank-depth` counts when it is not the
    /// default).
    pub fn any_given(&self) -> bool {
        self.rerank_model.is_some()
            || self.rerank_hub_model.is_some()
            || self.rerank_threads.is_some()
            || self.rerank_depth != DEFAULT_RERANK_DEPTH
            || self.rerank_url.is_some()
            || self.rerank_api.is_some()
            || self.rerank_api_model.is_some()
            || self.rerank_api_key_env.is_some()
            || self.rerank_allow_private
    }

    /// The reranker these options name, loaded; `None` when they name none.
    pub fn load(&self) -> Result<Option<Reranking>, Error> {
        let usage = |field: &str, message: &str| Error::Validation {
            field: field.to_owned(),
            message: message.to_owned(),
        };
        let chosen = [
            self.rerank_url.is_some(),
            self.rerank_model.is_some(),
            self.rerank_hub_model.is_some(),
        ];
        if chosen.iter().filter(|c| **c).count() > 1 {
            return Err(usage(
                "rerank-model",
                "give one of --rerank-model, --rerank-hub-model and --rerank-url",
            ));
        }
        if self.rerank_url.is_some() != self.rerank_api_model.is_some() {
            return Err(usage(
                "rerank-api-model",
                "--rerank-url and --rerank-api-model go together",
            ));
        }
        if self.rerank_url.is_none()
            && (self.rerank_api_key_env.is_some()
                || self.rerank_allow_private
                || self.rerank_api.is_some())
        {
            return Err(usage(
                "rerank-url",
                "--rerank-api, --rerank-api-key-env and --rerank-allow-private apply to --rerank-url only",
            ));
        }
        let reranker: Arc<dyn Reranker> = if let Some(url) = &self.rerank_url {
            let api = match self.rerank_api.unwrap_or_default() {
                ApiArg::Cohere => RerankApi::Cohere,
                ApiArg::Tei => RerankApi::Tei,
            };
            let mut config = HttpRerankerConfig::new(
                url.clone(),
                self.rerank_api_model.clone().unwrap_or_default(),
                api,
            );
            config.allow_private = self.rerank_allow_private;
            if let Some(var) = &self.rerank_api_key_env {
                let key = std::env::var(var).map_err(|_| Error::Validation {
                    field: "rerank-api-key-env".to_owned(),
                    message: format!("the environment variable {var} is not set (or not UTF-8)"),
                })?;
                config.api_key = Some(key);
            }
            Arc::new(HttpReranker::connect(config)?)
        } else {
            let dir = match (&self.rerank_model, &self.rerank_hub_model) {
                (Some(dir), _) => dir.clone(),
                (None, Some(name)) => Hub::from_env()?
                    .snapshot(&HubModel::parse_as(name, HubModelKind::CrossEncoder)?)?,
                (None, None) => return Ok(None),
            };
            let threads = self.rerank_threads.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            Arc::new(CrossEncoder::load(&dir, threads)?)
        };
        tracing::info!(
            model = reranker.model(),
            depth = self.rerank_depth,
            "reranker ready"
        );
        Ok(Some(Reranking {
            reranker,
            depth: self.rerank_depth,
        }))
    }
}
