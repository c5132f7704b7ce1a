//! The SQLite store of a collection: the read-only connection and the reads `fetch_chunk`,
//! `index_status` and the collection cache need. The schema and every write live in [`write`],
//! and the creation of a new store in [`create`], which exist only with the `ingest` feature: a
//! build without it cannot write a store.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::APPLICATION_ID;
use crate::model::{Citation, LastChange, SourceClass};
use groundkit_core::Error;

#[cfg(feature = "ingest")]
pub(crate) mod create;
#[cfg(feature = "ingest")]
pub(crate) mod write;

pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn sql_err(context: &'static str) -> impl Fn(rusqlite::Error) -> Error {
    move |err| Error::storage(context, err)
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

/// Opens a store in WAL mode whose `-wal` and `-shm` are both absent (a copy made without them)
/// as immutable: read as the main file is, without locks and without creating either file. Only
/// for that case: the main file then holds every committed transaction, and an ingest that
/// writes to it creates the `-wal` first, which is how the caller knows to reopen
/// ([`OpenCollection`](crate::OpenCollection) does).
pub(crate) fn open_immutable(path: &Path) -> Result<Connection, Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let uri = format!("file:{}?immutable=1", uri_path(path));
    Connection::open_with_flags(uri, flags).map_err(sql_err("cannot open the collection"))
}

/// `path` percent-encoded for an SQLite `file:` URI: every byte but unreserved ones and `/`.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for &byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Keeps the `-wal` and `-shm` files when this connection is the last to close.
pub(super) fn persist_wal(conn: &Connection) -> Result<(), Error> {
    conn.file_control(
        rusqlite::DEFAULT_NAME,
        rusqlite::FileControl::PersistWal(&mut 1),
    )
    .map_err(sql_err("cannot configure the collection"))
}

/// The committed generation.
pub(crate) fn generation(conn: &Connection) -> Result<u64, Error> {
    // Cached: a server reads it on every search, and would otherwise parse the statement each
    // time.
    conn.prepare_cached("SELECT value FROM meta WHERE key = 'generation'")
        .and_then(|mut stmt| stmt.query_row([], |row| row.get::<_, i64>(0)))
        .map(|g| g.max(0) as u64)
        .map_err(sql_err("cannot read the generation"))
}

/// The schema version recorded in the file.
pub(crate) fn schema_version(conn: &Connection) -> Result<u32, Error> {
    conn.prepare_cached("PRAGMA user_version")
        .and_then(|mut stmt| stmt.query_row([], |row| row.get(0)))
        .map_err(sql_err("cannot read the schema version"))
}

/// Whether the opened store carries groundkit's `application_id`. The identity probe decides
/// on a path before the open; this decides on the connection that is then read or written, so a
/// file swapped in between is refused instead of used. A store that cannot be read is an error,
/// never "not ours".
pub(crate) fn is_groundkit(conn: &Connection) -> Result<bool, Error> {
    conn.query_row("PRAGMA application_id", [], |row| row.get::<_, i32>(0))
        .map(|id| id == APPLICATION_ID)
        .map_err(sql_err("cannot read the collection's identity"))
}

/// The source class in column `index`; a spelling this build does not know is an error, never a
/// guess.
pub(super) fn source_class_at(
    row: &rusqlite::Row<'_>,
    index: usize,
) -> rusqlite::Result<SourceClass> {
    let class: String = row.get(index)?;
    SourceClass::parse(&class).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            "unknown source class".into(),
        )
    })
}

