//! The grounding service: four read-only tools over the retrieval engine, declared with
//! `#[tool]`, three resources reading their answers ([`resources`]), and a prompt asking for an
//! answer grounded in verified chunks, with the completer of `collection` arguments
//! ([`prompts`]), served by whatever transports serve a `Registry<ServiceContext>`.
//!
//! Everything a request may not choose (index and base directories, the embedder, the reranker, the default
//! `top_k`, the concurrency bound) lives in [`ServiceContext`], assembled once at start. Request
//! types carry only a collection name, a chunk id, query text, ranking options and the size and
//! page of the answer: a search's answer is fitted to its `max_chars` by the engine
//! (`retrieval::fit`), and its pages are cut and its cursors written and read by [`page`].
//!
//! A collection name is validated by its declared pattern while the arguments are parsed, so a
//! traversal-shaped name is a `validation_error` before anything touches the disk. Each tool
//! then asks a [`Backend`]: another backend first (an OpenSearch cluster,
//! [`ServiceContext::with_backend`]), and the index directory's [`LocalBackend`] when that one
//! holds no such collection; the local one checks existence through [`CollectionCache::acquire`]
//! without creating a file. Corpus-wide work
//! (search, status) holds a permit of the one limiter both transports share, and all engine work
//! runs off the async executor.

pub mod page;
pub mod prompts;
pub mod resources;
mod target;

use std::sync::Arc;
use std::time::Duration;

use garde::Validate;
use groundkit_core::openapi::ApiInfo;
use groundkit_core::{Error, Registry, RegistryError, tool};
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::filter::Filter;
use groundkit_retrieval::rerank;
pub use groundkit_retrieval::rerank::Reranker;
use groundkit_retrieval::{
    self as retrieval, Backend, CollectionCache, Detail, FetchChunkResponse, FusionMethod,
    IndexStatus, ListCollectionsResponse, LocalBackend, MAX_QUERY_CHARS, MAX_TOP_K, SearchMode,
    SearchParams, SearchResponse,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{AppState, Limits};
use target::Target;
pub use target::{Collections, MAX_COLLECTIONS};

/// The `top_k` used when a search does not ask for one.
pub const DEFAULT_TOP_K: u32 = 10;

/// Concurrent corpus-wide operations (search, status) across both transports.
pub const DEFAULT_MAX_CONCURRENT_SCANS: usize = 8;

/// How long a corpus-wide operation waits for a permit before it is refused as `overloaded`.
pub const PERMIT_WAIT: Duration = Duration::from_secs(5);

/// Collections kept open at once.
pub const DEFAULT_CACHE_CAPACITY: usize = 16;

/// Candidates a reranker scores when the operator does not choose a depth: the first
/// `DEFAULT_RERANK_DEPTH` results of the requested mode, whatever `top_k` the caller asked for.
///
/// Scoring is the cost of a reranked search, and it grows with the depth: with a MiniLM-L6
/// cross-encoder on SciFact (abstracts of about 300 tokens) on 2 cores, p50 0.53 s at depth 10,
/// 0.92 s at 20, 2.1 s at 50, 4.0 s at 100 (bench/README.md). 20 keeps a reranked search under a
/// second there while giving the reranker twice the default `top_k` to choose from.
pub const DEFAULT_RERANK_DEPTH: u32 = 20;

/// What every service tool shares, assembled once at start.
pub struct ServiceContext {
    local: Arc<LocalBackend>,
    embedder: Option<Arc<dyn Embedder>>,
    reranker: Option<Arc<dyn Reranker>>,
    rerank_depth: u32,
    default_top_k: u32,
    scans: Arc<Semaphore>,
    scan_wait: Duration,
    remote: Option<Arc<dyn Backend>>,
}

impl ServiceContext {
    /// A context serving the collections of `cache`.
    pub fn new(cache: CollectionCache) -> Self {
        Self {
            local: Arc::new(LocalBackend::new(cache)),
            embedder: None,
            reranker: None,
            rerank_depth: DEFAULT_RERANK_DEPTH,
            default_top_k: DEFAULT_TOP_K,
            scans: Arc::new(Semaphore::new(DEFAULT_MAX_CONCURRENT_SCANS)),
            scan_wait: PERMIT_WAIT,
            remote: None,
        }
    }

    /// Also serve the collections `backend` holds (an OpenSearch cluster, say). A collection it
    /// holds is served from it, even where the index directory has one of the same name (the
    /// staging copy an ingest publishes from).
    pub fn with_backend(mut self, backend: Arc<dyn Backend>) -> Self {
        self.remote = Some(backend);
        self
    }

    /// Embed queries with `embedder` for `dense` and `hybrid` searches of the collections whose
    /// vectors it computed.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Use `reranker` for searches that ask for `rerank: true`.
    pub fn with_reranker(mut self, reranker: Arc<dyn Reranker>) -> Self {
        self.reranker = Some(reranker);
        self
    }

    /// Rerank the first `depth` candidates (clamped to `1..=MAX_TOP_K`; default
    /// [`DEFAULT_RERANK_DEPTH`]).
    pub fn with_rerank_depth(mut self, depth: u32) -> Self {
        self.rerank_depth = depth.clamp(1, MAX_TOP_K);
        self
    }

    /// The configured reranker's model name, if there is one.
    pub fn rerank_model(&self) -> Option<&str> {
        self.reranker.as_deref().map(Reranker::model)
    }

    /// Bound concurrent corpus-wide operations to `permits`, each waiting at most `wait` for
    /// its turn before it is refused as `overloaded`.
    pub fn with_scan_limit(mut self, permits: usize, wait: Duration) -> Self {
        self.scans = Arc::new(Semaphore::new(permits.max(1)));
        self.scan_wait = wait;
        self
    }

    async fn scan_permit(&self) -> Result<OwnedSemaphorePermit, Error> {
        let acquire = Arc::clone(&self.scans).acquire_owned();
        match tokio::time::timeout(self.scan_wait, acquire).await {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_closed)) => Err(Error::internal("the scan limiter was closed")),
            Err(_elapsed) => Err(Error::Overloaded),
        }
    }
}

