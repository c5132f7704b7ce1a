//! Writes to a collection's store, for ingest only: its schema, opening it for an ingest (creating
//! it through [`create`] when absent), upgrading an older schema, and the row-level changes of one
//! ingest transaction.

use rusqlite::{Connection, OptionalExtension, params};

use crate::SCHEMA_VERSION;
use crate::collection::{CollectionPaths, Identity, identify_store};
use crate::model::SourceClass;
use crate::store::create;
use crate::store::{
    BUSY_TIMEOUT, is_groundkit, lines_at, persist_wal, schema_version, source_class_at, sql_err,
};
use groundkit_core::Error;

/// The tables of a new collection.
pub(super) const SCHEMA: &str = "
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;
INSERT INTO meta (key, value) VALUES ('generation', 0);
CREATE TABLE documents (
    document_id  TEXT PRIMARY KEY,
    source       TEXT NOT NULL,
    source_class TEXT NOT NULL,
    extractor    TEXT,
    snapshot     TEXT,
    content_hash TEXT NOT NULL,
    chunk_count  INTEGER NOT NULL,
    record_offset INTEGER,
    modified     INTEGER,
    metadata     TEXT
) STRICT;
CREATE TABLE chunks (
    chunk_id     TEXT PRIMARY KEY,
    document_id  TEXT NOT NULL,
    chunk_index  INTEGER NOT NULL,
    start_offset INTEGER NOT NULL,
    end_offset   INTEGER NOT NULL,
    content      TEXT NOT NULL,
    scope        TEXT,
    start_line   INTEGER,
    end_line     INTEGER
) STRICT;
CREATE INDEX chunks_by_document ON chunks (document_id);
";

/// Chunks that a later ingest replaced or removed, with everything `fetch_chunk` needs to cite and
/// verify them, kept for the retention window (see [`sweep_superseded`]).
pub(super) const SUPERSEDED: &str = "
CREATE TABLE superseded_chunks (
    chunk_id      TEXT PRIMARY KEY,
    document_id   TEXT NOT NULL,
    chunk_index   INTEGER NOT NULL,
    start_offset  INTEGER NOT NULL,
    end_offset    INTEGER NOT NULL,
    content       TEXT NOT NULL,
    source        TEXT NOT NULL,
    source_class  TEXT NOT NULL,
    extractor     TEXT,
    snapshot      TEXT,
    record_offset INTEGER,
    superseded_generation INTEGER NOT NULL,
    superseded_at INTEGER NOT NULL,
    scope         TEXT,
    start_line    INTEGER,
    end_line      INTEGER
) STRICT;
";

/// Upgrades a version-1 store in place (inside the ingest's transaction), with [`SUPERSEDED`]
/// and [`CHUNK_LINES`].
const MIGRATE_FROM_1: &str = "ALTER TABLE documents ADD COLUMN record_offset INTEGER;
    ALTER TABLE chunks ADD COLUMN scope TEXT;";

/// Upgrades a version-2 store in place: chunks gain their scope (a source-code chunk's enclosing
/// definitions), then their lines ([`MIGRATE_FROM_3`]).
const MIGRATE_FROM_2: &str = "ALTER TABLE chunks ADD COLUMN scope TEXT;
    ALTER TABLE superseded_chunks ADD COLUMN scope TEXT;";

/// The line columns of `chunks`, added by an upgrade from any version before 4.
const CHUNK_LINES: &str = "ALTER TABLE chunks ADD COLUMN start_line INTEGER;
    ALTER TABLE chunks ADD COLUMN end_line INTEGER;";

/// Upgrades a version-3 store in place (with [`CHUNK_LINES`]): chunks and superseded chunks gain
/// the lines of a `text` source they span. The columns start out empty; the ingest that upgrades
/// fills them for every `text` source that still holds its chunks' bytes
/// (`ingest::writer::lines`), and a chunk it cannot fill is answered without lines.
const MIGRATE_FROM_3: &str = "ALTER TABLE superseded_chunks ADD COLUMN start_line INTEGER;
    ALTER TABLE superseded_chunks ADD COLUMN end_line INTEGER;";