/// A stored chunk joined with its document: everything a search result shows and `fetch_chunk`
/// needs to verify it. Another backend stores chunks in this shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkRecord {
    /// The chunk's id.
    pub chunk_id: String,
    /// Its document's id.
    pub document_id: String,
    /// Its position in the document, from 0.
    pub chunk_index: u32,
    /// Byte offset of its first byte in the document's text.
    pub start_offset: u64,
    /// Byte offset one past its last byte.
    pub end_offset: u64,
    /// The chunk text as indexed.
    pub content: String,
    /// The document's source, relative to the base directory (or its URL for a snapshot).
    pub source: String,
    /// How the text was obtained from the source.
    pub source_class: SourceClass,
    /// The extractor of an `extracted` source.
    pub extractor: Option<String>,
    /// The snapshot file of a `snapshot` source, in the collection's snapshot directory.
    pub snapshot: Option<String>,
    /// The byte offset of a BEIR document's record in its corpus file.
    pub record_offset: Option<u64>,
    /// The definitions enclosing a source-code chunk, outermost first
    /// (`impl Parser › fn parse_header`); `None` for prose and top-level code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Whether the chunk comes from `superseded_chunks`.
    #[serde(default, skip_serializing)]
    pub superseded: bool,
    /// The line of a `text` source the chunk starts on, from 1, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    /// The line its last byte is on, from 1, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
}

impl ChunkRecord {
    /// The chunk's citation.
    pub fn citation(&self) -> Citation {
        Citation {
            document_id: self.document_id.clone(),
            chunk_id: self.chunk_id.clone(),
            source: self.source.clone(),
            source_class: self.source_class,
            extractor: self.extractor.clone(),
            start_offset: self.start_offset,
            end_offset: self.end_offset,
            start_line: self.start_line,
            end_line: self.end_line,
        }
    }
}

/// The oldest schema version a reader serves. A version-3 store (before chunks had lines) is
/// read as it is, its chunks answered without lines; the next ingest upgrades it.
pub const OLDEST_READABLE_VERSION: u32 = 3;

/// The line columns of a store of schema `version`, with `prefix` naming the table: `NULL`s for
/// a store from before chunks had lines.
fn line_columns(version: u32, prefix: &str) -> String {
    if version >= 4 {
        format!("{prefix}start_line, {prefix}end_line")
    } else {
        "NULL, NULL".to_owned()
    }
}

/// A live chunk joined with its document, by chunk id, in a store of schema `version`.
pub(crate) fn live_chunk(version: u32) -> String {
    format!(
        "SELECT c.chunk_id, c.document_id, c.chunk_index, c.start_offset, c.end_offset, c.content,
                d.source, d.source_class, d.extractor, d.snapshot, d.record_offset, 0, c.scope, {}
         FROM chunks c JOIN documents d ON d.document_id = c.document_id
         WHERE c.chunk_id = ?1",
        line_columns(version, "c.")
    )
}

/// A superseded chunk by chunk id, in a store of schema `version`.
fn superseded_chunk(version: u32) -> String {
    format!(
        "SELECT chunk_id, document_id, chunk_index, start_offset, end_offset, content,
                source, source_class, extractor, snapshot, record_offset, 1, scope, {}
         FROM superseded_chunks WHERE chunk_id = ?1",
        line_columns(version, "")
    )
}

/// The lines in columns `index` and `index + 1`, when both are recorded.
pub(super) fn lines_at(
    row: &rusqlite::Row<'_>,
    index: usize,
) -> rusqlite::Result<Option<(u32, u32)>> {
    let start: Option<u32> = row.get(index)?;
    let end: Option<u32> = row.get(index + 1)?;
    Ok(start.zip(end))
}

/// One keyed lookup in the live chunks, then in the superseded ones: a missing chunk reads no
/// document. Both lookups run in one read transaction, so an ingest committing in between cannot
/// make a chunk that moved from one table to the other look missing.
pub(crate) fn chunk_record(
    conn: &mut Connection,
    version: u32,
    chunk_id: &str,
) -> Result<Option<ChunkRecord>, Error> {
    let tx = conn
        .transaction()
        .map_err(sql_err("cannot read the collection"))?;
    let live = chunk_record_in(&tx, chunk_id, &live_chunk(version))?;
    let record = match live {
        Some(record) => Some(record),
        None => chunk_record_in(&tx, chunk_id, &superseded_chunk(version))?,
    };
    tx.finish().map_err(sql_err("cannot read the collection"))?;
    Ok(record)
}

