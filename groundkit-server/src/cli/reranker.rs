//! The operator's choice of reranker: the `--rerank-*` options of `grk`, and loading the
//! reranker they name. A request can only ask for it (`rerank: true`), never choose or change
//! it.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use groundkit_core::Error;
use groundkit_embed::hub::HubModelKind;
use groundkit_embed::setting::Setting;
use groundkit_embed::{CrossEncoder, HttpReranker, HttpRerankerConfig, RerankApi};
use groundkit_retrieval::rerank::Reranker;

use super::source::{Chosen, ModelSource, threads};
use crate::service::{DEFAULT_RERANK_DEPTH, ServiceContext};

/// Reranker options, accepted by `grk serve` and `grk search`.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub(crate) struct RerankArgs {
    /// Rerank with the cross-encoder (`BertForSequenceClassification`, one label) in DIR, run in
    /// this process: config.json, tokenizer.json, model.safetensors.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) rerank_model: Option<PathBuf>,
    /// Rerank with the cross-encoder named `OWNER/NAME[@REVISION]` on the Hugging Face Hub
    /// (`cross-encoder/ms-marco-MiniLM-L-6-v2`, say), run in this process: taken from the Hub's
    /// local cache, or downloaded into it first, as `--embed-hub-model` does.
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) rerank_hub_model: Option<String>,
    /// Threads for in-process reranking (default: every core).
    #[arg(long, global = true, value_name = "N")]
    pub(crate) rerank_threads: Option<usize>,
    /// Candidates a reranked search scores: the first N results of the requested mode, whatever
    /// `top_k` asked for (at least `top_k`). At most 100.
    #[arg(long, global = true, value_name = "N", default_value_t = DEFAULT_RERANK_DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) rerank_depth: u32,
    /// Rerank through the rerank endpoint at URL, ending in `/rerank` (Text Embeddings
    /// Inference, Infinity, Jina, Cohere); needs `--rerank-api-model`.
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) rerank_url: Option<String>,
    /// The request shape `--rerank-url` takes: `cohere` (`documents`: Cohere, Jina, Infinity's
    /// `/v1/rerank`; the default) or `tei` (`texts`: Text Embeddings Inference).
    #[arg(long, global = true, value_enum)]
    pub(crate) rerank_api: Option<ApiArg>,
    /// The model name the endpoint is asked for, reported as `rerank_model`.
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) rerank_api_model: Option<String>,
    /// The environment variable holding the endpoint's API key (sent as a bearer token; never
    /// logged or shown).
    #[arg(long, global = true, value_name = "VAR")]
    pub(crate) rerank_api_key_env: Option<String>,
    /// Let `--rerank-url` reach loopback and private-network addresses (a local Text Embeddings
    /// Inference, say). Without it, an endpoint whose host resolves to any non-public address is
    /// refused.
    #[arg(long, global = true)]
    pub(crate) rerank_allow_private: bool,
}

/// `--rerank-api`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ApiArg {
    /// `{"model", "query", "documents"}`.
    #[default]
    Cohere,
    /// `{"query", "texts"}`.
    Tei,
}

/// A loaded reranker and the depth it reranks.
#[derive(Clone)]
pub(crate) struct Reranking {
    reranker: Arc<dyn Reranker>,
    depth: u32,
}

impl Reranking {
    /// `context` with this reranker.
    pub(crate) fn apply(&self, context: ServiceContext) -> ServiceContext {
        context
            .with_reranker(Arc::clone(&self.reranker))
            .with_rerank_depth(self.depth)
    }
}

impl RerankArgs {
    /// Whether any `--rerank-*` option was given (`--rerank-depth` counts when it is not the
    /// default).
    pub(crate) fn any_given(&self) -> bool {
        super::source::any_given(self)
    }

