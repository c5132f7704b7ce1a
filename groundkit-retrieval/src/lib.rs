//! The retrieval engine: collections, ingest, lexical, dense and hybrid search, citations.
//!
//! # On-disk layout
//!
//! A collection named `NAME` lives in the index directory as:
//!
//! ```text
//! <index_dir>/NAME.sqlite3        documents, chunks, superseded chunks, generation, schema
//!                                 version (WAL mode, identified by `PRAGMA application_id`)
//! <index_dir>/NAME.sqlite3-wal    its write-ahead log, and `-shm` its index: created by the
//! <index_dir>/NAME.sqlite3-shm    first ingest and kept (emptied, not deleted) between ingests
//! <index_dir>/NAME.tantivy/g<N>/  the BM25 index of generation N (one directory per generation)
//!                                 and, when it was ingested with an embedder, `vectors.bin`
//!                                 (and, for a large generation, their graph `vectors.hnsw`)
//! <index_dir>/NAME.snapshots/     fetched text of `snapshot` (URL) sources, content-addressed
//! <index_dir>/NAME.watch.lock     locked by the watcher following the collection's files, while
//! <index_dir>/NAME.watch.json     it runs, and its state (feature `watch`)
//! ```
//!
//! # The generation invariant
//!
//! The SQLite `generation` counter is the single commit point. A reader reads generation `G`
//! and opens `NAME.tantivy/g<G>`, so SQLite and tantivy are never mixed. An ingest
//!
//! 1. holds one SQLite write transaction (`BEGIN IMMEDIATE`) for its whole run and writes the
//!    new rows into it, uncommitted;
//! 2. builds generation `G+1` of the lexical index in `g<G+1>.tmp` (hard links of `g<G>`'s
//!    immutable segment files, then tantivy deletes and adds), commits it with the payload
//!    `G+1`, writes the vector of every live chunk into `g<G+1>.tmp/vectors.bin` when the ingest
//!    has an embedder (a new file, reusing `g<G>`'s vectors for unchanged text) and, when there
//!    are enough of them, their graph into `g<G+1>.tmp/vectors.hnsw`, and renames the directory
//!    to `g<G+1>`;
//! 3. writes `generation = G+1` and commits the SQLite transaction (`synchronous = FULL`, so the
//!    commit is on disk before step 4 deletes anything);
//! 4. removes generations older than `G+1`, leftover `*.tmp` directories and unreferenced
//!    snapshots (best effort: the generation is committed, and what is left the next ingest
//!    removes).
//!
//! A crash before step 3 leaves SQLite at `G` (its uncommitted WAL frames are discarded) and
//! readers on `g<G>`; the next ingest deletes any `g<k>` with `k > G` and any `*.tmp` first. A
//! crash after step 3 only leaves garbage that the next ingest removes. (Should `g<G>` itself go
//! missing, the next ingest rebuilds it from the chunks stored in SQLite.) Search reads nothing but
//! the tantivy generation it opened and that generation's vectors (content and citation fields
//! are stored in the lexical index), so a
//! concurrent ingest never changes an answer mid-query; `fetch_chunk` and `index_status` read one
//! committed SQLite snapshot.
//!
//! # Read path
//!
//! Nothing on the read path creates, removes or rewrites a file: names are validated before any
//! disk access; existence and identity are decided by reading the 100-byte SQLite header from a
//! non-blocking handle (never by opening the database, whose main file a checkpoint may be
//! rewriting); and the store is opened read-only as a WAL reader. The ingest leaves the `-wal`
//! and `-shm` files in place (`SQLITE_FCNTL_PERSIST_WAL`), so a reader finds them and creates
//! neither; like every WAL reader it records its read position in the `-shm` shared-memory index.
//! A store found without them (a copy of `NAME.sqlite3` alone, on a read-only mount or not), or
//! with an empty `-wal` and no `-shm`, holds every committed transaction in its main file and is
//! opened immutable, so SQLite creates neither; it is reopened once they appear (an ingest creates
//! them). A `-wal` holding frames without its `-shm` is refused with a storage error naming the
//! missing file. A header that cannot be read (permissions, I/O) is a storage error, never "not
//! found".
//! A published lexical generation is opened through a read-only directory whose locks live in
//! memory, so opening one writes nothing into it (not even tantivy's lock file in a directory an
//! ingest is removing), and an open is kept only if the committed generation did not move while it
//! ran: an ingest removes `g<G>` only after committing a later generation. A reader sees one
//! committed generation, old or new, and never an error because an ingest is committing.
//!
//! # Sources
//!
//! Every source file is read through `source_file::open_within`: named by a handle that opens
//! nothing (Linux's `O_PATH`), judged on it (a regular file whose own path, as the kernel names
//! the handle, lies inside the root), then opened for reading through that handle, non-blocking,
//! and read only from the opened file, at most [`source_file::MAX_SOURCE_BYTES`] at a time.
//! `fetch_chunk` reads only the cited byte range of a `text` source or snapshot and only the
//! record's line of a BEIR corpus; it reads a whole file only to re-run an HTML, PDF or office
//! extractor.
//!
//! # Chunk ids across generations
//!
//! A chunk id is a digest of its document id, its byte offsets and its bytes, so it is the same
//! in every generation in which the chunk's own bytes and offsets are unchanged: an append to a
//! file keeps the ids of every chunk before the append. A chunk that an ingest replaces or
//! removes moves to `superseded_chunks` and stays fetchable, with `superseded: true`, until an
//! ingest runs after the retention window has passed ([`DEFAULT_SUPERSEDED_RETENTION`], 24
//! hours; `grk ingest --keep-superseded`): one that changes nothing else commits that sweep alone,
//! at the same generation. So a hit from any generation within the window can be fetched, and
//! verified against the source as it is now.
//!
//! # Creation
//!
//! A collection's files are created by the first ingest that has something to write: an ingest
//! where every source failed creates nothing. The store is built whole (schema, counts, WAL mode)
//! in `.NAME.sqlite3.<tag>.tmp`, synced, and linked to `NAME.sqlite3` (never replacing a file),
//! then the directory is synced: a name appears only on a whole store, and a kill before the link
//! leaves only the temporary file, which no listing shows and the next ingest of the collection
//! removes. What a creation interrupted by an earlier version left in place (an empty
//! `NAME.sqlite3`, or one with groundkit's application id and no tables) holds nothing, and the
//! next ingest replaces it.

