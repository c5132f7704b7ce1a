//! `grk ingest`: building or updating a collection in the index directory, and, with
//! `--backend opensearch`, publishing its new generation to the cluster.

use std::sync::Arc;

use groundkit_core::Error;
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::{self as retrieval, CollectionCache, IngestOptions, InputFormat};

use super::args::{Cli, FormatArg, IngestArgs};
use super::cluster::BackendArg;
use super::output::{self, emit, print_json};
use super::{exit, progress};

/// Ingest, then exit with [`exit::NOTHING_INGESTED`] when no source yielded a document and
/// [`exit::SOME_SOURCES_FAILED`] when some sources failed, so a script can tell.
pub(super) fn ingest(
    cli: &Cli,
    args: &IngestArgs,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<u8, Error> {
    let cluster = match args.backend {
        BackendArg::Local => None,
        BackendArg::Opensearch => {
            groundkit_opensearch::check_name(&args.collection)?;
            Some(
                cli.cluster
                    .connect()?
                    .ok_or_else(|| Error::InvalidRequest {
                        field: Some("backend".to_owned()),
                        message: "--backend opensearch needs --opensearch-url".to_owned(),
                    })?,
            )
        }
    };
    let mut options = IngestOptions::new(
        cli.index_dir.clone(),
        cli.base_dir.clone(),
        args.collection.clone(),
        args.inputs.clone(),
    );
    options.format = match args.format {
        FormatArg::Files => InputFormat::Files,
        FormatArg::Beir => InputFormat::Beir,
    };
    options.max_chunk_bytes = args.chunk_bytes;
    options.superseded_retention = std::time::Duration::from_secs(args.keep_superseded);
    options.embedder = embedder;
    options.drop_vectors = args.drop_vectors;
    options.graph_min_vectors = args.graph_min_vectors;
    if args.watch {
        let publisher = cluster.as_ref().map(|cluster| {
            Box::new(move || publish(cli, args, cluster)) as super::watch::Publisher<'_>
        });
        let watch = super::watch::WatchArgs {
            poll: args.poll_interval,
            stop_on_eof: args.stop_on_eof,
            json: args.json,
        };
        super::watch::watch(options, watch, publisher)?;
        return Ok(exit::SUCCESS);
    }
    let mut progress = progress::CliProgress::new(args.json);
    let summary = retrieval::ingest(&options, &mut progress);
    progress.finish();
    let summary = summary?;
    let published = match &cluster {
        Some(cluster) => publish(cli, args, cluster)?,
        None => None,
    };
    match &published {
        None => emit(args.json, &summary, output::print_ingest)?,
        Some(published) if args.json => {
            let mut value = serde_json::to_value(&summary)
                .map_err(|err| Error::internal(format!("cannot render JSON: {err}")))?;
            value["published"] = published_json(published);
            print_json(&value)?;
        }
        Some(published) => {
            output::print_ingest(&summary);
            output::print_published(published);
        }
    }
    let ingested = summary.added + summary.updated + summary.unchanged;
    Ok(if ingested == 0 {
        exit::NOTHING_INGESTED
    } else if !summary.failed.is_empty() {
        exit::SOME_SOURCES_FAILED
    } else {
        exit::SUCCESS
    })
}

/// What a publish did, as `--json` prints it.
pub(super) fn published_json(published: &groundkit_opensearch::Published) -> serde_json::Value {
    serde_json::json!({
        "index": published.index,
        "generation": published.generation,
        "chunks": published.chunks,
        "unchanged": published.unchanged,
        "removed": published.removed,
        "loaded": published.loaded,
        "grown_from": published.grown_from,
        "deleted_documents": published.deleted_documents,
    })
}

/// Publishes the collection's committed generation to `cluster` (nothing when the collection
/// does not exist: no source yielded a document and none ever did).
fn publish(
    cli: &Cli,
    args: &IngestArgs,
    cluster: &groundkit_opensearch::Cluster,
) -> Result<Option<groundkit_opensearch::Published>, Error> {
    let cache = CollectionCache::new(cli.index_dir.clone(), cli.base_dir.clone(), 1);
    let open = match cache.acquire(&args.collection) {
        Ok(open) => open,
        Err(Error::CollectionNotFound { .. }) => return Ok(None),
        Err(err) => return Err(err),
    };
    let options = groundkit_opensearch::PublishOptions {
        shards: cli.cluster.opensearch_shards,
        replicas: cli.cluster.opensearch_replicas,
        retention: std::time::Duration::from_secs(args.keep_superseded),
        ..Default::default()
    };
    groundkit_opensearch::publish(cluster, &open, &cache, options).map(Some)
}
