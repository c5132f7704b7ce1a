//! The read commands. `grk search`, `fetch`, `status` and `list` call the service's tools as REST
//! and MCP do, through [`invoke`]: the same argument parsing and validation, the same defaults,
//! the same call permit, timeout and panic capture, the same scan limiter and the same JSON,
//! which `--json` prints unchanged.

use std::sync::Arc;

use groundkit_core::{Error, RequestContext, Transport};
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::{
    FetchChunkResponse, IndexStatus, ListCollectionsResponse, SearchResponse,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::args::{Cli, FetchArgs, ListArgs, SearchArgs, StatusArgs};
use super::output::{self, print_json};
use super::reranker::Reranking;
use super::serve::{StateError, service_state};
use crate::edge::id::random_id;
use crate::invoke::invoke;

/// Calls the service tool `name` with `arguments` and prints its answer: with `--json` the JSON
/// as the service returns it, else through `human`.
///
/// `arguments` is JSON because the call path takes JSON by design: a registry's tools are
/// type-erased, and parsing and validating the arguments is part of the call every transport
/// makes. The answer is printed as that JSON, or read back into its type for `human`.
fn call<T: DeserializeOwned>(
    cli: &Cli,
    embedder: Option<Arc<dyn Embedder>>,
    reranking: Option<&Reranking>,
    name: &str,
    arguments: Value,
    json: bool,
    human: impl FnOnce(&T),
) -> Result<(), Error> {
    let state = service_state(cli, embedder, reranking).map_err(|err| match err {
        StateError::Registry(err) => {
            Error::internal(format!("the service tools cannot be built: {err}"))
        }
        StateError::Cluster(err) => err,
    })?;
    let spec = state
        .registry
        .get(name)
        .ok_or_else(|| Error::internal(format!("the service has no tool `{name}`")))?;
    let engine = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|err| Error::internal(format!("cannot start the runtime: {err}")))?;
    let request = RequestContext::new(random_id(), Transport::InProcess);
    let answer = engine.block_on(invoke(&state, spec, arguments, request))?;
    if json {
        return print_json(&answer);
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
        "query": args.query,
        "mode": args.mode.mode(),
    });
    arguments["collection"] = match args.collection.as_slice() {
        [one] => json!(one),
        several => json!(several),
    };
    if let Some(top_k) = args.top_k {
        arguments["top_k"] = json!(top_k);
    }
    if let Some(fusion) = args.fusion {
        arguments["fusion"] = json!(fusion.method());
    }
    if args.rerank {
        arguments["rerank"] = json!(true);
    }
    if let Some(detail) = args.detail {
        arguments["detail"] = json!(detail.detail());
    }
    if let Some(max_chars) = args.max_chars {
        arguments["max_chars"] = json!(max_chars);
    }
    if let Some(min_score) = args.min_score {
        arguments["min_score"] = json!(min_score);
    }
    if let Some(cursor) = &args.cursor {
        arguments["cursor"] = json!(cursor);
    }
    let mut filter = serde_json::Map::new();
    for (field, values) in [
        ("paths", &args.paths),
        ("exclude_paths", &args.exclude_paths),
        ("source_class", &args.source_classes),
        ("format", &args.formats),
        ("document_ids", &args.document_ids),
    ] {
        if !values.is_empty() {
            filter.insert(field.to_owned(), json!(values));
        }
    }
    if !filter.is_empty() {
        arguments["filter"] = json!(filter);
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
