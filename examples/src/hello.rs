//! Greetings and text statistics: a tool set that proves groundkit is a framework, with a
//! static resource (the languages, as text), a resource template (a greeting, as text), a
//! prompt (a greeting card to write), and a completer of language codes for both.

use std::collections::BTreeMap;

use garde::Validate;
use groundkit_core::{Completion, Content, Error, Message, prompt, resource, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Longest text `text_stats` accepts, in characters.
pub const MAX_TEXT_CHARS: usize = 10_000;

/// What the hello tools share: the languages they can greet in.
#[derive(Debug, Clone)]
pub struct HelloContext {
    languages: BTreeMap<&'static str, Language>,
}

impl Default for HelloContext {
    fn default() -> Self {
        let languages = [
            ("de", "German", "Hallo"),
            ("en", "English", "Hello"),
            ("es", "Spanish", "Hola"),
            ("fr", "French", "Bonjour"),
            ("sw", "Swahili", "Habari"),
        ]
        .into_iter()
        .map(|(code, name, word)| {
            (
                code,
                Language {
                    code: code.into(),
                    name: name.into(),
                    greeting_word: word.into(),
                },
            )
        })
        .collect();
        Self { languages }
    }
}

/// A language the server can greet in.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Language {
    /// ISO 639-1 code.
    pub code: String,
    /// English name.
    pub name: String,
    /// The word for "hello".
    pub greeting_word: String,
}

/// Whom to greet, and in which language.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct GreetRequest {
    /// ISO 639-1 code of the language to greet in.
    #[garde(length(chars, min = 2, max = 3), pattern(r"^[a-z]+$"))]
    pub language: String,
    /// Who to greet.
    #[garde(length(chars, min = 1, max = 64))]
    pub name: String,
}

/// A greeting.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Greeting {
    /// The greeting itself.
    pub message: String,
    /// The language it is in.
    pub language: Language,
}

/// Greet someone by name in one of the server's languages.
///
/// Fails with `not_found` for a language the server does not know; `list_languages` says which
/// it does.
#[tool(
    read_only,
    rest = "GET /greetings/{language}/{name}",
    title = "Greet someone",
    icon = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PGNpcmNsZSBjeD0iOCIgY3k9IjgiIHI9IjciLz48L3N2Zz4="
)]
pub async fn greet(ctx: &HelloContext, request: GreetRequest) -> Result<Greeting, Error> {
    let language = ctx
        .languages
        .get(request.language.as_str())
        .ok_or(Error::NotFound {
            resource: "language",
            id: request.language.clone(),
        })?;
    Ok(Greeting {
        message: format!("{}, {}!", language.greeting_word, request.name),
        language: language.clone(),
    })
}

/// The languages the server greets in, one a line: code, name and greeting word, separated by
/// tabs.
#[resource(read_only, uri = "hello://languages", mime_type = "text/plain")]
pub async fn languages(ctx: &HelloContext) -> Result<Content, Error> {
    let lines: Vec<String> = ctx
        .languages
        .values()
        .map(|l| format!("{}\t{}\t{}\n", l.code, l.name, l.greeting_word))
        .collect();
    Ok(Content::Text(lines.concat()))
}

/// A greeting, as the text `greet` answers in its `message`.
#[resource(
    read_only,
    uri = "hello://greetings/{language}/{name}",
    mime_type = "text/plain",
    complete(language = language_codes),
    title = "A greeting",
    icon = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PGNpcmNsZSBjeD0iOCIgY3k9IjgiIHI9IjciLz48L3N2Zz4="
)]
pub async fn greeting(ctx: &HelloContext, params: GreetRequest) -> Result<Content, Error> {
    Ok(Content::Text(greet(ctx, params).await?.message))
}

/// The codes of the languages the server greets in (completes a `language` argument).
pub async fn language_codes(
    ctx: &HelloContext,
    _completion: Completion,
) -> Result<Vec<String>, Error> {
    Ok(ctx
        .languages
        .keys()
        .map(|code| (*code).to_owned())
        .collect())
}