pub(crate) fn chunk_record_in(
    conn: &Connection,
    chunk_id: &str,
    sql: &str,
) -> Result<Option<ChunkRecord>, Error> {
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(sql_err("cannot read a chunk"))?;
    stmt.query_row([chunk_id], |row| {
        let source_class = source_class_at(row, 7)?;
        let lines = lines_at(row, 13)?;
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
            scope: row.get(12)?,
            start_line: lines.map(|(start, _)| start),
            end_line: lines.map(|(_, end)| end),
        })
    })
    .optional()
    .map_err(sql_err("cannot read a chunk"))
}

/// The `meta` rows `write::record_change` wrote, if the last commit wrote them.
fn last_change(conn: &Connection) -> Result<Option<LastChange>, Error> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT key, value FROM meta WHERE key IN
                 ('changed_at', 'changed_added', 'changed_updated', 'changed_removed')",
        )
        .map_err(sql_err("cannot read the collection's last change"))?;
    let rows = stmt
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        })
        .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        .map_err(sql_err("cannot read the collection's last change"))?;
    let value = |key: &str| rows.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    let count = |key: &str| value(key).map_or(0, |v| v.max(0) as u64);
    let Some(at) = value("changed_at") else {
        return Ok(None);
    };
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    Ok(Some(LastChange {
        at: crate::model::rfc3339(at),
        added: count("changed_added"),
        updated: count("changed_updated"),
        removed: count("changed_removed"),
    }))
}

/// The content hash of document `document_id` (empty when the store does not hold it).
pub(crate) fn content_hash(conn: &Connection, document_id: &str) -> Result<String, Error> {
    conn.prepare_cached("SELECT content_hash FROM documents WHERE document_id = ?1")
        .and_then(|mut stmt| stmt.query_row([document_id], |row| row.get(0)).optional())
        .map(Option::unwrap_or_default)
        .map_err(sql_err("cannot read a document"))
}

/// Aggregate counts, read in one snapshot.
#[derive(Debug, Clone)]
pub(crate) struct StoreStatus {
    pub(crate) generation: u64,
    pub(crate) schema_version: u32,
    pub(crate) document_count: u64,
    pub(crate) chunk_count: u64,
    /// What the committed generation changed, and when (absent in a store whose last commit
    /// did not record it).
    pub(crate) last_change: Option<LastChange>,
}

/// The generation and the counts its commit recorded (`write::set_generation`), so reading them
/// costs the same whatever the collection's size. A store last committed by a build that did not
/// record them is counted row by row, until the next ingest opens it and records them.
pub(crate) fn status(conn: &mut Connection) -> Result<StoreStatus, Error> {
    let tx = conn
        .transaction()
        .map_err(sql_err("cannot read the collection"))?;
    let generation = generation(&tx)?;
    let schema_version = schema_version(&tx)?;
    let count = |key: &str, table: &str| -> Result<u64, Error> {
        let recorded = tx
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")
            .and_then(|mut stmt| stmt.query_row([key], |row| row.get::<_, i64>(0)).optional())
            .map_err(sql_err("cannot read the collection's counts"))?;
        let n = match recorded {
            Some(n) => n,
            None => tx
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                    row.get::<_, i64>(0)
                })
                .map_err(sql_err("cannot count the collection"))?,
        };
        Ok(n.max(0) as u64)
    };
    let document_count = count("document_count", "documents")?;
    let chunk_count = count("chunk_count", "chunks")?;
    let last_change = last_change(&tx)?;
    tx.finish().map_err(sql_err("cannot read the collection"))?;
    Ok(StoreStatus {
        generation,
        schema_version,
        document_count,
        chunk_count,
        last_change,
    })
}
