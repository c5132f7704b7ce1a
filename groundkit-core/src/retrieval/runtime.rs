//! The collection runtime: a bounded cache of open collections, reloaded only when the committed
//! generation moves, with counters that make the cache's behaviour visible.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use rusqlite::Connection;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::retrieval::SCHEMA_VERSION;
use crate::retrieval::collection::{CollectionPaths, is_groundkit_store, resolves_within};
use crate::retrieval::lexical::LexicalIndex;
use crate::retrieval::store::{self, EmbeddingIdentity};

/// One collection opened at one generation.
///
/// Search reads only the lexical index of this generation; `fetch_chunk` and `index_status` read
/// the store's latest committed state through the read-only connection.
pub struct OpenCollection {
    paths: CollectionPaths,
    base_dir: PathBuf,
    generation: u64,
    has_embeddings: bool,
    conn: Mutex<Connection>,
    /// Identity of the store file when opened; a collection deleted and re-created under the same
    /// name is a different file.
    file_id: Option<(u64, u64)>,
    lexical: Option<LexicalIndex>,
}

impl std::fmt::Debug for OpenCollection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenCollection")
            .field("name", &self.paths.name)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl OpenCollection {
    /// Opens the collection `name` in `index_dir` at its committed generation.
    ///
    /// Validates the name first, then checks existence and identity without creating anything.
    pub fn open(index_dir: &Path, base_dir: &Path, name: &str) -> Result<Self, Error> {
        let paths = CollectionPaths::new(index_dir, name)?;
        if !paths.sqlite.is_file()
            || !resolves_within(&paths.sqlite, index_dir)
            || !is_groundkit_store(&paths.sqlite)
        {
            return Err(Error::CollectionNotFound {
                name: name.to_owned(),
            });
        }
        let file_id = file_identity(&paths.sqlite);
        let conn = store::open_for_read(&paths.sqlite)?;
        let version = store::schema_version(&conn)?;
        if version != SCHEMA_VERSION {
            return Err(Error::Storage {
                message: format!(
                    "collection {name} has schema version {version}; this build reads version \
                     {SCHEMA_VERSION} (`grk ingest` upgrades it)"
                ),
                source: None,
            });
        }
        // A concurrent ingest may publish a generation and start removing the previous one
        // while we open it. An ingest removes generation G only after it committed a later one,
        // so an open that ends with the counter still at G opened an intact G; otherwise the
        // open may have failed or seen a half-removed directory, and is retried.
        let mut attempt = 0;
        loop {
            let generation = store::generation(&conn)?;
            let has_embeddings = store::embedding_identity(&conn)?.is_some();
            let lexical = if generation == 0 {
                None
            } else {
                let opened = LexicalIndex::open(&paths, generation);
                attempt += 1;
                if attempt < 5 && store::generation(&conn)? != generation {
                    continue;
                }
                Some(opened?)
            };
            return Ok(Self {
                paths,
                base_dir: base_dir.to_path_buf(),
                generation,
                has_embeddings,
                conn: Mutex::new(conn),
                file_id,
                lexical,
            });
        }
    }

    /// The collection's name.
    pub fn name(&self) -> &str {
        &self.paths.name
    }

    /// The generation this object searches.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether the collection has an embedding manifest (dense search possible).
    pub fn has_embeddings(&self) -> bool {
        self.has_embeddings
    }

    /// The lexical index, absent while the collection has never completed an ingest.
    pub fn lexical(&self) -> Option<&LexicalIndex> {
        self.lexical.as_ref()
    }

    pub(crate) fn paths(&self) -> &CollectionPaths {
        &self.paths
    }

    pub(crate) fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    pub(crate) fn connection(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        self.conn
            .lock()
            .map_err(|_| Error::internal("collection connection lock poisoned"))
    }

    /// The committed generation, as the store says now.
    pub fn committed_generation(&self) -> Result<u64, Error> {
        store::generation(&*self.connection()?)
    }
}

/// Device and inode of `path`.
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// How often this process opened (rebuilt) a collection, and what that cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RebuildStats {
    /// Acquires of the collection.
    pub acquires: u64,
    /// Acquires that had to open the collection (first use or a moved generation).
    pub rebuilds: u64,
    /// Seconds spent opening, in total.
    pub rebuild_seconds_total: f64,
    /// Seconds the last open took.
    pub last_rebuild_seconds: Option<f64>,
}

struct Entry {
    open: Arc<OpenCollection>,
    stats: RebuildStats,
    last_used: u64,
}

struct Cache {
    entries: HashMap<String, Entry>,
    clock: u64,
}

struct Inner {
    index_dir: PathBuf,
    base_dir: PathBuf,
    capacity: usize,
    cache: Mutex<Cache>,
}

/// A bounded cache of open collections, shared by every request of a process.
#[derive(Clone)]
pub struct CollectionRuntime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CollectionRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollectionRuntime")
            .field("capacity", &self.inner.capacity)
            .finish_non_exhaustive()
    }
}

