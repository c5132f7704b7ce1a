//! The writer: one SQLite write transaction and the new lexical generation, filled document by
//! document, then committed by the protocol in the module root of `retrieval`.
//!
//! A collection that does not exist yet is created only when the first document is written, so
//! an ingest in which every source fails leaves nothing behind. The commit protocol itself is
//! [`commit`].

mod commit;

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use crate::Error;
use crate::retrieval::chunk::chunk_spans;
use crate::retrieval::collection::CollectionPaths;
use crate::retrieval::embed::Embedder;
use crate::retrieval::ingest::{IngestFailure, IngestOptions, IngestSummary};
use crate::retrieval::lexical::{
    ChunkDoc, GenerationBuilder, WriterConfig, remove_other_generations,
};
use crate::retrieval::model::SourceClass;
use crate::retrieval::store;
use crate::retrieval::store::write::{self, DocumentRow, NewChunk, NewDocument};
use crate::retrieval::vectors::{self, Vectors};

/// One document ready to write.
pub(super) struct Prepared {
    pub(super) document_id: String,
    pub(super) source: String,
    pub(super) class: SourceClass,
    pub(super) extractor: Option<&'static str>,
    pub(super) snapshot: Option<String>,
    pub(super) record_offset: Option<u64>,
    pub(super) hash: String,
    pub(super) text: String,
}

pub(super) enum Change {
    Added,
    Updated,
    Unchanged,
}

/// Opens a store for writing and starts its write transaction (`BEGIN IMMEDIATE`). Dropping the
/// connection without [`Writer::commit`] rolls the transaction back.
fn begin(paths: &CollectionPaths) -> Result<Connection, Error> {
    let conn = write::open_for_write(paths)?;
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(store::sql_err("cannot start the ingest transaction"))?;
    Ok(conn)
}

/// The ingest in progress.
pub(super) struct Writer<'a> {
    paths: &'a CollectionPaths,
    /// The store inside its write transaction; `None` until a new collection's first write.
    conn: Option<Connection>,
    base_generation: u64,
    /// The lexical generation the new one starts from; `None` builds from scratch.
    base_index: Option<u64>,
    /// The lexical index of the committed generation is missing and is rebuilt from the store.
    rebuild: bool,
    /// Documents written (added or replaced) by this run.
    written: HashSet<String>,
    /// Documents removed by this run.
    removed: HashSet<String>,
    builder: Option<GenerationBuilder>,
    config: WriterConfig,
    max_chunk_bytes: usize,
    /// Embeds the new generation's chunks; `None` writes no vectors.
    embedder: Option<&'a dyn Embedder>,
    /// The committed generation's vectors, for reuse.
    previous_vectors: Option<Vectors>,
    /// The fewest vectors for which the new generation gets a graph.
    graph_min_vectors: usize,
    pub(super) existing: HashMap<String, DocumentRow>,
    pub(super) seen: HashSet<String>,
    pub(super) summary: IngestSummary,
    now_unix: i64,
}

impl<'a> Writer<'a> {
    /// Starts an ingest of the collection at `paths`: opens an existing store in a write
    /// transaction (removing a crashed ingest's debris), or prepares to create it on first write.
    pub(super) fn start(
        paths: &'a CollectionPaths,
        options: &'a IngestOptions,
    ) -> Result<Self, Error> {
        let conn = if paths.sqlite.exists() {
            Some(begin(paths)?)
        } else {
            None
        };
        let (base_generation, existing) = match &conn {
            Some(conn) => (store::generation(conn)?, write::all_documents(conn)?),
            None => (0, HashMap::new()),
        };
        // We hold the write lock: anything but the committed generation is a crashed ingest's
        // debris.
        remove_other_generations(
            &paths.tantivy,
            (base_generation > 0).then_some(base_generation),
        )?;
        // The committed generation's lexical index should always exist; if it was removed by
        // hand, this ingest rebuilds it from the store instead of failing.
        let rebuild = base_generation > 0 && !paths.generation_dir(base_generation).is_dir();
        let previous_vectors = if base_generation > 0 && !rebuild {
            read_vectors(&paths.generation_dir(base_generation))?
        } else {
            None
        };
        let embedder = options.embedder.as_deref();
        if let (Some(previous), None, false) = (&previous_vectors, embedder, options.drop_vectors) {
            return Err(Error::Validation {
                field: "embedder".to_owned(),
                message: format!(
                    "collection '{}' has vectors from {}; ingest it with that embedder, or \
                     drop its vectors explicitly",
                    paths.name,
                    previous.identity().model
                ),
            });
        }
        // A change of embedder (or its first use, or dropping vectors) makes a new generation
        // even when no document changed.
        let vectors_change = match (&previous_vectors, embedder) {
            (Some(previous), Some(embedder)) => {
                previous.identity().fingerprint != embedder.identity().fingerprint
            }
            (None, Some(_)) => base_generation > 0,
            (Some(_), None) => true,
            (None, None) => false,
        };
        let now_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let mut writer = Self {
            paths,
            conn,
            base_generation,
            base_index: (base_generation > 0 && !rebuild).then_some(base_generation),
            rebuild,
            written: HashSet::new(),
            removed: HashSet::new(),
            builder: None,
            config: options.writer,
            max_chunk_bytes: options.max_chunk_bytes,
            embedder,
            previous_vectors,
            graph_min_vectors: options.graph_min_vectors,
            existing,
            seen: HashSet::new(),
            summary: IngestSummary::empty(&paths.name, base_generation),
            now_unix,
        };
        if rebuild || vectors_change {
            writer.builder()?;
            writer.conn()?;
        }
        Ok(writer)
    }

