//! Publishing a committed local generation as the collection's next index (loaded whole, or
//! grown from a copy of the index the alias names, sent only the documents that changed), then
//! moving the alias to it in one atomic request; and removing what earlier publishes left
//! behind.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use groundkit_core::Error;
use groundkit_retrieval::filter::format_of;
use groundkit_retrieval::{
    self as retrieval, CollectionCache, ExportedChunk, OpenCollection, SCHEMA_VERSION,
};
use serde_json::{Value, json};

use crate::client::{Cluster, failure};
use crate::layout::{self, GenerationMeta};

/// How a generation is laid out in the cluster and how long older ones stay.
#[derive(Debug, Clone, Copy)]
pub struct PublishOptions {
    /// Primary shards of each generation index.
    pub shards: u32,
    /// Replicas of each shard.
    pub replicas: u32,
    /// How long an older generation stays fetchable after its successor was published.
    pub retention: Duration,
    /// Chunks per `_bulk` request.
    pub batch: usize,
    /// How long to wait for every copy of every shard of the new index to start before the
    /// alias moves to it (whole seconds; the publish fails if they have not).
    pub start_timeout: Duration,
}

impl Default for PublishOptions {
    fn default() -> Self {
        Self {
            shards: 1,
            replicas: 1,
            retention: retrieval::DEFAULT_SUPERSEDED_RETENTION,
            batch: 500,
            start_timeout: Duration::from_secs(120),
        }
    }
}

/// What a publish did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The index now behind the collection's alias.
    pub index: String,
    /// Its generation.
    pub generation: u64,
    /// Chunks it holds.
    pub chunks: u64,
    /// Whether the alias already pointed at this generation (nothing was loaded).
    pub unchanged: bool,
    /// Indices deleted: left by a publish that died before its alias request, or older than
    /// the retention window.
    pub removed: Vec<String>,
    /// Chunks sent to the cluster: every chunk, or, for an index grown from the previous one,
    /// the chunks of the documents that changed or are new.
    pub loaded: u64,
    /// The index the new one was grown from (a copy of it, with only what changed sent), when
    /// it was; `None` when every chunk was loaded into a new index.
    pub grown_from: Option<String>,
    /// Documents removed from the copy: gone, or changed, since the index it copied.
    pub deleted_documents: u64,
}

/// The generation indices of a collection, and which one the alias names.
struct Generations {
    /// (generation, index name, creation time in ms since the epoch), oldest first.
    indices: Vec<(u64, String, u64)>,
    current: Option<String>,
}

