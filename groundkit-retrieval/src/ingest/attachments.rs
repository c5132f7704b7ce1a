//! Mail attachments as documents of their own: each attachment of a message or mailbox whose
//! name says a format grk reads becomes a document with the id `MAIL#ADDRESS`
//! (`office::attachment` names the address), its source the mail file, its extractor
//! `mail-attachment@1+` and the extractor of its format. The others are counted in
//! [`IngestSummary::attachments_skipped`](super::IngestSummary::attachments_skipped), as are
//! those past the caps on their size and number.
//!
//! An attachment that does not read fails alone (listed by its document id) and keeps what the
//! collection had for it; a mail file whose attachments cannot be walked keeps every attachment
//! document the collection has for it.

use std::path::Path;

use crate::extract::{self, ExtractError, HTML_EXTRACTOR, TEXT_ATTACHMENT};
use crate::ingest::discover::{FileKind, document_kind};
use crate::ingest::sources::{FileError, units_cut};
use crate::ingest::writer::{Change, Prepared, Writer};
use crate::model::SourceClass;
use crate::office::attachment::{self, Seen};
use groundkit_core::Error;

/// Reads the attachments of the mail file `rel` (a mailbox when `mailbox`), holding `mail`.
pub(super) fn ingest_attachments(
    writer: &mut Writer<'_>,
    rel: &str,
    mailbox: bool,
    mail: &[u8],
) -> Result<(), Error> {
    let walked = attachment::for_each::<FileError>(mail, mailbox, |seen| {
        let Seen::Attachment { address, bytes } = seen else {
            writer.summary.attachments_skipped += 1;
            return Ok(());
        };
        let id = format!("{rel}#{address}");
        match ingest_one(writer, rel, &id, &address, bytes) {
            Ok(None) => writer.summary.attachments_skipped += 1,
            result => {
                super::single_outcome(
                    writer,
                    &id,
                    result.map(|change| change.unwrap_or(Change::Unchanged)),
                )
                .map_err(FileError::Fatal)?;
            }
        }
        Ok(())
    });
    match walked {
        Ok(()) => Ok(()),
        Err(FileError::Fatal(err)) => Err(err),
        // The mail file fails on its own; what the collection has of its attachments is kept.
        Err(_) => writer.keep_stored_under(&format!("{rel}#")),
    }
}

/// Reads one attachment as document `id`; `Ok(None)` when it is not of a format read.
fn ingest_one(
    writer: &mut Writer<'_>,
    rel: &str,
    id: &str,
    address: &str,
    bytes: &[u8],
) -> Result<Option<Change>, FileError> {
    let name = address.rsplit('/').next().unwrap_or(address);
    let inner = match document_kind(Path::new(name)) {
        Some(FileKind::Text) => TEXT_ATTACHMENT,
        Some(FileKind::Html) => HTML_EXTRACTOR,
        #[cfg(feature = "extract-pdf")]
        Some(FileKind::Pdf) => extract::PDF_EXTRACTOR,
        Some(FileKind::Office(format)) => format.extractor(),
        _ => return Ok(None),
    };
    let Some(extractor) = extract::attachment_extractor(inner) else {
        return Ok(None);
    };
    let hash = super::sha256_hex(&[extractor.as_bytes(), bytes]);
    let max_bytes = writer.max_chunk_bytes();
    writer
        .write_if_changed(id, hash, |hash| {
            let doc = extract::extract_attachment(inner, bytes)?
                .ok_or(ExtractError::Unsupported("this attachment's format"))?;
            if doc.text.trim().is_empty() {
                return Err(FileError::Skip("contains no text".into()));
            }
            let (text, chunks) = units_cut(doc, max_bytes);
            Ok(Prepared {
                document_id: id.to_owned(),
                source: rel.to_owned(),
                class: SourceClass::Extracted,
                extractor: Some(extractor),
                snapshot: None,
                record_offset: None,
                hash,
                text,
                chunks,
                modified: None,
                metadata: Default::default(),
            })
        })
        .map(Some)
}
