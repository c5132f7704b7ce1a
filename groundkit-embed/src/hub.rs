//! Models by name from the Hugging Face Hub (or a mirror of it): [`Hub::snapshot`] finds a
//! model's files in the local cache or downloads them into it, and returns the directory
//! [`crate::LocalEmbedder::load`] reads.
//!
//! The cache is the Hub's own layout (`models--OWNER--NAME/snapshots/COMMIT/FILE`, with
//! `refs/REVISION` naming the commit), in the directory the Hub's own tools use, so a model
//! that sentence-transformers already downloaded is found without a download, and one downloaded
//! here is found by them. A revision whose snapshot is complete in the cache is used without
//! contacting the Hub.
//!
//! Downloads are checked and atomic: each file goes to a temporary file beside its final name
//! and is renamed into place once it is complete and, for files the Hub stores by hash (the
//! weights), its SHA-256 matches the hash the Hub announced. The revision's ref is written
//! last, so an interrupted download leaves no snapshot that looks complete.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use groundkit_core::Error;

use crate::setting::{Names, Setting};

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Files every model needs.
const REQUIRED: &[&str] = &["config.json", "tokenizer.json", "model.safetensors"];
/// Files a model may have; absent ones take their defaults.
const OPTIONAL: &[&str] = &[
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "tokenizer_config.json",
];
/// The largest file downloaded (the weights of a large BERT are about 1.3 GB).
const MAX_FILE_BYTES: u64 = 8 << 30;
/// Redirects followed per file (the Hub redirects weights to its content store).
const MAX_REDIRECTS: usize = 5;

/// What a Hub model is for: it decides the files a snapshot needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HubModelKind {
    /// A sentence-transformers model for [`crate::LocalEmbedder`]: also its pooling
    /// configuration.
    #[default]
    Embedder,
    /// A cross-encoder for [`crate::CrossEncoder`]: the `transformers` files only.
    CrossEncoder,
}

/// A model named on the Hub: `OWNER/NAME`, optionally `@REVISION` (a branch, tag or commit;
/// `main` by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubModel {
    repo: String,
    revision: String,
    kind: HubModelKind,
    /// What errors call the setting that named this model.
    field: &'static str,
    /// What errors call the setting that names a model directory instead.
    dir_field: &'static str,
}

fn usage(field: &str, message: impl Into<String>) -> Error {
    Error::Validation {
        field: field.to_owned(),
        message: message.into(),
    }
}

/// A name segment the Hub allows, which is also safe as a path segment.
fn is_segment(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 96
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl HubModel {
    /// Parses `OWNER/NAME[@REVISION]`, naming an embedder; errors name the settings as this
    /// crate does.
    pub fn parse(spec: &str) -> Result<Self, Error> {
        Self::parse_as(spec, HubModelKind::Embedder, Setting::field)
    }

    /// Parses `OWNER/NAME[@REVISION]`, naming a model of `kind`; errors about it name the
    /// settings as `names` does.
    pub fn parse_as(spec: &str, kind: HubModelKind, names: Names) -> Result<Self, Error> {
        let field = names(Setting::HubModel);
        let usage = |message: &str| usage(field, message);
        let (repo, revision) = spec.split_once('@').unwrap_or((spec, "main"));
        let valid = repo
            .split_once('/')
            .is_some_and(|(owner, name)| is_segment(owner) && is_segment(name));
        if !valid {
            return Err(usage(
                "a Hub model is named OWNER/NAME or OWNER/NAME@REVISION, for example \
                 sentence-transformers/all-MiniLM-L6-v2",
            ));
        }
        if !is_segment(revision) {
            return Err(usage("the revision must be a branch, tag or commit name"));
        }
        Ok(Self {
            repo: repo.to_owned(),
            revision: revision.to_owned(),
            kind,
            field,
            dir_field: names(Setting::ModelDir),
        })
    }

    /// `OWNER/NAME`.
    pub fn repo(&self) -> &str {
        &self.repo
    }

    /// The branch, tag or commit.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    fn is_commit(&self) -> bool {
        self.revision.len() == 40 && self.revision.chars().all(|c| c.is_ascii_hexdigit())
    }
}