/// Upgrades a version-4 store: documents get their source's modification time and their
/// metadata (a Markdown file's front matter). Both stay NULL until the next ingest reads the
/// document again, which it does for every document whose metadata is NULL.
const MIGRATE_FROM_4: &str = "ALTER TABLE documents ADD COLUMN modified INTEGER;
    ALTER TABLE documents ADD COLUMN metadata TEXT;";

/// Opens (creating when absent) a collection's store for ingest, and says whether it upgraded
/// the store from an earlier schema version.
///
/// An existing file must already be a groundkit collection of this schema version; anything else
/// is refused untouched, but for what holds nothing, which is replaced by a new store
/// ([`create::ensure`]).
pub(crate) fn open_for_write(paths: &CollectionPaths) -> Result<(Connection, bool), Error> {
    let not_ours = || Error::Validation {
        field: "collection".to_owned(),
        message: "a file of that name in the index directory is not a groundkit collection"
            .to_owned(),
    };
    create::ensure(paths)?;
    if identify_store(paths)? == Identity::NotOurs {
        return Err(not_ours());
    }
    let conn = Connection::open(&paths.sqlite).map_err(sql_err("cannot open the collection"))?;
    if !is_groundkit(&conn)? {
        return Err(not_ours());
    }
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql_err("cannot configure the collection"))?;
    let mut version = schema_version(&conn)?;
    let upgrade = match version {
        1 => Some(format!(
            "{MIGRATE_FROM_1} {SUPERSEDED} {CHUNK_LINES} {MIGRATE_FROM_4}"
        )),
        2 => Some(format!(
            "{MIGRATE_FROM_2} {CHUNK_LINES} {MIGRATE_FROM_3} {MIGRATE_FROM_4}"
        )),
        3 => Some(format!("{CHUNK_LINES} {MIGRATE_FROM_3} {MIGRATE_FROM_4}")),
        4 => Some(MIGRATE_FROM_4.to_owned()),
        _ => None,
    };
    let upgraded = upgrade.is_some();
    if let Some(upgrade) = upgrade {
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {upgrade} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ))
        .map_err(sql_err("cannot upgrade the collection"))?;
        version = SCHEMA_VERSION;
    }
    if version != SCHEMA_VERSION {
        return Err(Error::Validation {
            field: "collection".to_owned(),
            message: format!(
                "the collection has schema version {version}; this build reads version {SCHEMA_VERSION}"
            ),
        });
    }
    // A store last committed by a build that did not record its counts gets them now, so an
    // ingest that changes nothing (and so commits nothing) still leaves them recorded.
    conn.execute(&format!("INSERT OR IGNORE {COUNTS}"), [])
        .map_err(sql_err("cannot write the collection's counts"))?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(sql_err("cannot enable WAL"))?;
    // The `-wal` file is emptied on close but kept, with the `-shm` index beside it, so a reader
    // opening the collection later finds both and creates nothing.
    conn.pragma_update(None, "journal_size_limit", 0)
        .map_err(sql_err("cannot configure the collection"))?;
    persist_wal(&conn)?;
    // FULL: the commit that publishes a generation is on disk before the previous generation's
    // lexical index is deleted, so even a power loss cannot leave SQLite behind its index.
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(sql_err("cannot configure the collection"))?;
    Ok((conn, upgraded))
}

/// Records `generation` as committed, with the document and chunk counts as they stand in this
/// transaction: `index_status` reads them ([`store::status`](super::status)) instead of counting
/// rows on every request.
pub(crate) fn set_generation(conn: &Connection, generation: u64) -> Result<(), Error> {
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'generation'",
        [generation as i64],
    )
    .map_err(sql_err("cannot write the generation"))?;
    conn.execute(&format!("INSERT OR REPLACE {COUNTS}"), [])
        .map_err(sql_err("cannot write the collection's counts"))?;
    Ok(())
}

