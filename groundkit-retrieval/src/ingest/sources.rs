//! Sources: reads one file, URL or BEIR corpus and hands its documents to the writer.
//!
//! Files are opened once inside the base directory and read from that handle
//! (`source_file::open_within`), at most [`MAX_SOURCE_BYTES`] of them; a BEIR corpus is read line
//! by line, each line at most that long. An office document, workbook, notebook, mailbox or book
//! (the `office` feature) or a PDF is extracted, and each of its units (a slide, a block of rows,
//! a cell, a message, a section, a page) made one chunk, or cut by the text chunker when larger. A source-code
//! file (the `code` feature) is judged on its bytes first (`code::skip`), then chunked at its
//! definitions, or as text when its language has no grammar or its grammar cannot parse it.

use std::io::BufReader;
use std::path::Path;
#[cfg(feature = "fetch-url")]
use std::time::Duration;

use crate::chunk::Span;
#[cfg(feature = "fetch-url")]
use crate::collection::CollectionPaths;
use crate::extract::{self, BEIR_EXTRACTOR, BeirRecord, ExtractError, HTML_EXTRACTOR};
use crate::ingest::ItemOutcome;
use crate::ingest::discover::FileKind;
use crate::ingest::front_matter::{self, Metadata};
use crate::ingest::writer::{Change, Prepared, Writer};
use crate::model::SourceClass;
#[cfg(feature = "office")]
use crate::office::Format;
use crate::source_file::{
    BoundedLines, MAX_SOURCE_BYTES, ReadError, SourceFile, open_within, read_bounded,
};
use groundkit_core::Error;

pub(super) enum FileError {
    /// Skip this source and report why.
    Skip(String),
    /// The collection cannot be written; stop (the transaction rolls back).
    Fatal(Error),
    /// Not source code worth reading; counted, not reported as a failure.
    #[cfg(feature = "code")]
    NotSource(crate::code::skip::SkipReason),
}

impl FileError {
    /// Why the source was skipped, for a failure report.
    pub(super) fn reason(self) -> String {
        match self {
            FileError::Skip(reason) => reason,
            FileError::Fatal(err) => err.to_string(),
            #[cfg(feature = "code")]
            FileError::NotSource(reason) => format!("not source code worth reading ({reason:?})"),
        }
    }
}

impl From<Error> for FileError {
    fn from(err: Error) -> Self {
        FileError::Fatal(err)
    }
}

impl From<ExtractError> for FileError {
    fn from(err: ExtractError) -> Self {
        FileError::Skip(err.to_string())
    }
}

#[cfg(feature = "office")]
impl From<crate::office::Malformed> for FileError {
    fn from(err: crate::office::Malformed) -> Self {
        ExtractError::from(err).into()
    }
}

impl From<ReadError> for FileError {
    fn from(err: ReadError) -> Self {
        ExtractError::from(err).into()
    }
}

/// Opens a file source inside the (canonical) base directory.
fn open(path: &Path, base: &Path) -> Result<SourceFile, FileError> {
    open_within(path, base).map_err(|err| FileError::Skip(err.reason()))
}

/// A file read and hashed (on a worker thread): its document prepared unless the collection
/// already holds that hash for it.
pub(super) struct StagedFile {
    rel: String,
    hash: String,
    /// The document, cut into chunks; `None` when the collection holds this hash already.
    prepared: Option<Result<Prepared, FileError>>,
    /// A mail file's bytes, and whether it is a mailbox: its attachments are documents of their
    /// own, written with it.
    #[cfg(feature = "office")]
    mail: Option<(bool, Vec<u8>)>,
    /// How a source-code file was chunked, when it was prepared.
    #[cfg(feature = "code")]
    chunking: Option<Chunking>,
}

/// What the collection held before this ingest: each document's content hash.
pub(super) type Known = std::collections::HashMap<String, String>;

