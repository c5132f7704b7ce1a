//! Building generation `G+1` of the lexical index beside `G` (hard links of `G`'s immutable
//! segment files, then deletes and adds), publishing it by rename, and removing the others: the
//! lexical half of an ingest (see the generation invariant in the module root). Exists only with
//! the `ingest` feature.

use std::fs;
use std::path::{Path, PathBuf};

use std::cell::RefCell;

use tantivy::tokenizer::{PreTokenizedString, TextAnalyzer, Token};
use tantivy::{Index, IndexWriter, TantivyDocument, Term};

use crate::analysis::{ANALYZER_NAME, code_text, english_analyzer, terms};
use crate::collection::{
    CollectionPaths, RETIRED_FILES, VECTOR_GRAPH_FILE, VECTORS_FILE, generation_name,
};
use crate::lexical::failure::{tantivy_err, tantivy_failure};
use crate::lexical::{Fields, fields, index_settings, payload, schema};
use groundkit_core::Error;

fn io_err(context: &'static str) -> impl Fn(std::io::Error) -> Error {
    move |err| Error::storage(context, err)
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
    /// Whether the chunk is source code (indexed with the terms of [`code_text`]).
    pub code: bool,
    /// A source-code chunk's scope, empty when none (then not stored).
    pub scope: &'a str,
    /// The first and last line of a `text` source's chunk.
    pub lines: Option<(u32, u32)>,
    /// The chunk's format (as the filter module's `format_of` names it).
    pub format: &'a str,
    /// When its source was last modified (seconds since the Unix epoch), when known.
    pub modified: Option<u64>,
    /// Its document's metadata terms (the filter module's `meta_term`).
    pub meta: &'a [String],
}

thread_local! {
    /// The analyser of source-code chunks' terms, built once per indexing thread.
    static CODE_ANALYZER: RefCell<TextAnalyzer> = RefCell::new(english_analyzer());
}

/// A source-code chunk's content with its terms: those of its scope, then those of its text.
fn code_content(scope: &str, content: &str) -> PreTokenizedString {
    let words =
        CODE_ANALYZER.with_borrow_mut(|analyzer| terms(analyzer, &code_text(scope, content)));
    let tokens = words
        .into_iter()
        .enumerate()
        .map(|(position, text)| Token {
            position,
            text,
            ..Token::default()
        })
        .collect();
    PreTokenizedString {
        text: content.to_owned(),
        tokens,
    }
}

impl Fields {
    /// The tantivy document of one chunk.
    pub fn document(&self, chunk: &ChunkDoc<'_>) -> TantivyDocument {
        let mut doc = TantivyDocument::default();
        doc.add_text(self.chunk_id, chunk.chunk_id);
        doc.add_text(self.document_id, chunk.document_id);
        if chunk.code {
            doc.add_pre_tokenized_text(self.content, code_content(chunk.scope, chunk.content));
        } else {
            doc.add_text(self.content, chunk.content);
        }
        doc.add_text(self.source, chunk.source);
        doc.add_text(self.source_class, chunk.source_class);
        doc.add_text(self.extractor, chunk.extractor);
        doc.add_u64(self.start, chunk.start);
        doc.add_u64(self.end, chunk.end);
        if !chunk.scope.is_empty() {
            doc.add_text(self.scope, chunk.scope);
        }
        if let (Some((start_field, end_field)), Some((start, end))) = (self.lines, chunk.lines) {
            doc.add_u64(start_field, u64::from(start));
            doc.add_u64(end_field, u64::from(end));
        }
        if let Some((format, modified, meta)) = self.filtered {
            doc.add_text(format, chunk.format);
            if let Some(time) = chunk.modified {
                doc.add_u64(modified, time);
            }
            for term in chunk.meta {
                doc.add_text(meta, term);
            }
        }
        doc
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

/// Whether the published generation in `dir` has this build's schema (a generation written
/// before chunks had scopes, lines or the fields filters read does not, and the next one is built from the store
/// instead).
pub fn has_current_schema(dir: &Path) -> bool {
    Index::open_in_dir(dir).is_ok_and(|index| {
        fields(&index.schema()).is_ok_and(|f| f.lines.is_some() && f.filtered.is_some())
    })
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
    let keep_name = keep.map(generation_name);
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
        let tmp_dir = paths.build_dir(generation);
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
                    .map_err(tantivy_err("cannot open the lexical index", &tmp_dir))?
            }
            None => Index::builder()
                .schema(schema())
                .settings(index_settings())
                .create_in_dir(&tmp_dir)
                .map_err(tantivy_err("cannot create the lexical index", &tmp_dir))?,
        };
        index
            .tokenizers()
            .register(ANALYZER_NAME, english_analyzer());
        let fields = fields(&index.schema())?;
        let writer = index
            .writer_with_num_threads(config.threads, config.threads * config.per_thread_budget)
            .map_err(tantivy_err(
                "cannot open the lexical index writer",
                &tmp_dir,
            ))?;
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

