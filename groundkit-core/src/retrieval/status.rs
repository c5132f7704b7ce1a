//! `index_status`: a collection's size and identity from its store, with this process's cache
//! counters.

use crate::Error;
use crate::retrieval::cache::CollectionCache;
use crate::retrieval::model::IndexStatus;
use crate::retrieval::open::OpenCollection;
use crate::retrieval::store;

/// Reports a collection's status. Reads the counters without acquiring, so it never moves them.
pub fn index_status(open: &OpenCollection, cache: &CollectionCache) -> Result<IndexStatus, Error> {
    let status = store::status(&mut *open.connection()?)?;
    let stats = cache.stats(open.name());
    Ok(IndexStatus {
        collection: open.name().to_owned(),
        document_count: status.document_count,
        chunk_count: status.chunk_count,
        generation: status.generation,
        schema_version: status.schema_version,
        embedding: None,
        dense_search_available: false,
        retriever_acquires: stats.acquires,
        retriever_rebuilds: stats.rebuilds,
        rebuild_seconds_total: stats.rebuild_seconds_total,
        last_rebuild_seconds: stats.last_rebuild_seconds,
    })
}
