//! One collection opened at one generation: its read-only store connection and, once an ingest
//! has completed, the lexical index and (when it has them) the vectors of that generation.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

use crate::SCHEMA_VERSION;
use crate::collection::{CollectionPaths, Identity, identify_store, resolves_within};
use crate::lexical::LexicalIndex;
use crate::store;
use crate::vectors::Vectors;
use groundkit_core::Error;

/// One collection opened at one generation.
///
/// Search reads only the lexical index of this generation; `fetch_chunk` and `index_status` read
/// the store's latest committed state through the read-only connection.
pub struct OpenCollection {
    paths: CollectionPaths,
    base_dir: PathBuf,
    generation: u64,
    /// The store's schema version when opened (an ingest upgrading it commits a new generation,
    /// and the collection is then opened again).
    schema_version: u32,
    conn: Mutex<Connection>,
    /// Identity of the store file when opened; a collection deleted and re-created under the same
    /// name is a different file.
    file_id: Option<(u64, u64)>,
    /// Set when the store was opened immutable (a WAL-mode store found without a usable `-wal`
    /// and `-shm` pair): the companions as found then.
    immutable: Option<WalFiles>,
    lexical: Option<LexicalIndex>,
    vectors: Option<Vectors>,
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
        Self::open_after(index_dir, base_dir, name, None)
    }

    /// [`OpenCollection::open`], taking from `previous` (the same collection at an earlier
    /// generation) what the new generation shares with it as it is: its vector graph, when the
    /// new generation carries the same graph file.
    pub(crate) fn open_after(
        index_dir: &Path,
        base_dir: &Path,
        name: &str,
        previous: Option<&OpenCollection>,
    ) -> Result<Self, Error> {
        let paths = CollectionPaths::new(index_dir, name)?;
        let not_found = || Error::CollectionNotFound {
            name: name.to_owned(),
        };
        match std::fs::metadata(&paths.sqlite) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(not_found()),
            Err(err)
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(not_found());
            }
            Err(err) => {
                return Err(Error::storage(
                    format!("cannot look up {name}.sqlite3"),
                    err,
                ));
            }
        }
        if !resolves_within(&paths.sqlite, index_dir) {
            return Err(not_found());
        }
        let Identity::Ours { wal } = identify_store(&paths)? else {
            return Err(not_found());
        };
        let file_id = file_identity(&paths.sqlite);
        let immutable = if wal { read_alone(&paths)? } else { None };
        let conn = match immutable {
            Some(_) => store::open_immutable(&paths.sqlite)?,
            None => store::open_for_read(&paths.sqlite)?,
        };
        if !store::is_groundkit(&conn)? {
            return Err(not_found());
        }
        let version = store::schema_version(&conn)?;
        if !(store::OLDEST_READABLE_VERSION..=SCHEMA_VERSION).contains(&version) {
            return Err(Error::Storage {
                message: format!(
                    "collection {name} has schema version {version}; this build reads versions \
                     {} to {SCHEMA_VERSION}{}",
                    store::OLDEST_READABLE_VERSION,
                    if (1..store::OLDEST_READABLE_VERSION).contains(&version) {
                        " (`grk ingest` upgrades it)"
                    } else {
                        ""
                    }
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
            let (lexical, vectors) = if generation == 0 {
                (None, None)
            } else {
                let opened = LexicalIndex::open(&paths, generation).and_then(|lexical| {
                    let dir = paths.generation_dir(generation);
                    let earlier = previous.and_then(OpenCollection::vectors);
                    let vectors = Vectors::open(&dir, &lexical.searcher, earlier)?;
                    Ok((lexical, vectors))
                });
                attempt += 1;
                if attempt < 5 && store::generation(&conn)? != generation {
                    continue;
                }
                let (lexical, vectors) = opened?;
                (Some(lexical), vectors)
            };
            return Ok(Self {
                paths,
                base_dir: base_dir.to_path_buf(),
                generation,
                schema_version: version,
                conn: Mutex::new(conn),
                file_id,
                immutable,
                lexical,
                vectors,
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

    /// The store's schema version when opened: which columns its chunks have.
    pub(crate) fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// The lexical index, absent while the collection has never completed an ingest.
    pub(crate) fn lexical(&self) -> Option<&LexicalIndex> {
        self.lexical.as_ref()
    }

    /// The generation's vectors, absent when it has none.
    pub fn vectors(&self) -> Option<&Vectors> {
        self.vectors.as_ref()
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

    /// Whether this is still the collection's latest state: the same store file (not one
    /// deleted and re-created under the name) at the same committed generation. A store opened
    /// immutable stops being current when its `-wal` or `-shm` changes (an ingest creates them).
    pub(crate) fn is_current(&self) -> Result<bool, Error> {
        if self
            .immutable
            .is_some_and(|found| found != WalFiles::of(&self.paths))
        {
            return Ok(false);
        }
        Ok(self.file_id == file_identity(&self.paths.sqlite)
            && self.committed_generation()? == self.generation)
    }

    /// The committed generation, as the store says now.
    pub fn committed_generation(&self) -> Result<u64, Error> {
        store::generation(&*self.connection()?)
    }
}

/// The companions of a WAL-mode store: the length of its `-wal` (when present) and whether its
/// `-shm` is present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WalFiles {
    wal: Option<u64>,
    shm: bool,
}

impl WalFiles {
    fn of(paths: &CollectionPaths) -> Self {
        Self {
            wal: std::fs::metadata(paths.wal()).ok().map(|meta| meta.len()),
            shm: paths.shm().exists(),
        }
    }
}

/// How a WAL-mode store is read without creating a file. With both companions (what an ingest
/// leaves), as a WAL reader: `None`. With no `-wal` or an empty one, every committed transaction
/// is in the main file, which is read alone, immutable (SQLite would otherwise create the missing
/// companions): the companions as found. A `-wal` holding frames without its `-shm` is refused,
/// naming what is missing.
fn read_alone(paths: &CollectionPaths) -> Result<Option<WalFiles>, Error> {
    let found = WalFiles::of(paths);
    match found {
        WalFiles {
            wal: Some(_),
            shm: true,
        } => Ok(None),
        WalFiles {
            wal: Some(len),
            shm: false,
        } if len > 0 => Err(Error::Storage {
            message: format!(
                "{name}.sqlite3-shm is missing beside a non-empty {name}.sqlite3-wal; copy a \
                 collection with both of them, or with neither",
                name = paths.name,
            ),
            source: None,
        }),
        _ => Ok(Some(found)),
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