    /// The store, created (with a new collection) on first use.
    fn conn(&mut self) -> Result<&Connection, Error> {
        if self.conn.is_none() {
            let conn = begin(self.paths)?;
            if store::generation(&conn)? != 0 || !write::all_documents(&conn)?.is_empty() {
                return Err(Error::Validation {
                    field: "collection".to_owned(),
                    message: "another ingest created this collection meanwhile; run this one again"
                        .to_owned(),
                });
            }
            self.conn = Some(conn);
        }
        self.conn
            .as_ref()
            .ok_or_else(|| Error::internal("ingest store missing"))
    }

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
    /// Writes document `document_id` unless the store already holds its content `hash`. The
    /// document is prepared (extracted, fetched, decoded) only when it changed.
    pub(super) fn write_if_changed<E: From<Error>>(
        &mut self,
        document_id: &str,
        hash: String,
        prepare: impl FnOnce(String) -> Result<Prepared, E>,
    ) -> Result<Change, E> {
        self.seen.insert(document_id.to_owned());
        let unchanged = self
            .existing
            .get(document_id)
            .is_some_and(|row| row.content_hash == hash);
        if unchanged {
            return Ok(Change::Unchanged);
        }
        Ok(self.write(prepare(hash)?)?)
    }

    /// Chunks and writes a document the store does not hold with this content.
    fn write(&mut self, doc: Prepared) -> Result<Change, Error> {
        let replacing = self.existing.contains_key(&doc.document_id);
        let spans = chunk_spans(&doc.text, self.max_chunk_bytes);
        let chunk_ids: Vec<String> = spans
            .iter()
            .map(|&(start, end)| chunk_id(&doc.document_id, start, end, &doc.text[start..end]))
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
            self.supersede(&doc.document_id)?;
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
        write::insert_document(
            self.conn()?,
            &NewDocument {
                document_id: &doc.document_id,
                source: &doc.source,
                source_class: doc.class,
                extractor: doc.extractor,
                snapshot: doc.snapshot.as_deref(),
                content_hash: &doc.hash,
                record_offset: doc.record_offset,
            },
            &chunks,
        )?;
        Ok(if replacing {
            Change::Updated
        } else {
            Change::Added
        })
    }

    /// Keeps a document's current chunks fetchable as superseded, then deletes it from the store.
    fn supersede(&mut self, document_id: &str) -> Result<(), Error> {
        let (generation, now) = (self.base_generation + 1, self.now_unix);
        write::supersede_document(self.conn()?, document_id, generation, now)
    }

    /// Removes documents that vanished from the corpus, from the new generation and the store.
    pub(super) fn remove(&mut self, document_ids: &[String]) -> Result<(), Error> {
        for id in document_ids {
            self.builder()?.delete_document(id);
            self.supersede(id)?;
            self.removed.insert(id.clone());
            self.summary.removed += 1;
        }
        Ok(())
    }

    pub(super) fn fail(&mut self, source: impl Into<String>, reason: impl Into<String>) {
        self.summary.failed.push(IngestFailure {
            source: source.into(),
            reason: reason.into(),
        });
    }

    pub(super) fn count(&mut self, change: &Change) {
        match change {
            Change::Added => self.summary.added += 1,
            Change::Updated => self.summary.updated += 1,
            Change::Unchanged => self.summary.unchanged += 1,
        }
    }
}

/// The vectors of a published generation, for reuse; a file that cannot be read or parsed is
/// not reused (every chunk is embedded again).
fn read_vectors(dir: &std::path::Path) -> Result<Option<Vectors>, Error> {
    match std::fs::read(dir.join(vectors::FILE_NAME)) {
        Ok(bytes) => Ok(Vectors::parse(&bytes).ok().map(|(_, v)| v)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(Error::storage("cannot read the generation's vectors", err)),
    }
}

/// A chunk's id: a digest of its document, its offsets and its bytes. It stays the same across
/// ingests while those are unchanged (an edit elsewhere in the document does not retire it).
fn chunk_id(document_id: &str, start: usize, end: usize, content: &str) -> String {
    let mut id = super::sha256_hex(&[
        document_id.as_bytes(),
        &(start as u64).to_le_bytes(),
        &(end as u64).to_le_bytes(),
        content.as_bytes(),
    ]);
    id.truncate(20);
    id
}
