//! A committed generation's live chunks, read out whole with their vectors: what another backend
//! loads to serve the same collection (the OpenSearch backend publishes them as one index per
//! generation); or only those of some documents, with every document's content hash to tell
//! which changed.

use std::borrow::Cow;
use std::collections::HashMap;

use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, TantivyDocument, Term};

use crate::open::OpenCollection;
use crate::store::{self, ChunkRecord, sql_err};
use groundkit_core::Error;

/// One live chunk of a generation, with its vector when the generation has vectors.
#[derive(Debug, Clone)]
pub struct ExportedChunk {
    /// The chunk joined with its document, as `fetch_chunk` verifies it.
    pub record: ChunkRecord,
    /// Its document's content hash: it changes whenever the document is written again.
    pub content_hash: String,
    /// Its vector (unit length) when the generation was ingested with an embedder.
    pub vector: Option<Vec<f32>>,
    /// When its source was last modified, as ingest read it (seconds since the Unix epoch).
    pub modified: Option<u64>,
    /// Its document's metadata terms, as filters look for them (`filter::meta_term`).
    pub meta: Vec<String>,
}

impl ExportedChunk {
    /// The text whose English terms the lexical index holds for this chunk: its content, or for
    /// source code its scope and content with their identifiers expanded
    /// ([`analysis::code_text`](crate::analysis::code_text)).
    pub fn indexed_text(&self) -> Cow<'_, str> {
        let record = &self.record;
        if crate::analysis::is_code(record.extractor.as_deref()) {
            let scope = record.scope.as_deref().unwrap_or_default();
            Cow::Owned(crate::analysis::code_text(scope, &record.content))
        } else {
            Cow::Borrowed(&record.content)
        }
    }
}

/// Hands every live chunk of `open`'s generation to `sink`, `batch` chunks at a time (the last
/// batch may be shorter), and returns how many there were.
///
/// The chunks are those of the lexical index `open` was opened at; their records come from one
/// read transaction of the store, which must still be at that generation: if an ingest committed
/// another generation since `open` was opened, nothing more is handed out and the export fails
/// (open the collection again and export again).
pub fn export_chunks(
    open: &OpenCollection,
    batch: usize,
    sink: impl FnMut(Vec<ExportedChunk>) -> Result<(), Error>,
) -> Result<u64, Error> {
    export(open, None, batch, sink)
}

/// [`export_chunks`] for the chunks of `document_ids` alone (an id the generation does not hold
/// has none): what a backend that holds an earlier generation lacks, once it knows which
/// documents changed ([`document_hashes`]).
pub fn export_documents(
    open: &OpenCollection,
    document_ids: &[String],
    batch: usize,
    sink: impl FnMut(Vec<ExportedChunk>) -> Result<(), Error>,
) -> Result<u64, Error> {
    export(open, Some(document_ids), batch, sink)
}

/// Hands every document of `open`'s generation to `sink` as `(document_id, content_hash)`, in
/// pages in id order, from one read transaction of the store at that generation (failing as
/// [`export_chunks`] does if an ingest committed another since).
pub fn document_hashes(
    open: &OpenCollection,
    mut sink: impl FnMut(Vec<(String, String)>) -> Result<(), Error>,
) -> Result<u64, Error> {
    const PAGE: i64 = 4096;
    let mut conn = open.connection()?;
    let tx = at_generation(&mut conn, open)?;
    let mut stmt = tx
        .prepare(
            "SELECT document_id, content_hash FROM documents WHERE document_id > ?1
             ORDER BY document_id LIMIT ?2",
        )
        .map_err(sql_err("cannot read the documents"))?;
    let mut after = String::new();
    let mut count = 0u64;
    loop {
        let page: Vec<(String, String)> = stmt
            .query_map(rusqlite::params![after, PAGE], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .and_then(Iterator::collect)
            .map_err(sql_err("cannot read the documents"))?;
        let Some((last, _)) = page.last() else {
            break;
        };
        after = last.clone();
        count += page.len() as u64;
        let full = page.len() as i64 == PAGE;
        sink(page)?;
        if !full {
            break;
        }
    }
    drop(stmt);
    tx.finish().map_err(sql_err("cannot read the collection"))?;
    Ok(count)
}

/// A read transaction of `open`'s store, checked to be at `open`'s generation.
fn at_generation<'c>(
    conn: &'c mut rusqlite::Connection,
    open: &OpenCollection,
) -> Result<rusqlite::Transaction<'c>, Error> {
    let tx = conn
        .transaction()
        .map_err(sql_err("cannot read the collection"))?;
    if store::generation(&tx)? != open.generation() {
        return Err(Error::storage(
            "an ingest committed another generation during the export",
            "generation moved",
        ));
    }
    Ok(tx)
}

