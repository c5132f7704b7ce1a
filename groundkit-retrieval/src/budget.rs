//! Answers sized to a budget: the detail each hit is returned at, snippets whose matched words
//! are marked by byte offsets into the source, and fitting a search response within a number of
//! characters of JSON.
//!
//! A response is fitted whole results first: results are kept in rank order while the answer's
//! JSON stays within the budget; the first that does not fit is kept with its `content` cut
//! between two characters (a `full` answer only, and only when some of its text fits), and the
//! rest are left out and counted. The answer is measured as serialized, so escapes count, and
//! the metadata's numbers are reserved at their widest before any result is placed.

use std::collections::HashSet;

use serde::Serialize;
use tantivy::tokenizer::{TextAnalyzer, TokenStream};

use crate::analysis::{code_terms, english_analyzer, is_code};
use crate::model::{Detail, RetrievalResult, SearchResponse, Snippet, Span};
use crate::search::query_terms;
use groundkit_core::Error;

/// The most bytes of a chunk a snippet shows (fewer when the chunk is shorter; a little fewer
/// where the cut would split a character).
pub const SNIPPET_BYTES: usize = 300;

/// How far before its first match a snippet starts, at most, in bytes.
const SNIPPET_LEAD: usize = 60;

/// The characters of `value`'s JSON as the transports write it: through a `serde_json::Value`,
/// the form a tool's answer takes in the registry (a score written from a `Value` has the
/// digits of its `f64`, more than those of the `f32` it was).
fn json_chars(value: &impl Serialize) -> Result<usize, Error> {
    serde_json::to_value(value)
        .and_then(|value| serde_json::to_string(&value))
        .map(|text| text.chars().count())
        .map_err(|err| Error::internal(format!("an answer cannot be serialized: {err}")))
}

/// The characters `c` takes inside a JSON string as serde_json writes it.
fn escaped_chars(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0C}' => 2,
        c if (c as u32) < 0x20 => 6,
        _ => 1,
    }
}

/// Sets each result of `response` to `detail`, then fits the response within `max_chars`
/// characters of JSON. `query` is the search's text: its analysed terms are what snippets mark,
/// and it is analysed only when `detail` asks for snippets.
///
/// The budget must leave room for the response without results: the service's smallest
/// `max_chars` does for any response it returns.
pub fn fit(
    response: &mut SearchResponse,
    query: &str,
    detail: Detail,
    max_chars: u32,
) -> Result<(), Error> {
    let mut snippets = (detail == Detail::Snippets).then(|| Snippets::new(query));
    let results = std::mem::take(&mut response.results);
    let ranked = results.len();
    let shaped = results.into_iter().map(|mut result| {
        match &mut snippets {
            Some(snippets) => result.snippet = Some(snippets.of(&mut result)),
            None if detail == Detail::Ids => result.content = None,
            None => {}
        }
        result
    });

    // Reserve the metadata at its widest: every number at its largest, `truncated` as `false`
    // (one character longer than `true`).
    let meta = &mut response.metadata;
    meta.detail = detail;
    meta.max_chars = Some(max_chars);
    meta.truncated = false;
    meta.omitted_results = ranked as u32;
    response.total_results = ranked as u32;
    let budget = max_chars as usize;
    let mut used = json_chars(response)?;
    let mut kept = Vec::with_capacity(ranked);
    let mut cut = false;
    for result in shaped {
        let comma = usize::from(!kept.is_empty());
        let size = json_chars(&result)? + comma;
        if used + size <= budget {
            used += size;
            kept.push(result);
            continue;
        }
        if let Some(shortened) = cut_content(result, budget.saturating_sub(used + comma))? {
            used += json_chars(&shortened)? + comma;
            kept.push(shortened);
            cut = true;
        }
        break;
    }
    response.total_results = kept.len() as u32;
    response.metadata.omitted_results = (ranked - kept.len()) as u32;
    response.metadata.truncated = cut || kept.len() < ranked;
    response.results = kept;
    debug_assert!(json_chars(response)? <= budget.max(used));
    Ok(())
}

