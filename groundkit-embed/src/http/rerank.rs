//! The endpoint reranker: [`HttpReranker`] calls the rerank API that Text Embeddings Inference,
//! Infinity, Jina and Cohere share (`POST …/rerank` with a query and passages, answered with
//! indices and scores), under the same outbound rules, key handling and retries as the
//! endpoint embedder.
//!
//! Two request shapes exist: Cohere's (`documents`, also Jina's and Infinity's `/v1/rerank`)
//! and Text Embeddings Inference's (`texts`); [`RerankApi`] says which to send. Either answer
//! shape is read: a bare list of `{index, score}`, or `{results: [{index, relevance_score}]}`.
//! Nothing the provider says reaches an error message.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use groundkit_core::Error;
use groundkit_retrieval::rerank::Reranker;

use super::wire::{self, Attempt, Call};
use super::{checked_settings, checked_url, invalid};
use crate::outbound::OutboundPolicy;
use crate::setting::{Names, Setting};

/// The answer's size limit per passage (an index and a score are a few dozen bytes; a provider
/// that echoes the passages back stays well under this).
const BODY_BYTES_PER_PASSAGE: u64 = 64 << 10;

/// A failed probe as an error: the policy's refusal as it is, any other failure described.
fn probe_failed(failure: Attempt) -> Error {
    match failure {
        Attempt::Refused(err) => err,
        other => Error::rerank(
            format!("the rerank endpoint failed the probe: {}", other.describe()),
            None,
        ),
    }
}

/// Which request shape the endpoint takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerankApi {
    /// `{"model", "query", "documents", "top_n"}`: Cohere, Jina, Infinity's `/v1/rerank`.
    Cohere,
    /// `{"query", "texts", "truncate": true}`: Text Embeddings Inference.
    Tei,
}

/// How to reach a rerank endpoint.
#[derive(Clone)]
pub struct HttpRerankerConfig {
    /// The rerank URL itself, ending in `/rerank` (`https://api.jina.ai/v1/rerank`,
    /// `http://127.0.0.1:8080/rerank`). `http` and `https` only, without credentials or a query.
    pub url: String,
    /// The model name sent with Cohere-shaped requests and reported as `rerank_model`.
    pub model: String,
    /// The request shape.
    pub api: RerankApi,
    /// The API key itself, sent as `Authorization: Bearer`; never logged or shown.
    pub api_key: Option<String>,
    /// Allow loopback and private-network addresses (see [`crate::outbound`]).
    pub allow_private: bool,
    /// Passages per request (Text Embeddings Inference takes 32 by default).
    pub batch_size: usize,
    /// The limit for one request, from resolving the host to reading the whole answer.
    pub timeout: Duration,
    /// Retries after a rate limit (429), a server error (5xx), a timeout or a connection
    /// failure; other failures are not retried.
    pub max_retries: u32,
    /// How errors name these settings (by default, as the fields of this struct).
    pub names: Names,
}

impl HttpRerankerConfig {
    /// A configuration with the defaults: no key, public addresses only, 32 passages per
    /// request, 30 s per request, 2 retries, settings named as this struct's fields.
    pub fn new(url: impl Into<String>, model: impl Into<String>, api: RerankApi) -> Self {
        Self {
            url: url.into(),
            model: model.into(),
            api,
            api_key: None,
            allow_private: false,
            batch_size: 32,
            timeout: Duration::from_secs(30),
            max_retries: 2,
            names: Setting::field,
        }
    }
}

impl std::fmt::Debug for HttpRerankerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpRerankerConfig")
            .field("model", &self.model)
            .field("api", &self.api)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("allow_private", &self.allow_private)
            .field("batch_size", &self.batch_size)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
#[serde(untagged)]
enum Request<'a> {
    Cohere {
        model: &'a str,
        query: &'a str,
        documents: &'a [&'a str],
        top_n: usize,
    },
    Tei {
        query: &'a str,
        texts: &'a [&'a str],
        truncate: bool,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Answer {
    List(Vec<Scored>),
    Results { results: Vec<Scored> },
}

#[derive(Deserialize)]
struct Scored {
    index: usize,
    #[serde(alias = "relevance_score")]
    score: f32,
}

/// A rerank endpoint.
pub struct HttpReranker {
    call: Call,
    model: String,
    api: RerankApi,
    batch_size: usize,
    max_retries: u32,
}

impl std::fmt::Debug for HttpReranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpReranker")
            .field("model", &self.model)
            .field("api", &self.api)
            .finish_non_exhaustive()
    }
}

impl HttpReranker {
    /// Validates the configuration and scores one probe pair, so a wrong URL, key or model is
    /// found at start rather than by the first search. A URL the policy refuses is a
    /// validation error naming the host and the setting that opts in; no connection is made for it.
    pub fn connect(config: HttpRerankerConfig) -> Result<Self, Error> {
        let reranker = Self::configured(config)?;
        reranker.probe().map_err(probe_failed)?;
        Ok(reranker)
    }

    /// [`connect`](Self::connect), except that an endpoint that does not answer the probe (a
    /// timeout, a refused connection, a 429 or 5xx, each retried as configured) is not an
    /// error: the reranker is returned, and a search that reranks answers `rerank_error` until
    /// the endpoint answers (the probe teaches a reranker nothing, so nothing else waits for
    /// it). A configuration the endpoint refuses (another 4xx, an answer that is not scores) is
    /// still an error.
    pub fn connect_unless_refused(config: HttpRerankerConfig) -> Result<Self, Error> {
        let reranker = Self::configured(config)?;
        match reranker.probe() {
            Err(failure @ Attempt::Retry { .. }) => {
                tracing::warn!(
                    "the rerank endpoint did not answer the probe ({}); searches that rerank \
                     answer rerank_error until it does",
                    failure.describe()
                );
                Ok(reranker)
            }
            answered => answered.map_err(probe_failed).map(|_| reranker),
        }
    }