/// Exports the chunks of `document_ids` (every live chunk when `None`).
fn export(
    open: &OpenCollection,
    document_ids: Option<&[String]>,
    batch: usize,
    mut sink: impl FnMut(Vec<ExportedChunk>) -> Result<(), Error>,
) -> Result<u64, Error> {
    let Some(index) = open.lexical() else {
        return Ok(0);
    };
    let rows: HashMap<DocAddress, usize> = open
        .vectors()
        .map(|v| {
            v.addresses()
                .iter()
                .enumerate()
                .map(|(row, a)| (*a, row))
                .collect()
        })
        .unwrap_or_default();
    let mut conn = open.connection()?;
    let tx = at_generation(&mut conn, open)?;
    let live_chunk = store::live_chunk(open.schema_version());
    let searcher = &index.searcher;
    let segments = searcher
        .segment_readers()
        .iter()
        .map(|segment| {
            Ok(Segment {
                documents: segment
                    .get_store_reader(1)
                    .map_err(|err| Error::storage("cannot read the lexical index", err))?,
                // Absent in a generation written before filters, or where no chunk has a value.
                modified: segment.fast_fields().u64("modified").ok(),
                meta: segment.fast_fields().str("meta").ok().flatten(),
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let addresses: Box<dyn Iterator<Item = DocAddress>> = match document_ids {
        None => Box::new(searcher.segment_readers().iter().enumerate().flat_map(
            |(ordinal, segment)| {
                segment
                    .doc_ids_alive()
                    .map(move |doc| DocAddress::new(ordinal as u32, doc))
            },
        )),
        Some(ids) => {
            let mut addresses = Vec::new();
            for id in ids {
                let term = Term::from_field_text(index.fields.document_id, id);
                let query = TermQuery::new(term, IndexRecordOption::Basic);
                let found = searcher
                    .search(&query, &DocSetCollector)
                    .map_err(|err| Error::storage("cannot read a document's chunks", err))?;
                addresses.extend(found);
            }
            addresses.sort();
            Box::new(addresses.into_iter())
        }
    };
    let batch = batch.max(1);
    let mut pending = Vec::with_capacity(batch);
    let mut count = 0u64;
    let mut hash = (String::new(), String::new());
    for address in addresses {
        let segment = &segments[address.segment_ord as usize];
        let stored: TantivyDocument = segment
            .documents
            .get(address.doc_id)
            .map_err(|err| Error::storage("cannot read a stored chunk", err))?;
        let chunk_id = stored
            .get_first(index.fields.chunk_id)
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let record = store::chunk_record_in(&tx, chunk_id, &live_chunk)?.ok_or_else(|| {
            Error::storage("the lexical index names a chunk the store lacks", "no row")
        })?;
        if hash.0 != record.document_id {
            hash = (
                record.document_id.clone(),
                store::content_hash(&tx, &record.document_id)?,
            );
        }
        let vector = rows
            .get(&address)
            .and_then(|row| open.vectors().map(|v| v.vector(*row).to_vec()));
        let mut terms = Vec::new();
        if let Some(meta) = &segment.meta {
            for ord in meta.term_ords(address.doc_id) {
                let mut term = String::new();
                meta.ord_to_str(ord, &mut term)
                    .map_err(|err| Error::storage("cannot read a chunk's metadata", err))?;
                terms.push(term);
            }
        }
        pending.push(ExportedChunk {
            record,
            content_hash: hash.1.clone(),
            vector,
            modified: segment
                .modified
                .as_ref()
                .and_then(|c| c.first(address.doc_id)),
            meta: terms,
        });
        count += 1;
        if pending.len() == batch {
            sink(std::mem::replace(&mut pending, Vec::with_capacity(batch)))?;
        }
    }
    if !pending.is_empty() {
        sink(pending)?;
    }
    tx.finish().map_err(sql_err("cannot read the collection"))?;
    Ok(count)
}

/// What the export reads of one segment.
struct Segment {
    documents: tantivy::store::StoreReader,
    modified: Option<tantivy::columnar::Column<u64>>,
    meta: Option<tantivy::columnar::StrColumn>,
}
