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
    chunk_count  INTEGER NOT NULL
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
             BEGIN; {SCHEMA} COMMIT;"
        ))
        .map_err(sql_err("cannot create the collection"))?;
    }
    let version: u32 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(sql_err("cannot read the schema version"))?;
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
    // FULL: the commit that publishes a generation is on disk before the previous generation's
    // lexical index is deleted, so even a power loss cannot leave SQLite behind its index.
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(sql_err("cannot configure the collection"))?;
    Ok(conn)
}

/// Opens an existing collection's store read-only.
pub(crate) fn open_for_read(path: &Path) -> Result<Connection, Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(path, flags).map_err(sql_err("cannot open the collection"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql_err("cannot configure the collection"))?;
    Ok(conn)
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
            let class: String = row.get(2)?;
            Ok((
                row.get::<_, String>(0)?,
                DocumentRow {
                    source: row.get(1)?,
                    source_class: SourceClass::parse(&class).unwrap_or(SourceClass::Text),
                    content_hash: row.get(3)?,
                    extractor: row.get(4)?,
                },
            ))
        })
        .map_err(sql_err("cannot read documents"))?;
    rows.collect::<Result<_, _>>()
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
}

/// A chunk about to be written.
pub(crate) struct NewChunk<'a> {
    pub(crate) chunk_id: &'a str,
    pub(crate) chunk_index: usize,
    pub(crate) start_offset: usize,
    pub(crate) end_offset: usize,
    pub(crate) content: &'a str,
}

pub(crate) fn delete_document(conn: &Connection, document_id: &str) -> Result<(), Error> {
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
             (document_id, source, source_class, extractor, snapshot, content_hash, chunk_count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
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

/// Snapshot file names still referenced by some document.
pub(crate) fn referenced_snapshots(
    conn: &Connection,
) -> Result<std::collections::HashSet<String>, Error> {
    let mut stmt = conn
        .prepare("SELECT snapshot FROM documents WHERE snapshot IS NOT NULL")
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
}

/// One keyed lookup: a missing chunk reads no document.
pub(crate) fn chunk_record(
    conn: &Connection,
    chunk_id: &str,
) -> Result<Option<ChunkRecord>, Error> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.chunk_id, c.document_id, c.chunk_index, c.start_offset, c.end_offset,
                    c.content, d.source, d.source_class, d.extractor, d.snapshot
             FROM chunks c JOIN documents d ON d.document_id = c.document_id
             WHERE c.chunk_id = ?1",
        )
        .map_err(sql_err("cannot read a chunk"))?;
    stmt.query_row([chunk_id], |row| {
        let class: String = row.get(7)?;
        Ok(ChunkRecord {
            chunk_id: row.get(0)?,
            document_id: row.get(1)?,
            chunk_index: row.get(2)?,
            start_offset: row.get::<_, i64>(3)?.max(0) as u64,
            end_offset: row.get::<_, i64>(4)?.max(0) as u64,
            content: row.get(5)?,
            source: row.get(6)?,
            source_class: SourceClass::parse(&class).unwrap_or(SourceClass::Text),
            extractor: row.get(8)?,
            snapshot: row.get(9)?,
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