/// What the snippets of one answer share: the query's terms and an analyser.
struct Snippets {
    terms: HashSet<String>,
    analyzer: TextAnalyzer,
}

impl Snippets {
    fn new(query: &str) -> Self {
        Self {
            terms: query_terms(query).into_iter().collect(),
            analyzer: english_analyzer(),
        }
    }

    /// The snippet of `result`, whose content it takes.
    fn of(&mut self, result: &mut RetrievalResult) -> Snippet {
        let content = result.content.take().unwrap_or_default();
        let code = is_code(result.citation.extractor.as_deref());
        snippet(
            &content,
            result.citation.start_offset,
            code,
            &self.terms,
            &mut self.analyzer,
        )
    }
}

/// `result` with its `content` cut so that its JSON takes at most `room` characters, or `None`
/// when not even its first character fits (or it carries no content to cut).
fn cut_content(mut result: RetrievalResult, room: usize) -> Result<Option<RetrievalResult>, Error> {
    let Some(content) = result.content.take() else {
        return Ok(None);
    };
    result.content = Some(String::new());
    result.content_truncated = true;
    let skeleton = json_chars(&result)?;
    let Some(mut left) = room.checked_sub(skeleton) else {
        return Ok(None);
    };
    let mut end = 0;
    for (at, c) in content.char_indices() {
        let width = escaped_chars(c);
        if width > left {
            break;
        }
        left -= width;
        end = at + c.len_utf8();
    }
    if end == 0 {
        return Ok(None);
    }
    result.content = Some(content[..end].to_owned());
    Ok(Some(result))
}

/// A word of a chunk that matches a query term: its byte range in the chunk, and the term.
struct Match {
    start: usize,
    end: usize,
    term: String,
}

