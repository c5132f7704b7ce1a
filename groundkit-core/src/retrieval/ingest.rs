//! Ingest, the only write path: walk inputs, extract text, chunk it with exact offsets, and write
//! documents, chunks and the lexical index as one new generation (see the module root for the
//! commit protocol). Bad inputs are reported per source and skipped.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Error;
use crate::retrieval::chunk::{DEFAULT_MAX_CHUNK_BYTES, chunk_spans};
use crate::retrieval::citation::SourceClass;
use crate::retrieval::collection::CollectionPaths;
use crate::retrieval::extract::{self, BEIR_EXTRACTOR, BeirRecord, ExtractError, HTML_EXTRACTOR};
use crate::retrieval::lexical::{
    ChunkDoc, GenerationBuilder, WriterConfig, remove_other_generations,
};
use crate::retrieval::store::{self, DocumentRow, NewChunk, NewDocument};

/// Environment variable naming an ingest phase at which the process stops and waits to be
/// killed; the crash-consistency tests use it to kill an ingest at deterministic points.
pub const PAUSE_AT_ENV: &str = "GROUNDKIT_TEST_PAUSE_AT";

/// How input paths are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    /// Files and directories: `.txt`/`.md` as text, `.html`/`.htm`/`.pdf` extracted; `http://`
    /// URLs as snapshots.
    #[default]
    Files,
    /// BEIR `corpus.jsonl` files (or directories holding one): one document per record, the
    /// record's `_id` kept as the document id, title and text indexed.
    Beir,
}

/// What to ingest, and where.
#[derive(Debug, Clone)]
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

/// Receives ingest progress. All methods default to doing nothing.
pub trait IngestProgress {
    /// The number of input items found (files, URLs, corpus files).
    fn start(&mut self, _items: usize) {}
    /// One input item is done.
    fn item(&mut self, _source: &str, _outcome: &ItemOutcome) {}
    /// The ingest moved to a new phase (`"removing"`, `"committing"`).
    fn phase(&mut self, _phase: &str) {}
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
    /// Wall-clock seconds.
    pub seconds: f64,
}

fn pause_point(phase: &str) {
    if std::env::var(PAUSE_AT_ENV).is_ok_and(|p| p == phase) {
        eprintln!("groundkit: paused at {phase}");
        loop {
            std::thread::sleep(Duration::from_secs(60));
        }
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

/// What a walk found.
enum Item {
    File {
        path: PathBuf,
        rel: String,
        kind: FileKind,
    },
    Url(String),
    Beir {
        path: PathBuf,
        rel: String,
    },
    Invalid {
        source: String,
        reason: String,
    },
}

#[derive(Clone, Copy)]
enum FileKind {
    Text,
    Html,
    Pdf,
}

fn file_kind(path: &Path) -> Option<FileKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "txt" | "md" | "markdown" | "text" => Some(FileKind::Text),
        "html" | "htm" | "xhtml" => Some(FileKind::Html),
        "pdf" => Some(FileKind::Pdf),
        _ => None,
    }
}