/// The state serving the service tools of `registry` with `context`: [`AppState::new`], with each
/// `search` hit linked to its chunk resource over MCP ([`resources::search_links`]).
pub fn app_state(
    registry: Registry<ServiceContext>,
    context: ServiceContext,
    info: ApiInfo,
    limits: Limits,
) -> Result<AppState<ServiceContext>, RegistryError> {
    AppState::new(registry, context, info, limits).link_results("search", resources::search_links)
}

/// Run blocking engine work on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| Error::internal(format!("engine task failed: {err}")))?
}

/// The backends that may serve a collection, in the order they are asked.
#[derive(Clone)]
struct Backends {
    local: Arc<LocalBackend>,
    remote: Option<Arc<dyn Backend>>,
}

impl Backends {
    fn of(ctx: &ServiceContext) -> Self {
        Self {
            local: Arc::clone(&ctx.local),
            remote: ctx.remote.clone(),
        }
    }

    /// Runs `op` on the backend that serves the collection: the other backend first, the index
    /// directory's when the other holds no collection of that name. One call, no probe.
    fn serve<T>(&self, op: impl Fn(&dyn Backend) -> Result<T, Error>) -> Result<T, Error> {
        if let Some(remote) = &self.remote {
            match op(remote.as_ref()) {
                Err(Error::CollectionNotFound { .. }) => {}
                answer => return answer,
            }
        }
        op(self.local.as_ref())
    }

    /// The names of every collection the backends hold, sorted, each once.
    fn list_collections(&self) -> Result<Vec<String>, Error> {
        let mut collections = self.local.list_collections()?;
        if let Some(remote) = &self.remote {
            collections.extend(remote.list_collections()?);
            collections.sort();
            collections.dedup();
        }
        Ok(collections)
    }
}

