//! One request to an endpoint and what its answer means: the status classification (retry,
//! fail, refused by the policy), retries with backoff, and for embeddings the request body and
//! the checks on the vectors.
//!
//! A failure is described by status code, counts and a fixed wording only. The provider's
//! body is never looked at on failure (a small one is read and dropped, so the connection ends
//! cleanly), and on success it is parsed without keeping the parser's message (which can quote
//! the body).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use ureq::http::HeaderValue;
use ureq::unversioned::transport::DefaultConnector;

use super::resolver::{Refused, VettingResolver};
use crate::outbound::OutboundPolicy;

/// The answer's size limit per text (a 4096-dimension vector in JSON is about 100 KiB).
const BODY_BYTES_PER_TEXT: u64 = 512 << 10;

/// The most of a refusal's body read (and dropped) to end its connection cleanly.
const DISCARD_BYTES: u64 = 64 << 10;

/// The first retry's delay; each further retry doubles it, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// The longest wait between two attempts, `Retry-After` included.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Idle connections kept open to the endpoint: as many as a server runs calls at once by
/// default, so that concurrent queries reuse connections (the HTTP client's default keeps 3).
const POOLED_CONNECTIONS: usize = 32;

/// Why an attempt did not produce vectors.
#[derive(Debug)]
pub(super) enum Attempt {
    /// Worth another attempt: a 429 or 5xx (`status`), or a timeout or connection failure.
    Retry {
        status: Option<u16>,
        reason: &'static str,
        retry_after: Option<Duration>,
    },
    /// Not worth another attempt.
    Fatal(String),
    /// The host resolves only to addresses the policy refuses: nothing was called.
    Refused(groundkit_core::Error),
}

impl Attempt {
    /// Status codes, counts and fixed wording only.
    pub(super) fn describe(&self) -> String {
        match self {
            Attempt::Retry {
                status: Some(code), ..
            } => format!("HTTP {code}"),
            Attempt::Retry { reason, .. } => (*reason).to_owned(),
            Attempt::Fatal(message) => message.clone(),
            Attempt::Refused(err) => err.to_string(),
        }
    }
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: &'a [&'a str],
    encoding_format: &'static str,
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    index: usize,
    embedding: Vec<f32>,
}

/// The agent and everything a request carries.
pub(super) struct Call {
    agent: ureq::Agent,
    url: String,
    authorization: Option<HeaderValue>,
}

impl Call {
    /// An agent that follows no redirect, uses no proxy, treats every status as an answer, and
    /// connects only to addresses `policy` permits.
    pub(super) fn new(
        url: String,
        authorization: Option<HeaderValue>,
        policy: OutboundPolicy,
        timeout: Duration,
    ) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .timeout_global(Some(timeout))
            .max_idle_connections(POOLED_CONNECTIONS)
            .max_idle_connections_per_host(POOLED_CONNECTIONS)
            .build();
        let agent =
            ureq::Agent::with_parts(config, DefaultConnector::new(), VettingResolver { policy });
        Self {
            agent,
            url,
            authorization,
        }
    }

    /// One POST of the JSON `body`; the answer's body when the status is a success, read up to
    /// `limit` bytes.
    pub(super) fn post(&self, body: &[u8], limit: u64) -> Result<Vec<u8>, Attempt> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json");
        if let Some(value) = &self.authorization {
            request = request.header("authorization", value.clone());
        }
        let mut response = request.send(body).map_err(failure)?;
        let status = response.status().as_u16();
        let refusal = match status {
            200..=299 => None,
            300..=399 => Some(Attempt::Fatal(format!(
                "the endpoint answered with a redirect (HTTP {status}), which is never followed"
            ))),
            429 | 500..=599 => Some(Attempt::Retry {
                status: Some(status),
                reason: "server error or rate limit",
                retry_after: response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs),
            }),
            401 | 403 => Some(Attempt::Fatal(format!(
                "the endpoint refused the request (HTTP {status}); check the API key"
            ))),
            _ => Some(Attempt::Fatal(format!(
                "the endpoint refused the request (HTTP {status})"
            ))),
        };
        if let Some(refusal) = refusal {
            // Read (and drop unseen) a small body, so the connection ends cleanly or is reused
            // rather than reset with unread data.
            let _ = response
                .body_mut()
                .with_config()
                .limit(DISCARD_BYTES)
                .read_to_vec();
            return Err(refusal);
        }
        response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map_err(failure)
    }
}

/// Runs `attempt` until it succeeds, fails for good, or has been retried `max_retries` times,
/// waiting between attempts (doubling from [`FIRST_BACKOFF`], or the server's `Retry-After`, at
/// most [`MAX_BACKOFF`]). `what` names the endpoint in the warning logged before each retry.
pub(super) fn with_retries<T>(
    max_retries: u32,
    what: &str,
    mut attempt: impl FnMut() -> Result<T, Attempt>,
) -> Result<T, Attempt> {
    let mut retry = 0u32;
    loop {
        let failure = match attempt() {
            Ok(value) => return Ok(value),
            Err(failure) => failure,
        };
        let Attempt::Retry { retry_after, .. } = &failure else {
            return Err(failure);
        };
        if retry >= max_retries {
            return Err(failure);
        }
        let backoff = FIRST_BACKOFF.saturating_mul(1 << retry.min(16));
        let delay = retry_after.unwrap_or(backoff).min(MAX_BACKOFF);
        retry += 1;
        tracing::warn!(
            retry,
            of = max_retries,
            delay_ms = delay.as_millis() as u64,
            "{what} failed ({}); retrying",
            failure.describe()
        );
        std::thread::sleep(delay);
    }
}

