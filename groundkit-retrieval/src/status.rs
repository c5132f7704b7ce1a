//! `index_status`: a collection's size, identity and last change from its store, with this
//! process's cache counters and the state of the watcher following it, if one is.

use crate::cache::CollectionCache;
use crate::collection::CollectionPaths;
use crate::embed::Embedder;
use crate::model::{IndexStatus, WatcherStatus};
use crate::open::OpenCollection;
use crate::search::check_dense;
use crate::store;
use groundkit_core::Error;

/// Reports a collection's status. Reads the counters without acquiring, so it never moves them.
/// `embedder` is the server's query embedder: dense search is available when it computed the
/// open generation's vectors (the same check `search` makes).
pub fn index_status(
    open: &OpenCollection,
    cache: &CollectionCache,
    embedder: Option<&dyn Embedder>,
) -> Result<IndexStatus, Error> {
    let status = store::status(&mut *open.connection()?)?;
    let stats = cache.stats(open.name());
    Ok(IndexStatus {
        collection: open.name().to_owned(),
        document_count: status.document_count,
        chunk_count: status.chunk_count,
        generation: status.generation,
        schema_version: status.schema_version,
        embedding: open.vectors().map(|v| v.identity().clone()),
        dense_search_available: check_dense(open, embedder).is_ok(),
        dense_index: open.vectors().map(|v| v.dense_index()),
        // The engine has no reranker; a server that has one fills this in.
        rerank_model: None,
        retriever_acquires: stats.acquires,
        retriever_rebuilds: stats.rebuilds,
        rebuild_seconds_total: stats.rebuild_seconds_total,
        last_rebuild_seconds: stats.last_rebuild_seconds,
        last_change: status.last_change,
        watcher: watcher_status(open.paths()),
    })
}

/// The state of the watcher following the collection, while one holds its lock. The lock is
/// only tested (a shared lock taken and released at once when no watcher holds it); nothing is
/// written. A state that cannot be read is reported as no watcher.
fn watcher_status(paths: &CollectionPaths) -> Option<WatcherStatus> {
    let lock = std::fs::File::open(paths.watch_lock()).ok()?;
    match lock.try_lock_shared() {
        Err(std::fs::TryLockError::WouldBlock) => {}
        // No watcher holds it (or locks do not work here): the state is stale, if any.
        _ => return None,
    }
    let state = std::fs::read(paths.watch_state()).ok()?;
    serde_json::from_slice(&state).ok()
}
