//! Ingest, the only write path: discover inputs (`discover`), read each source (`sources`; files
//! are read, extracted and chunked on worker threads by `stage`, on all cores), chunk it with
//! exact offsets, and write documents, chunks, the lexical index and (with an embedder)
//! the vectors as one new generation (`writer`; the commit protocol is described in the module
//! root of `retrieval`). Bad inputs are reported per source and skipped; with the `code`
//! feature, source files are read too (chunked at their definitions by `code`), and files that
//! are not source worth reading are counted by reason ([`SkippedFiles`]).

#[cfg(feature = "office")]
mod attachments;
mod changed;
mod discover;
mod front_matter;
mod ledger;
mod sources;
mod stage;
mod writer;

use stage::{Staged, Stager};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::chunk::DEFAULT_MAX_CHUNK_BYTES;
use crate::collection::CollectionPaths;
use crate::embed::Embedder;
use crate::lexical::WriterConfig;
use crate::model::{SourceClass, VectorGraph};
use crate::store::write::DocumentRow;
use groundkit_core::Error;

use discover::Item;
use sources::FileError;
use writer::{Change, Writer};

pub use crate::DEFAULT_SUPERSEDED_RETENTION;

/// How input paths are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    /// Files and directories: text, Markdown and the other plain-text formats as text,
    /// `.html`/`.htm`/`.pdf` extracted, office documents, workbooks, notebooks, mail and books
    /// (with the `office` feature) extracted along their units, source code (with the `code`
    /// feature) as text chunked at its definitions; `http://` URLs as snapshots.
    #[default]
    Files,
    /// BEIR `corpus.jsonl` files (or directories holding one): one document per record, the
    /// record's `_id` kept as the document id, title and text indexed.
    Beir,
}

/// What to ingest, and where.
#[derive(Clone)]
pub struct IngestOptions {
    /// Directory holding the collections.
    pub index_dir: PathBuf,
    /// Root every file source must lie in; sources are recorded relative to it.
    pub base_dir: PathBuf,
    /// Collection to create or update.
    pub collection: String,
    /// Paths (files, directories; relative ones resolve against the current directory) and URLs.
    pub inputs: Vec<String>,
    /// How to read the inputs.
    pub format: InputFormat,
    /// Largest chunk, in bytes.
    pub max_chunk_bytes: usize,
    /// Timeout of one URL fetch.
    pub fetch_timeout: Duration,
    /// Lexical index writer tunables.
    pub writer: WriterConfig,
    /// How long superseded chunks (replaced or removed by an ingest) stay fetchable. Every ingest
    /// of an existing collection drops those superseded this long ago or longer, whether or not
    /// it changes anything else, its own included when the retention is zero.
    pub superseded_retention: Duration,
    /// Computes the vectors of every chunk of the new generation (reusing the previous
    /// generation's where the text and the embedder are unchanged). `None` writes none; a
    /// collection that has vectors then needs [`IngestOptions::drop_vectors`].
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Lets an ingest without an embedder replace a generation that has vectors with one that
    /// has none.
    pub drop_vectors: bool,
    /// The fewest vectors for which the new generation also gets an HNSW graph, so dense search
    /// is approximate and fast; below it, dense search compares the query with every vector.
    /// Default [`DEFAULT_MIN_VECTORS`](crate::vectors::graph::DEFAULT_MIN_VECTORS).
    pub graph_min_vectors: usize,
    /// When set, the ingest reads again only the files under these paths (absolute paths as
    /// discovery walks them: files, or directories standing for everything under them) and the
    /// files the collection does not hold yet; every other file it holds is kept as stored,
    /// unread, and URLs are not fetched again. What the corpus no longer has is removed either
    /// way. A watcher passes the paths it was told changed; `None` reads everything.
    pub changed: Option<Vec<PathBuf>>,
    /// With `changed`: what an earlier ingest could not read (its [`IngestSummary::failed`]).
    /// Such a file is not read again unless it is under a changed path; while it is still
    /// there, this ingest reports it in `failed` as it was. A watcher passes what its last
    /// ingest reported, so a file that cannot be read is not read again at every change.
    pub unreadable: Vec<IngestFailure>,
}