fn generations(cluster: &Cluster, name: &str) -> Result<Generations, Error> {
    let alias = layout::alias(cluster.prefix(), name);
    let pattern = layout::index_pattern(cluster.prefix(), name);
    let settings = cluster.ok(
        "GET",
        &format!("/{pattern}/_settings/index.creation_date?expand_wildcards=all"),
        None,
    )?;
    let mut indices: Vec<(u64, String, u64)> = settings
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(index, body)| {
            let generation = layout::generation_of(&alias, index)?;
            let created = body
                .pointer("/settings/index/creation_date")
                .and_then(Value::as_str)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            Some((generation, index.clone(), created))
        })
        .collect();
    indices.sort();
    let (status, holders) = cluster.call("GET", &format!("/_alias/{alias}"), None)?;
    let current = match status {
        200 => holders.as_object().and_then(|o| o.keys().next().cloned()),
        404 => None,
        _ => return Err(crate::client::refused("GET", "/_alias", status, &holders)),
    };
    Ok(Generations { indices, current })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Publishes the committed generation of local collection `open` (opened through `cache` at the
/// ingest's index directory) to `cluster`: a new index `<prefix>NAME--gN` loaded with every live
/// chunk and its vector, or, when the alias names an index that can grow into it
/// (`GenerationMeta::can_grow_into`), a copy of that index with the documents whose content
/// hash changed replaced; write-blocked, its count checked, then the alias moved to it
/// atomically. Leftovers of a publish that died and generations past the retention window are
/// deleted.
pub fn publish(
    cluster: &Cluster,
    open: &OpenCollection,
    cache: &CollectionCache,
    options: PublishOptions,
) -> Result<Published, Error> {
    let name = open.name();
    layout::check_name(name)?;
    let alias = layout::alias(cluster.prefix(), name);
    let generation = open.generation();
    let target = layout::index(cluster.prefix(), name, generation);
    let before = generations(cluster, name)?;
    let mut removed = Vec::new();

    // An index no alias names that is not older than the current one was left by a publish
    // that died before moving the alias (or is this generation's, half loaded): remove it.
    let current_generation = before
        .current
        .as_deref()
        .and_then(|index| layout::generation_of(&alias, index));
    for (g, index, _) in &before.indices {
        let orphan = Some(index.as_str()) != before.current.as_deref()
            && current_generation.is_none_or(|current| *g > current);
        if orphan {
            delete_index(cluster, index)?;
            removed.push(index.clone());
        }
    }

    if before.current.as_deref() == Some(target.as_str()) {
        let chunks = count(cluster, &target)?;
        removed.extend(expire(cluster, name, options.retention)?);
        return Ok(Published {
            index: target,
            generation,
            chunks,
            unchanged: true,
            removed,
            loaded: 0,
            grown_from: None,
            deleted_documents: 0,
        });
    }

    let status = retrieval::index_status(open, cache, None)?;
    let meta = GenerationMeta {
        collection: name.to_owned(),
        generation,
        document_count: status.document_count,
        chunk_count: status.chunk_count,
        schema_version: SCHEMA_VERSION,
        shards: options.shards,
        embedding: status.embedding.clone(),
        layout: layout::LAYOUT,
        last_change: status.last_change.clone(),
    };
    // Grown from a copy of the current index when it can be: only what changed is sent.
    let base = match &before.current {
        Some(current) => Some(layout::read_meta(cluster, current)?)
            .filter(|held| held.can_grow_into(&meta))
            .map(|_| current.as_str()),
        None => None,
    };
    let (loaded, expected, deleted_documents) = match base {
        Some(current) => {
            let grown = grow(cluster, open, current, &target, &meta, options)?;
            (grown.loaded, status.chunk_count, grown.deleted_documents)
        }
        None => {
            cluster.ok(
                "PUT",
                &format!("/{target}?wait_for_active_shards=1"),
                Some(&layout::index_body(&meta, options.shards, options.replicas)),
            )?;
            let chunks = retrieval::export_chunks(open, options.batch, |batch| {
                bulk(cluster, &target, &batch)
            })?;
            (chunks, chunks, 0)
        }
    };
    cluster.ok("POST", &format!("/{target}/_refresh"), None)?;
    cluster.ok(
        "PUT",
        &format!("/{target}/_settings"),
        Some(&json!({ "index.blocks.write": true })),
    )?;
    // Every copy of every shard must be started before readers move to the index: a node lost
    // right after the flip would otherwise take the only copy of a shard with it.
    // (The health API answers 408 when its wait times out.)
    let (status, health) = cluster.call(
        "GET",
        &format!(
            "/_cluster/health/{target}?wait_for_status=green&timeout={}s",
            options.start_timeout.as_secs().max(1)
        ),
        None,
    )?;
    if !matches!(status, 200 | 408) {
        return Err(crate::client::refused(
            "GET",
            "/_cluster/health",
            status,
            &health,
        ));
    }
    if health.get("timed_out").and_then(Value::as_bool) != Some(false) {
        return Err(Error::InvalidRequest {
            field: Some("opensearch-replicas".to_owned()),
            message: format!(
                "the new generation's {} replica(s) per shard did not all start within {} s; a \
                 cluster needs at least replicas + 1 data nodes",
                options.replicas,
                options.start_timeout.as_secs().max(1)
            ),
        });
    }
    let chunks = count(cluster, &target)?;
    if chunks != expected {
        return Err(failure(
            "the search cluster did not keep every chunk",
            format!("{target}: {chunks} documents where the generation has {expected} chunks"),
        ));
    }

    // The one step readers see: the alias leaves the old index and names the new one together.
    let mut actions = Vec::new();
    if let Some(old) = &before.current {
        actions.push(json!({ "remove": { "index": old, "alias": alias, "must_exist": true } }));
    }
    actions.push(json!({ "add": { "index": target, "alias": alias } }));
    cluster.ok("POST", "/_aliases", Some(&json!({ "actions": actions })))?;

    removed.extend(expire(cluster, name, options.retention)?);
    Ok(Published {
        index: target,
        generation,
        chunks,
        unchanged: false,
        removed,
        loaded,
        grown_from: base.map(str::to_owned),
        deleted_documents,
    })
}

/// What growing a new index from the current one did.
struct Grown {
    loaded: u64,
    deleted_documents: u64,
}

/// Builds `target` as a copy of `current` (write-blocked, as every published index is), then
/// removes the documents that changed or are gone since and loads those that changed or are
/// new: the documents whose content hash differs between the two.
fn grow(
    cluster: &Cluster,
    open: &OpenCollection,
    current: &str,
    target: &str,
    meta: &GenerationMeta,
    options: PublishOptions,
) -> Result<Grown, Error> {
    let mut held = held_documents(cluster, current)?;
    let mut changed: Vec<String> = Vec::new();
    let mut stale: Vec<String> = Vec::new();
    retrieval::document_hashes(open, |page| {
        for (id, hash) in page {
            match held.remove(&id) {
                Some(held_hash) if held_hash == hash => {}
                Some(_) => {
                    stale.push(id.clone());
                    changed.push(id);
                }
                None => changed.push(id),
            }
        }
        Ok(())
    })?;
    stale.extend(held.into_keys());
    cluster.ok(
        "POST",
        &format!("/{current}/_clone/{target}?wait_for_active_shards=1"),
        Some(&json!({ "settings": {
            "index.number_of_replicas": options.replicas,
            "index.blocks.write": false
        } })),
    )?;
    cluster.ok(
        "PUT",
        &format!("/{target}/_mapping"),
        Some(&json!({ "_meta": { "groundkit": meta } })),
    )?;
    for ids in stale.chunks(DELETE_BATCH) {
        delete_documents(cluster, target, ids)?;
    }
    let loaded = retrieval::export_documents(open, &changed, options.batch, |batch| {
        bulk(cluster, target, &batch)
    })?;
    Ok(Grown {
        loaded,
        deleted_documents: stale.len() as u64,
    })
}

/// Documents whose chunks are looked up and deleted together.
const DELETE_BATCH: usize = 1024;
/// Chunk ids read per page when looking up the chunks to delete.
const DELETE_PAGE: usize = 10_000;

/// Deletes every chunk of `document_ids` from `index`: their ids found a page at a time (in
/// chunk id order, each page after the last), then deleted in one `_bulk` request per page.
/// Only core requests are used: no delete-by-query, which some clusters lack.
fn delete_documents(cluster: &Cluster, index: &str, document_ids: &[String]) -> Result<(), Error> {
    let mut after: Option<Value> = None;
    loop {
        let mut query = json!({
            "size": DELETE_PAGE,
            "_source": false,
            "query": { "terms": { "document_id": document_ids } },
            "sort": [{ "chunk_id": "asc" }]
        });
        if let Some(after) = after.take() {
            query["search_after"] = after;
        }
        let answer = cluster.ok("POST", &format!("/{index}/_search"), Some(&query))?;
        let hits = answer
            .pointer("/hits/hits")
            .and_then(Value::as_array)
            .ok_or_else(|| failure("the search cluster sent no hits", index.to_owned()))?;
        let mut lines = Vec::new();
        for hit in hits {
            let id = hit.get("_id").and_then(Value::as_str).unwrap_or_default();
            serde_json::to_writer(&mut lines, &json!({ "delete": { "_id": id } }))
                .map_err(|err| failure("cannot encode a deletion", err.to_string()))?;
            lines.push(b'\n');
        }
        if !lines.is_empty() {
            let (status, answer) = cluster.ndjson_call(&format!("/{index}/_bulk"), &lines)?;
            let failed = answer.get("errors").and_then(Value::as_bool) != Some(false);
            if !(200..300).contains(&status) || failed {
                return Err(crate::client::refused("POST", "/_bulk", status, &answer));
            }
        }
        after = hits.last().and_then(|hit| hit.get("sort")).cloned();
        if hits.len() < DELETE_PAGE || after.is_none() {
            return Ok(());
        }
    }
}
/// Chunks read per page of the scroll over the index a new one grows from.
const HELD_PAGE: usize = 10_000;

/// Each document `index` holds, with its content hash: every chunk's two doc values, read in
/// index order through a scroll (each page costs its own size, where paging a sorted search or
/// an aggregation would read the whole index for every page).
fn held_documents(cluster: &Cluster, index: &str) -> Result<HashMap<String, String>, Error> {
    let mut held = HashMap::new();
    let mut answer = cluster.ok(
        "POST",
        &format!("/{index}/_search?scroll={SCROLL_KEEP}"),
        Some(&json!({
            "size": HELD_PAGE,
            "sort": ["_doc"],
            "_source": false,
            "docvalue_fields": ["document_id", "content_hash"]
        })),
    )?;
    let mut scroll_id = answer
        .get("_scroll_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let read = loop {
        let Some(hits) = answer.pointer("/hits/hits").and_then(Value::as_array) else {
            break Err(failure("the search cluster sent no hits", index.to_owned()));
        };
        for hit in hits {
            let field = |name: &str| {
                hit.pointer(&format!("/fields/{name}/0"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            if let (Some(id), Some(hash)) = (field("document_id"), field("content_hash")) {
                held.insert(id, hash);
            }
        }
        let (true, Some(id)) = (hits.len() == HELD_PAGE, scroll_id.as_deref()) else {
            break Ok(());
        };
        answer = match cluster.ok(
            "POST",
            "/_search/scroll",
            Some(&json!({ "scroll": SCROLL_KEEP, "scroll_id": id })),
        ) {
            Ok(answer) => answer,
            Err(err) => break Err(err),
        };
        if let Some(id) = answer.get("_scroll_id").and_then(Value::as_str) {
            scroll_id = Some(id.to_owned());
        }
    };
    if let Some(id) = scroll_id {
        // The cluster forgets it when it expires; clearing it early only frees it sooner.
        let _ = cluster.call(
            "DELETE",
            "/_search/scroll",
            Some(&json!({ "scroll_id": id })),
        );
    }
    read.map(|()| held)
}

/// How long the cluster keeps a scroll between two pages.
const SCROLL_KEEP: &str = "2m";

/// Pauses before each new attempt at the chunks of a `_bulk` request the cluster rejected as
/// too busy (HTTP 429: a full write queue, a tripped memory circuit breaker, a disk past its
/// flood stage), about 31 s in all.
const BULK_BACKOFF: [Duration; 5] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(16),
];

/// Too many requests: the cluster's answer to load it cannot take now, to be sent again later.
const REJECTED: u64 = 429;

/// Loads one batch of chunks. Chunks the cluster rejects as too busy are sent again after the
/// pauses of [`BULK_BACKOFF`]; any other refusal, or a rejection after the last pause, fails
/// the publish.
fn bulk(cluster: &Cluster, index: &str, batch: &[ExportedChunk]) -> Result<(), Error> {
    let lines = batch
        .iter()
        .map(bulk_lines)
        .collect::<Result<Vec<_>, _>>()?;
    let path = format!("/{index}/_bulk");
    let mut pending: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let mut pauses = BULK_BACKOFF.iter();
    loop {
        let (status, answer) = cluster.ndjson_call(&path, &pending.concat())?;
        let rejected: Vec<&[u8]> = match u64::from(status) {
            REJECTED => pending.clone(),
            200..=299 => rejected_items(&answer, &pending)?,
            _ => return Err(crate::client::refused("POST", "/_bulk", status, &answer)),
        };
        if rejected.is_empty() {
            return Ok(());
        }
        match pauses.next() {
            Some(pause) => {
                tracing::warn!(
                    chunks = rejected.len(),
                    "the search cluster is too busy for some chunks; sending them again"
                );
                std::thread::sleep(*pause);
                pending = rejected;
            }
            None => {
                return Err(failure(
                    "the search cluster stayed too busy to load the chunks",
                    format!("{} chunks rejected with HTTP 429", rejected.len()),
                ));
            }
        }
    }
}

/// The action and document lines of one chunk.
fn bulk_lines(chunk: &ExportedChunk) -> Result<Vec<u8>, Error> {
    let action = json!({ "index": { "_id": chunk.record.chunk_id } });
    let mut document = serde_json::to_value(&chunk.record)
        .map_err(|err| failure("cannot encode a chunk", err.to_string()))?;
    document["content_hash"] = json!(chunk.content_hash);
    document["text"] = json!(chunk.indexed_text());
    document["format"] = json!(format_of(
        &chunk.record.source,
        chunk.record.extractor.as_deref()
    ));
    if let Some(vector) = &chunk.vector {
        document["vector"] = json!(vector);
    }
    if let Some(modified) = chunk.modified {
        document["modified"] = json!(layout::modified_text(modified));
    }
    if !chunk.meta.is_empty() {
        document["meta"] = json!(chunk.meta);
    }
    let mut lines = Vec::with_capacity(1024);
    serde_json::to_writer(&mut lines, &action)
        .and_then(|()| {
            lines.push(b'\n');
            serde_json::to_writer(&mut lines, &document)
        })
        .map_err(|err| failure("cannot encode a chunk", err.to_string()))?;
    lines.push(b'\n');
    Ok(lines)
}

/// The chunks of `sent` whose items a `_bulk` answer rejected as too busy; an item refused for
/// any other reason is a failure.
fn rejected_items<'a>(answer: &Value, sent: &[&'a [u8]]) -> Result<Vec<&'a [u8]>, Error> {
    if answer.get("errors").and_then(Value::as_bool) == Some(false) {
        return Ok(Vec::new());
    }
    let items = answer
        .get("items")
        .and_then(Value::as_array)
        .filter(|items| items.len() == sent.len())
        .ok_or_else(|| failure("the search cluster sent no answer per chunk", "_bulk"))?;
    let mut rejected = Vec::new();
    for (item, lines) in items.iter().zip(sent) {
        if item.pointer("/index/error").is_none() {
            continue;
        }
        if item.pointer("/index/status").and_then(Value::as_u64) == Some(REJECTED) {
            rejected.push(*lines);
        } else {
            return Err(crate::client::refused("POST", "/_bulk", 200, item));
        }
    }
    Ok(rejected)
}