/// Records what the generation being committed changed, and when (milliseconds since the Unix
/// epoch): `meta` rows that `index_status` reports.
pub(crate) fn record_change(
    conn: &Connection,
    at_millis: i64,
    (added, updated, removed): (u64, u64, u64),
) -> Result<(), Error> {
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES
             ('changed_at', ?1), ('changed_added', ?2), ('changed_updated', ?3),
             ('changed_removed', ?4)",
        params![at_millis, count(added), count(updated), count(removed)],
    )
    .map_err(sql_err("cannot record the collection's change"))?;
    Ok(())
}

/// The `meta` rows of the document and chunk counts, as the store's rows stand (after
/// `INSERT OR IGNORE` or `INSERT OR REPLACE`).
pub(super) const COUNTS: &str = "INTO meta (key, value) VALUES
    ('document_count', (SELECT count(*) FROM documents)),
    ('chunk_count', (SELECT count(*) FROM chunks))";

/// One stored document, as ingest compares it.
#[derive(Debug, Clone)]
pub(crate) struct DocumentRow {
    pub(crate) source: String,
    pub(crate) source_class: SourceClass,
    pub(crate) content_hash: String,
    pub(crate) extractor: Option<String>,
    /// When the source was last modified (seconds since the Unix epoch), as read.
    pub(crate) modified: Option<u64>,
    /// The document's metadata as JSON; `None` in a document written before stores kept it,
    /// which the next ingest reads again.
    pub(crate) metadata: Option<String>,
}

const DOCUMENT_ROW: &str = "SELECT document_id, source, source_class, content_hash, extractor, \
     modified, metadata FROM documents";

fn document_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(String, DocumentRow)> {
    Ok((
        row.get::<_, String>(0)?,
        DocumentRow {
            source: row.get(1)?,
            source_class: source_class_at(row, 2)?,
            content_hash: row.get(3)?,
            extractor: row.get(4)?,
            modified: row.get::<_, Option<i64>>(5)?.map(|t| t.max(0) as u64),
            metadata: row.get(6)?,
        },
    ))
}

/// The stored row of `document_id`, if the store holds it.
pub(crate) fn document(conn: &Connection, document_id: &str) -> Result<Option<DocumentRow>, Error> {
    conn.prepare_cached(&format!("{DOCUMENT_ROW} WHERE document_id = ?1"))
        .and_then(|mut stmt| stmt.query_row([document_id], document_row).optional())
        .map(|row| row.map(|(_, row)| row))
        .map_err(sql_err("cannot read a document"))
}

/// Up to `limit` stored documents in id order, from the first id after `after` (from the first
/// id when `None`): the store's documents a page at a time, so a caller may change the store
/// between pages.
pub(crate) fn documents_after(
    conn: &Connection,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<(String, DocumentRow)>, Error> {
    let err = sql_err("cannot read documents");
    let limit = limit as i64;
    let rows: rusqlite::Result<Vec<_>> = match after {
        Some(after) => conn
            .prepare_cached(&format!(
                "{DOCUMENT_ROW} WHERE document_id > ?1 ORDER BY document_id LIMIT ?2"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(params![after, limit], document_row)?
                    .collect()
            }),
        None => conn
            .prepare_cached(&format!("{DOCUMENT_ROW} ORDER BY document_id LIMIT ?1"))
            .and_then(|mut stmt| stmt.query_map([limit], document_row)?.collect()),
    };
    rows.map_err(err)
}

/// Whether the store holds any document.
pub(crate) fn has_documents(conn: &Connection) -> Result<bool, Error> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM documents)", [], |row| {
        row.get(0)
    })
    .map_err(sql_err("cannot read documents"))
}

/// A document about to be written.
pub(crate) struct NewDocument<'a> {
    pub(crate) document_id: &'a str,
    pub(crate) source: &'a str,
    pub(crate) source_class: SourceClass,
    pub(crate) extractor: Option<&'a str>,
    pub(crate) snapshot: Option<&'a str>,
    pub(crate) content_hash: &'a str,
    /// Where a BEIR record's line starts in its corpus file.
    pub(crate) record_offset: Option<u64>,
    /// When the source was last modified, in seconds since the Unix epoch, as read.
    pub(crate) modified: Option<u64>,
    /// The document's metadata as JSON (`{}` when it has none).
    pub(crate) metadata: &'a str,
}

