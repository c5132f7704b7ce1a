//! The backend boundary: what serves a collection's four read operations. [`LocalBackend`] is
//! this engine over an index directory; another crate implements [`Backend`] over other storage
//! (`groundkit-opensearch`: an OpenSearch cluster). The service holds backends, never files.

use crate::MAX_TOP_K;
use crate::cache::CollectionCache;
use crate::citation::fetch_chunk;
use crate::collection::{CollectionPaths, list_collections};
use crate::embed::Embedder;
use crate::eval::{EvalQuery, EvalReport, Qrels, evaluate_judged, lines};
use crate::model::{
    FetchChunkResponse, FusionMethod, IndexStatus, SearchMode, SearchParams, SearchResponse,
};
use crate::open::OpenCollection;
use crate::search::{HitPlace, search};
use crate::several::search_collections;
use crate::status::index_status;
use groundkit_core::Error;

/// Serves collections: the same answers, errors and `kind`s whichever implementation it is.
///
/// Every method blocks (disk or network); call them off an async executor.
pub trait Backend: Send + Sync {
    /// The names of the collections this backend holds, sorted.
    fn list_collections(&self) -> Result<Vec<String>, Error>;

    /// Whether this backend holds collection `name` (a name it could never hold is `false`).
    fn holds(&self, name: &str) -> Result<bool, Error>;

    /// Searches collection `name`. `embedder` embeds the query for `dense` and `hybrid`; it must
    /// be the embedder that computed the collection's vectors.
    fn search(
        &self,
        name: &str,
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error>;

    /// Searches collection `name` at `generation`, for the next page of a search ranked there:
    /// its current generation, or an older one the backend still keeps for pages
    /// ([`Backend::keep_for_pages`]); `cursor_expired` when it keeps it no more. By default,
    /// only the current generation.
    fn search_at(
        &self,
        name: &str,
        generation: u64,
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error> {
        let response = self.search(name, params, embedder)?;
        if response.metadata.generation != generation {
            return Err(Error::CursorExpired { generation });
        }
        Ok(response)
    }

    /// A cursor was handed out for collection `name` at `generation`: the backend keeps that
    /// generation searchable a while for the search's next pages, if it can. By default, it
    /// does nothing.
    fn keep_for_pages(&self, name: &str, generation: u64) {
        let _ = (name, generation);
    }

    /// Searches collections `names` (several, each named once) as one collection, each hit
    /// naming its collection (the engine's `search_collections` says how scores compare
    /// across them). A backend that cannot refuses with a `validation_error` on
    /// `collection`.
    fn search_collections(
        &self,
        names: &[String],
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error> {
        let _ = (names, params, embedder);
        Err(Error::Validation {
            field: "collection".to_owned(),
            message: "this backend searches one collection at a time".to_owned(),
        })
    }

    /// Fetches chunk `chunk_id` of collection `name` and verifies its citation.
    fn fetch_chunk(&self, name: &str, chunk_id: &str) -> Result<FetchChunkResponse, Error>;

    /// Collection `name`'s size, identity and generation. Dense search is reported available
    /// when `embedder` computed the collection's vectors.
    fn index_status(
        &self,
        name: &str,
        embedder: Option<&dyn Embedder>,
    ) -> Result<IndexStatus, Error>;
}

/// The collections of one index directory, opened through a [`CollectionCache`].
#[derive(Debug, Clone)]
pub struct LocalBackend {
    cache: CollectionCache,
}

impl LocalBackend {
    /// Serves the collections `cache` opens.
    pub fn new(cache: CollectionCache) -> Self {
        Self { cache }
    }

    /// The cache it opens collections through.
    pub fn cache(&self) -> &CollectionCache {
        &self.cache
    }
}

impl Backend for LocalBackend {
    fn list_collections(&self) -> Result<Vec<String>, Error> {
        list_collections(self.cache.index_dir())
    }

    fn holds(&self, name: &str) -> Result<bool, Error> {
        Ok(CollectionPaths::new(self.cache.index_dir(), name)
            .is_ok_and(|paths| paths.sqlite.is_file()))
    }

    fn search(
        &self,
        name: &str,
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error> {
        search(&*self.cache.acquire(name)?, params, embedder)
    }

    /// Searches the current generation, or one the cache keeps open for pages.
    fn search_at(
        &self,
        name: &str,
        generation: u64,
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error> {
        search(&*self.cache.acquire_at(name, generation)?, params, embedder)
    }

    /// Keeps the generation open in the cache for [`PAGE_RETENTION`](crate::PAGE_RETENTION).
    fn keep_for_pages(&self, name: &str, generation: u64) {
        self.cache.keep_for_pages(name, generation);
    }

    fn search_collections(
        &self,
        names: &[String],
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error> {
        let opened = names
            .iter()
            .map(|name| self.cache.acquire(name))
            .collect::<Result<Vec<_>, _>>()?;
        let named: Vec<(&str, &OpenCollection)> = names
            .iter()
            .zip(&opened)
            .map(|(name, open)| (name.as_str(), &**open))
            .collect();
        search_collections(&named, params, embedder)
    }

    fn fetch_chunk(&self, name: &str, chunk_id: &str) -> Result<FetchChunkResponse, Error> {
        fetch_chunk(&*self.cache.acquire(name)?, chunk_id)
    }

    fn index_status(
        &self,
        name: &str,
        embedder: Option<&dyn Embedder>,
    ) -> Result<IndexStatus, Error> {
        index_status(&*self.cache.acquire(name)?, &self.cache, embedder)
    }
}

/// Evaluates collection `name` of `backend` through its `search`: each query's documents ranked
/// by their best chunk among the first [`MAX_TOP_K`] chunks it returns. The first ten documents
/// are those of the engine's own evaluation
/// ([`eval::evaluate`](crate::eval::evaluate)) in every mode, judged by document or by lines
/// as it judges them. Recall@100 counts only
/// the documents of those chunks (fewer than 100 where documents have several).
pub fn evaluate_backend(
    backend: &dyn Backend,
    name: &str,
    queries: &[EvalQuery],
    qrels: &Qrels,
    mode: SearchMode,
    fusion: FusionMethod,
    embedder: Option<&dyn Embedder>,
) -> Result<EvalReport, Error> {
    evaluate_judged(queries, qrels, mode, |query, judged| {
        let params = SearchParams {
            query: query.to_owned(),
            top_k: MAX_TOP_K,
            mode,
            fusion,
            filter: None,
        };
        let response = backend.search(name, &params, embedder)?;
        let by_lines = lines::judges_lines(judged);
        let mut seen = std::collections::HashSet::new();
        let mut ranked = Vec::new();
        for r in response.results {
            let id = if by_lines {
                let place = HitPlace {
                    lines: r.citation.start_line.zip(r.citation.end_line),
                    document_id: r.document_id,
                    chunk_id: r.chunk_id,
                };
                lines::ranked_unit(&place, judged, &seen)
            } else {
                r.document_id
            };
            if seen.insert(id.clone()) {
                ranked.push(id);
            }
        }
        Ok(ranked)
    })
}
