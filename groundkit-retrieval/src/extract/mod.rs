//! Extractors: turn a source's bytes into the text that chunk offsets are measured on.
//!
//! Each extractor has a recorded identity (`name@version`). Verification of an `extracted` source
//! re-runs the extractor the collection recorded; when this build's extractor has another
//! identity, the verdict cannot be `verified`. Bump a version whenever its output can change.

use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};

use crate::source_file::{BoundedLines, MAX_SOURCE_BYTES, ReadError};

/// Identity of the HTML extractor.
pub const HTML_EXTRACTOR: &str = "groundkit-html@1";

/// Identity of the BEIR `corpus.jsonl` reader (`title`, a blank line, then `text`).
pub const BEIR_EXTRACTOR: &str = "beir-jsonl@1";

#[cfg(feature = "extract-pdf")]
mod pdf;

#[cfg(feature = "extract-pdf")]
pub use pdf::{PDF_EXTRACTOR, PDF_FLOW_EXTRACTOR, pdf_flow, pdf_pages};

/// Why a source could not be turned into text. Messages name no paths.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The bytes are not valid UTF-8.
    #[error("not valid UTF-8 text")]
    InvalidUtf8,
    /// The document does not parse as its format.
    #[error("does not parse as {format}: {reason}")]
    Malformed {
        /// The expected format.
        format: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// This build has no extractor for the format.
    #[error("{0} extraction is not available in this build")]
    Unsupported(&'static str),
    /// The source (or one BEIR record line) is larger than [`MAX_SOURCE_BYTES`].
    #[error("is larger than the 64 MiB limit for one source")]
    TooLarge,
    /// Reading failed.
    #[error("cannot be read: {0}")]
    Io(#[from] std::io::Error),
}

/// Re-runs the extractor `extractor` on `bytes` (the raw source) of document `document_id`
/// (which names, for a mail attachment, its address in the mail file).
///
/// `Ok(None)` when this build has no extractor of that identity, which makes verification
/// `unresolvable` rather than a guess.
#[cfg_attr(not(feature = "office"), allow(unused_variables))]
pub fn rerun(
    extractor: &str,
    document_id: &str,
    bytes: &[u8],
) -> Result<Option<String>, ExtractError> {
    #[cfg(feature = "office")]
    if let Some(inner) = extractor.strip_prefix(ATTACHMENT_PREFIX) {
        let Some((_, address)) = document_id.rsplit_once('#') else {
            return Ok(None);
        };
        let attachment = crate::office::attachment::find(bytes, address)?.ok_or_else(|| {
            ExtractError::Malformed {
                format: "a mail attachment",
                reason: "the mail file holds no attachment at its address".into(),
            }
        })?;
        return Ok(extract_attachment(inner, &attachment)?.map(|doc| doc.text));
    }
    #[cfg(feature = "office")]
    if let Some(format) = crate::office::Format::from_extractor(extractor) {
        return Ok(Some(crate::office::extract(format, bytes)?.text));
    }
    match extractor {
        HTML_EXTRACTOR => html_to_text(bytes).map(Some),
        #[cfg(feature = "extract-pdf")]
        PDF_EXTRACTOR => pdf_pages(bytes).map(|doc| Some(doc.text)),
        #[cfg(feature = "extract-pdf")]
        PDF_FLOW_EXTRACTOR => pdf_flow(bytes).map(Some),
        _ => Ok(None),
    }
}

/// What the identity of an extractor run on a mail attachment starts with; the identity of
/// the attachment's own extractor follows (`mail-attachment@1+groundkit-docx@1`), or
/// [`TEXT_ATTACHMENT`].
#[cfg(feature = "office")]
pub const ATTACHMENT_PREFIX: &str = "mail-attachment@1+";

/// The identity of a text attachment's reading (its bytes, UTF-8), after [`ATTACHMENT_PREFIX`].
#[cfg(feature = "office")]
pub const TEXT_ATTACHMENT: &str = "text";

/// The identities recorded for attachments, one per format an attachment is read as.
#[cfg(feature = "office")]
const ATTACHMENT_EXTRACTORS: &[&str] = &[
    "mail-attachment@1+text",
    "mail-attachment@1+groundkit-html@1",
    "mail-attachment@1+groundkit-pdf@1",
    "mail-attachment@1+pdf-extract@0.12",
    "mail-attachment@1+groundkit-docx@1",
    "mail-attachment@1+groundkit-pptx@1",
    "mail-attachment@1+groundkit-xlsx@1",
    "mail-attachment@1+groundkit-odt@1",
    "mail-attachment@1+groundkit-odp@1",
    "mail-attachment@1+groundkit-ods@1",
    "mail-attachment@1+groundkit-rtf@1",
    "mail-attachment@1+groundkit-ipynb@1",
    "mail-attachment@1+groundkit-epub@1",
];

/// The identity to record for an attachment read by the extractor `inner`, when attachments
/// are read that way (mail attached to mail is not).
#[cfg(feature = "office")]
pub fn attachment_extractor(inner: &str) -> Option<&'static str> {
    ATTACHMENT_EXTRACTORS
        .iter()
        .copied()
        .find(|name| name.strip_prefix(ATTACHMENT_PREFIX) == Some(inner))
}

/// Reads an attachment's decoded `bytes` with the extractor `inner`; `Ok(None)` when this
/// build has none of that identity.
#[cfg(feature = "office")]
pub fn extract_attachment(
    inner: &str,
    bytes: &[u8],
) -> Result<Option<crate::units::Extracted>, ExtractError> {
    use crate::office::Format;
    use crate::units::Extracted;
    let flow = |text: String| Some(Extracted { text, units: None });
    Ok(match inner {
        TEXT_ATTACHMENT => {
            flow(String::from_utf8(bytes.to_vec()).map_err(|_| ExtractError::InvalidUtf8)?)
        }
        HTML_EXTRACTOR => flow(html_to_text(bytes)?),
        #[cfg(feature = "extract-pdf")]
        PDF_EXTRACTOR => Some(pdf_pages(bytes)?),
        #[cfg(feature = "extract-pdf")]
        PDF_FLOW_EXTRACTOR => flow(pdf_flow(bytes)?),
        _ => match Format::from_extractor(inner) {
            Some(Format::Email | Format::Mbox) | None => None,
            Some(format) => Some(crate::office::extract(format, bytes)?),
        },
    })
}

/// Extracts readable text from an HTML document.
///
/// Drops markup, comments and `script`/`style`/`noscript`/`template` content, decodes the common
/// character references, collapses whitespace, and separates block elements by blank lines.
pub fn html_to_text(bytes: &[u8]) -> Result<String, ExtractError> {
    let html = std::str::from_utf8(bytes).map_err(|_| ExtractError::InvalidUtf8)?;
    let mut out = String::with_capacity(html.len() / 2);
    let mut pending_space = false;
    let mut rest = html;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |i| &after[i + 3..]);
            continue;
        }
        if rest.starts_with('<') {
            let close = rest.find('>').unwrap_or(rest.len() - 1);
            let tag = &rest[1..close];
            rest = rest.get(close + 1..).unwrap_or("");
            let closing = tag.starts_with('/');
            let name: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .map(|c| c.to_ascii_lowercase())
                .collect();
            if !closing && matches!(name.as_str(), "script" | "style" | "noscript" | "template") {
                let end = format!("</{name}");
                let lower = rest.to_ascii_lowercase();
                rest = match lower.find(&end) {
                    Some(i) => rest[i..].find('>').map_or("", |j| &rest[i + j + 1..]),
                    None => "",
                };
                continue;
            }
            if is_block(&name) {
                push_break(&mut out);
                pending_space = false;
            } else if name == "br" {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                pending_space = false;
            }
            continue;
        }
        let next = rest.find('<').unwrap_or(rest.len());
        let text = &rest[..next];
        rest = &rest[next..];
        for c in decode_entities(text).chars() {
            if c.is_whitespace() {
                pending_space = true;
                continue;
            }
            if pending_space && !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push(c);
            pending_space = false;
        }
    }
    Ok(out.trim().to_owned())
}

