//! PDF: the text layer, page by page, through `pdf-extract`'s plain-text output of the whole
//! document (one pass, as reading it as one flow is). The text written is held to
//! [`MAX_SOURCE_BYTES`]: the reading stops there and the PDF fails with that reason.
//!
//! Each page is a unit with scope `page N` (its position in the document, from 1, not its
//! printed label); pages without text are left out. A PDF the reader fails on, whether by an
//! error or by a panic inside it, fails alone with its reason.

use std::cell::RefCell;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use pdf_extract::{Document, MediaBox, OutputDev, OutputError, PlainTextOutput, Transform};

use super::ExtractError;
use crate::source_file::MAX_SOURCE_BYTES;
use crate::units::{Extracted, Malformed, UnitText};

/// Identity of the PDF extractor: `pdf-extract` 0.12's text, page by page, pages separated by
/// a blank line.
pub const PDF_EXTRACTOR: &str = "groundkit-pdf@1";

/// Identity of the PDF extractor of collections built before pages were read: `pdf-extract`
/// 0.12's text of the whole document as one flow. Their chunks are verified with it until a
/// re-ingest (whose recorded identity differs, so every PDF is read again) gives them pages.
pub const PDF_FLOW_EXTRACTOR: &str = "pdf-extract@0.12";

const FORMAT: &str = "PDF";

const TOO_MUCH_TEXT: &str = "its text is larger than 64 MiB";

/// The text of a PDF, one unit per page that has text: the reader's plain-text output of the
/// whole document in one pass, cut where each page began.
pub fn pdf_pages(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    guarded(|| {
        let doc = load(bytes)?;
        let written = Rc::new(RefCell::new(Written::default()));
        let mut sink = Shared(Rc::clone(&written));
        let mut paged = Paged {
            text: PlainTextOutput::new(&mut sink as &mut dyn Write),
            written: Rc::clone(&written),
            starts: Vec::new(),
        };
        pdf_extract::output_doc(&doc, &mut paged).map_err(|err| {
            let full = written.borrow().full;
            malformed(if full {
                TOO_MUCH_TEXT.into()
            } else {
                err.to_string()
            })
        })?;
        let starts = std::mem::take(&mut paged.starts);
        drop(paged);
        let text = String::from_utf8(written.take().bytes)
            .map_err(|_| malformed("its text is not valid UTF-8".into()))?;
        let mut out = UnitText::new(FORMAT);
        for (i, &(number, start)) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(text.len(), |&(_, next)| next);
            let page = text.get(start..end).unwrap_or_default();
            out.push(format!("page {number}"), page)
                .map_err(ExtractError::from)?;
        }
        Ok(out.finish())
    })
}

/// The reader's plain-text output, noting where each page's text starts in what it wrote.
struct Paged<'a> {
    text: PlainTextOutput<&'a mut dyn Write>,
    written: Rc<RefCell<Written>>,
    /// Each page's number and the offset its text starts at.
    starts: Vec<(u32, usize)>,
}

impl OutputDev for Paged<'_> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.starts
            .push((page_num, self.written.borrow().bytes.len()));
        self.text.begin_page(page_num, media_box, art_box)
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.text.end_page()
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        self.text
            .output_character(trm, width, spacing, font_size, char)
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.text.begin_word()
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        self.text.end_word()
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        self.text.end_line()
    }
}

/// A writer into a buffer that [`Paged`] reads the length of between pages, refusing to grow
/// past [`MAX_SOURCE_BYTES`].
struct Shared(Rc<RefCell<Written>>);

/// What the reader wrote, and whether it tried to write past the limit.
#[derive(Default)]
struct Written {
    bytes: Vec<u8>,
    full: bool,
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut written = self.0.borrow_mut();
        if written.bytes.len() + buf.len() > MAX_SOURCE_BYTES as usize {
            written.full = true;
            return Err(std::io::Error::other(TOO_MUCH_TEXT));
        }
        written.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The text of a PDF as one flow, as [`PDF_FLOW_EXTRACTOR`] read it.
pub fn pdf_flow(bytes: &[u8]) -> Result<String, ExtractError> {
    guarded(|| pdf_extract::extract_text_from_mem(bytes).map_err(|err| malformed(err.to_string())))
}

/// Loads a PDF, decrypting it with the empty password when it is encrypted (as readers do for
/// documents that only restrict printing or copying).
fn load(bytes: &[u8]) -> Result<Document, ExtractError> {
    let mut doc = Document::load_mem(bytes).map_err(|err| malformed(err.to_string()))?;
    if doc.is_encrypted() {
        doc.decrypt("")
            .map_err(|_| malformed("it is encrypted with a password".into()))?;
    }
    Ok(doc)
}

/// Runs `read`, turning a panic inside the PDF reader into that PDF's failure.
fn guarded<T>(read: impl FnOnce() -> Result<T, ExtractError>) -> Result<T, ExtractError> {
    catch_unwind(AssertUnwindSafe(read))
        .unwrap_or_else(|_| Err(malformed("the PDF reader failed on its structure".into())))
}

fn malformed(reason: String) -> ExtractError {
    ExtractError::from(Malformed {
        format: FORMAT,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_past_the_limit_is_refused_and_marked_so_the_pdf_fails_with_that_reason() {
        let limit = MAX_SOURCE_BYTES as usize;
        let written = Rc::new(RefCell::new(Written {
            bytes: vec![b'a'; limit - 2],
            full: false,
        }));
        let mut sink = Shared(Rc::clone(&written));
        assert_eq!(sink.write(b"bc").ok(), Some(2));
        assert!(sink.write(b"d").is_err());
        let written = written.borrow();
        assert!(written.full);
        assert_eq!(written.bytes.len(), limit);
    }
}
