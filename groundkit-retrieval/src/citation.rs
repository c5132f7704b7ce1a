//! Citations and their verification against the source as it is now.
//!
//! `fetch_chunk` re-reads the cited source and compares bytes: `verified` returns the content,
//! `drifted` (the source changed) and `unresolvable` (missing, unreadable, outside its root after
//! following symlinks, or extracted by an extractor this build does not have) return none.
//! `text` sources are sliced directly; `extracted` ones are re-run through the recorded extractor
//! first; `snapshot` ones are read from the collection's snapshot directory. Every source is
//! opened once, checked on the opened handle and read from it (`source_file`). A citation's lines
//! are carried as the ingest recorded them, never checked: the byte offsets are what is compared.

use std::path::Path;

use crate::extract::{self, BEIR_EXTRACTOR, ExtractError};
use crate::model::{FetchChunkResponse, SourceClass, Verification};
use crate::open::OpenCollection;
use crate::source_file::{
    MAX_SOURCE_BYTES, OpenError, ReadError, SourceFile, open_within, read_bounded, read_span,
};
use crate::store::{self, ChunkRecord};
use groundkit_core::Error;

/// Fetches a chunk and verifies its citation. A missing chunk is `ChunkNotFound` and reads no
/// document.
pub fn fetch_chunk(open: &OpenCollection, chunk_id: &str) -> Result<FetchChunkResponse, Error> {
    let record = {
        let mut conn = open.connection()?;
        store::chunk_record(&mut conn, open.schema_version(), chunk_id)?
    };
    let Some(record) = record else {
        return Err(Error::ChunkNotFound {
            chunk_id: chunk_id.to_owned(),
        });
    };
    Ok(fetch_response(
        &record,
        open.base_dir(),
        &open.paths().snapshots,
    ))
}

/// The `fetch_chunk` answer for a stored chunk: its citation verified against the source under
/// `base_dir` (a `snapshot` source against `snapshot_dir`) as it is now. For backends that keep
/// chunk records elsewhere than a collection's store.
pub fn fetch_response(
    record: &ChunkRecord,
    base_dir: &Path,
    snapshot_dir: &Path,
) -> FetchChunkResponse {
    let (verification, content, detail) = match verify(record, base_dir, snapshot_dir) {
        Verdict::Verified(content) => (Verification::Verified, Some(content), None),
        Verdict::Drifted(why) => (Verification::Drifted, None, Some(why.to_owned())),
        Verdict::Unresolvable(why) => (Verification::Unresolvable, None, Some(why.to_owned())),
    };
    FetchChunkResponse {
        chunk_id: record.chunk_id.clone(),
        document_id: record.document_id.clone(),
        chunk_index: record.chunk_index,
        citation: record.citation(),
        scope: record.scope.clone(),
        verification,
        content,
        detail,
        superseded: record.superseded,
    }
}

