//! The commit protocol of an ingest (the generation invariant in the module root of
//! `retrieval`): sweep expired superseded chunks (committed alone when nothing else changed),
//! commit lexical generation `G+1`, write its
//! vectors beside it (with an embedder), publish it, write `generation = G+1` and commit the
//! store, then remove what no generation uses.

use rusqlite::Connection;

use crate::chunk::is_code;
use crate::collection::CollectionPaths;
use crate::filter::format_of;
use crate::ingest::front_matter::{meta_terms, parse_metadata};
use crate::ingest::{CommitStep, IngestProgress, IngestSummary};
use crate::lexical::{ChunkDoc, remove_other_generations};
use crate::store;
use crate::store::write;
use crate::vectors;
use crate::vectors::write::VectorProgress;
use groundkit_core::Error;

use super::Writer;

impl Writer<'_> {
    /// Commits the new generation (when anything changed), sweeps what it superseded, and
    /// returns the summary with the collection's counts. `retention_secs` is how long superseded
    /// chunks stay fetchable.
    pub(in crate::ingest) fn commit(
        mut self,
        retention_secs: u64,
        progress: &mut dyn IngestProgress,
    ) -> Result<IngestSummary, Error> {
        if self.rebuild {
            self.reindex_kept()?;
        }
        let Some(mut conn) = self.conn.take() else {
            // A new collection to which nothing was written: nothing was created.
            return Ok(self.summary);
        };
        let mut summary = self.summary;
        let cutoff = self
            .now_unix
            .saturating_sub(i64::try_from(retention_secs).unwrap_or(i64::MAX));
        // Every ingest forgets the superseded chunks past the retention window, one that changed
        // nothing included (it commits the sweep alone, at the same generation).
        write::sweep_superseded(&conn, cutoff)?;
        if let Some(builder) = self.builder.take() {
            progress.phase("committing");
            let generation = self.base_generation + 1;
            let fields = builder.fields;
            let (embedder, previous) = (self.embedder, self.previous_vectors.as_ref());
            let previous_graph = self.previous_graph.as_ref();
            let graph_min_vectors = self.graph_min_vectors;
            builder.finish(|dir| {
                progress.commit_step(CommitStep::LexicalCommitted);
                let Some(embedder) = embedder else {
                    return Ok(());
                };
                progress.phase("embedding");
                let plan = vectors::write::VectorPlan {
                    embedder,
                    previous,
                    previous_graph,
                    graph_min_vectors,
                };
                let counts =
                    vectors::write::write_generation(
                        dir,
                        &fields,
                        &plan,
                        &mut |step| match step {
                            VectorProgress::Embedded(done, total) => {
                                progress.embedding(done, total)
                            }
                            VectorProgress::Indexing => progress.phase("indexing vectors"),
                        },
                    )?;
                summary.embedded = counts.embedded;
                summary.reused_vectors = counts.reused;
                summary.vector_graph = counts.graph;
                progress.commit_step(CommitStep::VectorsWritten);
                Ok(())
            })?;
            progress.commit_step(CommitStep::LexicalPublished);
            write::set_generation(&conn, generation)?;
            let changes = (summary.added, summary.updated, summary.removed);
            write::record_change(&conn, unix_millis(), changes)?;
            conn.execute_batch("COMMIT")
                .map_err(store::sql_err("cannot commit the ingest"))?;
            progress.commit_step(CommitStep::StoreCommitted);
            summary.generation = generation;
            // The generation is committed: a failure to clean up is not a failed ingest. What
            // is left, the next ingest removes before it writes.
            if let Err(err) = remove_other_generations(&self.paths.tantivy, Some(generation)) {
                tracing::warn!(
                    collection = %self.paths.name,
                    error = %err,
                    "superseded lexical generations left for the next ingest to remove"
                );
            }
        } else {
            conn.execute_batch("COMMIT")
                .map_err(store::sql_err("cannot finish the ingest"))?;
        }
        remove_unreferenced_snapshots(&conn, self.paths)?;
        let status = store::status(&mut conn)?;
        summary.documents = status.document_count;
        summary.chunks = status.chunk_count;
        Ok(summary)
    }

    /// Adds the stored chunks of every document this run kept as it was to the new generation
    /// (rebuilding a lost lexical index).
    fn reindex_kept(&mut self) -> Result<(), Error> {
        self.each_stored(|writer, document_id, row| {
            if writer.ledger.get(&document_id)? == Some(true) {
                return Ok(()); // written by this run: already in the new generation
            }
            let conn = writer
                .conn
                .as_ref()
                .ok_or_else(|| Error::internal("ingest store missing"))?;
            let builder = writer
                .builder
                .as_mut()
                .ok_or_else(|| Error::internal("no generation builder"))?;
            let fields = builder.fields;
            let code = is_code(row.extractor.as_deref());
            let format = format_of(&row.source, row.extractor.as_deref());
            let meta = meta_terms(&parse_metadata(row.metadata.as_deref()));
            for chunk in write::chunks_of(conn, &document_id)? {
                builder.add(fields.document(&ChunkDoc {
                    chunk_id: &chunk.chunk_id,
                    document_id: &document_id,
                    content: &chunk.content,
                    source: &row.source,
                    source_class: row.source_class.as_str(),
                    extractor: row.extractor.as_deref().unwrap_or(""),
                    start: chunk.start,
                    end: chunk.end,
                    code,
                    scope: &chunk.scope,
                    lines: chunk.lines,
                    format: &format,
                    modified: row.modified,
                    meta: &meta,
                }))?;
            }
            Ok(())
        })
    }
}

/// Now, in milliseconds since the Unix epoch.
fn unix_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn remove_unreferenced_snapshots(conn: &Connection, paths: &CollectionPaths) -> Result<(), Error> {
    let Ok(entries) = std::fs::read_dir(&paths.snapshots) else {
        return Ok(());
    };
    let referenced = write::referenced_snapshots(conn)?;
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
