//! Retrieval engine and `grk` tests, against real SQLite files and tantivy indexes built in
//! temporary directories.
//!
//! What this module guards:
//!
//! - The engine's module graph is a line, so no read module uses the write surface:
//!   `structure::each_retrieval_module_uses_only_the_modules_before_it`.
//! - The store's generation is the one commit point; a killed ingest leaves readers on a whole
//!   generation: `crash::ingest_killed_at_arbitrary_moments_never_mixes_generations`,
//!   `crash::killed_ingest_while_embedding_leaves_readers_on_the_previous_generation_and_its_vectors`;
//!   readers never fail while ingests commit: `generations::readers_never_fail_while_ingests_commit`;
//!   a first ingest killed while creating the store leaves no name, or one that works:
//!   `crash::a_first_ingest_killed_at_each_of_its_fsyncs_never_leaves_a_name_that_is_refused`,
//!   and what an earlier version's interrupted creation left is replaced:
//!   `crash::what_an_interrupted_creation_left_in_place_is_replaced_by_the_next_ingest`.
//! - Reads create no file: `generations::reads_create_no_file_in_the_index_directory`,
//!   `listing::missing_collection_is_not_found_and_creates_no_file`, a copy without its `-wal` and
//!   `-shm` included: `listing::a_copy_without_its_wal_files_is_served_read_only_and_nothing_is_created`;
//!   an ingest in which every
//!   source failed creates no collection:
//!   `generations::an_ingest_where_every_source_failed_creates_no_collection`.
//! - A collection name is validated before any disk access:
//!   `listing::traversal_shaped_names_are_validation_errors_without_any_probe`; a store swapped
//!   after the identity probe is never read:
//!   `listing::a_store_swapped_after_the_identity_probe_is_not_found_never_read`; one whose header
//!   cannot be read is a storage error, not a missing collection:
//!   `cli::an_unreadable_store_is_a_storage_error_not_a_missing_collection`.
//! - Sources are judged on the opened handle and read with bounded memory: `hostile.rs`.
//! - Citations of `text` sources carry the lines of their bytes (CRLF, first and last line, code
//!   in several languages), extracted ones none, and a version-3 store is served without lines
//!   until the next ingest records them: `lines.rs`
//!   (`lines::chunks_of_long_text_markdown_and_crlf_files_carry_the_lines_of_their_bytes`,
//!   `lines::a_version_3_store_is_served_without_lines_and_the_next_ingest_records_them`).
//! - Citations verify or say why not: `citations.rs`; a hit stays fetchable across later
//!   generations: `generations::hits_stay_fetchable_after_one_and_several_later_generations`, until
//!   an ingest past the retention window, even one that changes nothing:
//!   `generations::a_zero_retention_ingest_that_changes_nothing_still_forgets_every_superseded_chunk`.
//! - A storage failure names its cause in words and its file relative to the index directory:
//!   `cli::a_permission_error_mid_ingest_names_the_cause_in_words_and_the_file_relative_to_the_index`.
//! - `index_status` reads the counts each commit recorded:
//!   `generations::status_counts_are_the_commits_and_a_store_without_them_is_counted`.
//! - Dense search needs the collection's embedder, and lexical keeps working without it:
//!   `dense::a_server_with_another_embedder_refuses_dense_with_a_typed_error_and_keeps_lexical`;
//!   a vector is reused while its chunk's text is unchanged:
//!   `dense::re_ingest_embeds_only_the_chunks_whose_text_changed`; the HNSW graph: `graph.rs`.
//! - A re-ingest removes exactly what vanished, reading the store in pages:
//!   `ingest::beir_reingest_across_store_pages_removes_exactly_the_vanished_records`.
//! - A watcher reads only what changed, follows edits, atomic saves, renames, deletions,
//!   directories moved in and out, `.gitignore` edits and symbolic links, publishes a burst as
//!   one generation or a few, and, killed, leaves a whole generation for the next to catch up
//!   from; `serve --watch` keeps one running: `watch.rs`.
//! - `grk`'s read commands answer exactly what REST answers:
//!   `cli::the_read_commands_answer_exactly_what_rest_answers`.
//!
//! - Source code is cut at its definitions with their scopes, verified byte for byte, and its
//!   identifiers found by their parts and whole; what is not source is skipped and counted:
//!   `code.rs`
//!   (`code::every_language_is_cut_at_its_definitions_with_doc_comments_and_scopes`,
//!   `code::identifiers_are_found_by_their_parts_and_as_a_whole`,
//!   `code::files_that_are_not_source_are_skipped_and_counted_by_reason`).
//! - `grk eval` measures a query judged by lines (`PATH#L10-L42`, a function) at the level of those
//!   lines, and one judged by document ids as before:
//!   `eval::a_function_judged_by_its_lines_ranks_where_its_own_chunk_ranks`.
//! - The document formats a team keeps are read, searchable and verified, and a hostile file
//!   fails alone with its reason in bounded time: `formats.rs`
//!   (`formats::plain_text_formats_are_text_sources_verified_byte_for_byte`,
//!   `formats::office_documents_workbooks_notebooks_mail_and_books_are_extracted_and_verified`,
//!   `formats::a_changed_office_document_drifts`,
//!   `formats::each_hostile_file_fails_alone_with_its_reason_in_bounded_time`).
//!
//! Exact lexical ranking is checked by unit tests in groundkit-retrieval (`lexical::top`,
//! `lexical::maxima`).