fn relative_source(path: &Path, base: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Resolves the inputs to items, and the relative roots whose vanished documents are removed.
fn discover(options: &IngestOptions, base: &Path) -> (Vec<Item>, Vec<String>) {
    let mut items = Vec::new();
    let mut roots = Vec::new();
    for input in &options.inputs {
        if input.starts_with("http://") || input.starts_with("https://") {
            items.push(Item::Url(input.clone()));
            continue;
        }
        let Ok(path) = Path::new(input).canonicalize() else {
            items.push(Item::Invalid {
                source: input.clone(),
                reason: "does not exist".into(),
            });
            continue;
        };
        let Some(rel) = relative_source(&path, base) else {
            items.push(Item::Invalid {
                source: input.clone(),
                reason: "lies outside the base directory".into(),
            });
            continue;
        };
        roots.push(rel.clone());
        match options.format {
            InputFormat::Beir => {
                let corpus = if path.is_dir() {
                    path.join("corpus.jsonl")
                } else {
                    path
                };
                match relative_source(&corpus, base) {
                    Some(rel) if corpus.is_file() => items.push(Item::Beir { path: corpus, rel }),
                    _ => items.push(Item::Invalid {
                        source: input.clone(),
                        reason: "holds no corpus.jsonl".into(),
                    }),
                }
            }
            InputFormat::Files if path.is_dir() => {
                let walker = ignore::WalkBuilder::new(&path)
                    .require_git(false)
                    .sort_by_file_name(|a, b| a.cmp(b))
                    .build();
                for entry in walker {
                    let Ok(entry) = entry else { continue };
                    if !entry
                        .file_type()
                        .is_some_and(|t| t.is_file() || t.is_symlink())
                    {
                        continue;
                    }
                    let Some(kind) = file_kind(entry.path()) else {
                        continue;
                    };
                    let shown = relative_source(entry.path(), base)
                        .unwrap_or_else(|| entry.path().display().to_string());
                    match entry.path().canonicalize() {
                        Ok(real) if real.starts_with(base) && real.is_file() => {
                            items.push(Item::File {
                                path: real,
                                rel: shown,
                                kind,
                            });
                        }
                        _ => items.push(Item::Invalid {
                            source: shown,
                            reason: "resolves outside the base directory or is unreadable".into(),
                        }),
                    }
                }
            }
            InputFormat::Files => match file_kind(&path) {
                Some(kind) => items.push(Item::File { path, rel, kind }),
                None => items.push(Item::Invalid {
                    source: rel,
                    reason: "unsupported file type (expected .txt, .md, .html or .pdf)".into(),
                }),
            },
        }
    }
    (items, roots)
}

/// One document ready to write.
struct Prepared {
    document_id: String,
    source: String,
    class: SourceClass,
    extractor: Option<&'static str>,
    snapshot: Option<String>,
    hash: String,
    text: String,
}

/// The ingest in progress: the open write transaction and the lazily started new generation.
struct Writer<'a> {
    paths: &'a CollectionPaths,
    conn: &'a Connection,
    base_generation: u64,
    /// The lexical generation the new one starts from; `None` builds from scratch.
    base_index: Option<u64>,
    /// Documents written (added or replaced) by this run.
    written: HashSet<String>,
    builder: Option<GenerationBuilder>,
    config: WriterConfig,
    max_chunk_bytes: usize,
    existing: HashMap<String, DocumentRow>,
    seen: HashSet<String>,
    summary: IngestSummary,
    wrote_first: bool,
}

enum Change {
    Added,
    Updated,
    Unchanged,
}

impl Writer<'_> {
    fn builder(&mut self) -> Result<&GenerationBuilder, Error> {
        if self.builder.is_none() {
            self.builder = Some(GenerationBuilder::start(
                self.paths,
                self.base_index,
                self.base_generation + 1,
                self.config,
            )?);
        }
        self.builder
            .as_ref()
            .ok_or_else(|| Error::internal("generation builder missing"))
    }

    /// Whether `document_id` with `hash` is already stored; marks it seen either way.
    fn is_unchanged(&mut self, document_id: &str, hash: &str) -> bool {
        self.seen.insert(document_id.to_owned());
        self.existing
            .get(document_id)
            .is_some_and(|row| row.content_hash == hash)
    }

    fn write(&mut self, doc: Prepared) -> Result<Change, Error> {
        self.seen.insert(doc.document_id.clone());
        let replacing = match self.existing.get(&doc.document_id) {
            Some(row) if row.content_hash == doc.hash => return Ok(Change::Unchanged),
            Some(_) => true,
            None => false,
        };
        let spans = chunk_spans(&doc.text, self.max_chunk_bytes);
        let chunk_ids: Vec<String> = spans
            .iter()
            .enumerate()
            .map(|(i, (s, e))| {
                let id = sha256_hex(&[
                    doc.document_id.as_bytes(),
                    doc.hash.as_bytes(),
                    &(i as u64).to_le_bytes(),
                    &(*s as u64).to_le_bytes(),
                    &(*e as u64).to_le_bytes(),
                ]);
                id[..20].to_owned()
            })
            .collect();
        self.written.insert(doc.document_id.clone());
        let builder = self.builder()?;
        if replacing {
            builder.delete_document(&doc.document_id);
        }
        let fields = builder.fields;
        for ((start, end), chunk_id) in spans.iter().zip(&chunk_ids) {
            builder.add(fields.document(&ChunkDoc {
                chunk_id,
                document_id: &doc.document_id,
                content: &doc.text[*start..*end],
                source: &doc.source,
                source_class: doc.class.as_str(),
                extractor: doc.extractor.unwrap_or(""),
                start: *start as u64,
                end: *end as u64,
            }))?;
        }
        if replacing {
            store::delete_document(self.conn, &doc.document_id)?;
        }
        let chunks: Vec<NewChunk<'_>> = spans
            .iter()
            .zip(&chunk_ids)
            .enumerate()
            .map(|(i, ((start, end), id))| NewChunk {
                chunk_id: id,
                chunk_index: i,
                start_offset: *start,
                end_offset: *end,
                content: &doc.text[*start..*end],
            })
            .collect();
        store::insert_document(
            self.conn,
            &NewDocument {
                document_id: &doc.document_id,
                source: &doc.source,
                source_class: doc.class,
                extractor: doc.extractor,
                snapshot: doc.snapshot.as_deref(),
                content_hash: &doc.hash,
            },
            &chunks,
        )?;
        if !self.wrote_first {
            self.wrote_first = true;
            pause_point("indexing");
        }
        Ok(if replacing {
            Change::Updated
        } else {
            Change::Added
        })
    }

    fn fail(&mut self, source: impl Into<String>, reason: impl Into<String>) {
        self.summary.failed.push(IngestFailure {
            source: source.into(),
            reason: reason.into(),
        });
    }

    /// Counts a single-document source's result. A skipped source keeps whatever the collection
    /// already has for it (it is marked seen, so it is not removed).
    fn single_outcome(
        &mut self,
        source: &str,
        result: Result<Change, FileError>,
    ) -> Result<ItemOutcome, Error> {
        match result {
            Ok(change) => {
                self.count(&change);
                Ok(change_outcome(change))
            }
            Err(FileError::Skip(reason)) => {
                self.seen.insert(source.to_owned());
                self.fail(source, reason.clone());
                Ok(ItemOutcome::Failed(reason))
            }
            Err(FileError::Fatal(err)) => Err(err),
        }
    }

    fn count(&mut self, change: &Change) {
        match change {
            Change::Added => self.summary.added += 1,
            Change::Updated => self.summary.updated += 1,
            Change::Unchanged => self.summary.unchanged += 1,
        }
    }
}