impl std::fmt::Debug for IngestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IngestOptions")
            .field("index_dir", &self.index_dir)
            .field("collection", &self.collection)
            .field("inputs", &self.inputs)
            .field("format", &self.format)
            .field("embedder", &self.embedder.as_ref().map(|e| e.identity()))
            .finish_non_exhaustive()
    }
}

impl IngestOptions {
    /// Options with the defaults for everything but the essentials.
    pub fn new(
        index_dir: impl Into<PathBuf>,
        base_dir: impl Into<PathBuf>,
        collection: impl Into<String>,
        inputs: Vec<String>,
    ) -> Self {
        Self {
            index_dir: index_dir.into(),
            base_dir: base_dir.into(),
            collection: collection.into(),
            inputs,
            format: InputFormat::Files,
            max_chunk_bytes: DEFAULT_MAX_CHUNK_BYTES,
            fetch_timeout: Duration::from_secs(30),
            writer: WriterConfig::default(),
            superseded_retention: DEFAULT_SUPERSEDED_RETENTION,
            embedder: None,
            drop_vectors: false,
            graph_min_vectors: crate::vectors::graph::DEFAULT_MIN_VECTORS,
            changed: None,
            unreadable: Vec::new(),
        }
    }
}

/// What happened to one input item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemOutcome {
    /// A new document.
    Added,
    /// A document whose content changed.
    Updated,
    /// A document whose content hash is unchanged (skipped).
    Unchanged,
    /// Skipped, with the reason.
    Failed(String),
    /// Not read: not source code worth indexing (binary, generated, a lock file, vendored);
    /// counted in [`IngestSummary::skipped`].
    NotSource(&'static str),
    /// A multi-document source (a BEIR corpus).
    Records {
        /// New documents.
        added: u64,
        /// Changed documents.
        updated: u64,
        /// Unchanged documents.
        unchanged: u64,
        /// Records skipped.
        failed: u64,
    },
}

/// A step of the commit protocol, reported in this order once the new generation is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitStep {
    /// The new lexical generation is committed in its temporary directory.
    LexicalCommitted,
    /// The new generation's vectors are written beside it (only with an embedder).
    VectorsWritten,
    /// The new lexical generation is published under its final name; readers still read the
    /// previous generation, since the store does not name the new one yet.
    LexicalPublished,
    /// The store's commit names the new generation: readers move to it.
    StoreCommitted,
}

/// Receives ingest progress. All methods default to doing nothing.
pub trait IngestProgress {
    /// The number of input items found (files, URLs, corpus files).
    fn start(&mut self, _items: usize) {}
    /// One input item is done.
    fn item(&mut self, _source: &str, _outcome: &ItemOutcome) {}
    /// The ingest moved to a new phase (`"removing"`, `"committing"`).
    fn phase(&mut self, _phase: &str) {}
    /// The commit reached `step`.
    fn commit_step(&mut self, _step: CommitStep) {}
    /// `done` of `total` chunks of the new generation have been embedded (reported once with
    /// `done == 0` before the first batch, then after every batch).
    fn embedding(&mut self, _done: u64, _total: u64) {}
}

/// Progress that reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl IngestProgress for NoProgress {}

/// A source that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IngestFailure {
    /// The source as given (relative path, URL, or `corpus.jsonl#id`).
    pub source: String,
    /// Why it was skipped.
    pub reason: String,
}