/// What the greeting card is for.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct CardArguments {
    /// ISO 639-1 code of the language to greet in.
    #[garde(length(chars, min = 2, max = 3), pattern(r"^[a-z]+$"))]
    pub language: String,
    /// Who the card is for.
    #[garde(length(chars, min = 1, max = 64))]
    pub name: String,
    /// The occasion, if there is one.
    #[garde(inner(length(chars, min = 1, max = 64)))]
    pub occasion: Option<String>,
}

/// Ask for a two-line greeting card that opens with the server's greeting.
#[prompt(
    read_only,
    title = "Write a greeting card",
    complete(language = language_codes)
)]
pub async fn greeting_card(
    ctx: &HelloContext,
    arguments: CardArguments,
) -> Result<Vec<Message>, Error> {
    let request = GreetRequest {
        language: arguments.language,
        name: arguments.name,
    };
    let greeting = greet(ctx, request).await?;
    let occasion = arguments
        .occasion
        .map(|o| format!(" for {o}"))
        .unwrap_or_default();
    Ok(vec![Message::user(format!(
        "Write a two-line greeting card{occasion} in {}. Open it with \"{}\".",
        greeting.language.name, greeting.message
    ))])
}

/// `list_languages` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct ListLanguagesRequest {}

/// The languages the server greets in.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct LanguageList {
    /// Ordered by code.
    pub languages: Vec<Language>,
}

/// List the languages `greet` accepts.
#[tool(read_only, rest = "GET /languages")]
pub async fn list_languages(
    ctx: &HelloContext,
    _request: ListLanguagesRequest,
) -> Result<LanguageList, Error> {
    Ok(LanguageList {
        languages: ctx.languages.values().cloned().collect(),
    })
}

/// The text to measure, and how many frequent words to report.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct TextStatsRequest {
    /// The text to measure. Free text travels in the body, never in a URL.
    #[garde(length(chars, min = 1, max = MAX_TEXT_CHARS))]
    pub text: String,
    /// How many of the most frequent words to report (default 3).
    #[garde(range(min = 1, max = 20))]
    pub top: Option<u32>,
}

/// Statistics of a text.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TextStats {
    /// Characters (Unicode scalar values).
    pub characters: usize,
    /// Whitespace-separated words.
    pub words: usize,
    /// The most frequent words, most frequent first (ties by word).
    pub top_words: Vec<WordCount>,
    /// The longest word, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub longest_word: Option<WordCount>,
}

/// A word and a number about it.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct WordCount {
    /// The word, lower-cased, without surrounding punctuation.
    pub word: String,
    /// Occurrences (in `top_words`) or characters (in `longest_word`).
    pub count: usize,
}

/// Count the characters and words of a text and report its most frequent words.
#[tool(read_only, rest = "POST /text/stats")]
pub async fn text_stats(
    _ctx: &HelloContext,
    request: TextStatsRequest,
) -> Result<TextStats, Error> {
    let words: Vec<String> = request
        .text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for word in &words {
        *counts.entry(word).or_default() += 1;
    }
    let mut top: Vec<WordCount> = counts
        .iter()
        .map(|(word, count)| WordCount {
            word: (*word).to_owned(),
            count: *count,
        })
        .collect();
    top.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.word.cmp(&b.word)));
    top.truncate(request.top.unwrap_or(3) as usize);
    let longest_word = words
        .iter()
        .fold(None::<&String>, |best, w| match best {
            Some(b) if b.chars().count() >= w.chars().count() => Some(b),
            _ => Some(w),
        })
        .map(|w| WordCount {
            word: w.clone(),
            count: w.chars().count(),
        });
    Ok(TextStats {
        characters: request.text.chars().count(),
        words: words.len(),
        top_words: top,
        longest_word,
    })
}