// The read surface: everything a server needs, and nothing that writes.
pub mod analysis;
mod backend;
mod budget;
mod cache;
mod citation;
mod collection;
pub mod embed;
pub mod eval;
mod export;
pub mod extract;
pub mod filter;
pub mod fusion;
pub mod lexical;
pub mod model;
mod open;
pub mod rerank;
mod search;
mod several;
pub mod source_file;
mod status;
mod store;
#[cfg(any(feature = "office", feature = "extract-pdf"))]
pub mod units;
pub mod vectors;

// The write surface: ingest, only with the `ingest` feature.
#[cfg(feature = "ingest")]
pub mod chunk;
#[cfg(feature = "code")]
pub mod code;
#[cfg(feature = "ingest")]
pub mod ingest;
#[cfg(feature = "office")]
pub mod office;
#[cfg(feature = "fetch-url")]
mod snapshot_fetch;
#[cfg(feature = "watch")]
pub mod watch;

pub use backend::{Backend, LocalBackend, evaluate_backend};
pub use budget::{SNIPPET_BYTES, fit};
pub use cache::{CollectionCache, PAGE_RETENTION, PAGES_KEPT};
pub use citation::{fetch_chunk, fetch_response};
pub use collection::{COLLECTION_NAME, list_collections, validate_name};
pub use eval::EvalReport;
pub use export::{ExportedChunk, document_hashes, export_chunks, export_documents};
pub use model::{
    Citation, DenseIndex, Detail, EmbedderKind, EmbeddingIdentity, FetchChunkResponse,
    FusionMethod, IndexStatus, LastChange, ListCollectionsResponse, RebuildStats, RetrievalResult,
    SearchMetadata, SearchMode, SearchParams, SearchResponse, Snippet, SourceClass, Span,
    VectorGraph, Verification, WatchMode, WatcherStatus,
};
pub use open::OpenCollection;
pub use search::{
    ChunkAddress, Fusion, HitPlace, RankedHits, check_dense, check_embedder, hit_document_id,
    hit_place, query_terms, query_vector, ranked_hits, search, validate_params,
};
pub use several::search_collections;
pub use status::index_status;
pub use store::ChunkRecord;

#[cfg(feature = "ingest")]
pub use ingest::{
    CodeChunking, CommitStep, IngestFailure, IngestOptions, IngestProgress, IngestSummary,
    InputFormat, ItemOutcome, NoProgress, SkippedFiles, ingest,
};

/// How long chunks replaced or removed by an ingest stay fetchable by default: 24 hours.
pub const DEFAULT_SUPERSEDED_RETENTION: std::time::Duration =
    std::time::Duration::from_secs(24 * 60 * 60);

/// The largest `top_k` a search accepts; also the candidate depth a reranker would receive.
pub const MAX_TOP_K: u32 = 100;

/// The deepest ranking a search reads: a page of hits at most 1,000 deep into the ranking, and
/// one hit more, to know whether another page follows.
pub const MAX_RANK_DEPTH: u32 = 1_001;

/// The longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 2048;

/// The on-disk schema version stored in `PRAGMA user_version`. An ingest upgrades a store of
/// every earlier version (from 1) in place; readers serve versions 3 and 4 as they are (3:
/// chunks without lines; before 5, documents without modification times and metadata) and
/// refuse 1 and 2 until it has.
pub const SCHEMA_VERSION: u32 = 5;

/// The `PRAGMA application_id` that identifies a groundkit collection ("GRK1").
pub const APPLICATION_ID: i32 = 0x4752_4B31;
