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

use groundkit_core::{Content, Error, resource};

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