// Every collection field declares the engine's one collection-name rule
// (`retrieval::COLLECTION_NAME`), so the schema states it and a traversal-shaped name fails
// argument validation before anything touches the disk; the engine checks it again on acquire.

/// What to search for, where, and how many results to return.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// Collection to search: a name `list_collections` returns; or a list of 1 to 32 names, or
    /// `"*"` for every collection, searched as one. Collections searched together are ranked as
    /// if they were one collection (BM25 counts the words of all of them, so a chunk scores the
    /// same whichever collection holds it), and each hit names its `collection`. A collection
    /// that does not exist fails the call with its name.
    #[garde(dive)]
    pub collection: Collections,
    /// What to look for, as plain text (no query syntax: `+ - : "` are ordinary characters).
    /// Must contain a character that is not white space.
    #[garde(
        length(chars, min = 1, max = MAX_QUERY_CHARS),
        pattern(r"[^\t\n\x0B\x0C\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]")
    )]
    pub query: String,
    /// How many chunks to return (default 10).
    #[garde(range(min = 1, max = MAX_TOP_K))]
    pub top_k: Option<u32>,
    /// Ranking mode (default `lexical`): `lexical` (BM25), `dense` (cosine similarity of the
    /// query's vector and each chunk's) or `hybrid` (the two fused, as `fusion` says).
    /// `dense` and `hybrid` need a collection ingested with the server's embedder.
    #[garde(skip)]
    pub mode: Option<SearchMode>,
    /// How `hybrid` fuses its rankings (default `min_max`): `min_max` (each ranking's scores
    /// scaled to 0..1 over its candidates, then added, the dense one weighing 0.5: how far
    /// apart two candidates score counts, not only their order) or `rrf` (Reciprocal Rank
    /// Fusion: each ranking's places count, whatever the scores behind them). Ignored by
    /// `lexical` and `dense`.
    #[garde(skip)]
    pub fusion: Option<FusionMethod>,
    /// Rerank the candidates with the server's reranker (default false). Refused when the server
    /// has none, rather than silently returning an unreranked list.
    #[garde(skip)]
    pub rerank: Option<bool>,
    /// How much of each hit to return (default `full`): `ids` (ids, scores, citations, no
    /// text), `snippets` (about 300 bytes around the query's matches, each match marked by byte
    /// offsets into the source) or `full` (each chunk's whole text).
    #[garde(skip)]
    pub detail: Option<Detail>,
    /// The most characters the answer's JSON may take (default 32000, about 8,000 tokens of
    /// English). Hits are kept in rank order while they fit; the first that does not is cut
    /// (`content_truncated`) or left out, and `metadata.truncated` and
    /// `metadata.omitted_results` say so. Ask for `detail: "snippets"` or a smaller `top_k` to
    /// see more hits in the same budget.
    #[garde(range(min = MIN_MAX_CHARS, max = MAX_MAX_CHARS))]
    pub max_chars: Option<u32>,
    /// Leave out hits that score below this, before any reranking. In `lexical` mode scores are
    /// BM25 (0 or more, unbounded, comparable only within a collection); in `dense` mode cosine
    /// similarities (-1 to 1); in `hybrid` mode fused scores (`min_max`: the scaled lexical
    /// score plus half the scaled dense one, 0 to 1.5; `rrf`: the sum over both rankings of
    /// 1 / (2 + rank), at most 2/3, which says where a hit ranked rather than how well it
    /// matched).
    #[garde(custom(finite))]
    pub min_score: Option<f64>,
    /// The `next_cursor` of the previous page, for the page after it; send the same
    /// collection, query, mode, fusion and `min_score` with it (`top_k`, `detail` and
    /// `max_chars` may change). The next page continues the ranking the first page was cut
    /// from, even after the collection changed, for 10 minutes after the cursor was given (one
    /// collection only: a search of several expires when any of them changes); past that,
    /// refused as `cursor_expired`, and as a `validation_error` when it is not a cursor of this
    /// search.
    #[garde(pattern(page::CURSOR_PATTERN))]
    pub cursor: Option<String>,
    /// Search only some chunks: by source path (prefixes and globs, kept and left out), source
    /// class, format and document id. The hits are exactly the best of the chunks that pass,
    /// scored as without the filter. A malformed glob or value is a `validation_error` naming
    /// the field (`filter.paths[0]`).
    #[garde(skip)]
    pub filter: Option<Filter>,
}

