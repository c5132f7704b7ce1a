//! Where a model comes from, as the operator said it: exactly one of a directory
//! (`--PREFIX-model`), a Hub name (`--PREFIX-hub-model`) or an endpoint (`--PREFIX-url` with
//! `--PREFIX-api-model`). [`ModelSource`] is that choice for either use (`embed`, `rerank`): it
//! checks the combination, reads the API key, and names the options in every refusal, so the
//! embedder's and the reranker's options follow one rule.
//!
//! The combination is checked here rather than by the parser: its cross-argument rules misjudge
//! global options given on both sides of the subcommand.

use std::path::{Path, PathBuf};

use clap::{Args, FromArgMatches};
use groundkit_core::Error;
use groundkit_embed::hub::{Hub, HubModel, HubModelKind};
use groundkit_embed::setting::Names;

/// One use's model options, borrowed from its parsed arguments.
pub(super) struct ModelSource<'a> {
    /// The options' prefix: `embed` or `rerank`.
    pub(super) prefix: &'static str,
    /// `--PREFIX-model DIR`.
    pub(super) dir: Option<&'a Path>,
    /// `--PREFIX-hub-model NAME`.
    pub(super) hub_model: Option<&'a str>,
    /// `--PREFIX-url URL`.
    pub(super) url: Option<&'a str>,
    /// `--PREFIX-api-model NAME`.
    pub(super) api_model: Option<&'a str>,
    /// `--PREFIX-api-key-env VAR`.
    pub(super) api_key_env: Option<&'a str>,
    /// The other options that apply to an endpoint only, by name without the prefix, and
    /// whether each was given (`api-key-env` and `allow-private` are always among them).
    pub(super) endpoint_only: &'a [(&'static str, bool)],
    /// What the Hub name names.
    pub(super) kind: HubModelKind,
    /// The options' names for the embed crate's settings, for its errors.
    pub(super) names: Names,
}

/// The chosen source, checked.
pub(super) enum Chosen<'a> {
    /// A model directory (given, or the Hub's snapshot of a named model).
    Dir(PathBuf),
    /// An endpoint: its URL, the model it is asked for, and its API key when one is named.
    Endpoint {
        url: &'a str,
        model: &'a str,
        api_key: Option<String>,
    },
}

impl<'a> ModelSource<'a> {
    fn flag(&self, name: &str) -> String {
        format!("--{}-{name}", self.prefix)
    }

    fn usage(&self, field: &str, message: String) -> Error {
        Error::Validation {
            field: self.flag(field),
            message,
        }
    }

    /// The source these options name, checked; `None` when they name none.
    pub(super) fn choose(&self) -> Result<Option<Chosen<'a>>, Error> {
        let chosen = [
            self.url.is_some(),
            self.dir.is_some(),
            self.hub_model.is_some(),
        ];
        if chosen.iter().filter(|c| **c).count() > 1 {
            return Err(self.usage(
                "model",
                format!(
                    "give one of {}, {} and {}",
                    self.flag("model"),
                    self.flag("hub-model"),
                    self.flag("url")
                ),
            ));
        }
        if self.url.is_some() != self.api_model.is_some() {
            return Err(self.usage(
                "api-model",
                format!(
                    "{} and {} go together",
                    self.flag("url"),
                    self.flag("api-model")
                ),
            ));
        }
        if self.url.is_none() && self.endpoint_only.iter().any(|(_, given)| *given) {
            let mut names: Vec<String> = self
                .endpoint_only
                .iter()
                .map(|(name, _)| self.flag(name))
                .collect();
            let last = names.pop().unwrap_or_default();
            return Err(self.usage(
                "url",
                format!(
                    "{} and {last} apply to {} only",
                    names.join(", "),
                    self.flag("url")
                ),
            ));
        }
        if let (Some(url), Some(model)) = (self.url, self.api_model) {
            let api_key = match self.api_key_env {
                Some(var) => Some(std::env::var(var).map_err(|_| {
                    self.usage(
                        "api-key-env",
                        format!("the environment variable {var} is not set (or not UTF-8)"),
                    )
                })?),
                None => None,
            };
            return Ok(Some(Chosen::Endpoint {
                url,
                model,
                api_key,
            }));
        }
        Ok(match (self.dir, self.hub_model) {
            (Some(dir), _) => Some(Chosen::Dir(dir.to_owned())),
            (None, Some(name)) => Some(Chosen::Dir(
                Hub::from_env()?.snapshot(&HubModel::parse_as(name, self.kind, self.names)?)?,
            )),
            (None, None) => None,
        })
    }
}

/// Threads for in-process inference: `threads`, else every core.
pub(super) fn threads(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    })
}

/// Whether any of the options `args` groups was given: whether it differs from what the parser
/// yields for a command line without them (an option left at its default counts as not given).
/// Derived from the options themselves, so an option added to the group is counted too.
pub(super) fn any_given<A: Args + FromArgMatches + PartialEq>(args: &A) -> bool {
    let command = A::augment_args(clap::Command::new("grk"));
    match command
        .try_get_matches_from(["grk"])
        .and_then(|matches| A::from_arg_matches(&matches))
    {
        Ok(none) => none != *args,
        Err(_) => true,
    }
}
