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

/// How often [`follow_changes`] looks at what the subscribed resources show.
pub const CHANGE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Tells `updates` when a subscribed resource of the service changed, looking every
/// [`CHANGE_INTERVAL`] (and at once when a client subscribes, to know what it follows from) at
/// the ones some MCP client follows: a collection's status when the
/// collection's generation moves (or it appears or goes), the list of collections when a
/// collection is added or removed. A chunk's resource is never announced. Runs on a thread of its
/// own until the process ends.
pub fn follow_changes(
    ctx: std::sync::Arc<ServiceContext>,
    updates: crate::mcp::ResourceUpdates,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("resource-changes".into())
        .spawn(move || {
            let backends = super::Backends::of(&ctx);
            let mut seen: std::collections::HashMap<String, String> = Default::default();
            let mut subscriptions = 0;
            loop {
                updates.wait_for_subscription(&mut subscriptions, CHANGE_INTERVAL);
                let followed = updates.subscribed();
                // `subscribed` is sorted.
                seen.retain(|uri, _| followed.binary_search(uri).is_ok());
                for uri in followed {
                    let Some(now) = shown(&backends, &uri) else {
                        continue;
                    };
                    match seen.insert(uri.clone(), now.clone()) {
                        Some(before) if before != now => {
                            updates.updated(&uri);
                        }
                        _ => {}
                    }
                }
            }
        })
}

/// What decides whether resource `uri` changed: the collection list, a collection's generation
/// (or why it has none); `None` for a resource whose changes are not announced.
fn shown(backends: &super::Backends, uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("grk://")?;
    if rest == "collections" {
        return Some(match backends.list_collections() {
            Ok(names) => names.join("\n"),
            Err(err) => format!("error: {}", err.kind()),
        });
    }
    let collection = rest.strip_suffix("/status")?;
    let status = backends.serve(|b| b.index_status(collection, None));
    Some(match status {
        Ok(status) => format!("generation {}", status.generation),
        Err(err) => format!("error: {}", err.kind()),
    })
}
