//! The per-generation tantivy BM25 index: its schema, opening generation `G` for reading, and
//! building generation `G+1` beside it (see the generation invariant in the module root).

use std::fs;
use std::path::{Path, PathBuf};

use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions,
};
use tantivy::store::Compressor;
use tantivy::{
    Index, IndexReader, IndexSettings, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term,
};

use crate::Error;
use crate::retrieval::analysis::{ANALYZER_NAME, english_analyzer};
use crate::retrieval::collection::CollectionPaths;
use crate::retrieval::published::PublishedDirectory;

fn tantivy_err(context: &'static str) -> impl Fn(tantivy::TantivyError) -> Error {
    move |err| Error::storage(context, err)
}

fn io_err(context: &'static str) -> impl Fn(std::io::Error) -> Error {
    move |err| Error::storage(context, err)
}

/// The fields of a chunk document. Content and every citation field are stored, so a search
/// answers from the one generation it opened without consulting SQLite.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// Chunk id (stored only: nothing looks a chunk up in the lexical index).
    pub chunk_id: Field,
    /// Document id (indexed as one token for deletes, stored).
    pub document_id: Field,
    /// Chunk text (analysed, term frequencies, stored).
    pub content: Field,
    /// Citation source (stored).
    pub source: Field,
    /// Citation source class (stored).
    pub source_class: Field,
    /// Citation extractor, empty when none (stored).
    pub extractor: Field,
    /// Citation start offset (stored).
    pub start: Field,
    /// Citation end offset (stored).
    pub end: Field,
}

/// The values of one chunk document.
#[derive(Debug, Clone, Copy)]
pub struct ChunkDoc<'a> {
    /// Chunk id.
    pub chunk_id: &'a str,
    /// Document id.
    pub document_id: &'a str,
    /// Chunk text.
    pub content: &'a str,
    /// Citation source.
    pub source: &'a str,
    /// Citation source class.
    pub source_class: &'a str,
    /// Extractor, empty when none.
    pub extractor: &'a str,
    /// Start offset.
    pub start: u64,
    /// End offset.
    pub end: u64,
}

impl Fields {
    /// The tantivy document of one chunk.
    pub fn document(&self, chunk: &ChunkDoc<'_>) -> TantivyDocument {
        let mut doc = TantivyDocument::default();
        doc.add_text(self.chunk_id, chunk.chunk_id);
        doc.add_text(self.document_id, chunk.document_id);
        doc.add_text(self.content, chunk.content);
        doc.add_text(self.source, chunk.source);
        doc.add_text(self.source_class, chunk.source_class);
        doc.add_text(self.extractor, chunk.extractor);
        doc.add_u64(self.start, chunk.start);
        doc.add_u64(self.end, chunk.end);
        doc
    }
}

/// Text options of the searchable content field: the English analyser, frequencies without
/// positions (queries are term disjunctions, never phrases), stored.
pub fn content_options() -> TextOptions {
    TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER_NAME)
                .set_index_option(IndexRecordOption::WithFreqs),
        )
        .set_stored()
}

/// The chunk schema.
pub fn schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_text_field("chunk_id", STORED);
    builder.add_text_field("document_id", STRING | STORED);
    builder.add_text_field("content", content_options());
    builder.add_text_field("source", STORED);
    builder.add_text_field("source_class", STORED);
    builder.add_text_field("extractor", STORED);
    builder.add_u64_field("start", NumericOptions::default().set_stored());
    builder.add_u64_field("end", NumericOptions::default().set_stored());
    builder.build()
}

fn fields(schema: &Schema) -> Result<Fields, Error> {
    let get = |name: &str| {
        schema
            .get_field(name)
            .map_err(|err| Error::storage("lexical index schema mismatch", err))
    };
    Ok(Fields {
        chunk_id: get("chunk_id")?,
        document_id: get("document_id")?,
        content: get("content")?,
        source: get("source")?,
        source_class: get("source_class")?,
        extractor: get("extractor")?,
        start: get("start")?,
        end: get("end")?,
    })
}

