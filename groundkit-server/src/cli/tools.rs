//! The read commands. `grk search`, `fetch`, `status` and `list` call the service's tools through
//! its registry, as REST and MCP do: the same argument parsing and validation, the same
//! defaults, the same scan limiter and the same JSON, which `--json` prints unchanged.

use groundkit_retrieval::{
    CollectionCache, FetchChunkResponse, IndexStatus, ListCollectionsResponse, SearchResponse,
};
use std::sync::Arc;

use groundkit_core::{Error, Registry};
use groundkit_retrieval::embed::Embedder;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{Cli, FetchArgs, ListArgs, SearchArgs, StatusArgs, output};
use crate::reranker::Reranking;
use crate::service::{DEFAULT_CACHE_CAPACITY, ServiceContext};

/// Calls the service tool `name` with `arguments` and prints its answer: with `--json` the JSON
/// as the service returns it, else through `human`.
fn call<T: DeserializeOwned>(
    cli: &Cli,
    embedder: Option<Arc<dyn Embedder>>,
    reranking: Option<&Reranking>,
    name: &str,
    arguments: Value,
    json: bool,
    human: impl FnOnce(&T),
) -> Result<(), Error> {
    let registry = Registry::<ServiceContext>::collect()
        .map_err(|err| Error::internal(format!("the service tools cannot be built: {err}")))?;
    let spec = registry
        .get(name)
        .ok_or_else(|| Error::internal(format!("the service has no tool `{name}`")))?;
    let mut context = ServiceContext::new(CollectionCache::new(
        cli.index_dir.clone(),
        cli.base_dir.clone(),
        DEFAULT_CACHE_CAPACITY,
    ));
    if let Some(embedder) = embedder {
        context = context.with_embedder(embedder);
    }
    if let Some(reranking) = reranking {
        context = reranking.apply(context);
    }
    if let Some(cluster) = cli.cluster.backend(&cli.base_dir, &cli.index_dir)? {
        context = context.with_backend(cluster);
    }
    let engine = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|err| Error::internal(format!("cannot start the runtime: {err}")))?;
    let answer = engine.block_on(spec.call(&context, arguments))?;
    if json {
        return super::print_json(&answer);
    }
    let typed: T = serde_json::from_value(answer)
        .map_err(|err| Error::internal(format!("unexpected `{name}` answer: {err}")))?;
    human(&typed);
    Ok(())
}

pub(super) fn search(
    cli: &Cli,
    args: &SearchArgs,
    embedder: Option<Arc<dyn Embedder>>,
    reranking: Option<&Reranking>,
) -> Result<(), Error> {
    let mut arguments = json!({
        "collection": args.collection,
        "query": args.query,
        "mode": args.mode.mode(),
    });
    if let Some(top_k) = args.top_k {
        arguments["top_k"] = json!(top_k);
    }
    if args.rerank {
        arguments["rerank"] = json!(true);
    }
    call(
        cli,
        embedder,
        reranking,
        "search",
        arguments,
        args.json,
        |r: &SearchResponse| output::print_search(r),
    )
}

pub(super) fn fetch(cli: &Cli, args: &FetchArgs) -> Result<(), Error> {
    let arguments = json!({"collection": args.collection, "chunk_id": args.chunk_id});
    call(
        cli,
        None,
        None,
        "fetch_chunk",
        arguments,
        args.json,
        |r: &FetchChunkResponse| output::print_fetch(r),
    )
}

pub(super) fn status(
    cli: &Cli,
    args: &StatusArgs,
    embedder: Option<Arc<dyn Embedder>>,
    reranking: Option<&Reranking>,
) -> Result<(), Error> {
    let arguments = json!({"collection": args.collection});
    call(
        cli,
        embedder,
        reranking,
        "index_status",
        arguments,
        args.json,
        |r: &IndexStatus| output::print_status(r),
    )
}

pub(super) fn list(cli: &Cli, args: &ListArgs) -> Result<(), Error> {
    call(
        cli,
        None,
        None,
        "list_collections",
        json!({}),
        args.json,
        |response: &ListCollectionsResponse| output::print_list(response, &cli.index_dir),
    )
}
