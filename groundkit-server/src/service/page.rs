//! Search pages: the cursor an answer gives when more hits follow, and reading one back.
//!
//! A cursor is stateless: the collection generation the page was ranked at, the rank the next
//! page starts after, and a check binding both to the search they continue (its collection,
//! query, mode, fusion and `min_score`, which decide the ranking; `top_k`, `detail` and
//! `max_chars` may change from page to page). It is 25 bytes written as 50 lower-case hex
//! digits ([`CURSOR_PATTERN`], which the request schema states), so every cursor has the same
//! length and an answer's budget reserves its room before any hit is placed. Any server over
//! the same collection continues it, on any transport.
//!
//! A cursor is judged after the search has opened the collection at the cursor's generation:
//! the current one, or one the backend keeps for pages after a newer one replaced it
//! (`Backend::keep_for_pages`, which the search calls for each cursor it hands out: the local
//! backend keeps the generation open for `PAGE_RETENTION`, the cluster keeps generation indices
//! for its retention window). One the backend no longer keeps is `cursor_expired`, whatever else
//! it says (the search it belonged to cannot be continued either way); one whose check fails
//! (altered, or sent with another search) is a `validation_error`. The check is a digest, not a
//! signature: a caller can write a cursor for any rank of a search it may run, which gives it
//! nothing it could not ask for with `top_k`.

use std::sync::LazyLock;

use groundkit_core::Error;
use groundkit_retrieval::SearchResponse;
use regex::Regex;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::SearchRequest;

/// How deep a walk through a search's pages goes: a page past this many hits is never offered.
pub const MAX_WALK_DEPTH: u32 = groundkit_retrieval::MAX_RANK_DEPTH - 1;

/// The cursor format's version, its first byte.
const VERSION: u8 = 1;

/// Bytes of the check.
const CHECK_BYTES: usize = 12;

/// Bytes of a cursor: version, generation, offset, check.
const CURSOR_BYTES: usize = 1 + 8 + 4 + CHECK_BYTES;

/// Characters of a written cursor.
pub const CURSOR_CHARS: usize = 2 * CURSOR_BYTES;

/// The form of a written cursor: the version byte, then the rest, in lower-case hex. The
/// request type declares it as `cursor`'s pattern, so the schema states it.
pub static CURSOR_PATTERN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^01[0-9a-f]{48}$").expect("the cursor pattern parses"));

/// Where a page starts: after `offset` hits of the ranking of `generation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The collection generation the search was ranked at.
    pub generation: u64,
    /// Hits before the page.
    pub offset: u32,
}

/// What a cursor is bound to: the parts of a search that decide its ranking.
pub struct Binding(Vec<u8>);

impl Binding {
    /// The binding of `request`.
    pub fn of(request: &SearchRequest) -> Self {
        let decides = json!({
            "collection": request.collection,
            "query": request.query,
            "mode": request.mode.unwrap_or_default(),
            "fusion": request.fusion.unwrap_or_default(),
            "min_score": request.min_score,
            "filter": request.filter.as_ref().filter(|f| !f.is_empty()),
        });
        Self(decides.to_string().into_bytes())
    }

    fn check(&self, head: &[u8]) -> [u8; CHECK_BYTES] {
        let digest = Sha256::new()
            .chain_update(b"groundkit search cursor\0")
            .chain_update(head)
            .chain_update(&self.0)
            .finalize();
        let mut check = [0; CHECK_BYTES];
        check.copy_from_slice(&digest[..CHECK_BYTES]);
        check
    }

