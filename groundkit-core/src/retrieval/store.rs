//! The SQLite store of a collection: schema, the generation counter, and the row-level reads and
//! writes ingest, `fetch_chunk` and `index_status` need.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::Error;
use crate::retrieval::citation::SourceClass;
use crate::retrieval::collection::{CollectionPaths, is_groundkit_store};
use crate::retrieval::{APPLICATION_ID, SCHEMA_VERSION};

const SCHEMA: &str = "
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
    record_offset INTEGER
) STRICT;
CREATE TABLE chunks (
    chunk_id     TEXT PRIMARY KEY,
    document_id  TEXT NOT NULL,
    chunk_index  INTEGER NOT NULL,
    start_offset INTEGER NOT NULL,
    end_offset   INTEGER NOT NULL,
    content      TEXT NOT NULL
) STRICT;
CREATE INDEX chunks_by_document ON chunks (document_id);
CREATE TABLE embedding_manifest (
    id                 INTEGER PRIMARY KEY CHECK (id = 1),
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    dimension          INTEGER NOT NULL,
    created_generation INTEGER NOT NULL
) STRICT;
";

/// Chunks that a later ingest replaced or removed, with everything `fetch_chunk` needs to cite and
/// verify them, kept for the retention window (see [`sweep_superseded`]).
const SUPERSEDED: &str = "
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
    superseded_at INTEGER NOT NULL
) STRICT;
";

/// Upgrades a version-1 store in place (inside the ingest's transaction).
const MIGRATE_FROM_1: &str = "ALTER TABLE documents ADD COLUMN record_offset INTEGER;";

const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn sql_err(context: &'static str) -> impl Fn(rusqlite::Error) -> Error {
    move |err| Error::storage(context, err)
}

/// Opens (creating when absent) a collection's store for ingest.
///
/// An existing file must already be a groundkit collection of this schema version; anything else
/// is refused untouched.
pub(crate) fn open_for_write(paths: &CollectionPaths) -> Result<Connection, Error> {
    let exists = paths.sqlite.exists();
    if exists && !is_groundkit_store(&paths.sqlite) {
        return Err(Error::Validation {
            field: "collection".to_owned(),
            message: "a file of that name in the index directory is not a groundkit collection"
                .to_owned(),
        });
    }
    let conn = Connection::open(&paths.sqlite).map_err(sql_err("cannot open the collection"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql_err("cannot configure the collection"))?;
    if !exists {
        // Header fields first, in rollback mode, so the identity is in the main file before
        // anything else: the immutable probe never sees a half-created collection as ours.
        conn.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID};
             PRAGMA user_version = {SCHEMA_VERSION};
             BEGIN; {SCHEMA} {SUPERSEDED} COMMIT;"
        ))
        .map_err(sql_err("cannot create the collection"))?;
    }
    let mut version = schema_version(&conn)?;
    if version == 1 {
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {MIGRATE_FROM_1} {SUPERSEDED} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
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
    Ok(conn)
}

/// Opens an existing collection's store read-only, as a WAL reader: it sees the last committed
/// transaction and never waits for, or disturbs, an ingest that is writing or checkpointing.
pub(crate) fn open_for_read(path: &Path) -> Result<Connection, Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(path, flags).map_err(sql_err("cannot open the collection"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql_err("cannot configure the collection"))?;
    persist_wal(&conn)?;
    Ok(conn)
}

/// Keeps the `-wal` and `-shm` files when this connection is the last to close.
fn persist_wal(conn: &Connection) -> Result<(), Error> {
    conn.file_control(
        rusqlite::DEFAULT_NAME,
        rusqlite::FileControl::PersistWal(&mut 1),
    )
    .map_err(sql_err("cannot configure the collection"))
}

/// The committed generation.
pub(crate) fn generation(conn: &Connection) -> Result<u64, Error> {
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'generation'",
        [],
        |row| row.get::<_, i64>(0),
    )
    .map(|g| g.max(0) as u64)
    .map_err(sql_err("cannot read the generation"))
}

pub(crate) fn set_generation(conn: &Connection, generation: u64) -> Result<(), Error> {
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'generation'",
        [generation as i64],
    )
    .map_err(sql_err("cannot write the generation"))?;
    Ok(())
}