    /// The reranker these options name, loaded; `None` when they name none. With
    /// `unless_refused`, an endpoint that does not answer is not an error (see
    /// [`HttpReranker::connect_unless_refused`]).
    pub(crate) fn load(&self, unless_refused: bool) -> Result<Option<Reranking>, Error> {
        let source = ModelSource {
            prefix: "rerank",
            dir: self.rerank_model.as_deref(),
            hub_model: self.rerank_hub_model.as_deref(),
            url: self.rerank_url.as_deref(),
            api_model: self.rerank_api_model.as_deref(),
            api_key_env: self.rerank_api_key_env.as_deref(),
            endpoint_only: &[
                ("api", self.rerank_api.is_some()),
                ("api-key-env", self.rerank_api_key_env.is_some()),
                ("allow-private", self.rerank_allow_private),
            ],
            kind: HubModelKind::CrossEncoder,
            names: rerank_names,
        };
        let reranker: Arc<dyn Reranker> = match source.choose()? {
            None => return Ok(None),
            Some(Chosen::Dir(dir)) => Arc::new(CrossEncoder::load_as(
                &dir,
                threads(self.rerank_threads),
                rerank_names,
            )?),
            Some(Chosen::Endpoint {
                url,
                model,
                api_key,
            }) => {
                let api = match self.rerank_api.unwrap_or_default() {
                    ApiArg::Cohere => RerankApi::Cohere,
                    ApiArg::Tei => RerankApi::Tei,
                };
                let mut config = HttpRerankerConfig::new(url.to_owned(), model.to_owned(), api);
                config.allow_private = self.rerank_allow_private;
                config.api_key = api_key;
                config.names = rerank_names;
                Arc::new(if unless_refused {
                    HttpReranker::connect_unless_refused(config)?
                } else {
                    HttpReranker::connect(config)?
                })
            }
        };
        tracing::info!(
            model = reranker.model(),
            depth = self.rerank_depth,
            "reranker configured"
        );
        Ok(Some(Reranking {
            reranker,
            depth: self.rerank_depth,
        }))
    }
}

/// What `grk` calls each reranker setting in an error: its option. The settings it has no
/// option for keep the embed crate's names.
pub(super) fn rerank_names(setting: Setting) -> &'static str {
    match setting {
        Setting::Url => "--rerank-url",
        Setting::Model => "--rerank-api-model",
        Setting::ApiKey => "--rerank-api-key-env",
        Setting::AllowPrivate => "--rerank-allow-private",
        Setting::HubModel => "--rerank-hub-model",
        Setting::ModelDir => "--rerank-model",
        Setting::BatchSize | Setting::Timeout => setting.field(),
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};

    use super::RerankArgs;

    /// The options as parsed from `words` (after a program name).
    fn parsed(words: &[&str]) -> RerankArgs {
        let command = RerankArgs::augment_args(clap::Command::new("grk"));
        let matches = command
            .try_get_matches_from(std::iter::once("grk").chain(words.iter().copied()))
            .expect("the options parse");
        RerankArgs::from_arg_matches(&matches).expect("the options convert")
    }

    /// Every `--rerank-*` option, given alone with a value other than its default, counts as
    /// given (so `grk ingest`, `fetch`, `list` and `eval` refuse it), and none given counts as
    /// none. The options are read from the parser, so one added later is covered too.
    #[test]
    fn each_rerank_option_given_alone_is_seen_and_none_is_none() {
        assert!(!parsed(&[]).any_given());
        let mut command = RerankArgs::augment_args(clap::Command::new("grk"));
        // Building settles each argument's action and value count, which introspection reads.
        command.build();
        let mut seen = 0;
        // Building adds `--help`, which is clap's, not an option of these.
        for arg in command.get_arguments().filter(|arg| arg.get_id() != "help") {
            let long = format!("--{}", arg.get_long().expect("every option is long"));
            let takes_value = arg.get_action().takes_values();
            let words: Vec<String> = if !takes_value {
                vec![long.clone()]
            } else if let Some(value) = arg.get_possible_values().first() {
                vec![long.clone(), value.get_name().to_owned()]
            } else {
                // Parses as a path, a name, a count and a depth, and is no option's default.
                vec![long.clone(), "7".to_owned()]
            };
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            assert!(parsed(&words).any_given(), "{long} is not seen");
            seen += 1;
        }
        assert!(seen >= 9, "only {seen} options were found");
    }

    /// Each name `grk` gives an embedder or reranker setting in an error is one of its options,
    /// read from the parser, or (for a setting it has no option for) the embed crate's own.
    #[test]
    fn every_setting_is_named_by_an_option_of_its_own_group() {
        use groundkit_embed::setting::Setting;

        let longs = |command: clap::Command| -> Vec<String> {
            command
                .get_arguments()
                .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
                .collect()
        };
        let embed = longs(super::super::embedder::EmbedArgs::augment_args(
            clap::Command::new("grk"),
        ));
        let rerank = longs(RerankArgs::augment_args(clap::Command::new("grk")));
        for setting in Setting::ALL {
            for (names, options) in [
                (
                    super::super::embedder::embed_names as fn(Setting) -> &'static str,
                    &embed,
                ),
                (super::rerank_names, &rerank),
            ] {
                let name = names(setting);
                assert!(
                    options.iter().any(|o| o == name) || name == setting.field(),
                    "{setting:?} is named {name}, which is no option"
                );
            }
        }
        assert_eq!(super::rerank_names(Setting::Url), "--rerank-url");
        assert_eq!(
            super::super::embedder::embed_names(Setting::AllowPrivate),
            "--embed-allow-private"
        );
    }
}