/// One embeddings request for `texts` as `model`, whose vectors must all have `dimension`
/// values (when given).
pub(super) fn embed_once(
    call: &Call,
    model: &str,
    texts: &[&str],
    dimension: Option<usize>,
) -> Result<Vec<Vec<f32>>, Attempt> {
    let body = serde_json::to_vec(&Request {
        model,
        input: texts,
        encoding_format: "float",
    })
    .map_err(|_| Attempt::Fatal("the request could not be encoded".to_owned()))?;
    let limit = (texts.len() as u64 + 1).saturating_mul(BODY_BYTES_PER_TEXT);
    let bytes = call.post(&body, limit)?;
    let answer: Answer = serde_json::from_slice(&bytes)
        .map_err(|_| Attempt::Fatal("the answer is not an embeddings list".to_owned()))?;
    vectors(answer, texts.len(), dimension)
}

/// The answer's vectors in input order, checked: one per text, each index once, all of one
/// non-zero dimension (`dimension` when given), every value a finite `f32` (`1e39` is not).
fn vectors(
    answer: Answer,
    expected: usize,
    dimension: Option<usize>,
) -> Result<Vec<Vec<f32>>, Attempt> {
    let fatal = |message: String| Err(Attempt::Fatal(message));
    if answer.data.len() != expected {
        return fatal(format!(
            "the answer has {} vectors for {expected} texts",
            answer.data.len()
        ));
    }
    let dimension = dimension
        .or_else(|| answer.data.first().map(|d| d.embedding.len()))
        .unwrap_or(0);
    if dimension == 0 {
        return fatal("the answer has an empty vector".to_owned());
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for datum in answer.data {
        if datum.embedding.len() != dimension {
            return fatal(format!(
                "the answer has a vector of {} values where {dimension} were expected",
                datum.embedding.len()
            ));
        }
        if datum.embedding.iter().any(|v| !v.is_finite()) {
            return fatal("the answer has a value that is not a finite number".to_owned());
        }
        match slots.get_mut(datum.index) {
            Some(slot @ None) => *slot = Some(datum.embedding),
            Some(Some(_)) => return fatal(format!("the answer repeats index {}", datum.index)),
            None => {
                return fatal(format!(
                    "the answer has index {} for {expected} texts",
                    datum.index
                ));
            }
        }
    }
    // Every slot is filled: as many data as texts, none repeated, none out of range.
    Ok(slots.into_iter().flatten().collect())
}

/// A transport failure, in fixed wording (ureq's own messages can quote the URL).
fn failure(err: ureq::Error) -> Attempt {
    let retry = |reason| Attempt::Retry {
        status: None,
        reason,
        retry_after: None,
    };
    match err {
        ureq::Error::Other(inner) => match inner.downcast::<Refused>() {
            Ok(refused) => Attempt::Refused(refused.0),
            Err(_) => Attempt::Fatal("the request failed".to_owned()),
        },
        ureq::Error::Timeout(_) => retry("timed out"),
        // rustls reports a failed handshake (a bad certificate, a server that does not speak
        // TLS) as invalid data: another attempt would fail the same way.
        ureq::Error::Io(err) if err.kind() == std::io::ErrorKind::InvalidData => {
            Attempt::Fatal("the TLS connection failed".to_owned())
        }
        ureq::Error::Io(_) => retry("connection error"),
        ureq::Error::ConnectionFailed => retry("connection failed"),
        ureq::Error::HostNotFound => retry("host not found"),
        ureq::Error::BodyExceedsLimit(limit) => {
            Attempt::Fatal(format!("the answer is larger than {limit} bytes"))
        }
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => {
            Attempt::Fatal("the TLS connection failed".to_owned())
        }
        _ => Attempt::Fatal("the request failed (protocol error)".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(items: &[(usize, usize)]) -> Answer {
        Answer {
            data: items
                .iter()
                .map(|&(index, len)| Datum {
                    index,
                    embedding: vec![index as f32; len],
                })
                .collect(),
        }
    }

    #[test]
    fn vectors_come_back_in_input_order() {
        let got = vectors(answer(&[(2, 3), (0, 3), (1, 3)]), 3, None).expect("valid");
        assert_eq!(got, vec![vec![0.0; 3], vec![1.0; 3], vec![2.0; 3]]);
    }

    #[test]
    fn malformed_answers_are_refused() {
        for (items, expected, dimension) in [
            (vec![(0, 3)], 2, None),         // too few
            (vec![(0, 3), (0, 3)], 2, None), // repeated index
            (vec![(0, 3), (2, 3)], 2, None), // out of range
            (vec![(0, 3), (1, 4)], 2, None), // mixed dimensions
            (vec![(0, 3)], 1, Some(4)),      // not the known dimension
            (vec![(0, 0)], 1, None),         // empty vector
        ] {
            let result = vectors(answer(&items), expected, dimension);
            assert!(matches!(result, Err(Attempt::Fatal(_))), "{items:?}");
        }
    }

    #[test]
    fn an_answer_with_a_value_beyond_f32_is_refused() {
        let answer: Answer =
            serde_json::from_str(r#"{"data": [{"index": 0, "embedding": [0.5, 1e39]}]}"#)
                .expect("serde reads 1e39 as an infinite f32");
        let result = vectors(answer, 1, None);
        assert!(matches!(result, Err(Attempt::Fatal(m)) if m.contains("finite")));
    }
}