/// The schema version recorded in the file.
pub(crate) fn schema_version(conn: &Connection) -> Result<u32, Error> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(sql_err("cannot read the schema version"))
}

/// One stored document, as ingest compares it.
#[derive(Debug, Clone)]
pub(crate) struct DocumentRow {
    pub(crate) source: String,
    pub(crate) source_class: SourceClass,
    pub(crate) content_hash: String,
    pub(crate) extractor: Option<String>,
}

pub(crate) fn all_documents(
    conn: &Connection,
) -> Result<std::collections::HashMap<String, DocumentRow>, Error> {
    let mut stmt = conn
        .prepare("SELECT document_id, source, source_class, content_hash, extractor FROM documents")
        .map_err(sql_err("cannot read documents"))?;
    let rows = stmt
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                DocumentRow {
                    source: row.get(1)?,
                    source_class: source_class_at(row, 2)?,
                    content_hash: row.get(3)?,
                    extractor: row.get(4)?,
                },
            ))
        })
        .map_err(sql_err("cannot read documents"))?;
    rows.collect::<Result<_, _>>()
        .map_err(sql_err("cannot read documents"))
}

/// The source class in column `index`; a spelling this build does not know is an error, never a
/// guess.
fn source_class_at(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<SourceClass> {
    let class: String = row.get(index)?;
    SourceClass::parse(&class).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            "unknown source class".into(),
        )
    })
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
}

/// A chunk about to be written.
pub(crate) struct NewChunk<'a> {
    pub(crate) chunk_id: &'a str,
    pub(crate) chunk_index: usize,
    pub(crate) start_offset: usize,
    pub(crate) end_offset: usize,
    pub(crate) content: &'a str,
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
         SELECT c.chunk_id, c.document_id, c.chunk_index, c.start_offset, c.end_offset, c.content,
                d.source, d.source_class, d.extractor, d.snapshot, d.record_offset, ?2, ?3
         FROM chunks c JOIN documents d ON d.document_id = c.document_id
         WHERE c.document_id = ?1",
    )
    .and_then(|mut stmt| stmt.execute(params![document_id, generation as i64, now_unix]))
    .map_err(sql_err("cannot keep superseded chunks"))?;
    delete_document(conn, document_id)
}

/// Forgets superseded chunks that are live again (same id in `chunks`) or were superseded before
/// `cutoff_unix`.
pub(crate) fn sweep_superseded(conn: &Connection, cutoff_unix: i64) -> Result<(), Error> {
    conn.execute(
        "DELETE FROM superseded_chunks
         WHERE superseded_at < ?1
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
              record_offset)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
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
        ])
        .map_err(sql_err("cannot insert a document"))?;
    let mut insert_chunk = conn
        .prepare_cached(
            "INSERT INTO chunks
             (chunk_id, document_id, chunk_index, start_offset, end_offset, content)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
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
            ])
            .map_err(sql_err("cannot insert a chunk"))?;
    }
    Ok(())
}

/// The stored chunks of a document: `(chunk_id, start, end, content)` in order.
pub(crate) fn chunks_of(
    conn: &Connection,
    document_id: &str,
) -> Result<Vec<(String, u64, u64, String)>, Error> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT chunk_id, start_offset, end_offset, content FROM chunks
             WHERE document_id = ?1 ORDER BY chunk_index",
        )
        .map_err(sql_err("cannot read chunks"))?;
    let rows = stmt
        .query_map([document_id], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, i64>(1)?.max(0) as u64,
                row.get::<_, i64>(2)?.max(0) as u64,
                row.get::<_, String>(3)?,
            ))
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

/// A stored chunk joined with its document, as `fetch_chunk` needs it.
#[derive(Debug, Clone)]
pub(crate) struct ChunkRecord {
    pub(crate) chunk_id: String,
    pub(crate) document_id: String,
    pub(crate) chunk_index: u32,
    pub(crate) start_offset: u64,
    pub(crate) end_offset: u64,
    pub(crate) content: String,
    pub(crate) source: String,
    pub(crate) source_class: SourceClass,
    pub(crate) extractor: Option<String>,
    pub(crate) snapshot: Option<String>,
    pub(crate) record_offset: Option<u64>,
    /// Whether the chunk comes from `superseded_chunks`.
    pub(crate) superseded: bool,
}

