//! `grk serve`: the service assembled from the command line. The same context, registry and
//! limits serve the read commands (`search`, `fetch`, `status`, `list`), which call the tools
//! through [`invoke`](crate::invoke) as the transports do.

use std::process::ExitCode;
use std::sync::Arc;

use groundkit_core::Error;
use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_retrieval::CollectionCache;
use groundkit_retrieval::embed::Embedder;

use super::args::{Cli, ServeCommand};
use super::reranker::Reranking;
use super::{exit, report_error};
use crate::AppState;
use crate::service::{DEFAULT_CACHE_CAPACITY, ServiceContext};

/// The state of the service the command line names: its tools, over the index directory, with
/// the embedder, the reranker and the cluster the options name. A cluster that cannot be
/// reached is an error; `serve` reports it as a usage error.
pub(super) fn service_state(
    cli: &Cli,
    embedder: Option<Arc<dyn Embedder>>,
    reranking: Option<&Reranking>,
) -> Result<AppState<ServiceContext>, StateError> {
    let registry = Registry::<ServiceContext>::collect()
        .map_err(|err| StateError::Registry(err.to_string()))?;
    let cache = CollectionCache::new(
        cli.index_dir.clone(),
        cli.base_dir.clone(),
        DEFAULT_CACHE_CAPACITY,
    );
    let mut context = ServiceContext::new(cache);
    if let Some(embedder) = embedder {
        context = context.with_embedder(embedder);
    }
    if let Some(reranking) = reranking {
        context = reranking.apply(context);
    }
    if let Some(cluster) = cli
        .cluster
        .backend(&cli.base_dir, &cli.index_dir)
        .map_err(StateError::Cluster)?
    {
        context = context.with_backend(cluster);
    }
    let info = ApiInfo {
        title: "groundkit".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    crate::service::app_state(registry, context, info, serve_limits(cli))
        .map_err(|err| StateError::Registry(err.to_string()))
}

/// Why [`service_state`] failed.
pub(super) enum StateError {
    /// The service's tools do not form a registry (a build defect).
    Registry(String),
    /// The cluster the options name cannot be used.
    Cluster(Error),
}

pub(super) fn serve(
    cli: &Cli,
    args: &ServeCommand,
    embedder: Option<Arc<dyn Embedder>>,
    reranking: Option<&Reranking>,
) -> ExitCode {
    let state = match service_state(cli, embedder, reranking) {
        Ok(state) => state,
        Err(StateError::Registry(err)) => {
            eprintln!("error: the service tools cannot be served: {err}");
            return ExitCode::from(exit::ERROR);
        }
        Err(StateError::Cluster(err)) => {
            report_error(&err);
            return ExitCode::from(exit::USAGE);
        }
    };
    let supervisor = match super::supervise::Supervisor::start(cli, args) {
        Ok(supervisor) => supervisor,
        Err(err) => {
            report_error(&err);
            return ExitCode::from(exit::USAGE);
        }
    };
    // MCP clients that subscribe to a collection's status hear of each new generation.
    if let Err(err) = crate::service::resources::follow_changes(
        Arc::clone(&state.context),
        state.resource_updates(),
    ) {
        tracing::warn!(error = %err, "resource subscriptions will not be told of changes");
    }
    let served = crate::serve::run(state, &args.serve);
    if let Some(supervisor) = supervisor {
        supervisor.stop();
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            err.exit_code()
        }
    }
}

/// Blocking threads per core for a server whose searches run on this machine alone.
const LOCAL_BLOCKING_THREADS_PER_CORE: usize = 2;

/// The server's limits: the defaults, with as many blocking threads as searches need. A search
/// of the index directory is CPU work, so past a couple of threads per core more threads only
/// add memory and context switches; one that waits on a cluster, an embedding endpoint or a
/// rerank endpoint keeps the default, one thread per concurrent call.
fn serve_limits(cli: &Cli) -> crate::Limits {
    let mut limits = crate::Limits::default();
    let waits_on_network = cli.cluster.opensearch_url.is_some()
        || cli.embed.embed_url.is_some()
        || cli.rerank.rerank_url.is_some();
    if !waits_on_network {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        limits.blocking_threads = LOCAL_BLOCKING_THREADS_PER_CORE * cores;
    }
    limits
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, LOCAL_BLOCKING_THREADS_PER_CORE, serve_limits};

    #[test]
    fn a_server_that_waits_on_the_network_keeps_a_thread_per_call_and_a_local_one_a_few_per_core() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let local = serve_limits(&Cli::parse_from(["grk", "serve"]));
        assert_eq!(
            local.blocking_threads,
            LOCAL_BLOCKING_THREADS_PER_CORE * cores
        );
        for network in [
            &["--opensearch-url", "http://127.0.0.1:9200"][..],
            &[
                "--embed-url",
                "http://127.0.0.1:8000/v1/embeddings",
                "--embed-api-model",
                "m",
            ],
            &[
                "--rerank-url",
                "http://127.0.0.1:8000/rerank",
                "--rerank-api-model",
                "m",
            ],
        ] {
            let args = ["grk", "serve"].iter().chain(network);
            let limits = serve_limits(&Cli::parse_from(args));
            assert_eq!(
                limits.blocking_threads, limits.max_concurrent_calls,
                "{network:?}"
            );
        }
    }
}