    /// Adds one chunk document. When an indexing thread has failed, tantivy says only that; the
    /// thread's own failure (a full disk, a permission) is what joining it returns, and is what
    /// is reported.
    pub fn add(&mut self, doc: TantivyDocument) -> Result<(), Error> {
        let Err(err) = self.writer.add_document(doc) else {
            return Ok(());
        };
        let cause = match (&err, self.writer.prepare_commit()) {
            (tantivy::TantivyError::ErrorInThread(_), Err(thread_err)) => thread_err,
            _ => err,
        };
        Err(tantivy_failure(
            "cannot index a chunk",
            &self.tmp_dir,
            &cause,
        ))
    }

    /// Commits with the generation payload, waits for merges, runs `before_publish` on the
    /// committed directory (which writes the generation's vectors into it), and publishes
    /// `g<N>` by rename. Returns the path of the published directory.
    pub fn finish(
        mut self,
        before_publish: impl FnOnce(&Path) -> Result<(), Error>,
    ) -> Result<PathBuf, Error> {
        let mut prepared = self.writer.prepare_commit().map_err(tantivy_err(
            "cannot commit the lexical index",
            &self.tmp_dir,
        ))?;
        prepared.set_payload(&payload(self.generation));
        prepared.commit().map_err(tantivy_err(
            "cannot commit the lexical index",
            &self.tmp_dir,
        ))?;
        self.writer.wait_merging_threads().map_err(tantivy_err(
            "cannot finish lexical index merges",
            &self.tmp_dir,
        ))?;
        // The writer lock is not part of a generation. The meta lock is: readers take it when
        // they open the index, and finding it already there keeps the read path from creating
        // a file in the index directory.
        let _ = fs::remove_file(self.tmp_dir.join(".tantivy-writer.lock"));
        fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.tmp_dir.join(".tantivy-meta.lock"))
            .map_err(io_err("cannot prepare the lexical index generation"))?;
        before_publish(&self.tmp_dir)?;
        sync_dir(&self.tmp_dir)?;
        fs::rename(&self.tmp_dir, &self.final_dir)
            .map_err(io_err("cannot publish the lexical index generation"))?;
        if let Some(parent) = self.final_dir.parent() {
            sync_dir(parent)?;
        }
        Ok(self.final_dir)
    }
}

/// Populates `to` with hard links of `from`'s tantivy files (copies where linking fails). Tantivy
/// never rewrites a file in place (`meta.json` is replaced by rename), so the base generation is
/// unaffected by anything done to the copy. Locks, the generation's vectors and graph (each
/// generation writes its own, as new files) and retired files are not linked.
fn link_files(from: &Path, to: &Path) -> Result<(), Error> {
    let entries = fs::read_dir(from).map_err(io_err("cannot read the previous generation"))?;
    for entry in entries {
        let entry = entry.map_err(io_err("cannot read the previous generation"))?;
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| {
            n.ends_with(".lock")
                || n == VECTORS_FILE
                || n == VECTOR_GRAPH_FILE
                || RETIRED_FILES.contains(&n)
        }) {
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

#[cfg(test)]
mod tests {
    use tantivy::schema::{STORED, Schema};

    use super::*;

    /// A generation in a new temporary directory, with stored text fields `texts` and stored
    /// numbers `numbers`: the schema of an earlier build.
    fn older_generation(texts: &[&str], numbers: &[&str]) -> (tempfile::TempDir, Index) {
        let mut builder = Schema::builder();
        for name in texts {
            builder.add_text_field(name, STORED);
        }
        for name in numbers {
            builder.add_u64_field(name, STORED);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let index = Index::create_in_dir(dir.path(), builder.build()).expect("index");
        (dir, index)
    }

    const BEFORE_SCOPES: [&str; 5] = [
        "chunk_id",
        "document_id",
        "content",
        "source",
        "source_class",
    ];

    #[test]
    fn a_generation_without_the_scope_field_is_not_current() {
        let current = tempfile::tempdir().expect("temp dir");
        Index::create_in_dir(current.path(), schema()).expect("index");
        assert!(has_current_schema(current.path()));

        let (older, _) = older_generation(&BEFORE_SCOPES, &[]);
        assert!(!has_current_schema(older.path()));
        assert!(!has_current_schema(&older.path().join("missing")));
    }

    #[test]
    fn a_generation_without_the_line_fields_is_readable_but_not_current() {
        // The schema before chunks had lines: every field of today's but those two.
        let texts: Vec<&str> = BEFORE_SCOPES
            .into_iter()
            .chain(["extractor", "scope"])
            .collect();
        let (older, index) = older_generation(&texts, &["start", "end"]);
        let read = fields(&index.schema()).expect("readable");
        assert!(read.lines.is_none());
        assert!(!has_current_schema(older.path()));
    }
}
