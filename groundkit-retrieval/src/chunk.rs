//! Chunking: cuts a text into spans of at most `max_bytes` bytes with exact byte offsets.
//!
//! A span prefers to end at a paragraph break, then at a sentence end, then at whitespace, and
//! falls back to the last character boundary, so a UTF-8 character is never split. Leading and
//! trailing whitespace is left out of every span; `&text[start..end]` is the chunk's content.
//!
//! A chunk is a [`Span`]: its byte range and, for source code, which `code` (the `code` feature)
//! cuts at its definitions, its scope. [`LineIndex`] turns a span of a `text` source into the
//! lines a person opens it at.

/// Default largest chunk, in bytes (about 250-300 English words): a typical abstract or short
/// note stays one chunk, and a longer document is ranked by its best passage. The best of a sweep
/// on BEIR SciFact's training split (see `bench/README.md`).
pub const DEFAULT_MAX_CHUNK_BYTES: usize = 1750;

/// The smallest `max_bytes` accepted (smaller values are raised to it).
pub const MIN_CHUNK_BYTES: usize = 64;

pub use crate::analysis::{CODE_CHUNKER_PREFIX, is_code};

/// One chunk: the byte range `start..end` of its document's text and, for source code, the scope
/// it lies in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Offset of its first byte.
    pub start: usize,
    /// Offset one past its last byte.
    pub end: usize,
    /// The enclosing definitions, outermost first, joined by ` › `; empty for prose and at the
    /// top level of source code.
    pub scope: String,
}

/// The chunks of `text` cut by [`chunk_spans`], without scopes.
pub fn text_chunks(text: &str, max_bytes: usize) -> Vec<Span> {
    chunk_spans(text, max_bytes)
        .into_iter()
        .map(|(start, end)| Span {
            start,
            end,
            scope: String::new(),
        })
        .collect()
}

/// Byte spans `(start, end)` of the chunks of `text`.
pub fn chunk_spans(text: &str, max_bytes: usize) -> Vec<(usize, usize)> {
    let max_bytes = max_bytes.max(MIN_CHUNK_BYTES);
    let mut spans = Vec::new();
    let mut pos = skip_whitespace(text, 0);
    while pos < text.len() {
        let end = if text.len() - pos <= max_bytes {
            text.len()
        } else {
            let limit = floor_boundary(text, pos + max_bytes);
            best_break(text, pos, limit)
        };
        let trimmed_end = pos + text[pos..end].trim_end().len();
        if trimmed_end > pos {
            spans.push((pos, trimmed_end));
        }
        pos = skip_whitespace(text, end);
    }
    spans
}

fn skip_whitespace(text: &str, from: usize) -> usize {
    from + (text.len() - from - text[from..].trim_start().len())
}

fn floor_boundary(text: &str, mut index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// Where to end a span that starts at `start` and may not pass `limit` (a char boundary).
fn best_break(text: &str, start: usize, limit: usize) -> usize {
    let window = &text[start..limit];
    // Do not accept a break that would make a tiny chunk.
    let min = window.len() / 2;
    if let Some(i) = window.rfind("\n\n").filter(|i| *i >= min) {
        return start + i;
    }
    let bytes = window.as_bytes();
    let sentence = (min.max(1)..bytes.len())
        .rev()
        .find(|&i| matches!(bytes[i - 1], b'.' | b'?' | b'!') && matches!(bytes[i], b' ' | b'\n'));
    if let Some(i) = sentence {
        return start + i;
    }
    if let Some(i) = window.rfind(char::is_whitespace).filter(|i| *i >= min) {
        return start + i;
    }
    if limit > start {
        limit
    } else {
        floor_boundary(text, start + 1).max(start + 1)
    }
}

/// The line breaks of a text, to give a byte range its lines.
///
/// Lines are numbered from 1 and end at `\n`, which belongs to the line it closes: a `\r\n`
/// pair is one break (the `\r` is the last byte of its line), and a lone `\r` is no break. A
/// range starts on the line of its first byte and ends on the line of its last byte, so one that
/// ends with a line break ends on the line that break closes, not on the next. A last line
/// without a trailing newline is a line like any other.
pub struct LineIndex {
    /// The offset of every `\n`, ascending.
    breaks: Vec<usize>,
}

impl LineIndex {
    /// Indexes the line breaks of `text`.
    pub fn new(text: &[u8]) -> Self {
        let breaks = text
            .iter()
            .enumerate()
            .filter_map(|(at, &byte)| (byte == b'\n').then_some(at))
            .collect();
        Self { breaks }
    }

    /// The line (from 1) the byte at `offset` is on.
    fn line_of(&self, offset: usize) -> u32 {
        let before = self.breaks.partition_point(|&at| at < offset);
        u32::try_from(before + 1).unwrap_or(u32::MAX)
    }

    /// The first and last line (from 1, inclusive) of the bytes `start..end`; an empty range is
    /// on the line of `start`.
    pub fn lines(&self, start: usize, end: usize) -> (u32, u32) {
        let last = end.saturating_sub(1).max(start);
        (self.line_of(start), self.line_of(last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_on_the_lines_of_its_first_and_last_byte() {
        let text = b"first\nsecond\r\nthird";
        let lines = LineIndex::new(text);
        // The first line, and a chunk that is one line.
        assert_eq!(lines.lines(0, 5), (1, 1));
        // Ending right after a newline: the line that newline closes.
        assert_eq!(lines.lines(0, 6), (1, 1));
        assert_eq!(lines.lines(0, 7), (1, 2));
        // CRLF: the `\r` and the `\n` are the end of line 2.
        assert_eq!(lines.lines(6, 12), (2, 2));
        assert_eq!(lines.lines(6, 14), (2, 2));
        // The last line, without a trailing newline.
        assert_eq!(lines.lines(14, 19), (3, 3));
        assert_eq!(lines.lines(0, 19), (1, 3));
        assert_eq!(lines.lines(14, 14), (3, 3));
    }

    #[test]
    fn a_lone_carriage_return_is_no_line_break() {
        let lines = LineIndex::new(b"a\rb\nc");
        assert_eq!(lines.lines(2, 3), (1, 1));
        assert_eq!(lines.lines(4, 5), (2, 2));
    }

    #[test]
    fn spans_never_split_a_utf8_character_and_cover_all_text() {
        let text = "héllo wörld ✓✓✓ ".repeat(40) + "终わり";
        for max in [64, 65, 66, 67, 100, 1000] {
            let spans = chunk_spans(&text, max);
            assert!(!spans.is_empty());
            for &(s, e) in &spans {
                assert!(text.is_char_boundary(s) && text.is_char_boundary(e));
                assert!(e - s <= max.max(MIN_CHUNK_BYTES));
            }
            let joined: String = spans
                .iter()
                .map(|&(s, e)| &text[s..e])
                .collect::<Vec<_>>()
                .join(" ");
            let words = |t: &str| {
                t.split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
                    .concat()
            };
            assert_eq!(words(&joined), words(&text));
        }
    }

    #[test]
    fn short_text_is_one_chunk_without_surrounding_whitespace() {
        assert_eq!(chunk_spans("\n  Hello world.  \n", 4000), vec![(3, 15)]);
        assert!(chunk_spans(" \n\t ", 4000).is_empty());
    }

    #[test]
    fn paragraph_breaks_are_preferred() {
        let text = format!("{}\n\n{}", "a".repeat(60), "b".repeat(60));
        let spans = chunk_spans(&text, 100);
        assert_eq!(spans, vec![(0, 60), (62, 122)]);
    }
}
