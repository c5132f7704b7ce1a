//! Collection names, their on-disk layout (the store and its companions, the file a new store is
//! created in, the generation directories), how a message names a file of a collection (relative
//! to the index directory), the read-only identity probe and enumeration.
//!
//! [`CollectionPaths`] is the one statement of where a collection's files are: the store, the
//! generation directories (`g<N>`, built as `g<N>.tmp`) and the files a generation directory
//! holds beside tantivy's own ([`VECTORS_FILE`], [`VECTOR_GRAPH_FILE`]).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use crate::APPLICATION_ID;
use crate::source_file::open_nonblocking;
use groundkit_core::Error;

/// The collection-name rule, the only statement of it: an ASCII letter or digit, then up to 63
/// ASCII letters, digits, `_` or `-`. The service's request types declare it as their
/// `collection` pattern (so the JSON Schema states it and argument validation checks it), and
/// [`validate_name`] checks it before any disk access.
pub static COLLECTION_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$").expect("the collection-name pattern parses")
});

/// Checks a collection name against [`COLLECTION_NAME`].
pub fn validate_name(name: &str) -> Result<(), Error> {
    if COLLECTION_NAME.is_match(name) {
        Ok(())
    } else {
        Err(Error::Validation {
            field: "collection".to_owned(),
            message:
                "must be 1 to 64 ASCII letters, digits, '_' or '-', starting with a letter or \
                      digit"
                    .to_owned(),
        })
    }
}

/// The files and directories of one collection. Built only from a validated name.
#[derive(Debug, Clone)]
pub struct CollectionPaths {
    /// The collection's name.
    pub name: String,
    /// `<index_dir>/<name>.sqlite3`.
    pub sqlite: PathBuf,
    /// `<index_dir>/<name>.tantivy`, holding one `g<N>` directory per generation.
    pub tantivy: PathBuf,
    /// `<index_dir>/<name>.snapshots`, holding fetched text of URL sources.
    pub snapshots: PathBuf,
}

impl CollectionPaths {
    /// Validates `name` and derives the collection's paths inside `index_dir`.
    pub fn new(index_dir: &Path, name: &str) -> Result<Self, Error> {
        validate_name(name)?;
        Ok(Self {
            name: name.to_owned(),
            sqlite: index_dir.join(format!("{name}.sqlite3")),
            tantivy: index_dir.join(format!("{name}.tantivy")),
            snapshots: index_dir.join(format!("{name}.snapshots")),
        })
    }

    /// The store's write-ahead log, `<name>.sqlite3-wal`.
    pub(crate) fn wal(&self) -> PathBuf {
        companion(&self.sqlite, "-wal")
    }

    /// The store's rollback journal, `<name>.sqlite3-journal` (only while a store is not in WAL
    /// mode).
    #[cfg(feature = "ingest")]
    pub(crate) fn journal(&self) -> PathBuf {
        companion(&self.sqlite, "-journal")
    }

    /// The store's shared-memory index, `<name>.sqlite3-shm`.
    pub(crate) fn shm(&self) -> PathBuf {
        companion(&self.sqlite, "-shm")
    }

    /// The file a new store is created in before it is linked under the collection's name:
    /// `.<name>.sqlite3.<tag>.tmp` in the index directory. A leading dot is something no
    /// collection name has, and the name does not end in `.sqlite3`, so no listing shows it.
    #[cfg(feature = "ingest")]
    pub(crate) fn creation_file(&self, tag: &str) -> PathBuf {
        self.sqlite
            .with_file_name(format!(".{}.sqlite3.{tag}.tmp", self.name))
    }

    /// Whether `file_name` in the index directory is a creation file of this collection, or one
    /// of SQLite's companions of one (a killed ingest's leftover).
    #[cfg(feature = "ingest")]
    pub(crate) fn is_creation_file(&self, file_name: &str) -> bool {
        file_name
            .strip_prefix(&format!(".{}.sqlite3.", self.name))
            .is_some_and(|rest| rest.contains(".tmp"))
    }

    /// `<name>.watch.lock`: locked by the watcher following the collection's files for as long as
    /// it runs (the system releases the lock of a process that dies, however it dies).
    pub(crate) fn watch_lock(&self) -> PathBuf {
        self.sqlite
            .with_file_name(format!("{}.watch.lock", self.name))
    }

    /// `<name>.watch.json`: the watcher's state ([`WatcherStatus`](crate::WatcherStatus)),
    /// replaced whole whenever it changes; meaningful only while its lock is held.
    pub(crate) fn watch_state(&self) -> PathBuf {
        self.sqlite
            .with_file_name(format!("{}.watch.json", self.name))
    }

    /// The directory of generation `generation`: its lexical index, and its vectors when it has
    /// them.
    pub fn generation_dir(&self, generation: u64) -> PathBuf {
        self.tantivy.join(generation_name(generation))
    }

    /// The directory generation `generation` is built in before it is renamed into place.
    #[cfg(feature = "ingest")]
    pub(crate) fn build_dir(&self, generation: u64) -> PathBuf {
        self.tantivy
            .join(format!("{}.tmp", generation_name(generation)))
    }
}

/// `path` as a message names it: from its `<name>.tantivy` component on, which is where it lies
/// relative to the index directory; only its file name when it has no such component.
pub(crate) fn in_index_dir(path: &Path) -> String {
    let components: Vec<std::path::Component<'_>> = path.components().collect();
    let start = components.iter().rposition(|c| {
        c.as_os_str()
            .to_str()
            .is_some_and(|name| name.ends_with(".tantivy"))
    });
    let shown: PathBuf = match start {
        Some(start) => components[start..].iter().collect(),
        None => path.file_name().map(PathBuf::from).unwrap_or_default(),
    };
    shown.display().to_string()
}