/// The words of `content` that match one of `terms`, in order. Prose is analysed as the index
/// analyses it; in source code an identifier matches when one of its code terms does
/// (`parseHostHeader` matches a query for "host").
fn matches(
    content: &str,
    code: bool,
    terms: &HashSet<String>,
    analyzer: &mut TextAnalyzer,
) -> Vec<Match> {
    let mut found = Vec::new();
    if terms.is_empty() {
        return found;
    }
    if !code {
        let mut stream = analyzer.token_stream(content);
        while stream.advance() {
            let token = stream.token();
            if terms.contains(token.text.as_str()) {
                found.push(Match {
                    start: token.offset_from,
                    end: token.offset_to,
                    term: token.text.clone(),
                });
            }
        }
        return found;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut at = 0;
    while let Some(start) = content[at..].find(is_word).map(|i| at + i) {
        let end = content[start..]
            .find(|c: char| !is_word(c))
            .map_or(content.len(), |i| start + i);
        if let Some(term) = code_terms(analyzer, &content[start..end])
            .into_iter()
            .find(|t| terms.contains(t.as_str()))
        {
            found.push(Match { start, end, term });
        }
        at = end;
    }
    found
}

/// The passage of `content` (which starts at `base` in its source) around the query's matches:
/// the window of at most [`SNIPPET_BYTES`] holding the most distinct matched terms (then the
/// most matches, then the earliest), starting up to [`SNIPPET_LEAD`] bytes before its first
/// match (from the chunk's start when that is closer), its edges moved to white space where that
/// leaves every match in it whole. A chunk without a match shows its beginning.
fn snippet(
    content: &str,
    base: u64,
    code: bool,
    terms: &HashSet<String>,
    analyzer: &mut TextAnalyzer,
) -> Snippet {
    let found = matches(content, code, terms, analyzer);
    let window_start = |anchor: usize| anchor.saturating_sub(SNIPPET_LEAD);
    let mut best: Option<((usize, usize), usize)> = None;
    for (i, first) in found.iter().enumerate() {
        let limit = window_start(first.start) + SNIPPET_BYTES;
        let within: Vec<&Match> = found[i..].iter().take_while(|m| m.end <= limit).collect();
        let distinct: HashSet<&str> = within.iter().map(|m| m.term.as_str()).collect();
        let score = (distinct.len(), within.len());
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, first.start));
        }
    }
    let anchor = best.map_or(0, |(_, at)| at);
    let mut start = content.floor_char_boundary(window_start(anchor));
    if start > 0
        && let Some(space) = content[start..anchor].find(char::is_whitespace)
    {
        // Begin at the first word after white space within the lead.
        let word = content[start + space..anchor]
            .find(|c: char| !c.is_whitespace())
            .map_or(anchor, |i| start + space + i);
        start = word;
    }
    let mut end = content.floor_char_boundary((start + SNIPPET_BYTES).min(content.len()));
    if end < content.len() {
        // End at white space after the last whole match, when there is some.
        let last = found
            .iter()
            .filter(|m| m.start >= start && m.end <= end)
            .map(|m| m.end)
            .max()
            .unwrap_or(start);
        if let Some(space) = content[last..end]
            .rfind(char::is_whitespace)
            .filter(|&space| last + space > start)
        {
            end = last + space;
        }
    }
    let offset = |at: usize| base + at as u64;
    Snippet {
        text: content[start..end].to_owned(),
        start_offset: offset(start),
        end_offset: offset(end),
        matches: found
            .iter()
            .filter(|m| m.start >= start && m.end <= end)
            .map(|m| Span {
                start_offset: offset(m.start),
                end_offset: offset(m.end),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Citation, SearchMetadata, SearchMode, SearchParams, SourceClass};

    fn result(rank: u32, content: &str) -> RetrievalResult {
        RetrievalResult {
            chunk_id: format!("c{rank}"),
            document_id: format!("d{rank}"),
            score: 10.0 / rank as f32,
            rank,
            content: Some(content.to_owned()),
            content_truncated: false,
            snippet: None,
            citation: Citation {
                document_id: format!("d{rank}"),
                chunk_id: format!("c{rank}"),
                source: format!("notes/d{rank}.md"),
                source_class: SourceClass::Text,
                extractor: None,
                start_offset: 1000,
                end_offset: 1000 + content.len() as u64,
                start_line: Some(40),
                end_line: Some(41),
            },
            scope: None,
            collection: None,
        }
    }

    fn response(contents: &[String]) -> SearchResponse {
        SearchResponse {
            results: (1..)
                .zip(contents)
                .map(|(rank, content)| result(rank, content))
                .collect(),
            total_results: contents.len() as u32,
            metadata: SearchMetadata::ranked(
                &SearchParams {
                    query: "q".to_owned(),
                    top_k: contents.len() as u32,
                    mode: SearchMode::Lexical,
                    fusion: Default::default(),
                    filter: None,
                },
                3,
                1,
            ),
            next_cursor: None,
        }
    }

    #[test]
    fn escapes_are_counted_as_serde_json_writes_them() {
        for c in (0..0x3000u32).filter_map(char::from_u32) {
            let written = serde_json::to_string(&c.to_string()).expect("JSON");
            assert_eq!(escaped_chars(c), written.chars().count() - 2, "{c:?}");
        }
    }

    #[test]
    fn a_fitted_answer_is_within_its_budget_and_a_prefix_of_the_ranking() {
        // Text with escapes, multi-byte characters and control characters.
        let contents: Vec<String> = (0..12)
            .map(|i| {
                format!(
                    "chunk {i} \"quoted\" line\n\ttab é 中文 \u{1}{}",
                    "word ".repeat(40 * i)
                )
            })
            .collect();
        let full = response(&contents);
        let everything = json_chars(&full).expect("JSON") as u32;
        let mut any_cut = false;
        for budget in (400..everything + 200).step_by(97) {
            let mut answer = full.clone();
            fit(&mut answer, "", Detail::Full, budget).expect("fit");
            let value = serde_json::to_value(&answer).expect("JSON");
            let text = serde_json::to_string(&value).expect("JSON");
            assert!(text.chars().count() <= budget as usize, "{budget}");
            let kept = answer.results.len();
            assert_eq!(answer.total_results as usize, kept);
            assert_eq!(
                answer.metadata.omitted_results as usize,
                12 - kept,
                "{budget}"
            );
            for (got, want) in answer.results.iter().zip(&full.results) {
                assert_eq!(got.chunk_id, want.chunk_id);
                if got.content_truncated {
                    any_cut = true;
                    assert!(
                        want.text().starts_with(got.text()) && got.text().len() < want.text().len()
                    );
                } else {
                    assert_eq!(got.content, want.content);
                }
            }
            let cut = answer.results.iter().any(|r| r.content_truncated);
            assert_eq!(answer.metadata.truncated, cut || kept < 12, "{budget}");
            // The whole answer, which also says its budget (`"max_chars":NNNNN,`), fits.
            let says_budget = 20;
            if budget >= everything + says_budget {
                assert!(!answer.metadata.truncated, "{budget}");
            }
            if budget < everything {
                assert!(answer.metadata.truncated, "{budget}");
            }
        }
        assert!(any_cut, "some budget cuts a result's content");
    }

    #[test]
    fn ids_carry_no_text_and_snippets_are_the_source_bytes_around_the_matches() {
        let prose = format!(
            "{}Rapid antigen tests detect viral proteins. {}PCR testing detects RNA.",
            "Background on respiratory viruses. ".repeat(12),
            "Filler sentence here. ".repeat(20)
        );
        let mut ids = response(std::slice::from_ref(&prose));
        fit(&mut ids, "", Detail::Ids, 10_000).expect("fit");
        assert_eq!(ids.results[0].content, None);
        assert_eq!(ids.results[0].snippet, None);

        let mut answer = response(std::slice::from_ref(&prose));
        fit(&mut answer, "antigen tests", Detail::Snippets, 10_000).expect("fit");
        let hit = &answer.results[0];
        assert_eq!(hit.content, None);
        let snippet = hit.snippet.as_ref().expect("a snippet");
        let source = format!("{}{prose}", " ".repeat(1000));
        let at = |o: u64| o as usize;
        assert_eq!(
            &source[at(snippet.start_offset)..at(snippet.end_offset)],
            snippet.text
        );
        assert!(snippet.text.len() <= SNIPPET_BYTES);
        // It starts at a word at most SNIPPET_LEAD bytes before its first match.
        let antigen = source.find("antigen").expect("antigen") as u64;
        assert!(
            snippet.start_offset + SNIPPET_LEAD as u64 >= antigen,
            "{snippet:?}"
        );
        assert!(
            source[..at(snippet.start_offset)].ends_with(' '),
            "{snippet:?}"
        );
        let words: Vec<&str> = snippet
            .matches
            .iter()
            .map(|m| &source[at(m.start_offset)..at(m.end_offset)])
            .collect();
        // The window with both terms wins over the one with "testing" alone.
        assert_eq!(words, ["antigen", "tests"]);
    }

    #[test]
    fn an_identifier_matches_by_its_parts_in_source_code() {
        let mut analyzer = english_analyzer();
        let terms: HashSet<String> = ["host".to_owned()].into();
        let code = "fn parseHostHeader(raw: &str) -> Host { parse_host_header(raw) }";
        let found: Vec<&str> = matches(code, true, &terms, &mut analyzer)
            .iter()
            .map(|m| &code[m.start..m.end])
            .collect();
        assert_eq!(found, ["parseHostHeader", "Host", "parse_host_header"]);
    }
}