/// A chunk about to be written.
pub(crate) struct NewChunk<'a> {
    pub(crate) chunk_id: &'a str,
    pub(crate) chunk_index: usize,
    pub(crate) start_offset: usize,
    pub(crate) end_offset: usize,
    pub(crate) content: &'a str,
    /// The definitions enclosing a source-code chunk; empty for none.
    pub(crate) scope: &'a str,
    /// The first and last line it spans, for a `text` source.
    pub(crate) lines: Option<(u32, u32)>,
}

/// Moves a document's chunks to `superseded_chunks` (stamped with the generation being built and
/// the time), then deletes the document and its chunks.
pub(crate) fn supersede_document(
    conn: &Connection,
    document_id: &str,
    generation: u64,
    now_unix: i64,
) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO superseded_chunks
         (chunk_id, document_id, chunk_index, start_offset, end_offset, content, source,
          source_class, extractor, snapshot, record_offset, superseded_generation, superseded_at,
          scope, start_line, end_line)
         SELECT c.chunk_id, c.document_id, c.chunk_index, c.start_offset, c.end_offset, c.content,
                d.source, d.source_class, d.extractor, d.snapshot, d.record_offset, ?2, ?3, c.scope,
                c.start_line, c.end_line
         FROM chunks c JOIN documents d ON d.document_id = c.document_id
         WHERE c.document_id = ?1",
    )
    .and_then(|mut stmt| stmt.execute(params![document_id, generation as i64, now_unix]))
    .map_err(sql_err("cannot keep superseded chunks"))?;
    delete_document(conn, document_id)
}

/// Forgets superseded chunks that are live again (same id in `chunks`) or were superseded at or
/// before `cutoff_unix`.
pub(crate) fn sweep_superseded(conn: &Connection, cutoff_unix: i64) -> Result<(), Error> {
    conn.execute(
        "DELETE FROM superseded_chunks
         WHERE superseded_at <= ?1
            OR EXISTS (SELECT 1 FROM chunks c WHERE c.chunk_id = superseded_chunks.chunk_id)",
        [cutoff_unix],
    )
    .map_err(sql_err("cannot sweep superseded chunks"))?;
    Ok(())
}

fn delete_document(conn: &Connection, document_id: &str) -> Result<(), Error> {
    conn.prepare_cached("DELETE FROM chunks WHERE document_id = ?1")
        .and_then(|mut stmt| stmt.execute([document_id]))
        .map_err(sql_err("cannot delete chunks"))?;
    conn.prepare_cached("DELETE FROM documents WHERE document_id = ?1")
        .and_then(|mut stmt| stmt.execute([document_id]))
        .map_err(sql_err("cannot delete a document"))?;
    Ok(())
}