/// `path` with `suffix` appended to its file name.
fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The name of generation `generation`'s directory inside `<name>.tantivy`.
pub(crate) fn generation_name(generation: u64) -> String {
    format!("g{generation}")
}

/// The file a generation's vectors are kept in, inside its directory. A new generation writes its
/// own and never links the previous one's.
pub(crate) const VECTORS_FILE: &str = "vectors.bin";

/// The file a generation's HNSW graph is kept in, beside its vectors (likewise never linked).
pub(crate) const VECTOR_GRAPH_FILE: &str = "vectors.hnsw";

/// Files an earlier groundkit wrote into a generation directory and nothing reads now (the
/// champion lists of bounded lexical search): never carried into a new generation, so they go
/// with the generation that has them.
#[cfg(feature = "ingest")]
pub(crate) const RETIRED_FILES: &[&str] = &["champions.bin"];

/// What the identity probe found at a collection's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identity {
    /// Nothing there, or something that is not a groundkit collection (another file, a
    /// directory, a file shorter than the header).
    NotOurs,
    /// A groundkit collection; `wal` when its header says it is in WAL mode.
    Ours {
        /// The header's read and write versions are 2: readers need its `-wal` and `-shm`.
        wal: bool,
    },
}

/// Whether `path` is a groundkit collection, decided without SQLite and without writing anything.
///
/// Reads the 100-byte database header from a handle opened non-blocking and checks that it is a
/// regular file whose header carries SQLite's magic string and groundkit's `application_id`. No
/// lock is taken and no companion file is created, and the answer is stable while an ingest
/// commits: the header fields compared are written once, when the collection is created, and a
/// checkpoint rewrites them with the same bytes (an SQLite open of the file at that moment can
/// read a torn page image; this read cannot). A file that cannot be read for another reason
/// (permissions, an I/O error) is an `Err`, never "not ours".
pub(crate) fn identify(path: &Path) -> std::io::Result<Identity> {
    use std::io::ErrorKind;
    let file = match open_nonblocking(path) {
        Ok(file) => file,
        Err(err) if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Ok(Identity::NotOurs);
        }
        Err(err) => return Err(err),
    };
    if !file.metadata()?.is_file() {
        return Ok(Identity::NotOurs);
    }
    let mut header = [0u8; 100];
    match (&file).read_exact(&mut header) {
        Ok(()) => {}
        Err(err) if err.kind() == ErrorKind::UnexpectedEof => return Ok(Identity::NotOurs),
        Err(err) => return Err(err),
    }
    if !(header.starts_with(SQLITE_MAGIC) && header[68..72] == APPLICATION_ID.to_be_bytes()) {
        return Ok(Identity::NotOurs);
    }
    Ok(Identity::Ours {
        wal: header[18] == 2 && header[19] == 2,
    })
}

/// [`identify`] as a storage error, naming the file relative to the index directory.
pub(crate) fn identify_store(paths: &CollectionPaths) -> Result<Identity, Error> {
    identify(&paths.sqlite).map_err(|err| {
        Error::storage(
            format!("cannot read the header of {}.sqlite3", paths.name),
            err,
        )
    })
}

/// The first 16 bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Whether `path` resolves (after following symlinks) inside `root`.
pub(crate) fn resolves_within(path: &Path, root: &Path) -> bool {
    match (path.canonicalize(), root.canonicalize()) {
        (Ok(resolved), Ok(root)) => resolved.starts_with(root),
        _ => false,
    }
}

/// Names of the collections in `index_dir`, sorted.
///
/// Read-only: each `*.sqlite3` candidate must resolve inside the index directory and pass the
/// identity probe; anything else (an unrelated database, a planted symlink, a name that is not a
/// valid collection name) is skipped, not reported and not touched, and one whose header cannot
/// be read is skipped with a warning in the log. A store an ingest is creating is not a
/// candidate: it is built under a hidden temporary name (`.NAME.sqlite3.<tag>.tmp`), which does
/// not end in `.sqlite3`. A missing index directory lists nothing.
pub fn list_collections(index_dir: &Path) -> Result<Vec<String>, Error> {
    let entries = match std::fs::read_dir(index_dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::storage("cannot read the index directory", err)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|err| Error::storage("cannot read the index directory", err))?;
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let Some(stem) = file_name.strip_suffix(".sqlite3") else {
            continue;
        };
        if validate_name(stem).is_err() {
            continue;
        }
        let path = entry.path();
        if !resolves_within(&path, index_dir) {
            tracing::debug!(
                name = stem,
                "skipping: resolves outside the index directory"
            );
            continue;
        }
        match identify(&path) {
            Ok(Identity::Ours { .. }) => {}
            Ok(Identity::NotOurs) => {
                tracing::debug!(name = stem, "skipping: not a groundkit collection");
                continue;
            }
            Err(err) => {
                tracing::warn!(name = stem, error = %err, "skipping: its header cannot be read");
                continue;
            }
        }
        names.push(stem.to_owned());
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_documented_pattern() {
        for ok in ["a", "Papers", "scifact-2024", "x_y", &"a".repeat(64)] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "_a",
            "../etc",
            "a/b",
            "a.b",
            "a b",
            "é",
            &"a".repeat(65),
            "..",
            "a\0",
        ] {
            let err = validate_name(bad).expect_err(bad);
            assert_eq!(err.field(), Some("collection"));
        }
    }
}
