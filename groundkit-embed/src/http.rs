//! The endpoint embedder: [`HttpEmbedder`] calls an OpenAI-compatible `POST {base}/v1/embeddings`
//! (a hosted API over https, or a local model server over http with the operator's opt-in).
//!
//! This module owns the endpoint URL's validation, the calls (batching, retries, redirects
//! refused), the answer's checks and the embedder's identity. Where a call may connect is
//! decided by [`crate::outbound`] and enforced by `resolver`, the agent's name resolver.
//!
//! Nothing the provider says, and neither the API key nor the URL's path, reaches an error
//! message: failures are described by status code and counts only. The key is sent as a
//! sensitive header value and never logged; ureq's own byte-level request logging (`trace`)
//! is compiled out through the `log` crate's `max_level_debug` feature.

mod pending;
mod rerank;
mod resolver;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use ureq::http::{HeaderValue, Uri};

use groundkit_core::Error;
use groundkit_retrieval::embed::{Embedder, Role};
use groundkit_retrieval::{EmbedderKind, EmbeddingIdentity};

use crate::outbound::OutboundPolicy;
use crate::setting::{Names, Setting};
use wire::{Attempt, Call};

pub use rerank::{HttpReranker, HttpRerankerConfig, RerankApi};

/// The text embedded once by [`HttpEmbedder::connect`] to learn the endpoint's vectors.
const PROBE: &str = "groundkit embedding probe";

/// How to reach an OpenAI-compatible embeddings endpoint.
#[derive(Clone)]
pub struct HttpEmbedderConfig {
    /// The base URL (`https://api.example.com`, `http://127.0.0.1:11434`); a trailing `/v1` is
    /// accepted. `http` and `https` only, without credentials or a query.
    pub url: String,
    /// The model name sent with every request and recorded in the identity.
    pub model: String,
    /// The API key itself, sent as `Authorization: Bearer`; never logged or shown.
    pub api_key: Option<String>,
    /// Allow loopback and private-network addresses (see [`crate::outbound`]).
    pub allow_private: bool,
    /// Texts per request.
    pub batch_size: usize,
    /// The limit for one request, from resolving the host to reading the whole answer.
    pub timeout: Duration,
    /// Retries after a rate limit (429), a server error (5xx), a timeout or a connection
    /// failure; other failures are not retried.
    pub max_retries: u32,
    /// How errors name these settings (by default, as the fields of this struct).
    pub names: Names,
}

impl HttpEmbedderConfig {
    /// A configuration with the defaults: no key, public addresses only, 64 texts per request,
    /// 60 s per request, 3 retries, settings named as this struct's fields.
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            model: model.into(),
            api_key: None,
            allow_private: false,
            batch_size: 64,
            timeout: Duration::from_secs(60),
            max_retries: 3,
            names: Setting::field,
        }
    }
}

impl std::fmt::Debug for HttpEmbedderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEmbedderConfig")
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("allow_private", &self.allow_private)
            .field("batch_size", &self.batch_size)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

/// An OpenAI-compatible embeddings endpoint.
pub struct HttpEmbedder {
    call: Call,
    model: String,
    batch_size: usize,
    max_retries: u32,
    identity: EmbeddingIdentity,
}

impl std::fmt::Debug for HttpEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEmbedder")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

fn invalid(field: &str, message: impl Into<String>) -> Error {
    Error::Validation {
        field: field.to_owned(),
        message: message.into(),
    }
}

/// The embeddings URL for the operator's base URL. Errors never echo the URL.
fn endpoint_url(base: &str, field: &str) -> Result<String, Error> {
    let (origin, path) = checked_url(base, field, "embedding endpoint")?;
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix("/embeddings").unwrap_or(path);
    let path = path.strip_suffix("/v1").unwrap_or(path);
    Ok(format!("{origin}{path}/v1/embeddings"))
}