/// The smallest `max_chars` a search accepts: room for an answer's metadata and a hit.
pub const MIN_MAX_CHARS: u32 = 1_000;

/// The largest `max_chars` a search accepts.
pub const MAX_MAX_CHARS: u32 = 1_000_000;

/// The `max_chars` of a search that does not ask for one: about 8,000 tokens of English JSON,
/// well within what agents' clients accept from one tool call.
pub const DEFAULT_MAX_CHARS: u32 = 32_000;

fn finite(value: &Option<f64>, _: &()) -> garde::Result {
    match value {
        Some(v) if !v.is_finite() => Err(garde::Error::new("must be a finite number")),
        _ => Ok(()),
    }
}

/// Search a collection and return ranked chunks with citations.
///
/// Each result carries a citation (source, source class, extractor, byte offsets) that
/// `fetch_chunk` re-verifies against the source, with the chunk's text, a snippet of it or
/// neither (`detail`); the whole answer stays within `max_chars` characters.
#[tool(read_only, rest = "POST /search", title = "Search a collection")]
pub async fn search(ctx: &ServiceContext, request: SearchRequest) -> Result<SearchResponse, Error> {
    let rerank = request.rerank.unwrap_or(false);
    let reranker = match (rerank, &ctx.reranker) {
        (true, None) => return Err(Error::RerankerNotConfigured),
        (true, Some(reranker)) => Some(Arc::clone(reranker)),
        (false, _) => None,
    };
    let mode = request.mode.unwrap_or_default();
    let binding = page::Binding::of(&request);
    let start = match (&request.cursor, &reranker) {
        (None, _) => None,
        (Some(_), Some(_)) => {
            return Err(Error::Validation {
                field: "cursor".to_owned(),
                message: "a reranked answer has no further pages".to_owned(),
            });
        }
        (Some(cursor), None) => Some(page::Cursor::parse(cursor)?),
    };
    let backends = Backends::of(ctx);
    let target = Target::of(request.collection);
    let top_k = request.top_k.unwrap_or(ctx.default_top_k);
    let detail = request.detail.unwrap_or_default();
    let max_chars = request.max_chars.unwrap_or(DEFAULT_MAX_CHARS);
    let min_score = request.min_score;
    // A cursor is verified once the search has opened the collection (see `page`); until
    // then its offset only bounds how deep the search reads.
    let offset = start
        .as_ref()
        .map_or(0, |c| c.position.offset.min(page::MAX_WALK_DEPTH - 1));
    // The hits of this page, and one more to know whether another follows.
    let page_len = top_k.min(page::MAX_WALK_DEPTH - offset);
    let params = SearchParams {
        query: request.query,
        // A reranker sees the configured candidate depth, whatever top_k the caller asked for
        // (at least top_k).
        top_k: if reranker.is_some() {
            ctx.rerank_depth.max(top_k)
        } else {
            offset + page_len + 1
        },
        mode,
        fusion: request.fusion.unwrap_or_default(),
        filter: request.filter.filter(|f| !f.is_empty()),
    };
    let embedder = ctx.embedder.clone();
    let permit = ctx.scan_permit().await?;
    blocking(move || {
        let _permit = permit;
        let at = start.as_ref().map(|c| c.position.generation);
        let mut response = target.search(&backends, at, &params, embedder.as_deref())?;
        if let Some(start) = &start {
            if start.position.generation != response.metadata.generation {
                return Err(Error::CursorExpired {
                    generation: start.position.generation,
                });
            }
            binding.verify(start)?;
        }
        if let Some(min_score) = min_score {
            response.results.retain(|r| f64::from(r.score) >= min_score);
        }
        // A reranked answer is one page; any other is a page of its ranking.
        let mut page = None;
        if let Some(reranker) = reranker {
            let depth = response.results.len();
            let results = rerank::rerank(
                reranker.as_ref(),
                &params.query,
                std::mem::take(&mut response.results),
                top_k as usize,
            )?;
            response.results = results;
            response.metadata.reranked = true;
            response.metadata.rerank_model = Some(reranker.model().to_owned());
            response.metadata.rerank_input_depth = Some(depth as u32);
        } else {
            page = Some(page::cut(&mut response, offset, page_len));
        }
        response.metadata.top_k = top_k;
        retrieval::fit(&mut response, &params.query, detail, max_chars)?;
        if let Some(more) = page {
            response.next_cursor = binding.next(&response, offset, more);
            if response.next_cursor.is_some() {
                target.keep_for_pages(&backends, response.metadata.generation);
            }
        }
        Ok(response)
    })
    .await
}