    /// The cursor of `position` in this search.
    pub fn cursor(&self, position: Position) -> String {
        let mut bytes = Vec::with_capacity(CURSOR_BYTES);
        bytes.push(VERSION);
        bytes.extend_from_slice(&position.generation.to_be_bytes());
        bytes.extend_from_slice(&position.offset.to_be_bytes());
        let check = self.check(&bytes);
        bytes.extend_from_slice(&check);
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The cursor of the page after `response`'s, which starts `offset` hits into the ranking,
    /// when hits follow it (`more` ranked past the page, or some the budget left out) within the
    /// walk's depth.
    pub fn next(&self, response: &SearchResponse, offset: u32, more: bool) -> Option<String> {
        let next = offset + response.results.len() as u32;
        let follows = more || response.metadata.omitted_results > 0;
        (follows && !response.results.is_empty() && next < MAX_WALK_DEPTH).then(|| {
            self.cursor(Position {
                generation: response.metadata.generation,
                offset: next,
            })
        })
    }

    /// Whether `cursor` is one this search gave: its check holds and its position is one a
    /// page can start at; else a `validation_error` naming `cursor`.
    pub fn verify(&self, cursor: &Cursor) -> Result<(), Error> {
        let Position { offset, .. } = cursor.position;
        if self.check(&cursor.head) != cursor.check || offset == 0 || offset >= MAX_WALK_DEPTH {
            return Err(refused());
        }
        Ok(())
    }
}

/// A cursor as written, read but not yet verified ([`Binding::verify`]).
pub struct Cursor {
    /// The position it names.
    pub position: Position,
    head: [u8; CURSOR_BYTES - CHECK_BYTES],
    check: [u8; CHECK_BYTES],
}

impl Cursor {
    /// Reads `text`, a `validation_error` naming `cursor` when it is not of the form
    /// ([`CURSOR_PATTERN`]).
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bytes = decode_hex(text).ok_or_else(refused)?;
        if bytes.len() != CURSOR_BYTES || bytes[0] != VERSION {
            return Err(refused());
        }
        let mut head = [0; CURSOR_BYTES - CHECK_BYTES];
        let mut check = [0; CHECK_BYTES];
        head.copy_from_slice(&bytes[..CURSOR_BYTES - CHECK_BYTES]);
        check.copy_from_slice(&bytes[CURSOR_BYTES - CHECK_BYTES..]);
        let mut generation = [0; 8];
        let mut offset = [0; 4];
        generation.copy_from_slice(&head[1..9]);
        offset.copy_from_slice(&head[9..13]);
        Ok(Self {
            position: Position {
                generation: u64::from_be_bytes(generation),
                offset: u32::from_be_bytes(offset),
            },
            head,
            check,
        })
    }
}

/// The refusal of a cursor this search did not give.
fn refused() -> Error {
    Error::Validation {
        field: "cursor".to_owned(),
        message: "is not a cursor this search gave: send the `next_cursor` of the previous page \
                  with the same collection, query, mode, fusion and min_score"
            .to_owned(),
    }
}

/// Cuts `response`'s ranking, read from its first hit, to the page of at most `len` hits after
/// the first `offset`, and reserves the room of a cursor in it (so fitting the answer to its
/// budget leaves room for one): whether ranked hits follow the page.
pub fn cut(response: &mut SearchResponse, offset: u32, len: u32) -> bool {
    let results = &mut response.results;
    results.drain(..(offset as usize).min(results.len()));
    let more = results.len() > len as usize;
    results.truncate(len as usize);
    response.next_cursor = Some("0".repeat(CURSOR_CHARS));
    more
}

/// The bytes of lower-case hex `text`, if it is that.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes
        .chunks_exact(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(query: &str) -> SearchRequest {
        serde_json::from_value(json!({"collection": "docs", "query": query})).expect("a request")
    }

    #[test]
    fn a_cursor_reads_back_in_its_search_and_is_refused_in_another_or_altered() {
        let binding = Binding::of(&request("tide tables"));
        let position = Position {
            generation: 7,
            offset: 30,
        };
        let cursor = binding.cursor(position);
        assert_eq!(cursor.len(), CURSOR_CHARS);
        assert!(CURSOR_PATTERN.is_match(&cursor));
        let read = Cursor::parse(&cursor).expect("a cursor");
        assert_eq!(read.position, position);
        assert!(binding.verify(&read).is_ok());

        let field = |result: Result<(), Error>| match result {
            Err(Error::Validation { field, .. }) => field,
            other => format!("{other:?}"),
        };
        let other = Binding::of(&request("tide table"));
        assert_eq!(field(other.verify(&read)), "cursor");
        // A filter is part of the search; an empty one is no filter.
        let mut filtered = request("tide tables");
        filtered.filter =
            Some(serde_json::from_value(json!({"paths": ["notes"]})).expect("filter"));
        assert_eq!(field(Binding::of(&filtered).verify(&read)), "cursor");
        filtered.filter = Some(Default::default());
        assert!(Binding::of(&filtered).verify(&read).is_ok());
        let mut altered = cursor.clone().into_bytes();
        altered[20] = if altered[20] == b'0' { b'1' } else { b'0' };
        let altered = Cursor::parse(&String::from_utf8(altered).expect("hex")).expect("form");
        assert_eq!(field(binding.verify(&altered)), "cursor");
        for junk in [
            "",
            "zz",
            &cursor[..CURSOR_CHARS - 2],
            &cursor.to_uppercase(),
        ] {
            assert_eq!(field(Cursor::parse(junk).map(|_| ())), "cursor", "{junk:?}");
        }
    }
}