/// The operator's endpoint URL, checked: `http` or `https`, a host, no credentials, no query.
/// Returns `scheme://authority` and the path. Errors name `field` and `what`, never the URL.
fn checked_url(url: &str, field: &str, what: &str) -> Result<(String, String), Error> {
    let bad = |message: String| invalid(field, message);
    let uri: Uri = url
        .trim()
        .parse()
        .map_err(|_| bad(format!("the {what} is not a valid URL")))?;
    let scheme = match uri.scheme_str() {
        Some(s) if s.eq_ignore_ascii_case("http") => "http",
        Some(s) if s.eq_ignore_ascii_case("https") => "https",
        _ => {
            return Err(bad(format!(
                "the {what} URL must start with http:// or https://"
            )));
        }
    };
    let Some(authority) = uri.authority() else {
        return Err(bad(format!("the {what} URL has no host")));
    };
    if authority.as_str().contains('@') {
        return Err(bad(format!(
            "the {what} URL must not carry credentials; give the API key through its environment variable"
        )));
    }
    if authority.host().is_empty() {
        return Err(bad(format!("the {what} URL has no host")));
    }
    if uri.query().is_some() {
        return Err(bad(format!("the {what} URL must not have a query")));
    }
    Ok((format!("{scheme}://{authority}"), uri.path().to_owned()))
}

/// Checks the settings every endpoint takes alike (a model name, a batch size, a timeout) and
/// returns the `Authorization` value for the key, if one is given.
fn checked_settings(
    names: Names,
    model: &str,
    batch_size: usize,
    timeout: Duration,
    api_key: Option<&str>,
) -> Result<Option<HeaderValue>, Error> {
    if model.trim().is_empty() {
        return Err(invalid(names(Setting::Model), "the model name is empty"));
    }
    if batch_size == 0 {
        return Err(invalid(names(Setting::BatchSize), "must be at least 1"));
    }
    if timeout.is_zero() {
        return Err(invalid(names(Setting::Timeout), "must be longer than zero"));
    }
    bearer(api_key, names(Setting::ApiKey))
}

/// The `Authorization: Bearer` value for `key`, marked sensitive (never logged).
fn bearer(key: Option<&str>, field: &str) -> Result<Option<HeaderValue>, Error> {
    let Some(key) = key else {
        return Ok(None);
    };
    let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
        invalid(
            field,
            "the API key holds characters an HTTP header cannot carry",
        )
    })?;
    value.set_sensitive(true);
    Ok(Some(value))
}

impl HttpEmbedder {
    /// Validates the configuration and embeds one probe text, which gives the dimension and
    /// whether the endpoint returns unit vectors. A URL the policy refuses is a validation
    /// error naming the host and the setting that opts in; no connection is made for it.
    pub fn connect(config: HttpEmbedderConfig) -> Result<Self, Error> {
        Self::probe(config).map_err(|failed| match failed {
            Probe::Refused(err) => err,
            Probe::Unanswered(reason) => probe_failed(&reason),
        })
    }

    /// [`connect`](Self::connect), except that an endpoint that does not answer the probe
    /// (a timeout, a refused connection, a 429 or 5xx, each retried as configured) is not an
    /// error: the embedder returned keeps probing it in the background, and until it answers,
    /// [`Embedder::ready`] and every embedding are an `embedding_error`. A configuration the
    /// endpoint refuses (a 4xx, an answer that is not an embeddings list) is still an error.
    pub fn connect_or_keep_trying(config: HttpEmbedderConfig) -> Result<Arc<dyn Embedder>, Error> {
        match Self::probe(config.clone()) {
            Ok(embedder) => Ok(Arc::new(embedder)),
            Err(Probe::Refused(err)) => Err(err),
            Err(Probe::Unanswered(reason)) => {
                tracing::warn!(
                    "the embedding endpoint did not answer the probe ({reason}); dense and \
                     hybrid search answer embedding_error until it does"
                );
                Ok(Arc::new(pending::PendingEmbedder::start(config)))
            }
        }
    }

