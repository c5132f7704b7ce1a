//! The collection cache: a bounded set of open collections shared by every request of a process,
//! reopened only when the committed generation moves, with counters that make its behaviour
//! visible in `index_status`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use crate::collection::CollectionPaths;
use crate::model::RebuildStats;
use crate::open::OpenCollection;
use groundkit_core::Error;

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
pub struct CollectionCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CollectionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollectionCache")
            .field("capacity", &self.inner.capacity)
            .finish_non_exhaustive()
    }
}

impl CollectionCache {
    /// A cache over `index_dir`, verifying citations inside `base_dir`, keeping at most
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
            if entry.open.is_current()? {
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

    fn lock(&self) -> Result<MutexGuard<'_, Cache>, Error> {
        self.inner
            .cache
            .lock()
            .map_err(|_| Error::internal("collection cache lock poisoned"))
    }
}