/// The outcome of one ingest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IngestSummary {
    /// The collection.
    pub collection: String,
    /// The committed generation after the ingest (unchanged when nothing changed).
    pub generation: u64,
    /// New documents.
    pub added: u64,
    /// Replaced documents.
    pub updated: u64,
    /// Documents skipped because their content hash is unchanged.
    pub unchanged: u64,
    /// Documents removed because their source is gone.
    pub removed: u64,
    /// Sources skipped, with reasons.
    pub failed: Vec<IngestFailure>,
    /// Documents in the collection afterwards.
    pub documents: u64,
    /// Chunks in the collection afterwards.
    pub chunks: u64,
    /// How the source-code files this ingest read were chunked.
    pub code: CodeChunking,
    /// Files not read because they are not source code worth indexing, by reason.
    pub skipped: SkippedFiles,
    /// Mail attachments not read as documents: of a format grk does not read, mail attached to
    /// mail, or past the caps on an attachment's size and on a mail file's attachments.
    #[serde(default)]
    pub attachments_skipped: u64,
    /// Chunks whose vector this ingest computed.
    pub embedded: u64,
    /// Chunks whose vector was reused from the previous generation (same embedding input, same
    /// embedder).
    pub reused_vectors: u64,
    /// Whether the new generation's vectors got an HNSW graph, and how.
    #[serde(default)]
    pub vector_graph: VectorGraph,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl IngestSummary {
    fn empty(collection: &str, generation: u64) -> Self {
        Self {
            collection: collection.to_owned(),
            generation,
            added: 0,
            updated: 0,
            unchanged: 0,
            removed: 0,
            failed: Vec::new(),
            code: CodeChunking::default(),
            skipped: SkippedFiles::default(),
            documents: 0,
            chunks: 0,
            attachments_skipped: 0,
            embedded: 0,
            reused_vectors: 0,
            vector_graph: VectorGraph::None,
            seconds: 0.0,
        }
    }
}

/// How the source-code files an ingest read (new or changed ones) were chunked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CodeChunking {
    /// Cut at their definitions by their language's grammar.
    pub definitions: u64,
    /// Chunked as text: their language has no grammar in this build.
    pub no_grammar: u64,
    /// Chunked as text: their grammar could not parse them.
    pub unparsable: u64,
}

/// Files an ingest did not read because they are not source code worth indexing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedFiles {
    /// Binary: NUL bytes, or more than a small share of bytes that are not UTF-8.
    pub binary: u64,
    /// Minified or generated: very long lines, a generated-file marker or name.
    pub generated: u64,
    /// Package managers' lock files.
    pub lock_file: u64,
    /// Inside vendored dependency or build-output folders.
    pub vendored: u64,
}

impl SkippedFiles {
    /// Whether nothing was skipped.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(feature = "code")]
impl SkippedFiles {
    /// Counts one skipped file; returns the reason's name.
    fn count(&mut self, reason: crate::code::skip::SkipReason) -> &'static str {
        use crate::code::skip::SkipReason;
        let (counter, name) = match reason {
            SkipReason::Binary => (&mut self.binary, "binary"),
            SkipReason::Generated => (&mut self.generated, "minified or generated"),
            SkipReason::LockFile => (&mut self.lock_file, "lock file"),
            SkipReason::Vendored => (&mut self.vendored, "vendored or build output"),
        };
        *counter += 1;
        name
    }
}

fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = hasher.finalize();
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