/// Which chunk to fetch: a `chunk_id` from a `search` result and its collection.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct FetchChunkRequest {
    /// Collection holding the chunk: a name `list_collections` returns.
    #[garde(pattern(retrieval::COLLECTION_NAME))]
    pub collection: String,
    /// The `chunk_id` of a `search` result.
    #[garde(length(min = 1, max = 128))]
    pub chunk_id: String,
}

/// Fetch one chunk and verify its citation against the source, byte for byte.
///
/// The verdict is `verified` (content returned), `drifted` (the source changed since ingest) or
/// `unresolvable` (the source is missing, unreadable or outside the allowed directory); only a
/// verified chunk carries content, and every verdict is a successful answer.
#[tool(
    read_only,
    rest = "GET /collections/{collection}/chunks/{chunk_id}",
    title = "Fetch and verify a chunk"
)]
pub async fn fetch_chunk(
    ctx: &ServiceContext,
    request: FetchChunkRequest,
) -> Result<FetchChunkResponse, Error> {
    let backends = Backends::of(ctx);
    blocking(move || backends.serve(|b| b.fetch_chunk(&request.collection, &request.chunk_id)))
        .await
}

/// `list_collections` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct ListCollectionsRequest {}

/// List the collections this server can search.
///
/// Only files a read-only probe identifies as groundkit collections, inside the index
/// directory, are listed.
#[tool(read_only, rest = "GET /collections", title = "List collections")]
pub async fn list_collections(
    ctx: &ServiceContext,
    _request: ListCollectionsRequest,
) -> Result<ListCollectionsResponse, Error> {
    let backends = Backends::of(ctx);
    let collections = blocking(move || backends.list_collections()).await?;
    Ok(ListCollectionsResponse { collections })
}

/// Which collection to describe.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct IndexStatusRequest {
    /// Collection to describe: a name `list_collections` returns.
    #[garde(pattern(retrieval::COLLECTION_NAME))]
    pub collection: String,
}

/// Describe a collection: counts, generation and cache counters.
///
/// Never reports sources, content or paths.
#[tool(
    read_only,
    rest = "GET /collections/{collection}/status",
    title = "Collection status"
)]
pub async fn index_status(
    ctx: &ServiceContext,
    request: IndexStatusRequest,
) -> Result<IndexStatus, Error> {
    let backends = Backends::of(ctx);
    let embedder = ctx.embedder.clone();
    let rerank_model = ctx.rerank_model().map(str::to_owned);
    let permit = ctx.scan_permit().await?;
    blocking(move || {
        let _permit = permit;
        let mut status =
            backends.serve(|b| b.index_status(&request.collection, embedder.as_deref()))?;
        status.rerank_model = rerank_model;
        Ok(status)
    })
    .await
}