impl CollectionRuntime {
    /// A runtime over `index_dir`, verifying citations inside `base_dir`, keeping at most
    /// `capacity` collections open (at least one).
    pub fn new(
        index_dir: impl Into<PathBuf>,
        base_dir: impl Into<PathBuf>,
        capacity: usize,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                index_dir: index_dir.into(),
                base_dir: base_dir.into(),
                capacity: capacity.max(1),
                cache: Mutex::new(Cache {
                    entries: HashMap::new(),
                    clock: 0,
                }),
            }),
        }
    }

    /// The index directory.
    pub fn index_dir(&self) -> &Path {
        &self.inner.index_dir
    }

    /// The base directory citations must resolve in.
    pub fn base_dir(&self) -> &Path {
        &self.inner.base_dir
    }

    /// The open collection `name` at its committed generation.
    ///
    /// Validates the name, then existence (`CollectionNotFound`, never creating a file); reuses
    /// the cached object while the generation has not moved, reopens otherwise.
    pub fn acquire(&self, name: &str) -> Result<Arc<OpenCollection>, Error> {
        let paths = CollectionPaths::new(&self.inner.index_dir, name)?;
        if !paths.sqlite.is_file() {
            return Err(Error::CollectionNotFound {
                name: name.to_owned(),
            });
        }
        let mut cache = self.lock()?;
        cache.clock += 1;
        let now = cache.clock;
        let mut stats = RebuildStats::default();
        if let Some(entry) = cache.entries.get_mut(name) {
            entry.stats.acquires += 1;
            entry.last_used = now;
            if entry.open.file_id == file_identity(&entry.open.paths.sqlite)
                && entry.open.committed_generation()? == entry.open.generation()
            {
                return Ok(entry.open.clone());
            }
            stats = entry.stats;
        } else {
            stats.acquires = 1;
        }
        let started = Instant::now();
        let open = Arc::new(OpenCollection::open(
            &self.inner.index_dir,
            &self.inner.base_dir,
            name,
        )?);
        let seconds = started.elapsed().as_secs_f64();
        stats.rebuilds += 1;
        stats.rebuild_seconds_total += seconds;
        stats.last_rebuild_seconds = Some(seconds);
        if !cache.entries.contains_key(name) && cache.entries.len() >= self.inner.capacity {
            let oldest = cache
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                cache.entries.remove(&oldest);
            }
        }
        cache.entries.insert(
            name.to_owned(),
            Entry {
                open: open.clone(),
                stats,
                last_used: now,
            },
        );
        Ok(open)
    }

    /// This process's counters for `name` (zero when it was never acquired or was evicted).
    pub fn stats(&self, name: &str) -> RebuildStats {
        self.lock()
            .ok()
            .and_then(|c| c.entries.get(name).map(|e| e.stats))
            .unwrap_or_default()
    }

    /// Whether opened collections are cached (always, in this runtime).
    pub fn cache_enabled(&self) -> bool {
        true
    }

    fn lock(&self) -> Result<MutexGuard<'_, Cache>, Error> {
        self.inner
            .cache
            .lock()
            .map_err(|_| Error::internal("collection cache lock poisoned"))
    }
}

/// A collection's size, identity and this process's cache counters. Never a source, content or
/// path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexStatus {
    /// The collection.
    pub collection: String,
    /// How many documents (ingested sources) the collection holds.
    pub document_count: u64,
    /// How many chunks (searchable passages) the collection holds.
    pub chunk_count: u64,
    /// The embedder of the collection's vectors; absent when it was ingested without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<EmbeddingIdentity>,
    /// Whether dense and hybrid search can run.
    pub dense_search_available: bool,
    /// The collection's generation: it grows by one with every ingest that changes it.
    pub generation: u64,
    /// Version of the collection's storage format.
    pub schema_version: u32,
    /// Whether this server keeps opened collections in memory between requests.
    pub cache_enabled: bool,
    /// Requests this server has served from this collection since it started.
    pub retriever_acquires: u64,
    /// Times this server had to open the collection: on first use and after each new
    /// generation.
    pub retriever_rebuilds: u64,
    /// Seconds this server has spent opening the collection, in total.
    pub rebuild_seconds_total: f64,
    /// Seconds the last open took; absent until the collection has been opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_rebuild_seconds: Option<f64>,
}

/// Reports a collection's status. Reads the counters without acquiring, so it never moves them.
pub fn index_status(
    open: &OpenCollection,
    runtime: &CollectionRuntime,
) -> Result<IndexStatus, Error> {
    let status = store::status(&mut *open.connection()?)?;
    let stats = runtime.stats(open.name());
    Ok(IndexStatus {
        collection: open.name().to_owned(),
        document_count: status.document_count,
        chunk_count: status.chunk_count,
        dense_search_available: status.embedding.is_some(),
        embedding: status.embedding,
        generation: status.generation,
        schema_version: status.schema_version,
        cache_enabled: runtime.cache_enabled(),
        retriever_acquires: stats.acquires,
        retriever_rebuilds: stats.rebuilds,
        rebuild_seconds_total: stats.rebuild_seconds_total,
        last_rebuild_seconds: stats.last_rebuild_seconds,
    })
}
