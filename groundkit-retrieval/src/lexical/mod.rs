//! The per-generation tantivy BM25 index: its schema and settings, opening a published
//! generation for reading (`published`), and its exact top-k over all segments (`top`, pruned
//! with the window maxima `maxima` keeps). Both read postings through one scoring cursor
//! (`cursor`, the one source of BM25 weights) and rank with one top-n structure (`topn`).
//! Building the next generation is `build`, with the `ingest` feature; `failure` renders
//! tantivy's failures for the operator.

use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, STORED, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::store::Compressor;
use tantivy::{Index, IndexReader, IndexSettings, ReloadPolicy, Searcher, Term};

use crate::analysis::{ANALYZER_NAME, english_analyzer};
use crate::collection::CollectionPaths;
use groundkit_core::Error;

#[cfg(feature = "ingest")]
mod build;
mod cursor;
mod failure;
mod maxima;
mod published;
mod top;
mod topn;

#[cfg(feature = "ingest")]
pub use build::WriterConfig;
#[cfg(feature = "ingest")]
pub(crate) use build::{ChunkDoc, GenerationBuilder, has_current_schema, remove_other_generations};
use failure::tantivy_err;
pub(crate) use maxima::WindowMaxima;
use published::PublishedDirectory;
pub(crate) use top::{Keep, Scope, top_k};

/// The fields of a chunk document. Content and every citation field are stored, so a search
/// answers from the one generation it opened without consulting SQLite.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// Chunk id (stored only: nothing looks a chunk up in the lexical index).
    pub chunk_id: Field,
    /// Document id (indexed as one token for deletes, stored, fast).
    pub document_id: Field,
    /// Chunk text (analysed, term frequencies, stored). A source-code chunk is indexed with its
    /// scope and the parts of its identifiers (the terms of `analysis::code_text`), as pre-analysed terms
    /// stored with its text.
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
    /// A source-code chunk's scope (stored; absent when it has none).
    pub scope: Field,
    /// Citation start and end lines of a `text` source's chunk (stored; absent for other
    /// sources). `None` in a generation written before chunks had lines, which is served
    /// without them.
    pub lines: Option<(Field, Field)>,
    /// The fields only filters read (fast fields, besides the source, its class and the
    /// document id): the chunk's format (as the filter module's `format_of` names it; also
    /// stored), its source's modification time, its document's metadata terms. `None` in a
    /// generation written before filters, which is served but not filtered.
    pub filtered: Option<(Field, Field, Field)>,
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

/// A stored string that filters read from its column: the whole value one term.
fn filterable() -> TextOptions {
    TextOptions::default().set_stored().set_fast("raw")
}

/// The chunk schema.
pub fn schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_text_field("chunk_id", STORED);
    builder.add_text_field(
        "document_id",
        filterable().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("raw")
                .set_index_option(IndexRecordOption::Basic),
        ),
    );
    builder.add_text_field("content", content_options());
    builder.add_text_field("source", filterable());
    builder.add_text_field("source_class", filterable());
    builder.add_text_field("extractor", STORED);
    builder.add_u64_field("start", NumericOptions::default().set_stored());
    builder.add_u64_field("end", NumericOptions::default().set_stored());
    builder.add_text_field("scope", STORED);
    builder.add_u64_field("start_line", NumericOptions::default().set_stored());
    builder.add_u64_field("end_line", NumericOptions::default().set_stored());
    builder.add_text_field("format", filterable());
    builder.add_u64_field("modified", NumericOptions::default().set_fast());
    builder.add_text_field("meta", TextOptions::default().set_fast("raw"));
    builder.build()
}

pub(super) fn fields(schema: &Schema) -> Result<Fields, Error> {
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
        scope: get("scope")?,
        lines: get("start_line").ok().zip(get("end_line").ok()),
        filtered: match (get("format"), get("modified"), get("meta")) {
            (Ok(format), Ok(modified), Ok(meta)) => Some((format, modified, meta)),
            _ => None,
        },
    })
}

/// The BM25 statistics of several generations (of several collections) taken together: what
/// one index of all their chunks would count, so scores computed with them compare across the
/// collections.
pub(crate) struct Together<'a>(pub(crate) Vec<&'a Searcher>);

impl Bm25StatisticsProvider for Together<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        self.0.iter().map(|s| s.total_num_tokens(field)).sum()
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        self.0.iter().map(|s| s.total_num_docs()).sum()
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        self.0.iter().map(|s| s.doc_freq(term)).sum()
    }
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
pub(super) fn payload(generation: u64) -> String {
    format!("groundkit-generation={generation}")
}

/// One generation of the lexical index, opened for searching.
pub(crate) struct LexicalIndex {
    /// The searcher over this generation's segments (fixed for the object's life).
    pub(crate) searcher: Searcher,
    /// The schema's fields.
    pub(crate) fields: Fields,
    /// The window maxima searches of this generation have computed.
    pub(crate) maxima: WindowMaxima,
    // Kept so the searcher's segments stay owned by a live reader.
    _reader: IndexReader,
}

impl LexicalIndex {
    /// Opens generation `generation`, checking that its commit records that generation.
    pub(crate) fn open(paths: &CollectionPaths, generation: u64) -> Result<Self, Error> {
        let dir = paths.generation_dir(generation);
        let directory = PublishedDirectory::open(&dir)
            .map_err(tantivy_err("cannot open the lexical index", &dir))?;
        let index =
            Index::open(directory).map_err(tantivy_err("cannot open the lexical index", &dir))?;
        let metas = index
            .load_metas()
            .map_err(tantivy_err("cannot read the lexical index", &dir))?;
        if metas.payload.as_deref() != Some(payload(generation).as_str()) {
            return Err(Error::Storage {
                message: format!(
                    "the lexical index {}.tantivy/{} does not record generation {generation}",
                    paths.name,
                    crate::collection::generation_name(generation)
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
            .map_err(tantivy_err("cannot open the lexical index", &dir))?;
        let searcher = reader.searcher();
        Ok(Self {
            searcher,
            fields,
            maxima: WindowMaxima::default(),
            _reader: reader,
        })
    }
}
