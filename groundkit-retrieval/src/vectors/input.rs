//! What a chunk is embedded as, for ingest only: its text, and, for every chunk after its
//! document's first, the document's heading in front of it, so a passage from the middle of a
//! document is embedded knowing what the document is about (a chunk's citation and content stay
//! its own bytes; only its vector sees the heading).
//!
//! A document's heading is its first line when that line is a paragraph of its own (a blank line
//! follows it) of at most [`HEADING_MAX_BYTES`]: a BEIR record's title, a Markdown `# Title`, the
//! first line of a note. A document without one embeds every chunk as its text alone.

use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use crate::lexical::Fields;
use groundkit_core::Error;

/// The longest first line that counts as a heading, in bytes (SciFact's longest title is 300).
pub(crate) const HEADING_MAX_BYTES: usize = 300;

/// The heading of a document whose first chunk is `first_chunk`, if it has one.
pub(crate) fn heading(first_chunk: &str) -> Option<&str> {
    let text = first_chunk.trim_start();
    let (line, rest) = text.split_once('\n')?;
    let line = line.trim_end();
    let (blank, _) = rest.split_once('\n')?;
    let is_heading = !line.is_empty() && line.len() <= HEADING_MAX_BYTES && blank.trim().is_empty();
    is_heading.then_some(line)
}

/// A chunk as the generation stores it, read once.
struct Stored {
    document_id: String,
    content: String,
    start: u64,
}

fn stored(searcher: &Searcher, fields: &Fields, address: DocAddress) -> Result<Stored, Error> {
    let doc: TantivyDocument = searcher
        .doc(address)
        .map_err(|err| Error::storage("cannot read a stored chunk", err))?;
    let text = |field| {
        doc.get_first(field)
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    Ok(Stored {
        document_id: text(fields.document_id),
        content: text(fields.content),
        start: doc
            .get_first(fields.start)
            .and_then(|v| v.as_u64())
            .unwrap_or_default(),
    })
}

/// The embedding inputs of a committed generation's chunks. A document's first chunk and heading
/// are looked up through its id in the lexical index and kept while its chunks come in a row, as
/// they do in address order; nothing is kept per document beyond the last one.
pub(crate) struct Inputs<'a> {
    searcher: &'a Searcher,
    fields: &'a Fields,
    /// The last document seen: its id, its first chunk's start, its heading.
    last: Option<(String, u64, Option<String>)>,
}

impl<'a> Inputs<'a> {
    pub(crate) fn new(searcher: &'a Searcher, fields: &'a Fields) -> Self {
        Self {
            searcher,
            fields,
            last: None,
        }
    }

    /// What the chunk at `address` is embedded as.
    pub(crate) fn of(&mut self, address: DocAddress) -> Result<String, Error> {
        let chunk = stored(self.searcher, self.fields, address)?;
        let known = matches!(&self.last, Some((id, _, _)) if *id == chunk.document_id);
        if !known {
            let (first_start, heading) = self.first_chunk(&chunk.document_id)?;
            self.last = Some((chunk.document_id.clone(), first_start, heading));
        }
        let Some((_, first_start, heading)) = &self.last else {
            return Err(Error::internal("no document was looked up"));
        };
        Ok(match heading {
            Some(heading) if chunk.start > *first_start => {
                format!("{heading}\n\n{}", chunk.content)
            }
            _ => chunk.content,
        })
    }

    /// The start and the heading of the first chunk of `document_id`.
    fn first_chunk(&self, document_id: &str) -> Result<(u64, Option<String>), Error> {
        let term = Term::from_field_text(self.fields.document_id, document_id);
        let query = TermQuery::new(term, IndexRecordOption::Basic);
        let addresses = self
            .searcher
            .search(&query, &DocSetCollector)
            .map_err(|err| Error::storage("cannot read a document's chunks", err))?;
        let mut first: Option<Stored> = None;
        for address in addresses {
            let chunk = stored(self.searcher, self.fields, address)?;
            if first.as_ref().is_none_or(|f| chunk.start < f.start) {
                first = Some(chunk);
            }
        }
        let first = first.ok_or_else(|| Error::internal("a chunk's document has no chunks"))?;
        Ok((first.start, heading(&first.content).map(str::to_owned)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_line_that_is_a_paragraph_of_its_own_is_the_heading() {
        assert_eq!(
            heading("Green tea\n\nSteep it for two minutes."),
            Some("Green tea")
        );
        assert_eq!(
            heading("# Green tea \r\n\r\nSteep it."),
            Some("# Green tea")
        );
        assert_eq!(heading("\n\n  Title\n   \nBody"), Some("Title"));
    }

    #[test]
    fn a_first_line_inside_a_paragraph_or_too_long_or_alone_is_no_heading() {
        assert_eq!(
            heading("Steep green tea\nfor two minutes.\n\nThen drink."),
            None
        );
        assert_eq!(heading("A document of one line"), None);
        assert_eq!(heading("One line\n"), None);
        let long = "t".repeat(HEADING_MAX_BYTES + 1);
        assert_eq!(heading(&format!("{long}\n\nbody")), None);
        let longest = "t".repeat(HEADING_MAX_BYTES);
        assert_eq!(
            heading(&format!("{longest}\n\nbody")),
            Some(longest.as_str())
        );
    }
}