    fn probe(config: HttpEmbedderConfig) -> Result<Self, Probe> {
        let url =
            endpoint_url(&config.url, (config.names)(Setting::Url)).map_err(Probe::Refused)?;
        let authorization = checked_settings(
            config.names,
            &config.model,
            config.batch_size,
            config.timeout,
            config.api_key.as_deref(),
        )
        .map_err(Probe::Refused)?;
        let policy = OutboundPolicy {
            allow_private: config.allow_private,
            names: config.names,
        };
        let call = Call::new(url, authorization, policy, config.timeout);
        let mut embedder = Self {
            call,
            model: config.model,
            batch_size: config.batch_size,
            max_retries: config.max_retries,
            identity: EmbeddingIdentity {
                kind: EmbedderKind::Http,
                model: String::new(),
                fingerprint: String::new(),
                dimension: 0,
                pooling: "provider".to_owned(),
                normalized: false,
                max_tokens: None,
            },
        };
        let probe = embedder
            .post(&[PROBE], None)
            .map_err(|failure| match failure {
                Attempt::Refused(err) => Probe::Refused(err),
                Attempt::Retry { .. } => Probe::Unanswered(failure.describe()),
                Attempt::Fatal(_) => Probe::Refused(probe_failed(&failure.describe())),
            })?;
        let vector = probe.into_iter().next().unwrap_or_default();
        let dimension = u32::try_from(vector.len())
            .map_err(|_| Probe::Refused(Error::embedding("the probe vector is too long", None)))?;
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        let model = embedder.model.clone();
        embedder.identity.fingerprint = fingerprint(&model, dimension);
        embedder.identity.model = model;
        embedder.identity.dimension = dimension;
        embedder.identity.normalized = (norm - 1.0).abs() <= 1e-3;
        Ok(embedder)
    }

    /// One batch, retried as configured. `dimension` is what every vector must have (`None`
    /// for the probe: the first vector's, then the same for all).
    fn post(&self, texts: &[&str], dimension: Option<usize>) -> Result<Vec<Vec<f32>>, Attempt> {
        wire::with_retries(self.max_retries, "the embedding endpoint", || {
            wire::embed_once(&self.call, &self.model, texts, dimension)
        })
    }
}

/// Why a probe did not give an embedder.
enum Probe {
    /// The configuration, the policy or the endpoint's answer rules the endpoint out.
    Refused(Error),
    /// The endpoint did not answer, after the configured retries; it may later.
    Unanswered(String),
}

fn probe_failed(reason: &str) -> Error {
    Error::embedding(
        format!("the embedding endpoint failed the probe: {reason}"),
        None,
    )
}

/// The first 16 hex digits of SHA-256 over `http`, the model name and the dimension, each
/// followed by a NUL byte.
fn fingerprint(model: &str, dimension: u32) -> String {
    let mut hash = Sha256::new();
    for part in ["http", model, &dimension.to_string()] {
        hash.update(part.as_bytes());
        hash.update([0u8]);
    }
    hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Embedder for HttpEmbedder {
    fn identity(&self) -> &EmbeddingIdentity {
        &self.identity
    }

    /// Embeds `texts` in batches of the configured size. `role` is not sent: the
    /// OpenAI-compatible API has no notion of it, so query and document prompts are the
    /// provider's business.
    fn embed(&self, texts: &[&str], _role: Role) -> Result<Vec<Vec<f32>>, Error> {
        let dimension = self.identity.dimension as usize;
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size) {
            let answer = self.post(batch, Some(dimension)).map_err(|failure| {
                Error::embedding(
                    format!("the embedding endpoint failed: {}", failure.describe()),
                    None,
                )
            })?;
            vectors.extend(answer);
        }
        Ok(vectors)
    }
}

#[cfg(test)]
mod tests;
