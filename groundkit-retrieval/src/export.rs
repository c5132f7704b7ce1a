//! A committed generation's live chunks, read out whole with their vectors: what another backend
//! loads to serve the same collection (the OpenSearch backend publishes them as one index per
//! generation).

use std::borrow::Cow;
use std::collections::HashMap;

use tantivy::schema::Value;
use tantivy::{DocAddress, TantivyDocument};

use crate::open::OpenCollection;
use crate::store::{self, ChunkRecord, sql_err};
use groundkit_core::Error;

/// One live chunk of a generation, with its vector when the generation has vectors.
#[derive(Debug, Clone)]
pub struct ExportedChunk {
    /// The chunk joined with its document, as `fetch_chunk` verifies it.
    pub record: ChunkRecord,
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
    let tx = conn
        .transaction()
        .map_err(sql_err("cannot read the collection"))?;
    if store::generation(&tx)? != open.generation() {
        return Err(Error::storage(
            "an ingest committed another generation during the export",
            "generation moved",
        ));
    }
    let live_chunk = store::live_chunk(open.schema_version());
    let batch = batch.max(1);
    let mut pending = Vec::with_capacity(batch);
    let mut count = 0u64;
    for (ordinal, segment) in index.searcher.segment_readers().iter().enumerate() {
        let documents = segment
            .get_store_reader(1)
            .map_err(|err| Error::storage("cannot read the lexical index", err))?;
        // Absent in a generation written before filters, or where no chunk has a value.
        let modified = segment.fast_fields().u64("modified").ok();
        let meta = segment.fast_fields().str("meta").ok().flatten();
        for doc in segment.doc_ids_alive() {
            let stored: TantivyDocument = documents
                .get(doc)
                .map_err(|err| Error::storage("cannot read a stored chunk", err))?;
            let chunk_id = stored
                .get_first(index.fields.chunk_id)
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            let record = store::chunk_record_in(&tx, chunk_id, &live_chunk)?.ok_or_else(|| {
                Error::storage("the lexical index names a chunk the store lacks", "no row")
            })?;
            let vector = rows
                .get(&DocAddress::new(ordinal as u32, doc))
                .and_then(|row| open.vectors().map(|v| v.vector(*row).to_vec()));
            let mut terms = Vec::new();
            if let Some(meta) = &meta {
                for ord in meta.term_ords(doc) {
                    let mut term = String::new();
                    meta.ord_to_str(ord, &mut term)
                        .map_err(|err| Error::storage("cannot read a chunk's metadata", err))?;
                    terms.push(term);
                }
            }
            pending.push(ExportedChunk {
                record,
                vector,
                modified: modified.as_ref().and_then(|c| c.first(doc)),
                meta: terms,
            });
            count += 1;
            if pending.len() == batch {
                sink(std::mem::replace(&mut pending, Vec::with_capacity(batch)))?;
            }
        }
    }
    if !pending.is_empty() {
        sink(pending)?;
    }
    tx.finish().map_err(sql_err("cannot read the collection"))?;
    Ok(count)
}