fn count(cluster: &Cluster, index: &str) -> Result<u64, Error> {
    let answer = cluster.ok("GET", &format!("/{index}/_count"), None)?;
    answer
        .get("count")
        .and_then(Value::as_u64)
        .ok_or_else(|| failure("the search cluster sent no count", index.to_owned()))
}

fn delete_index(cluster: &Cluster, index: &str) -> Result<(), Error> {
    let (status, answer) = cluster.call("DELETE", &format!("/{index}"), None)?;
    match status {
        200..=299 | 404 => Ok(()),
        _ => Err(crate::client::refused(
            "DELETE", "/<index>", status, &answer,
        )),
    }
}

/// Deletes the generations older than the current one whose successor was created more than
/// `retention` ago; returns their names.
fn expire(cluster: &Cluster, name: &str, retention: Duration) -> Result<Vec<String>, Error> {
    let state = generations(cluster, name)?;
    let alias = layout::alias(cluster.prefix(), name);
    let Some(current) = state
        .current
        .as_deref()
        .and_then(|index| layout::generation_of(&alias, index))
    else {
        return Ok(Vec::new());
    };
    let now = now_ms();
    let retention = retention.as_millis() as u64;
    let mut removed = Vec::new();
    for pair in state.indices.windows(2) {
        let [(generation, index, _), (_, _, successor_created)] = pair else {
            continue;
        };
        if *generation < current && now.saturating_sub(*successor_created) >= retention {
            delete_index(cluster, index)?;
            removed.push(index.clone());
        }
    }
    Ok(removed)
}
