//! The service's resources: each chunk and each collection's status under a `grk://` URI
//! template, and the list of collections, each read as the JSON answer of the tool that gives
//! it (`application/json`).
//!
//! A chunk reads as `fetch_chunk`'s verified answer: the chunk re-read from its source and
//! compared byte for byte, so a drifted or unresolvable chunk reads as its verdict without
//! content, never as the text stored at ingest. The parameters are the tools' own request
//! types, validated the same way: a traversal-shaped collection name is a validation error
//! before anything touches the disk. The `collection` variable completes to the collections
//! this server can search.
//!
//! Over MCP, a `search` result also links each hit's chunk resource ([`search_links`]), so a
//! client can attach a verified chunk without another tool call.

use groundkit_core::{Content, Error, resource};
use serde_json::Value;

use crate::mcp::ResourceLink;

use super::prompts::collection_names;
use super::{
    FetchChunkRequest, IndexStatusRequest, ListCollectionsRequest, ServiceContext, fetch_chunk,
    index_status, list_collections,
};

/// A chunk of a collection, verified against its source: `fetch_chunk`'s answer as JSON.
///
/// The verdict is `verified` (content included), `drifted` or `unresolvable` (no content).
#[resource(
    read_only,
    uri = "grk://{collection}/chunks/{chunk_id}",
    mime_type = "application/json",
    complete(collection = collection_names),
    title = "A verified chunk"
)]
pub async fn chunk(ctx: &ServiceContext, params: FetchChunkRequest) -> Result<Content, Error> {
    Content::json(&fetch_chunk(ctx, params).await?)
}

/// A collection's status: `index_status`'s answer as JSON.
#[resource(
    read_only,
    uri = "grk://{collection}/status",
    mime_type = "application/json",
    complete(collection = collection_names),
    title = "Collection status"
)]
pub async fn collection_status(
    ctx: &ServiceContext,
    params: IndexStatusRequest,
) -> Result<Content, Error> {
    Content::json(&index_status(ctx, params).await?)
}

/// The collections this server can search: `list_collections`' answer as JSON.
#[resource(
    read_only,
    uri = "grk://collections",
    mime_type = "application/json",
    title = "Collections"
)]
pub async fn collections(ctx: &ServiceContext) -> Result<Content, Error> {
    Content::json(&list_collections(ctx, ListCollectionsRequest {}).await?)
}

/// The links of a `search` answer: each hit's chunk resource, `grk://{collection}/chunks/{id}`
/// (the collection the hit names, or else the one searched), titled by its source and lines
/// (`notes/tea.txt:1-7`).
pub fn search_links(arguments: &Value, answer: &Value) -> Vec<ResourceLink> {
    let searched = arguments.get("collection").and_then(Value::as_str);
    let hits = answer.get("results").and_then(Value::as_array);
    hits.into_iter()
        .flatten()
        .filter_map(|hit| {
            let named = hit.get("collection").and_then(Value::as_str);
            let collection = named.or(searched)?;
            let chunk_id = hit.get("chunk_id")?.as_str()?;
            let citation = hit.get("citation")?;
            let source = citation.get("source")?.as_str()?;
            let lines = citation
                .get("start_line")
                .and_then(Value::as_u64)
                .zip(citation.get("end_line").and_then(Value::as_u64));
            Some(ResourceLink {
                uri: format!("grk://{collection}/chunks/{chunk_id}"),
                name: chunk_id.to_owned(),
                title: Some(match lines {
                    Some((start, end)) => format!("{source}:{start}-{end}"),
                    None => source.to_owned(),
                }),
                mime_type: Some("application/json".to_owned()),
            })
        })
        .collect()
}
