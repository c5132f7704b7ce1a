//! The writer: one SQLite write transaction and the new lexical generation, filled document by
//! document, then committed by the protocol in the module root of `retrieval`.
//!
//! A collection that does not exist yet is created only when the first document is written, so
//! an ingest in which every source fails leaves nothing behind. The commit protocol itself is
//! [`commit`].

mod commit;
mod lines;

use rusqlite::Connection;

use crate::chunk::{LineIndex, Span, is_code, text_chunks};
use crate::collection::CollectionPaths;
use crate::embed::Embedder;
use crate::filter::format_of;
use crate::ingest::front_matter::{Metadata, meta_terms, metadata_json};
use crate::ingest::ledger::Ledger;
use crate::ingest::{IngestFailure, IngestOptions, IngestSummary};
use crate::lexical::{
    ChunkDoc, GenerationBuilder, WriterConfig, has_current_schema, remove_other_generations,
};
use crate::model::SourceClass;
use crate::store;
use crate::store::write::{self, DocumentRow, NewChunk, NewDocument};
use crate::vectors::Vectors;
use crate::vectors::write::PreviousGraph;
use groundkit_core::Error;

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
    /// The document's chunks, already cut (with their scopes) by the code chunker or along the
    /// units of an extracted document; `None` cuts `text` with the text chunker.
    pub(super) chunks: Option<Vec<Span>>,
    /// When the source file was last modified, as opened (seconds since the Unix epoch).
    pub(super) modified: Option<u64>,
    /// The document's metadata (a Markdown file's front matter).
    pub(super) metadata: Metadata,
}

pub(super) enum Change {
    Added,
    Updated,
    Unchanged,
}

/// Opens a store for writing (saying whether it upgraded its schema) and starts its write
/// transaction (`BEGIN IMMEDIATE`), then removes what a killed ingest left while creating the
/// collection. Dropping the connection without [`Writer::commit`] rolls the transaction back.
fn begin(paths: &CollectionPaths) -> Result<(Connection, bool), Error> {
    let (conn, upgraded) = write::open_for_write(paths)?;
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(store::sql_err("cannot start the ingest transaction"))?;
    store::create::remove_creation_leftovers(paths)?;
    Ok((conn, upgraded))
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
    builder: Option<GenerationBuilder>,
    config: WriterConfig,
    max_chunk_bytes: usize,
    /// Embeds the new generation's chunks; `None` writes no vectors.
    embedder: Option<&'a dyn Embedder>,
    /// The committed generation's vectors, for reuse.
    previous_vectors: Option<Vectors>,
    /// What the committed generation's graph holds, to carry it.
    previous_graph: Option<PreviousGraph>,
    /// The fewest vectors for which the new generation gets a graph.
    graph_min_vectors: usize,
    /// What this run has seen and written (on disk: it grows with the corpus).
    pub(super) ledger: Ledger,
    pub(super) summary: IngestSummary,
    now_unix: i64,
}

