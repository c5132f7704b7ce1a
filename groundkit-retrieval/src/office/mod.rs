//! Office documents, spreadsheets, notebooks, mail and books (the `office` feature): DOCX, PPTX,
//! XLSX, ODT, ODP, Jupyter notebooks, EML, MBOX and EPUB, read as `extracted` sources.
//!
//! Each format has an extractor with a recorded identity (`groundkit-docx@1`, ...) that turns the
//! file's bytes into text, deterministically, so `fetch_chunk` re-runs it to verify a chunk as it
//! does for HTML and PDF. Formats made of parts (slides, blocks of a sheet's rows, notebook
//! cells) also name their units: the ingest makes each unit one chunk, cut by the text chunker
//! when it is larger than the chunk budget, its chunks carrying the unit's scope (`slide 2`, `sheet
//! Prices, rows 1-20`, `cell 3 (code)`, `message 2`).
//!
//! Every read is bounded: zip archives by entry count, total uncompressed size and compression
//! ratio (`archive`), XML by nesting depth and with no entities (`xml`), sheets by their
//! cells and the size of their text (`sheet`), notebooks by the JSON parser's nesting limit;
//! mail by the 64 MiB any source is held to (its parser decodes messages nested in messages at
//! most three deep).
//! A file past a limit fails alone, with its reason.

mod archive;
mod document;
mod epub;
mod mail;
mod notebook;
mod sheet;
mod xml;

pub use archive::{MAX_ENTRIES, MAX_RATIO, MAX_UNCOMPRESSED};
pub use sheet::{MAX_CELLS, ROWS_PER_BLOCK};
pub use xml::MAX_DEPTH;

/// Why a document does not read as its format. Messages name no paths.
#[derive(Debug)]
pub struct Malformed {
    /// The format's name.
    pub format: &'static str,
    /// What went wrong.
    pub reason: String,
}

/// A unit of a document: the byte range `start..end` of its text, and its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Offset of its first byte.
    pub start: usize,
    /// Offset one past its last byte.
    pub end: usize,
    /// Where it lies in the document (`slide 2`).
    pub scope: String,
}

use crate::source_file::MAX_SOURCE_BYTES;

/// A format this feature reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Word (Office Open XML) documents.
    Docx,
    /// PowerPoint (Office Open XML) presentations: one unit per slide.
    Pptx,
    /// Excel (Office Open XML) workbooks: one unit per block of a sheet's rows.
    Xlsx,
    /// OpenDocument text.
    Odt,
    /// OpenDocument presentations: one unit per slide.
    Odp,
    /// Jupyter notebooks: one unit per cell; outputs are not read.
    Notebook,
    /// One e-mail message (RFC 5322).
    Email,
    /// A mailbox of messages (mbox): one unit per message.
    Mbox,
    /// EPUB books: one unit per document of the spine.
    Epub,
}

const FORMATS: &[Format] = &[
    Format::Docx,
    Format::Pptx,
    Format::Xlsx,
    Format::Odt,
    Format::Odp,
    Format::Notebook,
    Format::Email,
    Format::Mbox,
    Format::Epub,
];

impl Format {
    /// The format of a file with extension `ext` (lower case), if this feature reads it.
    pub fn from_extension(ext: &str) -> Option<Self> {
        FORMATS.iter().copied().find(|f| f.extension() == ext)
    }

    /// The format whose extractor has identity `name`.
    pub fn from_extractor(name: &str) -> Option<Self> {
        FORMATS.iter().copied().find(|f| f.extractor() == name)
    }

    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Docx => "docx",
            Format::Pptx => "pptx",
            Format::Xlsx => "xlsx",
            Format::Odt => "odt",
            Format::Odp => "odp",
            Format::Notebook => "ipynb",
            Format::Email => "eml",
            Format::Mbox => "mbox",
            Format::Epub => "epub",
        }
    }

    /// The extractor's identity, recorded with each document. Bump its version whenever its
    /// output can change.
    pub fn extractor(self) -> &'static str {
        match self {
            Format::Docx => "groundkit-docx@1",
            Format::Pptx => "groundkit-pptx@1",
            Format::Xlsx => "groundkit-xlsx@1",
            Format::Odt => "groundkit-odt@1",
            Format::Odp => "groundkit-odp@1",
            Format::Notebook => "groundkit-ipynb@1",
            Format::Email => "groundkit-eml@1",
            Format::Mbox => "groundkit-mbox@1",
            Format::Epub => "groundkit-epub@1",
        }
    }

    /// The format's name in failure reasons.
    fn name(self) -> &'static str {
        match self {
            Format::Docx => "DOCX",
            Format::Pptx => "PPTX",
            Format::Xlsx => "XLSX",
            Format::Odt => "ODT",
            Format::Odp => "ODP",
            Format::Notebook => "a Jupyter notebook",
            Format::Email => "an e-mail message",
            Format::Mbox => "a mailbox",
            Format::Epub => "EPUB",
        }
    }
}

/// A document's text and, for formats made of parts, its units.
pub struct Extracted {
    /// The text chunk offsets are measured on.
    pub text: String,
    /// The units (byte ranges of `text` with their scopes); `None` when the text is one flow,
    /// cut by the text chunker.
    pub units: Option<Vec<Unit>>,
}

/// Extracts the text of `bytes`, a file of `format`.
pub fn extract(format: Format, bytes: &[u8]) -> Result<Extracted, Malformed> {
    let name = format.name();
    match format {
        Format::Docx => document::docx(bytes, name),
        Format::Pptx => document::pptx(bytes, name),
        Format::Odt => document::odt(bytes, name),
        Format::Odp => document::odp(bytes, name),
        Format::Xlsx => sheet::xlsx(bytes, name),
        Format::Notebook => notebook::cells(bytes, name),
        Format::Email => mail::message(bytes, name),
        Format::Mbox => mail::mailbox(bytes, name),
        Format::Epub => epub::sections(bytes, name),
    }
}

/// Builds a document's text unit by unit, units separated by a blank line, at most
/// [`MAX_SOURCE_BYTES`] of it.
struct UnitText {
    text: String,
    units: Vec<Unit>,
    format: &'static str,
}

impl UnitText {
    fn new(format: &'static str) -> Self {
        Self {
            text: String::new(),
            units: Vec::new(),
            format,
        }
    }

    /// Appends a unit (empty ones are left out), or fails when the text passes
    /// [`MAX_SOURCE_BYTES`].
    fn push(&mut self, scope: String, body: &str) -> Result<(), Malformed> {
        let body = body.trim();
        if body.is_empty() {
            return Ok(());
        }
        if !self.text.is_empty() {
            self.text.push_str("\n\n");
        }
        let start = self.text.len();
        self.text.push_str(body);
        self.units.push(Unit {
            start,
            end: self.text.len(),
            scope,
        });
        if self.text.len() > MAX_SOURCE_BYTES as usize {
            return Err(archive::malformed(
                self.format,
                format!("its text is larger than {} MiB", MAX_SOURCE_BYTES >> 20),
            ));
        }
        Ok(())
    }

    fn finish(self) -> Extracted {
        Extracted {
            text: self.text,
            units: Some(self.units),
        }
    }
}
