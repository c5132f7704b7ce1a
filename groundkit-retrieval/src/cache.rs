//! The collection cache: a bounded set of open collections shared by every request of a process,
//! reopened only when the committed generation moves, with counters that make its behaviour
//! visible in `index_status`.
//!
//! A generation a search's cursor was handed out for ([`CollectionCache::keep_for_pages`]) is
//! kept open for [`PAGE_RETENTION`] after that, even once a newer generation replaced it, so the
//! search's next pages are read from the ranking they continue
//! ([`CollectionCache::acquire_at`]). Its directory may be gone from the disk by then (the ingest
//! that replaced it removes it): what is open stays readable. At most [`PAGES_KEPT`] replaced
//! generations of one collection are kept: those a cursor was handed out for last.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::collection::CollectionPaths;
use crate::model::RebuildStats;
use crate::open::OpenCollection;
use groundkit_core::Error;

/// How long a generation stays searchable for the next page of a search after a cursor was
/// handed out for it, even once a newer generation replaced it.
pub const PAGE_RETENTION: Duration = Duration::from_secs(10 * 60);

/// The most replaced generations of one collection kept open for pages.
pub const PAGES_KEPT: usize = 2;

struct Entry {
    open: Arc<OpenCollection>,
    stats: RebuildStats,
    last_used: u64,
    /// Until when a cursor handed out for this generation may be continued.
    pages_until: Option<Instant>,
}

/// A replaced generation kept open for the pages of its searches.
struct Kept {
    open: Arc<OpenCollection>,
    until: Instant,
}

struct Cache {
    entries: HashMap<String, Entry>,
    clock: u64,
    /// Replaced generations kept for pages, by collection.
    kept: HashMap<String, Vec<Kept>>,
}

impl Cache {
    /// Keeps `entry`'s generation, replaced or evicted, while a cursor may still continue it.
    fn retire(&mut self, name: &str, entry: Entry, now: Instant) {
        let Some(until) = entry.pages_until.filter(|until| *until > now) else {
            return;
        };
        let kept = self.kept.entry(name.to_owned()).or_default();
        kept.push(Kept {
            open: entry.open,
            until,
        });
        if kept.len() > PAGES_KEPT {
            kept.sort_by_key(|k| std::cmp::Reverse(k.until));
            kept.truncate(PAGES_KEPT);
        }
    }

    /// Forgets the kept generations no cursor may continue any more.
    fn expire(&mut self, now: Instant) {
        self.kept.retain(|_, kept| {
            kept.retain(|k| k.until > now);
            !kept.is_empty()
        });
    }
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
                    kept: HashMap::new(),
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
        let at = Instant::now();
        cache.expire(at);
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
        let previous = cache.entries.get(name).map(|entry| Arc::clone(&entry.open));
        let open = Arc::new(OpenCollection::open_after(
            &self.inner.index_dir,
            &self.inner.base_dir,
            name,
            previous.as_deref(),
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
            if let Some(oldest) = oldest
                && let Some(entry) = cache.entries.remove(&oldest)
            {
                cache.retire(&oldest, entry, at);
            }
        }
        let replaced = cache.entries.insert(
            name.to_owned(),
            Entry {
                open: open.clone(),
                stats,
                last_used: now,
                pages_until: None,
            },
        );
        // A reopen of the same generation (its store's files changed) replaces nothing a
        // cursor could miss.
        if let Some(replaced) = replaced.filter(|r| r.open.generation() != open.generation()) {
            cache.retire(name, replaced, at);
        }
        Ok(open)
    }

    /// The open collection `name` at `generation`: its committed generation, or a replaced one
    /// kept for pages; `cursor_expired` when it is neither.
    pub fn acquire_at(&self, name: &str, generation: u64) -> Result<Arc<OpenCollection>, Error> {
        let current = self.acquire(name)?;
        if current.generation() == generation {
            return Ok(current);
        }
        let cache = self.lock()?;
        cache
            .kept
            .get(name)
            .and_then(|kept| kept.iter().find(|k| k.open.generation() == generation))
            .map(|k| k.open.clone())
            .ok_or(Error::CursorExpired { generation })
    }

    /// A cursor was handed out for `name` at `generation`: keeps that generation searchable for
    /// [`PAGE_RETENTION`] from now, even once a newer one replaces it.
    pub fn keep_for_pages(&self, name: &str, generation: u64) {
        let Ok(mut cache) = self.lock() else {
            return;
        };
        let until = Instant::now() + PAGE_RETENTION;
        if let Some(entry) = cache.entries.get_mut(name)
            && entry.open.generation() == generation
        {
            entry.pages_until = Some(until);
        } else if let Some(kept) = cache.kept.get_mut(name)
            && let Some(kept) = kept.iter_mut().find(|k| k.open.generation() == generation)
        {
            kept.until = until;
        }
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
