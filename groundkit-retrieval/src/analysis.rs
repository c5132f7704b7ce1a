//! The English text analyser shared by indexing and querying.
//!
//! Split on non-alphanumeric characters, drop tokens longer than 40 bytes, lowercase, drop
//! English stop words, Snowball (Porter2) English stemming. Queries go through the same analyser
//! and become a disjunction of term queries: query text is never parsed as query syntax, so
//! `+ - : "` carry no meaning and "COVID-19" is the two terms `covid` and `19`.
//!
//! Source code is indexed with one addition ([`code_terms`]): an identifier of several parts
//! (`parseHostHeader`, `parse_host_header`, `HTTPServer`) is indexed as its parts and as the one
//! word they make, so the queries `parseHostHeader`, `parse_host_header` and "parse host header"
//! all find both spellings. Prose and queries are analysed without it.

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
    TokenStream,
};

/// Name the analyser is registered under in every collection's tantivy index.
pub const ANALYZER_NAME: &str = "groundkit_en";

/// Builds the English analyser.
pub fn english_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser);
    match StopWordFilter::new(Language::English) {
        Some(stop_words) => builder
            .filter(stop_words)
            .filter(Stemmer::new(Language::English))
            .build(),
        None => builder.filter(Stemmer::new(Language::English)).build(),
    }
}

/// The analysed terms of `text`, in order, duplicates kept.
pub fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// The analysed terms of source code `text`: those of `text` with each identifier of several
/// parts replaced by the word they make and the parts (see the module docs).
pub fn code_terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    terms(analyzer, &expand_identifiers(text))
}

/// The extractor names of source-code documents start with this (`code-rust@2`, and
/// `code-text@1` for source code chunked as text): their chunks are indexed as code.
pub const CODE_CHUNKER_PREFIX: &str = "code-";

/// What the extractor of source code chunked as text (a language without a grammar in this
/// build) starts with.
pub const CODE_TEXT_CHUNKER: &str = "code-text@";

/// Whether a document recorded with `extractor` is source code.
pub fn is_code(extractor: Option<&str>) -> bool {
    extractor.is_some_and(|name| name.starts_with(CODE_CHUNKER_PREFIX))
}

/// The text whose English terms are a source-code chunk's: its scope's, then its content's, each
/// identifier of several parts expanded. The local index takes its terms from [`terms`]; a search
/// cluster analyses the same text with its copy of this analyser, so both index the same terms.
pub fn code_text(scope: &str, content: &str) -> String {
    let mut text = expand_identifiers(scope);
    text.push('\n');
    text.push_str(&expand_identifiers(content));
    text
}

/// `text` with every identifier of several parts replaced by its parts joined into one
/// lowercase word, then the parts: `parseHostHeader` becomes `parsehostheader parse Host Header`.
fn expand_identifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let identifier = &rest[..len];
        let parts = identifier_parts(identifier);
        if parts.len() > 1 {
            out.push_str(&parts.concat().to_ascii_lowercase());
            for part in parts {
                out.push(' ');
                out.push_str(part);
            }
        } else {
            out.push_str(identifier);
        }
        rest = &rest[len..];
    }
    out.push_str(rest);
    out
}

/// The parts of an ASCII identifier: split at underscores, at a lowercase letter or digit followed
/// by an uppercase one, and before the last capital of a run followed by a lowercase letter
/// (`HTTPServer` is `HTTP`, `Server`).
fn identifier_parts(identifier: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for segment in identifier.split('_').filter(|s| !s.is_empty()) {
        let bytes = segment.as_bytes();
        let mut start = 0;
        for i in 1..bytes.len() {
            let (prev, cur) = (bytes[i - 1], bytes[i]);
            let next_lower = bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let boundary = cur.is_ascii_uppercase()
                && (prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower));
            if boundary {
                parts.push(&segment[start..i]);
                start = i;
            }
        }
        parts.push(&segment[start..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_syntax_characters_are_just_separators() {
        let mut analyzer = english_analyzer();
        assert_eq!(
            terms(&mut analyzer, "COVID-19 +vaccines -\"trials\": the"),
            vec!["covid", "19", "vaccin", "trial"]
        );
    }

    #[test]
    fn identifiers_are_split_into_parts_and_kept_whole() {
        assert_eq!(
            identifier_parts("parseHTTPHostHeader2"),
            vec!["parse", "HTTP", "Host", "Header2"]
        );
        assert_eq!(identifier_parts("__init__"), vec!["init"]);
        assert_eq!(identifier_parts("v2Parser"), vec!["v2", "Parser"]);
        let mut analyzer = english_analyzer();
        let camel = code_terms(&mut analyzer, "fn parseHostHeader()");
        let snake = code_terms(&mut analyzer, "def parse_host_header():");
        assert_eq!(camel[1..], snake[1..]);
        assert!(camel.contains(&"host".to_owned()) && camel.contains(&"header".to_owned()));
        // The whole identifier, as a query spells it, is one of the terms.
        let whole = terms(&mut analyzer, "parseHostHeader");
        assert!(
            whole.iter().all(|t| snake.contains(t)),
            "{whole:?} {snake:?}"
        );
        // Prose is analysed as before.
        assert_eq!(
            terms(&mut analyzer, "parseHostHeader"),
            vec!["parsehosthead"]
        );
    }
}