/// Reads a file of `kind` and hashes it; extracts and chunks it unless `known` holds its hash.
pub(super) fn stage_file(
    base: &Path,
    path: &Path,
    rel: &str,
    kind: FileKind,
    max_bytes: usize,
    known: &Known,
) -> Result<StagedFile, FileError> {
    let source = open(path, base)?;
    let modified = source.modified;
    let bytes = read_bounded(source, MAX_SOURCE_BYTES)?;
    let (class, extractor) = match kind {
        FileKind::Text => (SourceClass::Text, None),
        FileKind::Html => (SourceClass::Extracted, Some(HTML_EXTRACTOR)),
        #[cfg(feature = "extract-pdf")]
        FileKind::Pdf => (SourceClass::Extracted, Some(extract::PDF_EXTRACTOR)),
        #[cfg(not(feature = "extract-pdf"))]
        FileKind::Pdf => return Err(ExtractError::Unsupported("PDF").into()),
        #[cfg(feature = "office")]
        FileKind::Office(format) => (SourceClass::Extracted, Some(format.extractor())),
    };
    let hash = super::sha256_hex(&[extractor.unwrap_or("").as_bytes(), &bytes]);
    #[cfg(feature = "office")]
    let mail = match kind {
        FileKind::Office(format @ (Format::Email | Format::Mbox)) => {
            Some((format == Format::Mbox, bytes.clone()))
        }
        _ => None,
    };
    let prepared = (known.get(rel) != Some(&hash)).then(|| {
        let (text, chunks) = match kind {
            FileKind::Text => (
                String::from_utf8(bytes).map_err(|_| ExtractError::InvalidUtf8)?,
                None,
            ),
            FileKind::Html => (extract::html_to_text(&bytes)?, None),
            #[cfg(feature = "extract-pdf")]
            FileKind::Pdf => units_cut(extract::pdf_pages(&bytes)?, max_bytes),
            #[cfg(not(feature = "extract-pdf"))]
            FileKind::Pdf => return Err(ExtractError::Unsupported("PDF").into()),
            #[cfg(feature = "office")]
            FileKind::Office(format) => units_cut(
                crate::office::extract(format, &bytes).map_err(ExtractError::from)?,
                max_bytes,
            ),
        };
        prepared(
            rel, class, extractor, &hash, chunks, text, max_bytes, modified,
        )
    });
    Ok(StagedFile {
        rel: rel.to_owned(),
        hash,
        prepared,
        #[cfg(feature = "office")]
        mail,
        #[cfg(feature = "code")]
        chunking: None,
    })
}

/// The document of a file source holding `text`, cut into `chunks` (by the text chunker when
/// `None`); a text of only whitespace is skipped.
#[allow(clippy::too_many_arguments)]
fn prepared(
    rel: &str,
    class: SourceClass,
    extractor: Option<&'static str>,
    hash: &str,
    chunks: Option<Vec<Span>>,
    text: String,
    max_bytes: usize,
    modified: Option<u64>,
) -> Result<Prepared, FileError> {
    if text.trim().is_empty() {
        return Err(FileError::Skip("contains no text".into()));
    }
    let metadata = if class == SourceClass::Text && front_matter::applies_to(rel) {
        front_matter::read(&text)
    } else {
        Metadata::new()
    };
    Ok(Prepared {
        modified,
        metadata,
        document_id: rel.to_owned(),
        source: rel.to_owned(),
        class,
        extractor,
        snapshot: None,
        record_offset: None,
        hash: hash.to_owned(),
        chunks: Some(chunks.unwrap_or_else(|| crate::chunk::text_chunks(&text, max_bytes))),
        text,
    })
}

/// Writes a staged file (and a mail file's attachments first). Should the store no longer hold
/// the hash the stage found known (a document written twice in one ingest), the file is staged
/// again by `restage`, with nothing known.
pub(super) fn write_staged(
    writer: &mut Writer<'_>,
    staged: StagedFile,
    restage: impl FnOnce() -> Result<StagedFile, FileError>,
) -> Result<Change, FileError> {
    #[cfg(feature = "office")]
    if let Some((mailbox, bytes)) = &staged.mail {
        super::attachments::ingest_attachments(writer, &staged.rel, *mailbox, bytes)?;
    }
    #[cfg(feature = "code")]
    let mut chunking = staged.chunking;
    let change = writer.write_if_changed(&staged.rel, staged.hash, |_| match staged.prepared {
        Some(prepared) => prepared,
        None => {
            let again = restage()?;
            #[cfg(feature = "code")]
            {
                chunking = again.chunking;
            }
            again
                .prepared
                .unwrap_or_else(|| Err(FileError::Skip("changed while it was being read".into())))
        }
    });
    #[cfg(feature = "code")]
    if let (Ok(Change::Added | Change::Updated), Some(chunking)) = (&change, chunking) {
        let counts = &mut writer.summary.code;
        match chunking {
            Chunking::Definitions => counts.definitions += 1,
            Chunking::NoGrammar => counts.no_grammar += 1,
            Chunking::Unparsable => counts.unparsable += 1,
        }
    }
    change
}