    /// The reranker the configuration describes, checked; nothing is sent.
    fn configured(config: HttpRerankerConfig) -> Result<Self, Error> {
        let url_field = (config.names)(Setting::Url);
        let (origin, path) = checked_url(&config.url, url_field, "rerank endpoint")?;
        let path = path.trim_end_matches('/');
        if !path.ends_with("/rerank") {
            return Err(invalid(
                url_field,
                "the rerank endpoint URL must end in /rerank (as …/v1/rerank or …/rerank)",
            ));
        }
        let authorization = checked_settings(
            config.names,
            &config.model,
            config.batch_size,
            config.timeout,
            config.api_key.as_deref(),
        )?;
        let policy = OutboundPolicy {
            allow_private: config.allow_private,
            names: config.names,
        };
        let reranker = Self {
            call: Call::new(
                format!("{origin}{path}"),
                authorization,
                policy,
                config.timeout,
            ),
            model: config.model,
            api: config.api,
            batch_size: config.batch_size,
            max_retries: config.max_retries,
        };
        Ok(reranker)
    }

    /// Scores one probe pair.
    fn probe(&self) -> Result<Vec<f32>, Attempt> {
        self.post("groundkit rerank probe", &["groundkit rerank probe"])
    }

    /// One batch, retried as configured: a score per passage, in order.
    fn post(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, Attempt> {
        let request = match self.api {
            RerankApi::Cohere => Request::Cohere {
                model: &self.model,
                query,
                documents: passages,
                top_n: passages.len(),
            },
            RerankApi::Tei => Request::Tei {
                query,
                texts: passages,
                truncate: true,
            },
        };
        let body = serde_json::to_vec(&request)
            .map_err(|_| Attempt::Fatal("the request could not be encoded".to_owned()))?;
        let limit = (passages.len() as u64 + 1).saturating_mul(BODY_BYTES_PER_PASSAGE);
        wire::with_retries(self.max_retries, "the rerank endpoint", || {
            let bytes = self.call.post(&body, limit)?;
            let answer: Answer = serde_json::from_slice(&bytes)
                .map_err(|_| Attempt::Fatal("the answer is not a rerank list".to_owned()))?;
            scores(answer, passages.len())
        })
    }
}

/// The answer's scores in passage order, checked: one per passage, each index once, every
/// score a finite number.
fn scores(answer: Answer, expected: usize) -> Result<Vec<f32>, Attempt> {
    let items = match answer {
        Answer::List(items) | Answer::Results { results: items } => items,
    };
    let fatal = |message: String| Err(Attempt::Fatal(message));
    if items.len() != expected {
        return fatal(format!(
            "the answer has {} scores for {expected} passages",
            items.len()
        ));
    }
    let mut slots: Vec<Option<f32>> = vec![None; expected];
    for item in items {
        if !item.score.is_finite() {
            return fatal("the answer has a score that is not a finite number".to_owned());
        }
        match slots.get_mut(item.index) {
            Some(slot @ None) => *slot = Some(item.score),
            Some(Some(_)) => return fatal(format!("the answer repeats index {}", item.index)),
            None => {
                return fatal(format!(
                    "the answer has index {} for {expected} passages",
                    item.index
                ));
            }
        }
    }
    // Every slot is filled: as many scores as passages, none repeated, none out of range.
    Ok(slots.into_iter().flatten().collect())
}

impl Reranker for HttpReranker {
    fn model(&self) -> &str {
        &self.model
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, Error> {
        let mut out = Vec::with_capacity(passages.len());
        for batch in passages.chunks(self.batch_size) {
            let scores = self.post(query, batch).map_err(|failure| {
                let detail = match failure {
                    Attempt::Refused(_) => "its address is not permitted".to_owned(),
                    other => other.describe(),
                };
                Error::rerank(format!("the rerank endpoint failed: {detail}"), None)
            })?;
            out.extend(scores);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[(usize, f32)]) -> Answer {
        Answer::List(
            items
                .iter()
                .map(|&(index, score)| Scored { index, score })
                .collect(),
        )
    }

    #[test]
    fn both_answer_shapes_parse_and_come_back_in_passage_order() {
        let tei: Answer =
            serde_json::from_str(r#"[{"index": 1, "score": 0.9}, {"index": 0, "score": 0.1}]"#)
                .expect("tei");
        assert_eq!(scores(tei, 2).expect("valid"), vec![0.1, 0.9]);
        let cohere: Answer = serde_json::from_str(
            r#"{"model": "m", "results": [{"index": 0, "relevance_score": 0.5, "document": {"text": "x"}}]}"#,
        )
        .expect("cohere");
        assert_eq!(scores(cohere, 1).expect("valid"), vec![0.5]);
    }

    #[test]
    fn malformed_answers_are_refused() {
        for (items, expected) in [
            (vec![(0, 1.0)], 2),           // too few
            (vec![(0, 1.0), (0, 2.0)], 2), // repeated index
            (vec![(0, 1.0), (2, 2.0)], 2), // out of range
            (vec![(0, f32::NAN)], 1),      // not a number
        ] {
            let result = scores(list(&items), expected);
            assert!(matches!(result, Err(Attempt::Fatal(_))), "{items:?}");
        }
    }
}