/// One keyed lookup in the live chunks, then in the superseded ones: a missing chunk reads no
/// document. Both lookups run in one read transaction, so an ingest committing in between cannot
/// make a chunk that moved from one table to the other look missing.
pub(crate) fn chunk_record(
    conn: &mut Connection,
    chunk_id: &str,
) -> Result<Option<ChunkRecord>, Error> {
    let tx = conn
        .transaction()
        .map_err(sql_err("cannot read the collection"))?;
    let live = chunk_record_in(
        &tx,
        chunk_id,
        "SELECT c.chunk_id, c.document_id, c.chunk_index, c.start_offset, c.end_offset,
                c.content, d.source, d.source_class, d.extractor, d.snapshot, d.record_offset, 0
         FROM chunks c JOIN documents d ON d.document_id = c.document_id
         WHERE c.chunk_id = ?1",
    )?;
    let record = match live {
        Some(record) => Some(record),
        None => chunk_record_in(
            &tx,
            chunk_id,
            "SELECT chunk_id, document_id, chunk_index, start_offset, end_offset, content,
                    source, source_class, extractor, snapshot, record_offset, 1
             FROM superseded_chunks WHERE chunk_id = ?1",
        )?,
    };
    tx.finish().map_err(sql_err("cannot read the collection"))?;
    Ok(record)
}

fn chunk_record_in(
    conn: &Connection,
    chunk_id: &str,
    sql: &str,
) -> Result<Option<ChunkRecord>, Error> {
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(sql_err("cannot read a chunk"))?;
    stmt.query_row([chunk_id], |row| {
        let source_class = source_class_at(row, 7)?;
        Ok(ChunkRecord {
            chunk_id: row.get(0)?,
            document_id: row.get(1)?,
            chunk_index: row.get(2)?,
            start_offset: row.get::<_, i64>(3)?.max(0) as u64,
            end_offset: row.get::<_, i64>(4)?.max(0) as u64,
            content: row.get(5)?,
            source: row.get(6)?,
            source_class,
            extractor: row.get(8)?,
            snapshot: row.get(9)?,
            record_offset: row.get::<_, Option<i64>>(10)?.map(|o| o.max(0) as u64),
            superseded: row.get(11)?,
        })
    })
    .optional()
    .map_err(sql_err("cannot read a chunk"))
}

/// Aggregate counts and the embedding identity, read in one snapshot.
#[derive(Debug, Clone)]
pub(crate) struct StoreStatus {
    pub(crate) generation: u64,
    pub(crate) schema_version: u32,
    pub(crate) document_count: u64,
    pub(crate) chunk_count: u64,
    pub(crate) embedding: Option<EmbeddingIdentity>,
}

/// The identity of the embedder a collection's vectors were made with.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct EmbeddingIdentity {
    /// Embedding provider.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// Vector dimension.
    pub dimension: u32,
}

pub(crate) fn embedding_identity(conn: &Connection) -> Result<Option<EmbeddingIdentity>, Error> {
    conn.query_row(
        "SELECT provider, model, dimension FROM embedding_manifest WHERE id = 1",
        [],
        |row| {
            Ok(EmbeddingIdentity {
                provider: row.get(0)?,
                model: row.get(1)?,
                dimension: row.get(2)?,
            })
        },
    )
    .optional()
    .map_err(sql_err("cannot read the embedding manifest"))
}

pub(crate) fn status(conn: &mut Connection) -> Result<StoreStatus, Error> {
    let tx = conn
        .transaction()
        .map_err(sql_err("cannot read the collection"))?;
    let generation = generation(&tx)?;
    let schema_version = schema_version(&tx)?;
    let document_count = tx
        .query_row("SELECT count(*) FROM documents", [], |row| {
            row.get::<_, i64>(0)
        })
        .map(|n| n.max(0) as u64)
        .map_err(sql_err("cannot count documents"))?;
    let chunk_count = tx
        .query_row("SELECT count(*) FROM chunks", [], |row| {
            row.get::<_, i64>(0)
        })
        .map(|n| n.max(0) as u64)
        .map_err(sql_err("cannot count chunks"))?;
    let embedding = embedding_identity(&tx)?;
    tx.finish().map_err(sql_err("cannot read the collection"))?;
    Ok(StoreStatus {
        generation,
        schema_version,
        document_count,
        chunk_count,
        embedding,
    })
}
