//! The English text analyser shared by indexing and querying.
//!
//! Split on non-alphanumeric characters, drop tokens longer than 40 bytes, lowercase, drop
//! English stop words, Snowball (Porter2) English stemming. Queries go through the same analyser
//! and become a disjunction of term queries: query text is never parsed as query syntax, so
//! `+ - : "` carry no meaning and "COVID-19" is the two terms `covid` and `19`.

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
}
