//! Rich Text Format (RTF): the document's paragraphs, separated by blank lines, read by a small
//! reader of groups and control words (no RTF library: the ones published keep every token in
//! memory or lose paragraph breaks).
//!
//! What is not text is skipped with its group: the tables of fonts, colours, styles and lists,
//! the document's `\info`, pictures, objects, headers and footers, field instructions (a field's
//! shown result is kept) and every `{\*\...}` destination a reader may ignore. `\'hh` bytes are
//! decoded in the document's code page (`\ansicpg`, or the one `\ansi`, `\mac`, `\pc`, `\pca`
//! names; Windows-1252 by default), `\uN` as the character N, skipping the `\ucN` fallback
//! characters after it. Groups nested deeper than [`MAX_GROUP_DEPTH`] fail the document, and so
//! does text past [`MAX_SOURCE_BYTES`]; `\binN` skips N bytes without reading them.

use encoding_rs::{Encoding, WINDOWS_1252};

use super::archive::malformed;
use super::{Extracted, Malformed};
use crate::source_file::MAX_SOURCE_BYTES;

/// Deepest group nesting accepted (as deep as XML elements may nest).
pub const MAX_GROUP_DEPTH: usize = super::MAX_DEPTH;

/// Destinations whose group holds no text of the document.
const SKIPPED: &[&str] = &[
    "fonttbl",
    "colortbl",
    "stylesheet",
    "info",
    "pict",
    "object",
    "header",
    "headerl",
    "headerr",
    "headerf",
    "footer",
    "footerl",
    "footerr",
    "footerf",
    "fldinst",
    "listtable",
    "listoverridetable",
    "rsidtbl",
    "generator",
    "filetbl",
    "revtbl",
    "themedata",
    "colorschememapping",
    "latentstyles",
    "datastore",
    "xmlnstbl",
    "bkmkstart",
    "bkmkend",
    "xe",
    "tc",
    "txe",
    "pgdsctbl",
    "nonshppict",
    "shpinst",
    "userprops",
    "docvar",
    "operator",
    "author",
    "title",
    "subject",
    "keywords",
    "comment",
    "doccomm",
];

/// What a group changes: whether its text is skipped, and how many fallback characters follow
/// a `\uN`.
#[derive(Clone, Copy)]
struct Group {
    skip: bool,
    fallback: usize,
}

/// The reader's state: the groups open, the text so far, and bytes awaiting decoding.
struct Reader {
    groups: Vec<Group>,
    current: Group,
    encoding: &'static Encoding,
    paragraphs: Vec<String>,
    paragraph: String,
    pending: Vec<u8>,
    /// Fallback characters still to skip after a `\uN`.
    skipping: usize,
    len: usize,
    format: &'static str,
}

/// A document's paragraphs, as one flow of text.
pub(super) fn text(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    if !bytes.starts_with(b"{\\rtf") {
        return Err(malformed(format, "it does not start with {\\rtf".into()));
    }
    let mut reader = Reader {
        groups: Vec::new(),
        current: Group {
            skip: false,
            fallback: 1,
        },
        encoding: WINDOWS_1252,
        paragraphs: Vec::new(),
        paragraph: String::new(),
        pending: Vec::new(),
        skipping: 0,
        len: 0,
        format,
    };
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                reader.open()?;
                i += 1;
            }
            b'}' => {
                reader.close();
                if reader.groups.is_empty() {
                    // The document's group is closed: what follows is not RTF.
                    break;
                }
                i += 1;
            }
            b'\\' => i = reader.control(bytes, i + 1)?,
            b'\r' | b'\n' => i += 1,
            byte => {
                reader.byte(byte);
                i += 1;
            }
        }
    }
    reader.end_paragraph()?;
    Ok(Extracted {
        text: reader.paragraphs.join("\n\n"),
        units: None,
    })
}

impl Reader {
    fn open(&mut self) -> Result<(), Malformed> {
        self.flush();
        if self.groups.len() >= MAX_GROUP_DEPTH {
            return Err(malformed(
                self.format,
                format!("RTF nested deeper than {MAX_GROUP_DEPTH} groups"),
            ));
        }
        self.groups.push(self.current);
        Ok(())
    }

    fn close(&mut self) {
        self.flush();
        if let Some(outer) = self.groups.pop() {
            self.current = outer;
        }
    }

    /// A byte of text (or of a `\'hh`), decoded with the bytes next to it; a fallback byte
    /// after a `\uN` is skipped.
    fn byte(&mut self, byte: u8) {
        if self.skipping > 0 {
            self.skipping -= 1;
        } else if !self.current.skip {
            self.pending.push(byte);
        }
    }

    fn push(&mut self, text: &str) {
        self.flush();
        if !self.current.skip {
            self.paragraph.push_str(text);
        }
    }