mod attachments;
mod cache;
mod caps;
mod citations;
mod cli;
pub(crate) mod code;
mod crash;
mod dense;
mod eval;
mod filters;
mod formats;
mod generations;
mod graph;
mod hostile;
mod ingest;
mod lines;
mod listing;
mod search;
mod several;
mod structure;
mod watch;

use std::path::{Path, PathBuf};

use groundkit_retrieval::{
    self as retrieval, CollectionCache, IngestOptions, IngestSummary, NoProgress, SearchParams,
    SearchResponse,
};

/// A corpus directory (the base directory) and an index directory, both temporary.
pub(crate) struct Fixture {
    _root: tempfile::TempDir,
    pub(crate) base: PathBuf,
    pub(crate) index: PathBuf,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        let base = root.path().join("corpus");
        let index = root.path().join("index");
        std::fs::create_dir_all(&base).expect("corpus dir");
        Self {
            base: base.canonicalize().expect("canonical base"),
            index,
            _root: root,
        }
    }

    /// Another directory beside the corpus, outside the base directory.
    pub(crate) fn outside(&self) -> PathBuf {
        let dir = self.base.parent().expect("parent").join("outside");
        std::fs::create_dir_all(&dir).expect("outside dir");
        dir
    }

    pub(crate) fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.base.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent dirs");
        }
        std::fs::write(&path, content).expect("write fixture");
        path
    }

    pub(crate) fn options(&self, collection: &str, inputs: &[&Path]) -> IngestOptions {
        IngestOptions::new(
            &self.index,
            &self.base,
            collection,
            inputs.iter().map(|p| p.display().to_string()).collect(),
        )
    }

    /// Ingests the whole base directory.
    pub(crate) fn ingest_all(&self, collection: &str) -> IngestSummary {
        retrieval::ingest(&self.options(collection, &[&self.base]), &mut NoProgress)
            .expect("ingest succeeds")
    }

    /// `grk` on this index and base directory, run from the base directory.
    pub(crate) fn grk(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_grk-it"));
        cmd.arg("--index-dir")
            .arg(&self.index)
            .arg("--base-dir")
            .arg(&self.base)
            .current_dir(&self.base);
        cmd
    }

    /// Runs `grk ARGS` as [`Fixture::grk`] does; it must succeed. Returns its standard output.
    pub(crate) fn grk_ok(&self, args: &[&str]) -> Vec<u8> {
        let out = self.grk().args(args).output().expect("run grk");
        assert!(
            out.status.success(),
            "grk {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// [`Fixture::grk_ok`], its output parsed as JSON.
    pub(crate) fn grk_json<T: serde::de::DeserializeOwned>(&self, args: &[&str]) -> T {
        serde_json::from_slice(&self.grk_ok(args)).expect("grk's JSON")
    }

    pub(crate) fn cache(&self) -> CollectionCache {
        CollectionCache::new(&self.index, &self.base, 8)
    }

    pub(crate) fn search(&self, collection: &str, query: &str, top_k: u32) -> SearchResponse {
        let cache = self.cache();
        let open = cache.acquire(collection).expect("collection opens");
        retrieval::search(
            &open,
            &SearchParams {
                query: query.to_owned(),
                top_k,
                mode: Default::default(),
                fusion: Default::default(),
                filter: None,
            },
            None,
        )
        .expect("search succeeds")
    }

    /// Every chunk id of a collection, read straight from its SQLite file.
    pub(crate) fn chunk_ids(&self, collection: &str) -> Vec<String> {
        let conn = rusqlite::Connection::open(self.index.join(format!("{collection}.sqlite3")))
            .expect("open store");
        let mut stmt = conn
            .prepare("SELECT chunk_id FROM chunks ORDER BY document_id, chunk_index")
            .expect("query");
        stmt.query_map([], |row| row.get(0))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect()
    }
}

/// Every file under `dir` (recursively), with its bytes, for "nothing was written" checks.
/// The `(source, reason)` of each failure of an ingest, sorted.
pub(crate) fn failures(summary: &IngestSummary) -> Vec<(&str, &str)> {
    let mut failed: Vec<(&str, &str)> = summary
        .failed
        .iter()
        .map(|f| (f.source.as_str(), f.reason.as_str()))
        .collect();
    failed.sort();
    failed
}

pub(crate) fn snapshot_tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>, Option<std::time::SystemTime>)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        if meta.is_dir() {
            out.extend(snapshot_tree(&path));
        } else if meta.is_file() {
            out.push((
                path.clone(),
                std::fs::read(&path).expect("read"),
                meta.modified().ok(),
            ));
        } else {
            out.push((path, Vec::new(), None));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
