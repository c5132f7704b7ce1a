//! The HTTP client of one cluster: where it is, how to authenticate, and one request at a time
//! with every failure turned into a `storage_error` that shows nothing of the cluster.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use groundkit_core::Error;
use serde_json::Value;
use ureq::tls::{RootCerts, TlsConfig, parse_pem};

/// The prefix of every alias and index groundkit creates, unless configured otherwise.
pub const DEFAULT_PREFIX: &str = "groundkit-";

/// Largest answer read from the cluster.
const MAX_ANSWER_BYTES: u64 = 256 << 20;
/// Most of an error answer kept for the operator's log.
const LOGGED_ERROR_BYTES: usize = 600;
/// Idle connections kept open to the cluster for the next request: as many as a server runs
/// calls at once by default (`Limits::max_concurrent_calls`), so that concurrent searches reuse
/// their connections rather than open and close one each (the HTTP client's default keeps 3).
const POOLED_CONNECTIONS: usize = 32;

/// Where the cluster is and how to reach it: the operator's configuration, never a caller's.
#[derive(Clone)]
pub struct ClusterConfig {
    /// Base URL, `http://host:port` or `https://host:port` (a path prefix is kept).
    pub url: String,
    /// User name for HTTP basic authentication.
    pub username: Option<String>,
    /// Name of the environment variable that holds the password (read once, at connect).
    pub password_env: Option<String>,
    /// PEM file of the certificate authorities to trust for `https` instead of the system's.
    pub ca_file: Option<PathBuf>,
    /// Prefix of the aliases and indices (default [`DEFAULT_PREFIX`]).
    pub prefix: String,
    /// Limit on each request, from connecting to the last byte of the answer.
    pub timeout: Duration,
}

impl ClusterConfig {
    /// A configuration for `url` with the defaults: no authentication, the system's certificate
    /// authorities, [`DEFAULT_PREFIX`], 30 s per request.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            username: None,
            password_env: None,
            ca_file: None,
            prefix: DEFAULT_PREFIX.to_owned(),
            timeout: Duration::from_secs(30),
        }
    }
}

impl fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("url", &self.url)
            .field("username", &self.username)
            .field("password_env", &self.password_env)
            .field("ca_file", &self.ca_file)
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A connection to one cluster (an HTTP agent with its pool; cheap to share by reference).
pub struct Cluster {
    agent: ureq::Agent,
    base: String,
    authorization: Option<String>,
    prefix: String,
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn config_error(field: &str, message: impl Into<String>) -> Error {
    Error::InvalidRequest {
        field: Some(field.to_owned()),
        message: message.into(),
    }
}

/// A failure of the cluster, for the operator's log: the status and the start of the answer.
#[derive(Debug)]
struct ClusterFailure(String);

impl fmt::Display for ClusterFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClusterFailure {}

/// A `storage_error` whose cause (logged, never shown) is `detail`.
pub(crate) fn failure(what: &'static str, detail: impl Into<String>) -> Error {
    Error::storage(what, ClusterFailure(detail.into()))
}

impl Cluster {
    /// Checks `config` and prepares the client; sends nothing.
    pub fn connect(config: &ClusterConfig) -> Result<Self, Error> {
        let base = config.url.trim_end_matches('/').to_owned();
        let scheme_ok = base.starts_with("http://") || base.starts_with("https://");
        if !scheme_ok || base.parse::<ureq::http::Uri>().is_err() {
            return Err(config_error(
                "opensearch-url",
                "must be an http:// or https:// URL",
            ));
        }
        if config.timeout.is_zero() {
            return Err(config_error(
                "opensearch-timeout",
                "must be longer than zero",
            ));
        }
        crate::layout::check_prefix(&config.prefix)?;
        let authorization = match (&config.username, &config.password_env) {
            (None, None) => None,
            (None, Some(_)) => {
                return Err(config_error(
                    "opensearch-user",
                    "a password needs a user name",
                ));
            }
            (Some(user), password_env) => {
                let password = match password_env {
                    Some(var) => std::env::var(var).map_err(|_| {
                        config_error(
                            "opensearch-password-env",
                            format!("the environment variable {var} is not set"),
                        )
                    })?,
                    None => String::new(),
                };
                let token =
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                Some(format!("Basic {token}"))
            }
        };
        let mut tls = TlsConfig::builder();
        if let Some(path) = &config.ca_file {
            let pem = std::fs::read(path).map_err(|_| {
                config_error("opensearch-ca", "the certificate file cannot be read")
            })?;
            let certificates: Vec<_> = parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c.to_owned()),
                    _ => None,
                })
                .collect();
            if certificates.is_empty() {
                return Err(config_error(
                    "opensearch-ca",
                    "the file holds no PEM certificate",
                ));
            }
            tls = tls.root_certs(RootCerts::new_with_certs(&certificates));
        }
        let agent_config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .timeout_global(Some(config.timeout))
            .max_idle_connections(POOLED_CONNECTIONS)
            .max_idle_connections_per_host(POOLED_CONNECTIONS)
            .tls_config(tls.build())
            .build();
        Ok(Self {
            agent: agent_config.into(),
            base,
            authorization,
            prefix: config.prefix.clone(),
        })
    }

    /// The alias and index prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Sends one request and returns the status and the answer's body. `path` starts with `/`.
    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
    ) -> Result<(u16, Vec<u8>), Error> {
        let url = format!("{}{}", self.base, path);
        let mut request = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(value) = &self.authorization {
            request = request.header("authorization", value);
        }
        if let Some((content_type, _)) = body {
            request = request.header("content-type", content_type);
        }
        let request = request
            .body(body.map(|(_, bytes)| bytes.to_vec()).unwrap_or_default())
            .map_err(|err| failure("cannot build a cluster request", err.to_string()))?;
        let mut response = self.agent.run(request).map_err(|err| {
            failure(
                "the search cluster did not answer",
                format!("{method} {path}: {err}"),
            )
        })?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_vec()
            .map_err(|err| {
                failure(
                    "the search cluster's answer was cut short",
                    format!("{method} {path}: {err}"),
                )
            })?;
        Ok((status, bytes))
    }

    /// Sends a request with an optional JSON body; returns the status and the parsed answer
    /// (`Value::Null` for an empty one). Any status is returned, not refused.
    pub(crate) fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), Error> {
        let encoded = body.map(|b| b.to_string());
        let (status, bytes) = self.send(
            method,
            path,
            encoded
                .as_deref()
                .map(|b| ("application/json", b.as_bytes())),
        )?;
        Ok((status, parse(method, path, status, &bytes)?))
    }

    /// Like [`call`](Self::call), but a status outside 2xx is a failure.
    pub(crate) fn ok(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, Error> {
        let (status, value) = self.call(method, path, body)?;
        if (200..300).contains(&status) {
            Ok(value)
        } else {
            Err(refused(method, path, status, &value))
        }
    }

    /// Sends a newline-delimited JSON body (`_bulk`, `_msearch`); returns the status and the
    /// parsed answer, whatever the status.
    pub(crate) fn ndjson_call(&self, path: &str, body: &[u8]) -> Result<(u16, Value), Error> {
        let (status, bytes) = self.send("POST", path, Some(("application/x-ndjson", body)))?;
        Ok((status, parse("POST", path, status, &bytes)?))
    }

    /// Like [`ndjson_call`](Self::ndjson_call), but a status outside 2xx is a failure.
    pub(crate) fn ndjson(&self, path: &str, body: &[u8]) -> Result<Value, Error> {
        let (status, value) = self.ndjson_call(path, body)?;
        if (200..300).contains(&status) {
            Ok(value)
        } else {
            Err(refused("POST", path, status, &value))
        }
    }
}