impl<'a> Writer<'a> {
    /// Starts an ingest of the collection at `paths`: opens an existing store in a write
    /// transaction (removing a crashed ingest's debris), or prepares to create it on first write.
    pub(super) fn start(
        paths: &'a CollectionPaths,
        options: &'a IngestOptions,
        base: &std::path::Path,
    ) -> Result<Self, Error> {
        let (conn, upgraded) = if paths.sqlite.exists() {
            let (conn, upgraded) = begin(paths)?;
            (Some(conn), upgraded)
        } else {
            (None, false)
        };
        let base_generation = match &conn {
            Some(conn) => store::generation(conn)?,
            None => 0,
        };
        // We hold the write lock: anything but the committed generation is a crashed ingest's
        // debris.
        remove_other_generations(
            &paths.tantivy,
            (base_generation > 0).then_some(base_generation),
        )?;
        // The committed generation's lexical index should always exist; if it was removed by
        // hand, or was written with an older schema, this ingest rebuilds it from the store.
        let base_dir = paths.generation_dir(base_generation);
        // It rebuilds as well the generation of a store it upgraded (or that an ingest killed
        // before its commit upgraded: that generation has no lines), once the lines of the
        // store's chunks are recorded, so the new generation carries them.
        let rebuild = base_generation > 0 && (upgraded || !has_current_schema(&base_dir));
        if let (true, Some(conn)) = (rebuild, &conn) {
            let filled = lines::fill_missing_lines(conn, base)?;
            tracing::info!(collection = %paths.name, documents = filled, "recorded chunk lines");
        }
        // Vectors are reused by their input, so an index rebuilt for its schema keeps them.
        let (previous_vectors, previous_graph) = if base_generation > 0 && base_dir.is_dir() {
            (read_vectors(&base_dir)?, PreviousGraph::read(&base_dir)?)
        } else {
            (None, None)
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
            builder: None,
            config: options.writer,
            max_chunk_bytes: options.max_chunk_bytes,
            embedder,
            previous_vectors,
            previous_graph,
            graph_min_vectors: options.graph_min_vectors,
            ledger: Ledger::new()?,
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
            let (conn, _) = begin(self.paths)?;
            if store::generation(&conn)? != 0 || write::has_documents(&conn)? {
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

    fn builder(&mut self) -> Result<&mut GenerationBuilder, Error> {
        if self.builder.is_none() {
            self.builder = Some(GenerationBuilder::start(
                self.paths,
                self.base_index,
                self.base_generation + 1,
                self.config,
            )?);
        }
        self.builder
            .as_mut()
            .ok_or_else(|| Error::internal("generation builder missing"))
    }

    /// Writes document `document_id` unless the store already holds its content `hash`. The
    /// document is prepared (extracted, fetched, decoded) only when it changed.
    pub(super) fn write_if_changed<E: From<Error>>(
        &mut self,
        document_id: &str,
        hash: String,
        prepare: impl FnOnce(String) -> Result<Prepared, E>,
    ) -> Result<Change, E> {
        self.ledger.see(document_id)?;
        let stored = self.stored(document_id)?;
        match stored {
            Some(row) if row.content_hash == hash => {
                // Written before stores kept metadata: written again to record it (its chunks
                // keep their ids, and their superseded copies are swept at the commit), but
                // its content is unchanged.
                if row.metadata.is_none() {
                    self.write(prepare(hash)?, true)?;
                }
                Ok(Change::Unchanged)
            }
            stored => Ok(self.write(prepare(hash)?, stored.is_some())?),
        }
    }

    /// The content hash the store holds for each of `document_ids` that it holds (nothing
    /// while a new collection has no store yet): one lookup each, so the map is no larger than
    /// the inputs, whatever the size of the collection.
    pub(super) fn known_hashes<'i>(
        &self,
        document_ids: impl IntoIterator<Item = &'i str>,
    ) -> Result<super::sources::Known, Error> {
        let mut known = super::sources::Known::new();
        for id in document_ids {
            // A document written before stores kept metadata is read again, as if changed.
            if let Some(row) = self.stored(id)?.filter(|row| row.metadata.is_some()) {
                known.insert(id.to_owned(), row.content_hash);
            }
        }
        Ok(known)
    }

    /// Whether the store holds `document_id` as this build writes it (a document written before
    /// stores kept metadata is read again, as if changed).
    pub(super) fn holds(&self, document_id: &str) -> Result<bool, Error> {
        Ok(self
            .stored(document_id)?
            .is_some_and(|row| row.metadata.is_some()))
    }

    /// The store's row of `document_id` (none while a new collection has no store yet).
    fn stored(&self, document_id: &str) -> Result<Option<DocumentRow>, Error> {
        match &self.conn {
            Some(conn) => write::document(conn, document_id),
            None => Ok(None),
        }
    }

    /// Chunks and writes a document the store does not hold with this content.
    fn write(&mut self, doc: Prepared, replacing: bool) -> Result<Change, Error> {
        let code = is_code(doc.extractor);
        let spans = doc
            .chunks
            .unwrap_or_else(|| text_chunks(&doc.text, self.max_chunk_bytes));
        let chunk_ids: Vec<String> = spans
            .iter()
            .map(|c| chunk_id(&doc.document_id, c.start, c.end, &doc.text[c.start..c.end]))
            .collect();
        self.ledger.wrote(&doc.document_id)?;
        let builder = self.builder()?;
        if replacing {
            builder.delete_document(&doc.document_id);
        }
        let fields = builder.fields;
        let format = format_of(&doc.source, doc.extractor);
        let meta = meta_terms(&doc.metadata);
        let line_index =
            (doc.class == SourceClass::Text).then(|| LineIndex::new(doc.text.as_bytes()));
        let lines: Vec<Option<(u32, u32)>> = spans
            .iter()
            .map(|c| line_index.as_ref().map(|index| index.lines(c.start, c.end)))
            .collect();
        for ((chunk, chunk_id), lines) in spans.iter().zip(&chunk_ids).zip(&lines) {
            builder.add(fields.document(&ChunkDoc {
                chunk_id,
                document_id: &doc.document_id,
                content: &doc.text[chunk.start..chunk.end],
                source: &doc.source,
                source_class: doc.class.as_str(),
                extractor: doc.extractor.unwrap_or(""),
                start: chunk.start as u64,
                end: chunk.end as u64,
                code,
                scope: &chunk.scope,
                lines: *lines,
                format: &format,
                modified: doc.modified,
                meta: &meta,
            }))?;
        }
        if replacing {
            self.supersede(&doc.document_id)?;
        }
        let chunks: Vec<NewChunk<'_>> = spans
            .iter()
            .zip(&chunk_ids)
            .zip(&lines)
            .enumerate()
            .map(|(i, ((chunk, id), lines))| NewChunk {
                chunk_id: id,
                chunk_index: i,
                start_offset: chunk.start,
                end_offset: chunk.end,
                content: &doc.text[chunk.start..chunk.end],
                scope: &chunk.scope,
                lines: *lines,
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
                modified: doc.modified,
                metadata: &metadata_json(&doc.metadata),
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

    /// Removes every stored document this run did not see and `in_scope` holds for (the corpus
    /// no longer has it), from the new generation and the store.
    pub(super) fn remove_unseen(
        &mut self,
        in_scope: impl Fn(&DocumentRow) -> bool,
    ) -> Result<(), Error> {
        self.each_stored(|writer, id, row| {
            if in_scope(&row) && writer.ledger.get(&id)?.is_none() {
                writer.builder()?.delete_document(&id);
                writer.supersede(&id)?;
                writer.summary.removed += 1;
            }
            Ok(())
        })
    }

    /// Marks every stored document whose id starts with `prefix` as seen, so it is kept.
    #[cfg(feature = "office")]
    pub(super) fn keep_stored_under(&mut self, prefix: &str) -> Result<(), Error> {
        const PAGE: usize = 256;
        let mut after = prefix.to_owned();
        loop {
            let page = match &self.conn {
                Some(conn) => write::documents_after(conn, Some(&after), PAGE)?,
                None => return Ok(()),
            };
            let full = page.len() == PAGE;
            for (id, _) in page {
                if !id.starts_with(prefix) {
                    return Ok(());
                }
                self.ledger.see(&id)?;
                after = id;
            }
            if !full {
                return Ok(());
            }
        }
    }

    /// Calls `f` on every stored document in id order, reading the store a page at a time (so
    /// `f` may change it, and memory does not grow with the collection).
    fn each_stored(
        &mut self,
        mut f: impl FnMut(&mut Self, String, DocumentRow) -> Result<(), Error>,
    ) -> Result<(), Error> {
        const PAGE: usize = 1024;
        let mut after: Option<String> = None;
        loop {
            let page = match &self.conn {
                Some(conn) => write::documents_after(conn, after.as_deref(), PAGE)?,
                None => return Ok(()),
            };
            let last_page = page.len() < PAGE;
            for (id, row) in page {
                after = Some(id.clone());
                f(self, id, row)?;
            }
            if last_page {
                return Ok(());
            }
        }
    }

    /// The largest chunk, in bytes.
    pub(super) fn max_chunk_bytes(&self) -> usize {
        self.max_chunk_bytes
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
    match std::fs::read(dir.join(crate::collection::VECTORS_FILE)) {
        Ok(bytes) => Ok(Vectors::parse(&bytes).ok()),
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