/// An extracted document's text and, when it is made of units, its chunks: each unit one chunk,
/// a unit larger than `max_bytes` cut by the text chunker, every chunk with its unit's scope.
/// `None` when the document is one flow, for the text chunker.
#[cfg(any(feature = "office", feature = "extract-pdf"))]
pub(super) fn units_cut(
    doc: crate::units::Extracted,
    max_bytes: usize,
) -> (String, Option<Vec<Span>>) {
    let Some(units) = doc.units else {
        return (doc.text, None);
    };
    let mut spans = Vec::with_capacity(units.len());
    for unit in units {
        let body = &doc.text[unit.start..unit.end];
        spans.extend(
            crate::chunk::text_chunks(body, max_bytes)
                .into_iter()
                .map(|span| Span {
                    start: unit.start + span.start,
                    end: unit.start + span.end,
                    scope: unit.scope.clone(),
                }),
        );
    }
    (doc.text, Some(spans))
}

/// Reads a source-code file and hashes it: skipped when it is not source worth reading, else,
/// unless `known` holds its hash, chunked at its definitions (or as text), the chunker recorded
/// as its extractor.
#[cfg(feature = "code")]
pub(super) fn stage_code(
    base: &Path,
    path: &Path,
    rel: &str,
    kind: crate::code::SourceKind,
    max_bytes: usize,
    known: &Known,
) -> Result<StagedFile, FileError> {
    use crate::code::{self, SourceKind, TEXT_CHUNKER};
    let source = open(path, base)?;
    let modified = source.modified;
    let bytes = read_bounded(source, MAX_SOURCE_BYTES)?;
    if let Some(reason) = code::skip::skip_by_content(&bytes) {
        return Err(FileError::NotSource(reason));
    }
    let chunker = match kind {
        SourceKind::Parsed(language) => language.chunker(),
        SourceKind::Unparsed => TEXT_CHUNKER,
    };
    let hash = super::sha256_hex(&[chunker.as_bytes(), &bytes]);
    let mut chunking = None;
    let prepared = (known.get(rel) != Some(&hash)).then(|| {
        let text = String::from_utf8(bytes).map_err(|_| ExtractError::InvalidUtf8)?;
        if text.trim().is_empty() {
            return Err(FileError::Skip("contains no text".into()));
        }
        let parsed = match kind {
            SourceKind::Parsed(language) => code::chunk_definitions(language, &text, max_bytes)
                .map(|chunks| (language.chunker(), chunks))
                .ok_or(Chunking::Unparsable),
            SourceKind::Unparsed => Err(Chunking::NoGrammar),
        };
        let (extractor, chunks) = match parsed {
            Ok(parsed) => {
                chunking = Some(Chunking::Definitions);
                parsed
            }
            Err(fallback) => {
                chunking = Some(fallback);
                (TEXT_CHUNKER, code::text_chunks(&text, max_bytes))
            }
        };
        prepared(
            rel,
            SourceClass::Text,
            Some(extractor),
            &hash,
            Some(chunks),
            text,
            max_bytes,
            modified,
        )
    });
    Ok(StagedFile {
        rel: rel.to_owned(),
        hash,
        prepared,
        #[cfg(feature = "office")]
        mail: None,
        chunking,
    })
}

/// How a source file was chunked.
#[cfg(feature = "code")]
#[derive(Clone, Copy)]
enum Chunking {
    Definitions,
    NoGrammar,
    Unparsable,
}

