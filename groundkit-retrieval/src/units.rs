//! Documents made of parts (slides, blocks of a sheet's rows, cells, messages, PDF pages): their
//! text built unit by unit, each unit a byte range of it with its scope (`slide 2`, `page 3`).
//! The ingest makes each unit one chunk, cut by the text chunker when larger than the budget.

use crate::source_file::MAX_SOURCE_BYTES;

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

/// A document's text and, for formats made of parts, its units.
pub struct Extracted {
    /// The text chunk offsets are measured on.
    pub text: String,
    /// The units (byte ranges of `text` with their scopes); `None` when the text is one flow,
    /// cut by the text chunker.
    pub units: Option<Vec<Unit>>,
}

/// Builds a document's text unit by unit, units separated by a blank line, at most
/// [`MAX_SOURCE_BYTES`] of it.
pub(crate) struct UnitText {
    text: String,
    units: Vec<Unit>,
    format: &'static str,
}

impl UnitText {
    pub(crate) fn new(format: &'static str) -> Self {
        Self {
            text: String::new(),
            units: Vec::new(),
            format,
        }
    }

    /// Appends a unit (empty ones are left out), or fails when the text passes
    /// [`MAX_SOURCE_BYTES`].
    pub(crate) fn push(&mut self, scope: String, body: &str) -> Result<(), Malformed> {
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
            return Err(Malformed {
                format: self.format,
                reason: format!("its text is larger than {} MiB", MAX_SOURCE_BYTES >> 20),
            });
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> Extracted {
        Extracted {
            text: self.text,
            units: Some(self.units),
        }
    }
}