/// A verification outcome with its reason.
pub(crate) enum Verdict {
    Verified(String),
    Drifted(&'static str),
    Unresolvable(&'static str),
}

const CHANGED: &str = "the source no longer holds the indexed text at the cited offsets";
const UNREADABLE: &str =
    "the source is missing, unreadable, or resolves outside its root after following symlinks";
const NOT_REGULAR: &str = "the source is no longer a regular file";
const TOO_LARGE: &str =
    "the source is larger than the 64 MiB that groundkit reads to re-extract it";
const NO_SNAPSHOT: &str = "the collection records no snapshot for this source";
const NO_EXTRACTOR: &str = "the collection records no extractor for this extracted source";
const OTHER_EXTRACTOR: &str =
    "the source was extracted by an extractor this build does not have, so it cannot be re-run";
const UNPARSABLE: &str = "the recorded extractor no longer parses the source";
const RECORD_GONE: &str = "the corpus file no longer holds this document's record";

/// Re-reads the source of `record` and compares it with the indexed chunk.
///
/// Reads only what the verdict needs: the cited byte range of a `text` source or snapshot, the
/// record's line of a BEIR corpus, and a whole file (at most [`MAX_SOURCE_BYTES`]) only to re-run
/// an HTML or PDF extractor.
fn verify(record: &ChunkRecord, base_dir: &Path, snapshot_dir: &Path) -> Verdict {
    match verify_or_reason(record, base_dir, snapshot_dir) {
        Ok(verdict) | Err(verdict) => verdict,
    }
}

fn verify_or_reason(
    record: &ChunkRecord,
    base_dir: &Path,
    snapshot_dir: &Path,
) -> Result<Verdict, Verdict> {
    match record.source_class {
        SourceClass::Snapshot => {
            let name = record
                .snapshot
                .as_deref()
                .ok_or(Verdict::Unresolvable(NO_SNAPSHOT))?;
            let source = open(&snapshot_dir.join(name), snapshot_dir)?;
            compare_span(&source, record)
        }
        SourceClass::Text => {
            let source = open(&base_dir.join(&record.source), base_dir)?;
            compare_span(&source, record)
        }
        SourceClass::Extracted => {
            let text = extracted_text(record, base_dir)?;
            let (start, end) = (record.start_offset as usize, record.end_offset as usize);
            Ok(match text.get(start..end) {
                Some(slice) if slice == record.content => Verdict::Verified(slice.to_owned()),
                _ => Verdict::Drifted(CHANGED),
            })
        }
    }
}

/// Opens a source inside `root`, or says why not.
fn open(path: &Path, root: &Path) -> Result<SourceFile, Verdict> {
    let root = root
        .canonicalize()
        .map_err(|_| Verdict::Unresolvable(UNREADABLE))?;
    open_within(path, &root).map_err(|err| match err {
        OpenError::NotRegular => Verdict::Unresolvable(NOT_REGULAR),
        OpenError::Unreadable(_) | OpenError::Outside => Verdict::Unresolvable(UNREADABLE),
    })
}

/// Compares the cited byte range of a text source with the indexed content.
fn compare_span(source: &SourceFile, record: &ChunkRecord) -> Result<Verdict, Verdict> {
    let bytes = read_span(&source.file, record.start_offset, record.end_offset)
        .map_err(|_| Verdict::Unresolvable(UNREADABLE))?;
    Ok(match bytes {
        Some(bytes) if bytes == record.content.as_bytes() => {
            Verdict::Verified(record.content.clone())
        }
        _ => Verdict::Drifted(CHANGED),
    })
}

/// Re-runs the recorded extractor on the source as it is now.
fn extracted_text(record: &ChunkRecord, base_dir: &Path) -> Result<String, Verdict> {
    let extractor = record
        .extractor
        .as_deref()
        .ok_or(Verdict::Unresolvable(NO_EXTRACTOR))?;
    let source = open(&base_dir.join(&record.source), base_dir)?;
    if extractor == BEIR_EXTRACTOR {
        return match extract::beir_record_text(
            &source.file,
            &record.document_id,
            record.record_offset,
        ) {
            Ok(Some(text)) => Ok(text),
            Ok(None) => Err(Verdict::Drifted(RECORD_GONE)),
            Err(ExtractError::TooLarge) => Err(Verdict::Unresolvable(TOO_LARGE)),
            Err(_) => Err(Verdict::Unresolvable(UNREADABLE)),
        };
    }
    let bytes = read_bounded(source, MAX_SOURCE_BYTES).map_err(|err| match err {
        ReadError::TooLarge => Verdict::Unresolvable(TOO_LARGE),
        ReadError::Io(_) => Verdict::Unresolvable(UNREADABLE),
    })?;
    match extract::rerun(extractor, &record.document_id, &bytes) {
        Ok(Some(text)) => Ok(text),
        // No extractor of the recorded identity in this build: cannot claim anything.
        Ok(None) => Err(Verdict::Unresolvable(OTHER_EXTRACTOR)),
        Err(_) => Err(Verdict::Drifted(UNPARSABLE)),
    }
}