#[cfg(feature = "fetch-url")]
pub(super) fn ingest_url(
    writer: &mut Writer<'_>,
    paths: &CollectionPaths,
    url: &str,
    timeout: Duration,
) -> Result<Change, FileError> {
    let fetched = crate::snapshot_fetch::fetch(url, timeout).map_err(FileError::Skip)?;
    if fetched.text.trim().is_empty() {
        return Err(FileError::Skip("contains no text".into()));
    }
    let hash = super::sha256_hex(&[
        fetched.extractor.unwrap_or("").as_bytes(),
        fetched.text.as_bytes(),
    ]);
    writer.write_if_changed(url, hash, |hash| {
        let name = format!("{}.txt", &hash[..32]);
        write_snapshot(paths, &name, fetched.text.as_bytes())?;
        Ok::<_, FileError>(Prepared {
            document_id: url.to_owned(),
            source: url.to_owned(),
            class: SourceClass::Snapshot,
            extractor: fetched.extractor,
            snapshot: Some(name),
            record_offset: None,
            hash,
            text: fetched.text,
            chunks: None,
            modified: None,
            metadata: Metadata::new(),
        })
    })
}

/// Writes a content-addressed snapshot atomically (temporary file, then rename).
#[cfg(feature = "fetch-url")]
fn write_snapshot(paths: &CollectionPaths, name: &str, bytes: &[u8]) -> Result<(), Error> {
    let io = |err| Error::storage("cannot write a snapshot", err);
    std::fs::create_dir_all(&paths.snapshots).map_err(io)?;
    let target = paths.snapshots.join(name);
    if target.is_file() {
        return Ok(());
    }
    let tmp = paths.snapshots.join(format!("{name}.tmp"));
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(&tmp, &target).map_err(io)?;
    Ok(())
}

/// Reads a BEIR corpus: one document per record line, its offset kept so `fetch_chunk` can go
/// straight to it.
pub(super) fn ingest_beir(
    writer: &mut Writer<'_>,
    base: &Path,
    path: &Path,
    rel: &str,
) -> Result<ItemOutcome, FileError> {
    let source = open(path, base)?;
    let mut lines = BoundedLines::new(
        BufReader::with_capacity(1 << 20, source.file),
        MAX_SOURCE_BYTES,
        0,
    );
    let (mut added, mut updated, mut unchanged, mut failed) = (0, 0, 0, 0);
    let mut number = 0;
    while let Some((offset, line)) = lines.next_line()? {
        number += 1;
        let source_line = format!("{rel}:{number}");
        let Ok(line) = std::str::from_utf8(&line) else {
            writer.fail(source_line, "not valid UTF-8 text");
            failed += 1;
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        let record: BeirRecord = match serde_json::from_str(line) {
            Ok(record) => record,
            Err(err) => {
                writer.fail(source_line, format!("not a BEIR corpus record: {err}"));
                failed += 1;
                continue;
            }
        };
        // An id this run already saw, in this file or an earlier one: the first record keeps it.
        if writer.ledger.get(&record.id)?.is_some() {
            writer.fail(
                source_line,
                format!("duplicate document id '{}'", record.id),
            );
            failed += 1;
            continue;
        }
        let text = record.document_text();
        if text.trim().is_empty() {
            // Like a skipped file, a record without text keeps what the collection has for its
            // id, and its id stays taken for the rest of the run.
            writer.ledger.see(&record.id)?;
            writer.fail(source_line, "contains no text");
            failed += 1;
            continue;
        }
        let hash = super::sha256_hex(&[BEIR_EXTRACTOR.as_bytes(), text.as_bytes()]);
        let id = record.id.clone();
        let change = writer.write_if_changed(&id, hash, |hash| {
            Ok::<_, Error>(Prepared {
                document_id: record.id,
                source: rel.to_owned(),
                class: SourceClass::Extracted,
                extractor: Some(BEIR_EXTRACTOR),
                snapshot: None,
                record_offset: Some(offset),
                hash,
                text,
                chunks: None,
                modified: None,
                metadata: Metadata::new(),
            })
        })?;
        writer.count(&change);
        match change {
            Change::Added => added += 1,
            Change::Updated => updated += 1,
            Change::Unchanged => unchanged += 1,
        }
    }
    Ok(ItemOutcome::Records {
        added,
        updated,
        unchanged,
        failed,
    })
}