fn is_block(name: &str) -> bool {
    matches!(
        name,
        "p" | "div"
            | "li"
            | "ul"
            | "ol"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "tr"
            | "table"
            | "section"
            | "article"
            | "header"
            | "footer"
            | "blockquote"
            | "pre"
            | "hr"
            | "title"
            | "main"
            | "nav"
            | "aside"
            | "dd"
            | "dt"
            | "dl"
            | "figure"
            | "figcaption"
            | "body"
            | "head"
            | "html"
    )
}

fn push_break(out: &mut String) {
    let trimmed = out.trim_end_matches(' ').len();
    out.truncate(trimmed);
    if out.is_empty() || out.ends_with("\n\n") {
        return;
    }
    if out.ends_with('\n') {
        out.push('\n');
    } else {
        out.push_str("\n\n");
    }
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').filter(|j| *j <= 10);
        let decoded = end.and_then(|j| decode_entity(&rest[1..j]).map(|c| (c, j)));
        match decoded {
            Some((c, j)) => {
                out.push(c);
                rest = &rest[j + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn decode_entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

/// One record of a BEIR `corpus.jsonl`.
#[derive(Debug, serde::Deserialize)]
pub struct BeirRecord {
    /// The document id, kept as the collection's document id.
    #[serde(rename = "_id")]
    pub id: String,
    /// Title (may be empty).
    #[serde(default)]
    pub title: String,
    /// Body text.
    #[serde(default)]
    pub text: String,
}

impl BeirRecord {
    /// The text chunk offsets are measured on: the title, a blank line, then the body.
    pub fn document_text(&self) -> String {
        let title = self.title.trim();
        if title.is_empty() {
            self.text.clone()
        } else {
            format!("{title}\n\n{}", self.text)
        }
    }
}

/// The text of record `id` in the BEIR corpus read through `file`.
///
/// Looks first at `hint`, the offset the record's line started at when it was ingested, then
/// scans the file. Memory stays bounded by the longest line accepted ([`MAX_SOURCE_BYTES`]); a
/// longer line is [`ExtractError::TooLarge`]. `Ok(None)` when no record has that id.
pub(crate) fn beir_record_text(
    mut file: &File,
    id: &str,
    hint: Option<u64>,
) -> Result<Option<String>, ExtractError> {
    if let Some(offset) = hint {
        file.seek(SeekFrom::Start(offset))?;
        let mut lines = BoundedLines::new(BufReader::new(file), MAX_SOURCE_BYTES, offset);
        if let Some((_, line)) = lines.next_line()?
            && let Some(record) = record_with_id(&line, id)
        {
            return Ok(Some(record.document_text()));
        }
    }
    file.seek(SeekFrom::Start(0))?;
    let mut lines = BoundedLines::new(BufReader::new(file), MAX_SOURCE_BYTES, 0);
    while let Some((_, line)) = lines.next_line()? {
        if let Some(record) = record_with_id(&line, id) {
            return Ok(Some(record.document_text()));
        }
    }
    Ok(None)
}

fn record_with_id(line: &[u8], id: &str) -> Option<BeirRecord> {
    serde_json::from_slice::<BeirRecord>(line)
        .ok()
        .filter(|record| record.id == id)
}

#[cfg(any(feature = "office", feature = "extract-pdf"))]
impl From<crate::units::Malformed> for ExtractError {
    fn from(err: crate::units::Malformed) -> Self {
        ExtractError::Malformed {
            format: err.format,
            reason: err.reason,
        }
    }
}

impl From<ReadError> for ExtractError {
    fn from(err: ReadError) -> Self {
        match err {
            ReadError::TooLarge => ExtractError::TooLarge,
            ReadError::Io(err) => ExtractError::Io(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "office")]
    #[test]
    fn every_format_an_attachment_is_read_as_has_its_recorded_identity() {
        use crate::office::Format;
        let mut inner = vec![
            TEXT_ATTACHMENT,
            HTML_EXTRACTOR,
            "groundkit-pdf@1",
            "pdf-extract@0.12",
        ];
        for ext in [
            "docx", "pptx", "xlsx", "odt", "odp", "ods", "rtf", "ipynb", "epub",
        ] {
            inner.push(Format::from_extension(ext).expect("a format").extractor());
        }
        for name in inner {
            assert!(attachment_extractor(name).is_some(), "{name}");
        }
        assert_eq!(ATTACHMENT_EXTRACTORS.len(), 13);
        assert_eq!(attachment_extractor("groundkit-eml@1"), None);
    }

    #[test]
    fn html_text_drops_markup_scripts_and_decodes_entities() {
        let html = b"<html><head><title>T&amp;C</title><style>p{}</style></head>\
            <body><h1>Heading</h1><p>One <b>bold</b>\n  word &lt;here&gt;.</p>\
            <script>var x = '<p>';</script><!-- note --><p>Caf&#233; &#x2713;</p></body></html>";
        let text = html_to_text(html).expect("html parses");
        assert_eq!(text, "T&C\n\nHeading\n\nOne bold word <here>.\n\nCafé ✓");
    }
}
