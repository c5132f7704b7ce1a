//! Serving collections from the cluster: which generation a collection's alias names, search
//! (through `query`), fetch with verification, status, list. Nothing here writes to the
//! cluster.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use groundkit_core::Error;
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::{
    self as retrieval, Backend, ChunkRecord, DenseIndex, FetchChunkResponse, IndexStatus,
    RetrievalResult, SearchMetadata, SearchMode, SearchParams, SearchResponse,
};
use serde_json::{Value, json};

use crate::client::{Cluster, failure, refused};
use crate::filter;
use crate::layout::{self, GenerationMeta, RECORD_FIELDS};
use crate::query::{self, Ranked, Ranking, hits, record_of};

/// Generation metadata kept at most (a few hundred bytes each); past it the cache starts over.
const MAX_CACHED_METAS: usize = 1024;

/// A collection's current generation, as its alias names it.
#[derive(Debug, Clone)]
struct Current {
    index: String,
    meta: GenerationMeta,
}

/// The collections of one cluster, served with the same answers as the local backend.
#[derive(Debug)]
pub struct ClusterBackend {
    cluster: Cluster,
    base_dir: PathBuf,
    index_dir: Option<PathBuf>,
    /// The metadata of generation indices read so far (an index never changes once published),
    /// at most [`MAX_CACHED_METAS`].
    metas: Mutex<HashMap<String, GenerationMeta>>,
    /// The generation each collection's alias named when last looked up, at most
    /// [`MAX_CACHED_METAS`]: where a search's query is prepared for. Never trusted for an
    /// answer (see [`ClusterBackend::search_current`]).
    named: Mutex<HashMap<String, Current>>,
}

/// The answer of a search ranked at `generation`.
fn response(
    params: &SearchParams,
    generation: u64,
    query_terms: u32,
    ranked: Ranking,
) -> SearchResponse {
    let results: Vec<RetrievalResult> = ranked
        .into_iter()
        .enumerate()
        .map(|(i, (score, record))| result(record, score, i as u32 + 1))
        .collect();
    SearchResponse {
        total_results: results.len() as u32,
        results,
        metadata: SearchMetadata::ranked(params, generation, query_terms),
        next_cursor: None,
    }
}

fn result(record: ChunkRecord, score: f32, rank: u32) -> RetrievalResult {
    RetrievalResult {
        citation: record.citation(),
        scope: record.scope,
        chunk_id: record.chunk_id,
        document_id: record.document_id,
        score,
        rank,
        content: Some(record.content),
        content_truncated: false,
        snippet: None,
        collection: None,
    }
}

impl ClusterBackend {
    /// Serves the collections of `cluster`, verifying citations against the sources under
    /// `base_dir`. `index_dir`, when given, is where the snapshots of `snapshot` sources are
    /// found (`<index_dir>/NAME.snapshots`, as the ingest that staged the collection wrote them).
    pub fn new(cluster: Cluster, base_dir: impl Into<PathBuf>, index_dir: Option<PathBuf>) -> Self {
        Self {
            cluster,
            base_dir: base_dir.into(),
            index_dir,
            metas: Mutex::new(HashMap::new()),
            named: Mutex::new(HashMap::new()),
        }
    }

    /// The cluster this backend reads.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The generation collection `name`'s alias names now (one request), remembered for the
    /// next search.
    fn current(&self, name: &str) -> Result<Option<Current>, Error> {
        let current = self.look_up(name)?;
        if let Ok(mut named) = self.named.lock() {
            match &current {
                Some(current) => {
                    if named.len() >= MAX_CACHED_METAS {
                        named.clear();
                    }
                    named.insert(name.to_owned(), current.clone());
                }
                None => {
                    named.remove(name);
                }
            }
        }
        Ok(current)
    }

    fn look_up(&self, name: &str) -> Result<Option<Current>, Error> {
        let alias = layout::alias(self.cluster.prefix(), name);
        let (status, answer) = self
            .cluster
            .call("GET", &format!("/_alias/{alias}"), None)?;
        let index = match status {
            404 => return Ok(None),
            200 => answer
                .as_object()
                .and_then(|o| {
                    o.keys()
                        .find(|i| layout::generation_of(&alias, i).is_some())
                })
                .cloned(),
            _ => return Err(refused("GET", "/_alias", status, &answer)),
        };
        let Some(index) = index else {
            return Ok(None);
        };
        let meta = self.meta(&index)?;
        Ok(Some(Current { index, meta }))
    }

    fn require(&self, name: &str) -> Result<Current, Error> {
        layout::check_name(name).map_err(|_| Error::CollectionNotFound {
            name: name.to_owned(),
        })?;
        self.current(name)?
            .ok_or_else(|| Error::CollectionNotFound {
                name: name.to_owned(),
            })
    }