fn change_outcome(change: Change) -> ItemOutcome {
    match change {
        Change::Added => ItemOutcome::Added,
        Change::Updated => ItemOutcome::Updated,
        Change::Unchanged => ItemOutcome::Unchanged,
    }
}

/// Ingests `options.inputs` into the collection, creating it when absent.
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
    let mut conn = store::open_for_write(&paths)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(store::sql_err("cannot start the ingest transaction"))?;
    let base_generation = store::generation(&tx)?;
    // We hold the write lock: anything but the committed generation is a crashed ingest's debris.
    remove_other_generations(
        &paths.tantivy,
        (base_generation > 0).then_some(base_generation),
    )?;
    let existing = store::all_documents(&tx)?;

    let (items, roots) = discover(options, &base);
    progress.start(items.len());
    // The committed generation's lexical index should always exist; if it was removed by hand,
    // this ingest rebuilds it from the store instead of failing.
    let rebuild = base_generation > 0 && !paths.generation_dir(base_generation).is_dir();
    let mut writer = Writer {
        paths: &paths,
        conn: &tx,
        base_generation,
        base_index: (base_generation > 0 && !rebuild).then_some(base_generation),
        written: HashSet::new(),
        builder: None,
        config: options.writer,
        max_chunk_bytes: options.max_chunk_bytes,
        existing,
        seen: HashSet::new(),
        summary: IngestSummary {
            collection: options.collection.clone(),
            generation: base_generation,
            added: 0,
            updated: 0,
            unchanged: 0,
            removed: 0,
            failed: Vec::new(),
            documents: 0,
            chunks: 0,
            seconds: 0.0,
        },
        wrote_first: false,
    };
    if rebuild {
        writer.builder()?;
    }
    let mut failed_roots: Vec<String> = Vec::new();
    for item in items {
        match item {
            Item::Invalid { source, reason } => {
                progress.item(&source, &ItemOutcome::Failed(reason.clone()));
                writer.fail(source, reason);
            }
            Item::File { path, rel, kind } => {
                let result = ingest_file(&mut writer, &path, &rel, kind);
                let outcome = writer.single_outcome(&rel, result)?;
                progress.item(&rel, &outcome);
            }
            Item::Url(url) => {
                let result = ingest_url(&mut writer, &paths, &url, options.fetch_timeout);
                let outcome = writer.single_outcome(&url, result)?;
                progress.item(&url, &outcome);
            }
            Item::Beir { path, rel } => {
                let outcome = match ingest_beir(&mut writer, &path, &rel) {
                    Ok(outcome) => outcome,
                    Err(FileError::Skip(reason)) => {
                        failed_roots.push(rel.clone());
                        writer.fail(rel.clone(), reason.clone());
                        ItemOutcome::Failed(reason)
                    }
                    Err(FileError::Fatal(err)) => return Err(err),
                };
                progress.item(&rel, &outcome);
            }
        }
    }

    progress.phase("removing");
    let in_scope = |row: &DocumentRow| {
        row.source_class != SourceClass::Snapshot
            && !failed_roots.contains(&row.source)
            && roots.iter().any(|root| {
                root.is_empty()
                    || row.source == *root
                    || row
                        .source
                        .strip_prefix(root.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
    };
    let vanished: Vec<String> = writer
        .existing
        .iter()
        .filter(|(id, row)| !writer.seen.contains(*id) && in_scope(row))
        .map(|(id, _)| id.clone())
        .collect();
    for id in &vanished {
        writer.builder()?.delete_document(id);
        store::delete_document(&tx, id)?;
        writer.summary.removed += 1;
    }
    if rebuild {
        let kept: Vec<(String, DocumentRow)> = writer
            .existing
            .iter()
            .filter(|(id, _)| !writer.written.contains(*id) && !vanished.contains(*id))
            .map(|(id, row)| (id.clone(), row.clone()))
            .collect();
        for (id, row) in kept {
            reindex_stored(&writer, &tx, &id, &row)?;
        }
    }

    let mut summary = writer.summary;
    if let Some(builder) = writer.builder.take() {
        progress.phase("committing");
        let generation = base_generation + 1;
        builder.finish(|| pause_point("tantivy-committed"))?;
        pause_point("published");
        store::set_generation(&tx, generation)?;
        tx.commit()
            .map_err(store::sql_err("cannot commit the ingest"))?;
        pause_point("committed");
        summary.generation = generation;
        remove_other_generations(&paths.tantivy, Some(generation))?;
    } else {
        tx.finish()
            .map_err(store::sql_err("cannot finish the ingest"))?;
    }
    remove_unreferenced_snapshots(&conn, &paths)?;
    let status = store::status(&mut conn)?;
    summary.documents = status.document_count;
    summary.chunks = status.chunk_count;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Adds a document's stored chunks to the new generation (rebuilding a lost lexical index).
fn reindex_stored(
    writer: &Writer<'_>,
    conn: &Connection,
    document_id: &str,
    row: &DocumentRow,
) -> Result<(), Error> {
    let builder = writer
        .builder
        .as_ref()
        .ok_or_else(|| Error::internal("no generation builder"))?;
    let fields = builder.fields;
    for (chunk_id, start, end, content) in store::chunks_of(conn, document_id)? {
        builder.add(fields.document(&ChunkDoc {
            chunk_id: &chunk_id,
            document_id,
            content: &content,
            source: &row.source,
            source_class: row.source_class.as_str(),
            extractor: row.extractor.as_deref().unwrap_or(""),
            start,
            end,
        }))?;
    }
    Ok(())
}

enum FileError {
    /// Skip this source and report why.
    Skip(String),
    /// The collection cannot be written; stop (the transaction rolls back).
    Fatal(Error),
}

impl From<Error> for FileError {
    fn from(err: Error) -> Self {
        FileError::Fatal(err)
    }
}

impl From<ExtractError> for FileError {
    fn from(err: ExtractError) -> Self {
        FileError::Skip(err.to_string())
    }
}

fn ingest_file(
    writer: &mut Writer<'_>,
    path: &Path,
    rel: &str,
    kind: FileKind,
) -> Result<Change, FileError> {
    let bytes = std::fs::read(path).map_err(|err| FileError::Skip(read_reason(&err)))?;
    let (class, extractor) = match kind {
        FileKind::Text => (SourceClass::Text, None),
        FileKind::Html => (SourceClass::Extracted, Some(HTML_EXTRACTOR)),
        #[cfg(feature = "extract-pdf")]
        FileKind::Pdf => (SourceClass::Extracted, Some(extract::PDF_EXTRACTOR)),
        #[cfg(not(feature = "extract-pdf"))]
        FileKind::Pdf => return Err(ExtractError::Unsupported("PDF").into()),
    };
    let hash = sha256_hex(&[extractor.unwrap_or("").as_bytes(), &bytes]);
    if writer.is_unchanged(rel, &hash) {
        return Ok(Change::Unchanged);
    }
    let text = match kind {
        FileKind::Text => String::from_utf8(bytes).map_err(|_| ExtractError::InvalidUtf8)?,
        FileKind::Html => extract::html_to_text(&bytes)?,
        #[cfg(feature = "extract-pdf")]
        FileKind::Pdf => extract::pdf_to_text(&bytes)?,
        #[cfg(not(feature = "extract-pdf"))]
        FileKind::Pdf => return Err(ExtractError::Unsupported("PDF").into()),
    };
    if text.trim().is_empty() {
        return Err(FileError::Skip("contains no text".into()));
    }
    Ok(writer.write(Prepared {
        document_id: rel.to_owned(),
        source: rel.to_owned(),
        class,
        extractor,
        snapshot: None,
        hash,
        text,
    })?)
}

fn read_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "does not exist".into(),
        std::io::ErrorKind::PermissionDenied => "cannot be read: permission denied".into(),
        _ => "cannot be read".into(),
    }
}

#[cfg(feature = "fetch-url")]
fn ingest_url(
    writer: &mut Writer<'_>,
    paths: &CollectionPaths,
    url: &str,
    timeout: Duration,
) -> Result<Change, FileError> {
    let fetched = crate::retrieval::snapshot_fetch::fetch(url, timeout).map_err(FileError::Skip)?;
    if fetched.text.trim().is_empty() {
        return Err(FileError::Skip("contains no text".into()));
    }
    let hash = sha256_hex(&[
        fetched.extractor.unwrap_or("").as_bytes(),
        fetched.text.as_bytes(),
    ]);
    if writer.is_unchanged(url, &hash) {
        return Ok(Change::Unchanged);
    }
    let name = format!("{}.txt", &hash[..32]);
    write_snapshot(paths, &name, fetched.text.as_bytes())?;
    Ok(writer.write(Prepared {
        document_id: url.to_owned(),
        source: url.to_owned(),
        class: SourceClass::Snapshot,
        extractor: fetched.extractor,
        snapshot: Some(name),
        hash,
        text: fetched.text,
    })?)
}

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

/// Writes a content-addressed snapshot atomically (temporary file, then rename).
#[cfg_attr(not(feature = "fetch-url"), allow(dead_code))]
fn write_snapshot(paths: &CollectionPaths, name: &str, bytes: &[u8]) -> Result<(), Error> {
    let io = |err| Error::storage("cannot write a snapshot", err);
    std::fs::create_dir_all(&paths.snapshots).map_err(io)?;
    let target = paths.snapshots.join(name);
    if target.is_file() {
        return Ok(());
    }
    let tmp = paths.snapshots.join(format!("{name}.tmp"));
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(&tmp, &target).map_err(io)?;
    Ok(())
}

fn remove_unreferenced_snapshots(conn: &Connection, paths: &CollectionPaths) -> Result<(), Error> {
    let Ok(entries) = std::fs::read_dir(&paths.snapshots) else {
        return Ok(());
    };
    let referenced = store::referenced_snapshots(conn)?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let keep = name.to_str().is_some_and(|n| referenced.contains(n));
        if !keep {
            std::fs::remove_file(entry.path())
                .map_err(|err| Error::storage("cannot remove a stale snapshot", err))?;
        }
    }
    Ok(())
}