/// Ingests `options.inputs` into the collection, creating it when absent and some source yields a
/// document (an ingest in which every source fails creates nothing).
///
/// Returns `Err` only when the collection itself cannot be written (name, storage); every bad
/// input is a [`IngestFailure`] in the summary.
pub fn ingest(
    options: &IngestOptions,
    progress: &mut dyn IngestProgress,
) -> Result<IngestSummary, Error> {
    let started = Instant::now();
    let paths = CollectionPaths::new(&options.index_dir, &options.collection)?;
    let base = options
        .base_dir
        .canonicalize()
        .map_err(|err| Error::storage("cannot resolve the base directory", err))?;
    std::fs::create_dir_all(&options.index_dir)
        .map_err(|err| Error::storage("cannot create the index directory", err))?;
    let mut writer = Writer::start(&paths, options, &base)?;

    let (items, roots) = discover::discover(options, &base);
    // Roots whose documents stay as stored: a corpus that failed, or that did not change.
    let (items, mut kept_roots) = match &options.changed {
        Some(paths) => {
            let changed = changed::Changed::new(paths, &options.unreadable);
            let narrowed = changed::narrow(items, &changed, &mut writer)?;
            (narrowed.items, narrowed.kept_roots)
        }
        None => (items, Vec::new()),
    };
    progress.start(items.len());
    let known = writer.known_hashes(items.iter().filter_map(Item::file_name))?;
    let stager = Stager {
        base: &base,
        max_bytes: writer.max_chunk_bytes(),
        known: &known,
        workers: std::thread::available_parallelism().map_or(1, usize::from),
    };
    stager.run(items, |staged| -> Result<(), Error> {
        let (item, staged) = match staged {
            Staged::File { item, staged } => (item, *staged),
            Staged::Other(Item::Invalid { source, reason, .. }) => {
                progress.item(&source, &ItemOutcome::Failed(reason.clone()));
                writer.fail(source, reason);
                return Ok(());
            }
            #[cfg(feature = "code")]
            Staged::Other(Item::Skipped { rel, reason, .. }) => {
                let name = writer.summary.skipped.count(reason);
                progress.item(&rel, &ItemOutcome::NotSource(name));
                return Ok(());
            }
            Staged::Other(Item::Url(url)) => {
                let result = ingest_url(&mut writer, &paths, &url, options.fetch_timeout);
                let outcome = single_outcome(&mut writer, &url, result)?;
                progress.item(&url, &outcome);
                return Ok(());
            }
            Staged::Other(Item::Beir { path, rel }) => {
                let outcome = match sources::ingest_beir(&mut writer, &base, &path, &rel) {
                    Ok(outcome) => outcome,
                    Err(FileError::Fatal(err)) => return Err(err),
                    Err(skipped) => {
                        let reason = skipped.reason();
                        kept_roots.push(rel.clone());
                        writer.fail(rel.clone(), reason.clone());
                        ItemOutcome::Failed(reason)
                    }
                };
                progress.item(&rel, &outcome);
                return Ok(());
            }
            // A file the stager passed over is staged here.
            Staged::Other(file) => {
                let staged = stager.restage(&file);
                (file, staged)
            }
        };
        let rel = item.name().to_owned();
        let result = staged.and_then(|staged| {
            sources::write_staged(&mut writer, staged, || stager.restage(&item))
        });
        let outcome = single_outcome(&mut writer, &rel, result)?;
        progress.item(&rel, &outcome);
        Ok(())
    })?;

    progress.phase("removing");
    let in_scope = |row: &DocumentRow| {
        row.source_class != SourceClass::Snapshot
            && !kept_roots.contains(&row.source)
            && roots.iter().any(|root| {
                root.is_empty()
                    || row.source == *root
                    || row
                        .source
                        .strip_prefix(root.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
    };
    writer.remove_unseen(in_scope)?;

    let retention = options.superseded_retention.as_secs();
    let mut summary = writer.commit(retention, progress)?;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Counts a single-document source's result. A skipped source keeps whatever the collection
/// already has for it (it is marked seen, so it is not removed).
fn single_outcome(
    writer: &mut Writer<'_>,
    source: &str,
    result: Result<Change, FileError>,
) -> Result<ItemOutcome, Error> {
    match result {
        Ok(change) => {
            writer.count(&change);
            Ok(match change {
                Change::Added => ItemOutcome::Added,
                Change::Updated => ItemOutcome::Updated,
                Change::Unchanged => ItemOutcome::Unchanged,
            })
        }
        Err(FileError::Skip(reason)) => {
            writer.ledger.see(source)?;
            writer.fail(source, reason.clone());
            Ok(ItemOutcome::Failed(reason))
        }
        #[cfg(feature = "code")]
        Err(FileError::NotSource(reason)) => {
            Ok(ItemOutcome::NotSource(writer.summary.skipped.count(reason)))
        }
        Err(FileError::Fatal(err)) => Err(err),
    }
}

#[cfg(feature = "fetch-url")]
use sources::ingest_url;

#[cfg(not(feature = "fetch-url"))]
fn ingest_url(
    _writer: &mut Writer<'_>,
    _paths: &CollectionPaths,
    _url: &str,
    _timeout: Duration,
) -> Result<Change, FileError> {
    Err(FileError::Skip(
        "URL ingest is not available in this build".into(),
    ))
}