    fn meta(&self, index: &str) -> Result<GenerationMeta, Error> {
        if let Some(meta) = self.metas.lock().ok().and_then(|m| m.get(index).cloned()) {
            return Ok(meta);
        }
        let meta = layout::read_meta(&self.cluster, index)?;
        if let Ok(mut metas) = self.metas.lock() {
            if metas.len() >= MAX_CACHED_METAS {
                metas.clear();
            }
            metas.insert(index.to_owned(), meta.clone());
        }
        Ok(meta)
    }

    fn query_vector(
        &self,
        name: &str,
        current: &Current,
        query: &str,
        embedder: Option<&dyn Embedder>,
    ) -> Result<Vec<f32>, Error> {
        let embedder = retrieval::check_embedder(name, current.meta.embedding.as_ref(), embedder)?;
        retrieval::query_vector(embedder, query)
    }

    /// Searches `target` as `params` ask, prepared for generation `current`.
    fn ranked(
        &self,
        name: &str,
        target: &str,
        current: &Current,
        params: &SearchParams,
        terms: &[String],
        embedder: Option<&dyn Embedder>,
    ) -> Result<Option<Ranked>, Error> {
        self.ranked_in(&[(name, current)], target, params, terms, embedder)
    }

    /// Searches `target` (the index or alias of one collection of `named`, or the generation
    /// indices of all of them, searched as one) as `params` ask, prepared for each collection's
    /// generation.
    fn ranked_in(
        &self,
        named: &[(&str, &Current)],
        target: &str,
        params: &SearchParams,
        terms: &[String],
        embedder: Option<&dyn Embedder>,
    ) -> Result<Option<Ranked>, Error> {
        let Some(&(_, first)) = named.first() else {
            return Ok(Some(Ranked::default()));
        };
        let limit = params.top_k as usize;
        let filter = match params.filter.as_ref().filter(|f| !f.is_empty()) {
            Some(filter) => {
                let clause = filter::clause(filter)?;
                if !named.iter().all(|(_, c)| c.meta.filterable()) {
                    return Err(Error::Validation {
                        field: "filter".to_owned(),
                        message: "this collection was published by an older version and cannot \
                                  be filtered until it is published again"
                            .to_owned(),
                    });
                }
                Some(clause)
            }
            None => None,
        };
        if named
            .iter()
            .any(|(_, c)| c.meta.matched_field() != first.meta.matched_field())
        {
            return Err(Error::Validation {
                field: "collection".to_owned(),
                message: "these collections were published by different versions and cannot be \
                          searched as one until they are published again"
                    .to_owned(),
            });
        }
        let asked = query::Asked {
            meta: &first.meta,
            terms,
            filter: filter.as_ref(),
            several: named.len() > 1,
        };
        let vector = |embedder: Option<&dyn Embedder>| -> Result<Vec<f32>, Error> {
            for &(name, current) in named {
                retrieval::check_embedder(name, current.meta.embedding.as_ref(), embedder)?;
            }
            let (name, current) = named[0];
            self.query_vector(name, current, &params.query, embedder)
        };
        match params.mode {
            SearchMode::Lexical => query::lexical(&self.cluster, target, &asked, limit),
            SearchMode::Dense => query::dense(
                &self.cluster,
                target,
                &vector(embedder)?,
                limit,
                asked.filter,
            ),
            SearchMode::Hybrid => {
                let fusion = retrieval::Fusion::of(params.fusion);
                query::hybrid(
                    &self.cluster,
                    target,
                    &asked,
                    &vector(embedder)?,
                    limit,
                    fusion,
                )
            }
        }
    }

    /// The search of collection `name` and the generation that answered it. One round trip
    /// when the collection's generation is known from an earlier request: the search goes to
    /// the alias, and its hits name the index that answered. When they name another (the alias
    /// has moved, perhaps to a generation with other shards or another embedder) or there are
    /// no hits to tell, the alias is looked up and, if it moved, the search is run again on the
    /// generation it names now. An answer is never attributed to a generation that did not
    /// give it.
    fn search_current(
        &self,
        name: &str,
        params: &SearchParams,
        terms: &[String],
        embedder: Option<&dyn Embedder>,
    ) -> Result<(Current, Ranking), Error> {
        layout::check_name(name).map_err(|_| Error::CollectionNotFound {
            name: name.to_owned(),
        })?;
        let known = self.named.lock().ok().and_then(|n| n.get(name).cloned());
        let mut looked_up = None;
        if let Some(known) = known {
            let alias = layout::alias(self.cluster.prefix(), name);
            // A refusal prepared from the remembered generation (its embedder, say) may not hold
            // for the one the alias names now: only the cluster's failures stand without a
            // fresh look.
            let ranked = match self.ranked(name, &alias, &known, params, terms, embedder) {
                Ok(ranked) => ranked,
                Err(err @ Error::Storage { .. }) => return Err(err),
                Err(_) => None,
            };
            if let Some(ranked) = ranked
                && ranked.indices.iter().all(|i| *i == known.index)
            {
                if !ranked.indices.is_empty() {
                    return Ok((known, ranked.hits));
                }
                let current = self.require(name)?;
                if current.index == known.index {
                    return Ok((current, ranked.hits));
                }
                looked_up = Some(current);
            }
        }
        let current = match looked_up {
            Some(current) => current,
            None => self.require(name)?,
        };
        let ranked = self
            .ranked(name, &current.index, &current, params, terms, embedder)?
            .ok_or_else(|| {
                failure(
                    "a generation index vanished while it was searched",
                    current.index.clone(),
                )
            })?;
        Ok((current, ranked.hits))
    }