/// Where models come from and where they are kept.
pub struct Hub {
    endpoint: String,
    cache: PathBuf,
    offline: bool,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("endpoint", &self.endpoint)
            .field("cache", &self.cache)
            .field("offline", &self.offline)
            .finish_non_exhaustive()
    }
}

/// Where the Hub's tools keep models: `HF_HUB_CACHE`, else `HF_HOME/hub`, else
/// `XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`.
fn default_cache() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("HF_HUB_CACHE")
        .or_else(|| var("HF_HOME").map(|home| home.join("hub")))
        .or_else(|| var("XDG_CACHE_HOME").map(|cache| cache.join("huggingface/hub")))
        .or_else(|| var("HOME").map(|home| home.join(".cache/huggingface/hub")))
}

impl Hub {
    /// The Hub at `endpoint` (`https://huggingface.co`, or a mirror), caching into `cache`.
    pub fn new(endpoint: impl Into<String>, cache: impl Into<PathBuf>) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_recv_response(Some(Duration::from_secs(60)))
            .timeout_recv_body(Some(Duration::from_secs(60 * 60)))
            .build();
        Self {
            endpoint: endpoint.into().trim_end_matches('/').to_owned(),
            cache: cache.into(),
            offline: false,
            agent: ureq::Agent::new_with_config(config),
        }
    }

    /// The Hub as its own tools are configured: `HF_ENDPOINT` (default [`DEFAULT_ENDPOINT`]),
    /// the cache directory they use, and `HF_HUB_OFFLINE` (`1`, `on`, `yes` or `true`) for the
    /// cache only.
    pub fn from_env() -> Result<Self, Error> {
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
        let cache = default_cache().ok_or_else(|| Error::Validation {
            field: "HF_HUB_CACHE".to_owned(),
            message: "no model cache directory: set HF_HUB_CACHE or HOME".to_owned(),
        })?;
        let offline = std::env::var("HF_HUB_OFFLINE")
            .is_ok_and(|v| matches!(v.to_ascii_uppercase().as_str(), "1" | "ON" | "YES" | "TRUE"));
        Ok(Self::new(endpoint, cache).offline(offline))
    }

    /// Use the cache only: a model that is not complete in it is an error.
    pub fn offline(mut self, offline: bool) -> Self {
        self.offline = offline;
        self
    }

    fn model_dir(&self, model: &HubModel) -> PathBuf {
        self.cache
            .join(format!("models--{}", model.repo.replace('/', "--")))
    }

    /// The directory holding `model`'s files: its snapshot in the cache, downloaded first unless
    /// the cache has it complete.
    pub fn snapshot(&self, model: &HubModel) -> Result<PathBuf, Error> {
        let dir = self.model_dir(model);
        let commit = if model.is_commit() {
            Some(model.revision.clone())
        } else {
            std::fs::read_to_string(dir.join("refs").join(&model.revision))
                .ok()
                .map(|c| c.trim().to_owned())
                .filter(|c| is_segment(c))
        };
        if let Some(commit) = &commit {
            let snapshot = dir.join("snapshots").join(commit);
            if is_complete(&snapshot) {
                return Ok(snapshot);
            }
        }
        if self.offline {
            return Err(usage(
                model.field,
                format!(
                    "{}@{} is not in the model cache, and the Hub is offline (HF_HUB_OFFLINE)",
                    model.repo, model.revision
                ),
            ));
        }
        self.download(model, &dir)
    }

    fn download(&self, model: &HubModel, dir: &Path) -> Result<PathBuf, Error> {
        tracing::info!(model = %model.repo, revision = %model.revision, "downloading the model");
        // The commit is learned from the first answer; every other file is fetched at it, so
        // the files come from one commit even if the branch moves meanwhile.
        let first = self.fetch(model, &model.revision, "config.json")?;
        let Some(fetched) = first else {
            return Err(usage(
                model.field,
                format!(
                    "{}@{} is not a model on the Hub (it has no config.json); a model directory \
                     goes to {}",
                    model.repo, model.revision, model.dir_field
                ),
            ));
        };
        let commit = fetched
            .commit
            .clone()
            .filter(|c| is_segment(c))
            .ok_or_else(|| {
                Error::embedding("the model Hub did not say which commit it served", None)
            })?;
        let snapshot = dir.join("snapshots").join(&commit);
        std::fs::create_dir_all(&snapshot)
            .map_err(|err| Error::storage("cannot create the model cache", err))?;
        fetched.place(&snapshot.join("config.json"))?;
        let mut pooling = "1_Pooling".to_owned();
        for name in OPTIONAL {
            let Some(fetched) = self.fetch(model, &commit, name)? else {
                continue;
            };
            if *name == "modules.json" {
                pooling = pooling_dir(&fetched.temp, model.field)?;
            }
            fetched.place(&snapshot.join(name))?;
        }
        // The weights last: a snapshot with weights has every other file (see `is_complete`).
        let mut files = vec!["tokenizer.json".to_owned()];
        if model.kind == HubModelKind::Embedder {
            files.push(format!("{pooling}/config.json"));
        }
        files.push("model.safetensors".to_owned());
        for name in &files {
            let fetched = self.fetch(model, &commit, name)?.ok_or_else(|| {
                usage(
                    model.field,
                    format!("{}@{commit} has no {name}", model.repo),
                )
            })?;
            let path = snapshot.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|err| Error::storage("cannot create the model cache", err))?;
            }
            fetched.place(&path)?;
        }
        if !model.is_commit() {
            write_ref(dir, &model.revision, &commit)?;
        }
        Ok(snapshot)
    }

    /// Downloads `file` of `model` at `revision` into a temporary file in the cache; `None` if
    /// the Hub has no such file.
    fn fetch(
        &self,
        model: &HubModel,
        revision: &str,
        file: &str,
    ) -> Result<Option<Fetched>, Error> {
        let mut url = format!("{}/{}/resolve/{revision}/{file}", self.endpoint, model.repo);
        let (mut commit, mut sha256) = (None, None);
        for _ in 0..=MAX_REDIRECTS {
            let mut response =
                self.agent.get(&url).call().map_err(|err| {
                    hub_error(format!("cannot reach the model Hub for {file}"), err)
                })?;
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(|v| v.trim_matches('"').to_owned())
            };
            commit = commit.or_else(|| header("x-repo-commit"));
            sha256 = sha256.or_else(|| header("x-linked-etag").filter(|e| is_sha256(e)));
            let status = response.status().as_u16();
            match status {
                200 => {
                    let body = response
                        .body_mut()
                        .with_config()
                        .limit(MAX_FILE_BYTES)
                        .reader();
                    let fetched = self.receive(body, file, sha256.as_deref())?;
                    return Ok(Some(Fetched { commit, ..fetched }));
                }
                301 | 302 | 303 | 307 | 308 => {
                    let location = header("location").ok_or_else(|| {
                        Error::embedding("the model Hub redirected nowhere", None)
                    })?;
                    let next = resolve_location(&url, &location);
                    if url.starts_with("https://") && !next.starts_with("https://") {
                        return Err(Error::embedding(
                            "the model Hub redirected from https to plain http",
                            None,
                        ));
                    }
                    url = next;
                }
                404 => return Ok(None),
                401 | 403 => {
                    return Err(usage(
                        model.field,
                        format!(
                            "{}@{revision} is not on the Hub, or is private or gated (then \
                             download it and give its directory to {})",
                            model.repo, model.dir_field
                        ),
                    ));
                }
                _ => {
                    return Err(Error::embedding(
                        format!("the model Hub answered {status} for {file}"),
                        None,
                    ));
                }
            }
        }
        Err(Error::embedding("the model Hub redirected too often", None))
    }

    /// Streams a body into a temporary file in the cache, checking its SHA-256 when one is
    /// expected.
    fn receive(
        &self,
        mut body: impl Read,
        file: &str,
        sha256: Option<&str>,
    ) -> Result<Fetched, Error> {
        let io = |err| Error::storage("cannot write the model cache", err);
        std::fs::create_dir_all(&self.cache).map_err(io)?;
        let mut temp = tempfile::NamedTempFile::new_in(&self.cache).map_err(io)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match body.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) => return Err(hub_error(format!("cannot download {file}"), err)),
            };
            hasher.update(&buf[..n]);
            temp.write_all(&buf[..n]).map_err(io)?;
        }
        let digest: String = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if let Some(expected) = sha256
            && !expected.eq_ignore_ascii_case(&digest)
        {
            return Err(Error::embedding(
                format!("{file} from the model Hub does not match its SHA-256"),
                None,
            ));
        }
        temp.as_file().sync_all().map_err(io)?;
        Ok(Fetched { commit: None, temp })
    }
}