fn ingest_beir(writer: &mut Writer<'_>, path: &Path, rel: &str) -> Result<ItemOutcome, FileError> {
    let file = std::fs::File::open(path).map_err(|err| FileError::Skip(read_reason(&err)))?;
    let reader = std::io::BufReader::with_capacity(1 << 20, file);
    let (mut added, mut updated, mut unchanged, mut failed) = (0, 0, 0, 0);
    let mut ids_this_file = HashSet::new();
    for (number, line) in reader.split(b'\n').enumerate() {
        let line = line.map_err(|err| FileError::Skip(read_reason(&err)))?;
        let source_line = format!("{rel}:{}", number + 1);
        let Ok(line) = std::str::from_utf8(&line) else {
            writer.fail(source_line, "not valid UTF-8 text");
            failed += 1;
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        let record: BeirRecord = match serde_json::from_str(line) {
            Ok(record) => record,
            Err(err) => {
                writer.fail(source_line, format!("not a BEIR corpus record: {err}"));
                failed += 1;
                continue;
            }
        };
        if !ids_this_file.insert(record.id.clone()) {
            writer.fail(
                source_line,
                format!("duplicate document id '{}'", record.id),
            );
            failed += 1;
            continue;
        }
        let text = record.document_text();
        if text.trim().is_empty() {
            writer.fail(source_line, "contains no text");
            failed += 1;
            continue;
        }
        let hash = sha256_hex(&[BEIR_EXTRACTOR.as_bytes(), text.as_bytes()]);
        if writer.is_unchanged(&record.id, &hash) {
            unchanged += 1;
            writer.summary.unchanged += 1;
            continue;
        }
        let change = writer.write(Prepared {
            document_id: record.id,
            source: rel.to_owned(),
            class: SourceClass::Extracted,
            extractor: Some(BEIR_EXTRACTOR),
            snapshot: None,
            hash,
            text,
        })?;
        writer.count(&change);
        match change {
            Change::Added => added += 1,
            Change::Updated => updated += 1,
            Change::Unchanged => unchanged += 1,
        }
    }
    Ok(ItemOutcome::Records {
        added,
        updated,
        unchanged,
        failed,
    })
}