    /// The base directory citations are verified in.
    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }
}

impl Backend for ClusterBackend {
    /// The names of the collections the cluster holds, sorted.
    fn list_collections(&self) -> Result<Vec<String>, Error> {
        let prefix = self.cluster.prefix();
        let (status, answer) = self
            .cluster
            .call("GET", &format!("/_alias/{prefix}*"), None)?;
        if status == 404 {
            return Ok(Vec::new());
        }
        if status != 200 {
            return Err(refused("GET", "/_alias", status, &answer));
        }
        let mut names: Vec<String> = answer
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(index, body)| Some((index, body.get("aliases")?.as_object()?)))
            .flat_map(|(index, aliases)| {
                aliases.keys().filter_map(move |alias| {
                    let name = alias.strip_prefix(prefix)?;
                    // Only aliases groundkit made: naming one of their own generation indices.
                    layout::generation_of(alias, index)?;
                    layout::check_name(name).ok()?;
                    Some(name.to_owned())
                })
            })
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Whether the cluster holds collection `name`.
    fn holds(&self, name: &str) -> Result<bool, Error> {
        if layout::check_name(name).is_err() {
            return Ok(false);
        }
        Ok(self.current(name)?.is_some())
    }

    /// Searches collection `name` in the cluster; the answer has the local backend's shape and
    /// scores (BM25 for lexical, cosine similarity for dense, the fused score for hybrid).
    fn search(
        &self,
        name: &str,
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error> {
        retrieval::validate_params(params)?;
        let terms = retrieval::query_terms(&params.query);
        let query_terms = if params.mode == SearchMode::Dense {
            0
        } else {
            terms.len() as u32
        };
        let (current, ranked) = self.search_current(name, params, &terms, embedder)?;
        Ok(response(
            params,
            current.meta.generation,
            query_terms,
            ranked,
        ))
    }

    /// Searches collection `name` at `generation`: the generation index the alias names, or an
    /// older one the cluster still keeps (publishes keep them for their retention window). A
    /// generation newer than the alias's is never searched (it may be a publish that died
    /// half-loaded).
    fn search_at(
        &self,
        name: &str,
        generation: u64,
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error> {
        let expired = || Error::CursorExpired { generation };
        let remembered = self.named.lock().ok().and_then(|n| n.get(name).cloned());
        if remembered.is_some_and(|known| known.meta.generation == generation) {
            let response = self.search(name, params, embedder)?;
            if response.metadata.generation == generation {
                return Ok(response);
            }
        }
        let current = self.require(name)?;
        if generation >= current.meta.generation {
            let response = self.search(name, params, embedder)?;
            return if response.metadata.generation == generation {
                Ok(response)
            } else {
                Err(expired())
            };
        }
        retrieval::validate_params(params)?;
        let terms = retrieval::query_terms(&params.query);
        let query_terms = if params.mode == SearchMode::Dense {
            0
        } else {
            terms.len() as u32
        };
        // The cluster answered for the collection just now: an older index it cannot read is gone.
        let index = layout::index(self.cluster.prefix(), name, generation);
        let meta = self.meta(&index).map_err(|_| expired())?;
        let kept = Current { index, meta };
        let ranked = self
            .ranked(name, &kept.index, &kept, params, &terms, embedder)?
            .ok_or_else(expired)?;
        Ok(response(params, generation, query_terms, ranked.hits))
    }

    /// Searches collections `names` as one: the generation index each alias names now, searched
    /// together, the lexical ranking with the term statistics of all of them
    /// (`dfs_query_then_fetch`), as the local engine scores several collections. Should one of
    /// those indices be gone by the time it is searched (a newer generation replaced it), the
    /// aliases are looked up again and the search runs once more.
    fn search_collections(
        &self,
        names: &[String],
        params: &SearchParams,
        embedder: Option<&dyn Embedder>,
    ) -> Result<SearchResponse, Error> {
        retrieval::validate_params(params)?;
        let terms = retrieval::query_terms(&params.query);
        for _ in 0..2 {
            let currents = names
                .iter()
                .map(|name| self.require(name))
                .collect::<Result<Vec<_>, _>>()?;
            let named: Vec<(&str, &Current)> =
                names.iter().map(String::as_str).zip(&currents).collect();
            let target = currents
                .iter()
                .map(|c| c.index.as_str())
                .collect::<Vec<_>>()
                .join(",");
            let Some(ranked) = self.ranked_in(&named, &target, params, &terms, embedder)? else {
                continue;
            };
            let mut results = Vec::with_capacity(ranked.hits.len());
            for (i, ((score, record), index)) in
                ranked.hits.into_iter().zip(&ranked.from).enumerate()
            {
                let (name, _) = named
                    .iter()
                    .find(|(_, c)| &c.index == index)
                    .ok_or_else(|| failure("a hit from an index not searched", index.clone()))?;
                let mut hit = result(record, score, i as u32 + 1);
                hit.collection = Some((*name).to_owned());
                results.push(hit);
            }
            let generations: std::collections::BTreeMap<String, u64> = named
                .iter()
                .map(|(name, c)| ((*name).to_owned(), c.meta.generation))
                .collect();
            let query_terms = if params.mode == SearchMode::Dense {
                0
            } else {
                terms.len() as u32
            };
            let mut metadata =
                SearchMetadata::ranked(params, generations.values().sum(), query_terms);
            metadata.generations = generations;
            return Ok(SearchResponse {
                total_results: results.len() as u32,
                results,
                metadata,
                next_cursor: None,
            });
        }
        Err(failure(
            "the collections' generations kept changing while they were searched",
            names.join(","),
        ))
    }

    /// Fetches chunk `chunk_id` of collection `name` from the current generation, or from an
    /// older one still retained (then `superseded: true`), and verifies its citation.
    fn fetch_chunk(&self, name: &str, chunk_id: &str) -> Result<FetchChunkResponse, Error> {
        let current = self.require(name)?;
        let not_found = || Error::ChunkNotFound {
            chunk_id: chunk_id.to_owned(),
        };
        // One hit per retained generation at most; the newest that readers were ever served
        // (an index newer than the current one was left by a publish that never moved the alias).
        let find = json!({
            "size": 1000,
            "_source": RECORD_FIELDS,
            "query": { "ids": { "values": [chunk_id] } }
        });
        let answer = self.cluster.ok(
            "POST",
            &format!(
                "/{}/_search",
                layout::index_pattern(self.cluster.prefix(), name)
            ),
            Some(&find),
        )?;
        let alias = layout::alias(self.cluster.prefix(), name);
        let hit = hits(&answer)
            .iter()
            .filter_map(|hit| {
                let index = hit.get("_index").and_then(Value::as_str)?;
                let generation = layout::generation_of(&alias, index)?;
                (generation <= current.meta.generation).then_some((generation, hit))
            })
            .max_by_key(|(generation, _)| *generation)
            .map(|(_, hit)| hit)
            .ok_or_else(not_found)?;
        let mut record = record_of(hit)?;
        record.superseded =
            hit.get("_index").and_then(Value::as_str) != Some(current.index.as_str());
        let snapshots = self
            .index_dir
            .as_deref()
            .map(|dir| dir.join(format!("{name}.snapshots")))
            .unwrap_or_default();
        Ok(retrieval::fetch_response(
            &record,
            &self.base_dir,
            snapshots.as_path(),
        ))
    }

    /// Collection `name`'s status, from its current generation's metadata. `embedder` is the
    /// server's: dense search is available when it computed the collection's vectors.
    fn index_status(
        &self,
        name: &str,
        embedder: Option<&dyn Embedder>,
    ) -> Result<IndexStatus, Error> {
        let current = self.require(name)?;
        let meta = current.meta;
        Ok(IndexStatus {
            dense_search_available: retrieval::check_embedder(
                name,
                meta.embedding.as_ref(),
                embedder,
            )
            .is_ok(),
            dense_index: meta.embedding.as_ref().map(|_| DenseIndex::Hnsw),
            collection: name.to_owned(),
            document_count: meta.document_count,
            chunk_count: meta.chunk_count,
            generation: meta.generation,
            schema_version: meta.schema_version,
            embedding: meta.embedding,
            rerank_model: None,
            retriever_acquires: 0,
            retriever_rebuilds: 0,
            rebuild_seconds_total: 0.0,
            last_rebuild_seconds: None,
            last_change: meta.last_change,
            // A watcher follows a staging copy, which a server of the cluster does not see.
            watcher: None,
        })
    }
}
