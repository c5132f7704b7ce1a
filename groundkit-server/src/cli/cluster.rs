//! The operator's OpenSearch cluster: the `--opensearch-*` options of `grk`, connecting to the
//! cluster they name, and publishing an ingested collection to it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use groundkit_core::Error;
use groundkit_opensearch::{Cluster, ClusterBackend, ClusterConfig, DEFAULT_PREFIX};
use groundkit_retrieval::Backend;

/// Where `grk ingest` writes a collection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The index directory (SQLite, tantivy, vectors).
    #[default]
    Local,
    /// The OpenSearch cluster `--opensearch-url` names, staged in the index directory first.
    Opensearch,
}

/// Cluster options, accepted by every command: `serve`, `search`, `fetch`, `status` and `list`
/// also answer for the collections the cluster holds; `ingest --backend opensearch` publishes
/// to it.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// The OpenSearch cluster, `http://HOST:PORT` or `https://HOST:PORT`.
    #[arg(long, global = true, value_name = "URL")]
    pub opensearch_url: Option<String>,
    /// User name for the cluster's basic authentication.
    #[arg(long, global = true, value_name = "NAME")]
    pub opensearch_user: Option<String>,
    /// The environment variable holding the user's password (never logged or shown).
    #[arg(long, global = true, value_name = "VAR")]
    pub opensearch_password_env: Option<String>,
    /// PEM file of the certificate authorities that sign the cluster's certificate (instead of
    /// the system's).
    #[arg(long, global = true, value_name = "FILE")]
    pub opensearch_ca: Option<PathBuf>,
    /// Prefix of the aliases and indices groundkit creates in the cluster.
    #[arg(long, global = true, value_name = "PREFIX", default_value = DEFAULT_PREFIX)]
    pub opensearch_prefix: String,
    /// Limit on each request to the cluster, in seconds.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 30)]
    pub opensearch_timeout: u64,
    /// `ingest --backend opensearch`: primary shards of each generation index.
    #[arg(long, global = true, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub opensearch_shards: u32,
    /// `ingest --backend opensearch`: replicas of each shard.
    #[arg(long, global = true, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(0..=16))]
    pub opensearch_replicas: u32,
}

impl ClusterArgs {
    /// The cluster these options name (`None` without `--opensearch-url`).
    pub fn connect(&self) -> Result<Option<Cluster>, Error> {
        let Some(url) = &self.opensearch_url else {
            return Ok(None);
        };
        let config = ClusterConfig {
            url: url.clone(),
            username: self.opensearch_user.clone(),
            password_env: self.opensearch_password_env.clone(),
            ca_file: self.opensearch_ca.clone(),
            prefix: self.opensearch_prefix.clone(),
            timeout: Duration::from_secs(self.opensearch_timeout),
        };
        Cluster::connect(&config).map(Some)
    }

    /// These options as arguments of another `grk` (a watcher `serve` starts): the password
    /// stays in its environment variable, which the other process inherits.
    pub(crate) fn to_args(&self) -> Vec<std::ffi::OsString> {
        let Some(url) = &self.opensearch_url else {
            return Vec::new();
        };
        let mut args: Vec<std::ffi::OsString> = vec!["--opensearch-url".into(), url.into()];
        let mut pair = |name: &str, value: Option<std::ffi::OsString>| {
            if let Some(value) = value {
                args.push(name.into());
                args.push(value);
            }
        };
        pair(
            "--opensearch-user",
            self.opensearch_user.clone().map(Into::into),
        );
        pair(
            "--opensearch-password-env",
            self.opensearch_password_env.clone().map(Into::into),
        );
        let ca = self.opensearch_ca.as_deref();
        let absolute =
            |path: &std::path::Path| std::path::absolute(path).unwrap_or_else(|_| path.into());
        pair("--opensearch-ca", ca.map(|path| absolute(path).into()));
        pair(
            "--opensearch-prefix",
            Some(self.opensearch_prefix.clone().into()),
        );
        pair(
            "--opensearch-timeout",
            Some(self.opensearch_timeout.to_string().into()),
        );
        pair(
            "--opensearch-shards",
            Some(self.opensearch_shards.to_string().into()),
        );
        pair(
            "--opensearch-replicas",
            Some(self.opensearch_replicas.to_string().into()),
        );
        args
    }

    /// The cluster as a backend serving its collections, verifying citations under `base_dir`.
    pub fn backend(
        &self,
        base_dir: &std::path::Path,
        index_dir: &std::path::Path,
    ) -> Result<Option<Arc<dyn Backend>>, Error> {
        Ok(self.connect()?.map(|cluster| {
            Arc::new(ClusterBackend::new(
                cluster,
                base_dir,
                Some(index_dir.to_path_buf()),
            )) as Arc<dyn Backend>
        }))
    }
}