pub(crate) fn insert_document(
    conn: &Connection,
    doc: &NewDocument<'_>,
    chunks: &[NewChunk<'_>],
) -> Result<(), Error> {
    let mut insert_doc = conn
        .prepare_cached(
            "INSERT INTO documents
             (document_id, source, source_class, extractor, snapshot, content_hash, chunk_count,
              record_offset, modified, metadata)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .map_err(sql_err("cannot insert a document"))?;
    insert_doc
        .execute(params![
            doc.document_id,
            doc.source,
            doc.source_class.as_str(),
            doc.extractor,
            doc.snapshot,
            doc.content_hash,
            chunks.len() as i64,
            doc.record_offset.map(|o| o as i64),
            doc.modified.map(|t| t as i64),
            doc.metadata,
        ])
        .map_err(sql_err("cannot insert a document"))?;
    let mut insert_chunk = conn
        .prepare_cached(
            "INSERT INTO chunks
             (chunk_id, document_id, chunk_index, start_offset, end_offset, content, scope,
              start_line, end_line)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .map_err(sql_err("cannot insert a chunk"))?;
    for chunk in chunks {
        insert_chunk
            .execute(params![
                chunk.chunk_id,
                doc.document_id,
                chunk.chunk_index as i64,
                chunk.start_offset as i64,
                chunk.end_offset as i64,
                chunk.content,
                (!chunk.scope.is_empty()).then_some(chunk.scope),
                chunk.lines.map(|(start, _)| start),
                chunk.lines.map(|(_, end)| end),
            ])
            .map_err(sql_err("cannot insert a chunk"))?;
    }
    Ok(())
}

/// One stored chunk, as a lost lexical index is rebuilt from it.
pub(crate) struct StoredChunk {
    pub(crate) chunk_id: String,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) content: String,
    /// Empty for none.
    pub(crate) scope: String,
    /// The first and last line it spans, when recorded.
    pub(crate) lines: Option<(u32, u32)>,
}

/// The stored chunks of a document, in order.
pub(crate) fn chunks_of(conn: &Connection, document_id: &str) -> Result<Vec<StoredChunk>, Error> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT chunk_id, start_offset, end_offset, content, scope, start_line, end_line
             FROM chunks WHERE document_id = ?1 ORDER BY chunk_index",
        )
        .map_err(sql_err("cannot read chunks"))?;
    let rows = stmt
        .query_map([document_id], |row| {
            Ok(StoredChunk {
                chunk_id: row.get(0)?,
                start: row.get::<_, i64>(1)?.max(0) as u64,
                end: row.get::<_, i64>(2)?.max(0) as u64,
                content: row.get(3)?,
                scope: row.get::<_, Option<String>>(4)?.unwrap_or_default(),
                lines: lines_at(row, 5)?,
            })
        })
        .map_err(sql_err("cannot read chunks"))?;
    rows.collect::<Result<_, _>>()
        .map_err(sql_err("cannot read chunks"))
}

/// Snapshot file names still referenced by some document or superseded chunk.
pub(crate) fn referenced_snapshots(
    conn: &Connection,
) -> Result<std::collections::HashSet<String>, Error> {
    let mut stmt = conn
        .prepare(
            "SELECT snapshot FROM documents WHERE snapshot IS NOT NULL
             UNION SELECT snapshot FROM superseded_chunks WHERE snapshot IS NOT NULL",
        )
        .map_err(sql_err("cannot read snapshots"))?;
    let rows = stmt
        .query_map([], |row| row.get::<_, String>(0))
        .map_err(sql_err("cannot read snapshots"))?;
    rows.collect::<Result<_, _>>()
        .map_err(sql_err("cannot read snapshots"))
}

/// The `text` documents with a chunk whose lines are not recorded (those of a store upgraded from
/// an earlier version), by id, with their sources.
pub(crate) fn text_documents_without_lines(
    conn: &Connection,
) -> Result<Vec<(String, String)>, Error> {
    let mut stmt = conn
        .prepare(
            "SELECT d.document_id, d.source FROM documents d
             WHERE d.source_class = 'text' AND EXISTS (
                 SELECT 1 FROM chunks c
                 WHERE c.document_id = d.document_id AND c.start_line IS NULL)
             ORDER BY d.document_id",
        )
        .map_err(sql_err("cannot read documents"))?;
    let rows = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .map_err(sql_err("cannot read documents"))?;
    rows.collect::<Result<_, _>>()
        .map_err(sql_err("cannot read documents"))
}

/// Records the lines of chunk `chunk_id`.
pub(crate) fn set_chunk_lines(
    conn: &Connection,
    chunk_id: &str,
    (start, end): (u32, u32),
) -> Result<(), Error> {
    conn.prepare_cached("UPDATE chunks SET start_line = ?2, end_line = ?3 WHERE chunk_id = ?1")
        .and_then(|mut stmt| stmt.execute(params![chunk_id, start, end]))
        .map_err(sql_err("cannot record a chunk's lines"))?;
    Ok(())
}