    /// Decodes the bytes awaiting it in the document's code page.
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let (text, _) = self.encoding.decode_without_bom_handling(&self.pending);
            self.paragraph.push_str(&text);
            self.pending.clear();
        }
    }

    fn end_paragraph(&mut self) -> Result<(), Malformed> {
        self.flush();
        let text = self.paragraph.trim();
        if !text.is_empty() {
            self.len += text.len() + 2;
            if self.len > MAX_SOURCE_BYTES as usize {
                return Err(malformed(
                    self.format,
                    format!("its text is larger than {} MiB", MAX_SOURCE_BYTES >> 20),
                ));
            }
            self.paragraphs.push(text.to_owned());
        }
        self.paragraph.clear();
        Ok(())
    }

    /// Reads the control word or symbol after a backslash at `i`; returns where reading goes on.
    fn control(&mut self, bytes: &[u8], i: usize) -> Result<usize, Malformed> {
        let Some(&first) = bytes.get(i) else {
            return Ok(i);
        };
        if !first.is_ascii_alphabetic() {
            return Ok(self.symbol(bytes, i));
        }
        let name_end = i + bytes[i..]
            .iter()
            .take(32)
            .take_while(|b| b.is_ascii_alphabetic())
            .count();
        let name = std::str::from_utf8(&bytes[i..name_end]).unwrap_or("");
        let negative = bytes.get(name_end) == Some(&b'-');
        let digits_start = name_end + usize::from(negative);
        let digits_end = digits_start
            + bytes[digits_start..]
                .iter()
                .take(10)
                .take_while(|b| b.is_ascii_digit())
                .count();
        let param = std::str::from_utf8(&bytes[digits_start..digits_end])
            .ok()
            .and_then(|digits| digits.parse::<i64>().ok())
            .map(|n| if negative { -n } else { n });
        let mut next = if digits_end > digits_start {
            digits_end
        } else {
            name_end
        };
        if bytes.get(next) == Some(&b' ') {
            next += 1;
        }
        if name == "bin" {
            let skip = usize::try_from(param.unwrap_or(0)).unwrap_or(0);
            return Ok(next.saturating_add(skip).min(bytes.len()));
        }
        self.word(name, param)?;
        Ok(next)
    }

    /// A control symbol: `\'hh`, an escaped character, or a special character.
    fn symbol(&mut self, bytes: &[u8], i: usize) -> usize {
        match bytes[i] {
            b'\'' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                if let Some(byte) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    self.byte(byte);
                    return i + 3;
                }
                i + 1
            }
            b'*' => {
                self.current.skip = true;
                i + 1
            }
            c @ (b'\\' | b'{' | b'}') => {
                self.byte(c);
                i + 1
            }
            b'~' => {
                self.push("\u{a0}");
                i + 1
            }
            b'_' => {
                self.push("\u{2011}");
                i + 1
            }
            b'\r' | b'\n' => {
                // A backslash ending a line is a paragraph mark.
                self.paragraph_mark();
                i + 1
            }
            _ => i + 1,
        }
    }

    fn paragraph_mark(&mut self) {
        if !self.current.skip {
            // An error here is only the text limit, met again at the end.
            let _ = self.end_paragraph();
        }
    }

    /// A control word `name`, with its parameter.
    fn word(&mut self, name: &str, param: Option<i64>) -> Result<(), Malformed> {
        // A control word ends a `\uN`'s fallback.
        self.skipping = 0;
        if SKIPPED.contains(&name) {
            self.flush();
            self.current.skip = true;
            return Ok(());
        }
        match name {
            "par" | "sect" | "page" | "row" => {
                self.flush();
                if !self.current.skip {
                    self.end_paragraph()?;
                }
            }
            "line" => self.push("\n"),
            "tab" | "cell" => self.push("\t"),
            "emdash" => self.push("\u{2014}"),
            "endash" => self.push("\u{2013}"),
            "bullet" => self.push("\u{2022}"),
            "lquote" => self.push("\u{2018}"),
            "rquote" => self.push("\u{2019}"),
            "ldblquote" => self.push("\u{201c}"),
            "rdblquote" => self.push("\u{201d}"),
            "uc" => self.current.fallback = usize::try_from(param.unwrap_or(1)).unwrap_or(1),
            "u" => {
                let code = param.unwrap_or(0);
                let code = if code < 0 { code + 65_536 } else { code };
                let c = u32::try_from(code)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}');
                self.push(c.encode_utf8(&mut [0; 4]));
                self.skipping = self.current.fallback;
            }
            "ansicpg" => {
                let page = param.and_then(|p| u16::try_from(p).ok());
                self.encoding = page.and_then(codepage::to_encoding).unwrap_or(WINDOWS_1252);
            }
            "ansi" => self.encoding = WINDOWS_1252,
            "mac" | "pc" | "pca" => {
                let page = match name {
                    "mac" => 10_000,
                    "pc" => 437,
                    _ => 850,
                };
                self.encoding = codepage::to_encoding(page).unwrap_or(WINDOWS_1252);
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(rtf: &str) -> String {
        text(rtf.as_bytes(), "RTF").expect("reads").text
    }

    #[test]
    fn paragraphs_without_tables_of_fonts_colours_or_info() {
        let rtf = r"{\rtf1\ansi\deff0{\fonttbl{\f0 Times;}}{\colortbl;\red0\green0\blue0;}
{\info{\title Secret title}}{\*\generator Writer;}
{\pard Caf\'e9 \u8364? and {\b bold}\par}
{\pard Second\line line\tab end\par}}";
        assert_eq!(read(rtf), "Café € and bold\n\nSecond\nline\tend");
    }

    #[test]
    fn code_pages_unicode_fallbacks_and_fields() {
        let rtf = r"{\rtf1\ansi\ansicpg1251\uc2 \'cf\'f0\'e8\u1074\'e2\'e2 {\field{\*\fldinst HYPERLINK x}{\fldrslt link}}\par}";
        assert_eq!(read(rtf), "Прив link");
    }

    #[test]
    fn groups_nested_past_the_limit_and_other_formats_fail() {
        let deep = format!("{{\\rtf1 {}x{}}}", "{".repeat(100_000), "}".repeat(100_000));
        let Err(err) = text(deep.as_bytes(), "RTF") else {
            panic!("a document 100,000 groups deep was read");
        };
        assert!(
            err.reason.contains("nested deeper than 256 groups"),
            "{}",
            err.reason
        );
        assert!(text(b"plain text", "RTF").is_err());
    }
}