/// Attempts of a search before its failure is returned, and the pause after each failed one.
const SEARCH_BACKOFF: [Duration; 2] = [Duration::from_millis(100), Duration::from_millis(400)];

/// Whether a search answer covers every shard: a cluster that lost a shard copy answers from
/// the others unless told not to, and its answer would be missing chunks.
pub(crate) fn complete(answer: &Value) -> bool {
    answer
        .pointer("/_shards/failed")
        .and_then(Value::as_u64)
        .is_none_or(|failed| failed == 0)
}

impl Cluster {
    /// Runs a search (`attempt`) again after a failure, up to [`SEARCH_BACKOFF`]'s length: while
    /// a node leaves, the cluster may refuse a search that its replicas answer a moment later.
    /// Searches only read, so repeating one is safe.
    pub(crate) fn search<T>(
        &self,
        mut attempt: impl FnMut(&Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut pauses = SEARCH_BACKOFF.iter();
        loop {
            match attempt(self) {
                Ok(answer) => return Ok(answer),
                Err(err) => match pauses.next() {
                    Some(pause) => {
                        tracing::warn!(error = %err, "a search of the cluster failed; retrying");
                        std::thread::sleep(*pause);
                    }
                    None => return Err(err),
                },
            }
        }
    }
}

fn parse(method: &str, path: &str, status: u16, bytes: &[u8]) -> Result<Value, Error> {
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(bytes).map_err(|_| {
        let start = String::from_utf8_lossy(&bytes[..bytes.len().min(LOGGED_ERROR_BYTES)]);
        failure(
            "the search cluster sent an answer that is not JSON",
            format!("{method} {path}: HTTP {status}: {start}"),
        )
    })
}

/// A `storage_error` for a refused request, with the cluster's status and text for the log.
pub(crate) fn refused(method: &str, path: &str, status: u16, answer: &Value) -> Error {
    let text = answer.to_string();
    let text = &text[..text.floor_char_boundary(LOGGED_ERROR_BYTES)];
    failure(
        "the search cluster refused a request",
        format!("{method} {path}: HTTP {status}: {text}"),
    )
}
