//! Office documents, spreadsheets, notebooks, mail and books (the `office` feature): DOCX, PPTX,
//! XLSX, ODT, ODP, ODS, RTF, Jupyter notebooks, EML, MBOX and EPUB, read as `extracted` sources.
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
//! cells, columns and the size of their text (`sheet`, `ods`), RTF by its group depth (`rtf`),
//! notebooks by the JSON parser's nesting limit;
//! mail by the 64 MiB any source is held to (its parser decodes messages nested in messages at
//! most three deep).
//! A file past a limit fails alone, with its reason.
//!
//! A mail file's attachments are found by `attachment`, which names each by its address in the
//! file; reading one as a document of its own is `extract`'s, which knows every format.

mod archive;
pub mod attachment;
mod document;
mod epub;
mod mail;
mod notebook;
mod ods;
mod rtf;
mod sheet;
mod xml;

pub use archive::{MAX_ENTRIES, MAX_RATIO, MAX_UNCOMPRESSED};
pub use attachment::{MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS};
pub use rtf::MAX_GROUP_DEPTH;
pub use sheet::{MAX_CELLS, MAX_COLUMNS, ROWS_PER_BLOCK};
pub use xml::MAX_DEPTH;

use crate::units::UnitText;
pub use crate::units::{Extracted, Malformed, Unit};

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
    /// OpenDocument spreadsheets: one unit per block of a sheet's rows.
    Ods,
    /// Rich Text Format documents.
    Rtf,
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
    Format::Ods,
    Format::Rtf,
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
            Format::Ods => "ods",
            Format::Rtf => "rtf",
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
            Format::Ods => "groundkit-ods@1",
            Format::Rtf => "groundkit-rtf@1",
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
            Format::Ods => "ODS",
            Format::Rtf => "RTF",
            Format::Notebook => "a Jupyter notebook",
            Format::Email => "an e-mail message",
            Format::Mbox => "a mailbox",
            Format::Epub => "EPUB",
        }
    }
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
        Format::Ods => ods::ods(bytes, name),
        Format::Rtf => rtf::text(bytes, name),
        Format::Notebook => notebook::cells(bytes, name),
        Format::Email => mail::message(bytes, name),
        Format::Mbox => mail::mailbox(bytes, name),
        Format::Epub => epub::sections(bytes, name),
    }
}