/// Index settings of every generation: an uncompressed document store in 4 KiB blocks.
///
/// A search returns each hit's stored content, and reading a stored document means reading (and,
/// when compressed, decompressing) its whole block; on SciFact, 4 KiB uncompressed blocks cut the
/// instructions per top-10 query by 15% against tantivy's 16 KiB LZ4 default, for 40% more disk.
pub fn index_settings() -> IndexSettings {
    IndexSettings {
        docstore_compression: Compressor::None,
        docstore_blocksize: 4096,
        ..IndexSettings::default()
    }
}

/// The payload a generation's tantivy commit carries.
fn payload(generation: u64) -> String {
    format!("groundkit-generation={generation}")
}

/// One generation of the lexical index, opened for searching.
pub struct LexicalIndex {
    /// The searcher over this generation's segments (fixed for the object's life).
    pub searcher: Searcher,
    /// The schema's fields.
    pub fields: Fields,
    // Kept so the searcher's segments stay owned by a live reader.
    _reader: IndexReader,
}

impl LexicalIndex {
    /// Opens generation `generation`, checking that its commit records that generation.
    pub fn open(paths: &CollectionPaths, generation: u64) -> Result<Self, Error> {
        let dir = paths.generation_dir(generation);
        let index = PublishedDirectory::open(&dir)
            .and_then(Index::open)
            .map_err(tantivy_err("cannot open the lexical index"))?;
        let metas = index
            .load_metas()
            .map_err(tantivy_err("cannot read the lexical index"))?;
        if metas.payload.as_deref() != Some(payload(generation).as_str()) {
            return Err(Error::Storage {
                message: format!(
                    "lexical index in {} does not record generation {generation}",
                    dir.display()
                ),
                source: None,
            });
        }
        index
            .tokenizers()
            .register(ANALYZER_NAME, english_analyzer());
        let fields = fields(&index.schema())?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(tantivy_err("cannot open the lexical index"))?;
        let searcher = reader.searcher();
        Ok(Self {
            searcher,
            fields,
            _reader: reader,
        })
    }
}

/// Tunables of index building.
#[derive(Debug, Clone, Copy)]
pub struct WriterConfig {
    /// Indexing threads.
    pub threads: usize,
    /// Memory budget per thread, in bytes.
    pub per_thread_budget: usize,
}

impl Default for WriterConfig {
    fn default() -> Self {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4);
        Self {
            threads,
            per_thread_budget: 64 << 20,
        }
    }
}

/// A new generation under construction in `g<N>.tmp`.
pub struct GenerationBuilder {
    tmp_dir: PathBuf,
    final_dir: PathBuf,
    generation: u64,
    writer: IndexWriter,
    /// The schema's fields.
    pub fields: Fields,
}

/// Removes everything in `tantivy_dir` except generation `keep`: older and newer generations
/// and unfinished `*.tmp` builds.
pub fn remove_other_generations(tantivy_dir: &Path, keep: Option<u64>) -> Result<(), Error> {
    let entries = match fs::read_dir(tantivy_dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => {
            return Err(Error::storage(
                "cannot read the lexical index directory",
                err,
            ));
        }
    };
    let keep_name = keep.map(|g| format!("g{g}"));
    for entry in entries {
        let entry = entry.map_err(io_err("cannot read the lexical index directory"))?;
        let name = entry.file_name();
        if keep_name
            .as_deref()
            .is_some_and(|keep| name.to_str() == Some(keep))
        {
            continue;
        }
        let path = entry.path();
        let result = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        result.map_err(io_err("cannot remove a stale lexical index generation"))?;
    }
    Ok(())
}

fn sync_dir(path: &Path) -> Result<(), Error> {
    fs::File::open(path)
        .and_then(|dir| dir.sync_all())
        .map_err(io_err("cannot sync the lexical index directory"))
}