/// A downloaded file, complete and checked, not yet in place.
struct Fetched {
    commit: Option<String>,
    temp: tempfile::NamedTempFile,
}

impl Fetched {
    fn place(self, path: &Path) -> Result<(), Error> {
        self.temp
            .persist(path)
            .map_err(|err| Error::storage("cannot write the model cache", err.error))?;
        Ok(())
    }
}

fn hub_error(message: String, err: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::embedding(message, Some(Box::new(err)))
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// An absolute redirect target, or a path on the same origin.
fn resolve_location(current: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_owned();
    }
    let origin_end = current
        .find("://")
        .and_then(|at| current[at + 3..].find('/').map(|slash| at + 3 + slash))
        .unwrap_or(current.len());
    format!(
        "{}/{}",
        &current[..origin_end],
        location.trim_start_matches('/')
    )
}

/// The pooling module's directory named by a downloaded `modules.json`, checked to be a plain
/// relative path.
fn pooling_dir(modules: &tempfile::NamedTempFile, field: &str) -> Result<String, Error> {
    #[derive(Deserialize)]
    struct Module {
        path: String,
        #[serde(rename = "type")]
        kind: String,
    }
    let bytes = std::fs::read(modules.path())
        .map_err(|err| Error::storage("cannot read the model cache", err))?;
    let modules: Vec<Module> = serde_json::from_slice(&bytes)
        .map_err(|_| usage(field, "the model's modules.json is not valid"))?;
    let path = modules
        .into_iter()
        .find(|m| m.kind.ends_with("models.Pooling"))
        .map_or_else(|| "1_Pooling".to_owned(), |m| m.path);
    if path.split('/').all(is_segment) {
        Ok(path)
    } else {
        Err(usage(
            field,
            "the model's modules.json names an unusable pooling directory",
        ))
    }
}

/// Whether a snapshot directory has every file a model needs. A download places the weights
/// after every other file, so a snapshot with them is complete; one the Hub's own tools made is
/// complete when it has the required files.
fn is_complete(snapshot: &Path) -> bool {
    REQUIRED.iter().all(|f| snapshot.join(f).is_file())
}

fn write_ref(dir: &Path, revision: &str, commit: &str) -> Result<(), Error> {
    let io = |err| Error::storage("cannot write the model cache", err);
    let refs = dir.join("refs");
    std::fs::create_dir_all(&refs).map_err(io)?;
    let mut temp = tempfile::NamedTempFile::new_in(&refs).map_err(io)?;
    temp.write_all(commit.as_bytes()).map_err(io)?;
    temp.persist(refs.join(revision))
        .map_err(|err| io(err.error))?;
    Ok(())
}