impl GenerationBuilder {
    /// Starts generation `generation` from a copy (hard links of immutable segment files) of
    /// generation `base`, or from an empty index when `base` is `None`.
    pub fn start(
        paths: &CollectionPaths,
        base: Option<u64>,
        generation: u64,
        config: WriterConfig,
    ) -> Result<Self, Error> {
        fs::create_dir_all(&paths.tantivy).map_err(io_err("cannot create the lexical index"))?;
        let tmp_dir = paths.tantivy.join(format!("g{generation}.tmp"));
        let final_dir = paths.generation_dir(generation);
        for stale in [&tmp_dir, &final_dir] {
            if stale.exists() {
                fs::remove_dir_all(stale).map_err(io_err("cannot remove a stale generation"))?;
            }
        }
        fs::create_dir(&tmp_dir).map_err(io_err("cannot create the lexical index"))?;
        let index = match base {
            Some(base) => {
                link_files(&paths.generation_dir(base), &tmp_dir)?;
                Index::open_in_dir(&tmp_dir)
                    .map_err(tantivy_err("cannot open the lexical index"))?
            }
            None => Index::builder()
                .schema(schema())
                .settings(index_settings())
                .create_in_dir(&tmp_dir)
                .map_err(tantivy_err("cannot create the lexical index"))?,
        };
        index
            .tokenizers()
            .register(ANALYZER_NAME, english_analyzer());
        let fields = fields(&index.schema())?;
        let writer = index
            .writer_with_num_threads(config.threads, config.threads * config.per_thread_budget)
            .map_err(tantivy_err("cannot open the lexical index writer"))?;
        Ok(Self {
            tmp_dir,
            final_dir,
            generation,
            writer,
            fields,
        })
    }

    /// Deletes every chunk of `document_id` (those present when the generation started).
    pub fn delete_document(&self, document_id: &str) {
        self.writer
            .delete_term(Term::from_field_text(self.fields.document_id, document_id));
    }

    /// Adds one chunk document.
    pub fn add(&self, doc: TantivyDocument) -> Result<(), Error> {
        self.writer
            .add_document(doc)
            .map_err(tantivy_err("cannot index a chunk"))?;
        Ok(())
    }

    /// Commits with the generation payload, waits for merges, and publishes `g<N>` by rename.
    /// Returns the opstamp-free path of the published directory.
    pub fn finish(mut self, before_publish: impl FnOnce()) -> Result<PathBuf, Error> {
        let mut prepared = self
            .writer
            .prepare_commit()
            .map_err(tantivy_err("cannot commit the lexical index"))?;
        prepared.set_payload(&payload(self.generation));
        prepared
            .commit()
            .map_err(tantivy_err("cannot commit the lexical index"))?;
        self.writer
            .wait_merging_threads()
            .map_err(tantivy_err("cannot finish lexical index merges"))?;
        // The writer lock is not part of a generation. The meta lock is: readers take it when
        // they open the index, and finding it already there keeps the read path from creating
        // a file in the index directory.
        let _ = fs::remove_file(self.tmp_dir.join(".tantivy-writer.lock"));
        fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.tmp_dir.join(".tantivy-meta.lock"))
            .map_err(io_err("cannot prepare the lexical index generation"))?;
        sync_dir(&self.tmp_dir)?;
        before_publish();
        fs::rename(&self.tmp_dir, &self.final_dir)
            .map_err(io_err("cannot publish the lexical index generation"))?;
        if let Some(parent) = self.final_dir.parent() {
            sync_dir(parent)?;
        }
        Ok(self.final_dir)
    }
}

/// Populates `to` with hard links of `from`'s files (copies where linking fails). Tantivy never
/// rewrites a file in place (`meta.json` is replaced by rename), so the base generation is
/// unaffected by anything done to the copy.
fn link_files(from: &Path, to: &Path) -> Result<(), Error> {
    let entries = fs::read_dir(from).map_err(io_err("cannot read the previous generation"))?;
    for entry in entries {
        let entry = entry.map_err(io_err("cannot read the previous generation"))?;
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| n.ends_with(".lock")) {
            continue;
        }
        let src = entry.path();
        let dst = to.join(&name);
        if fs::hard_link(&src, &dst).is_err() {
            fs::copy(&src, &dst).map_err(io_err("cannot copy the previous generation"))?;
        }
    }
    Ok(())
}
