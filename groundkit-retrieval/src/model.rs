//! The values the retrieval engine answers with, shared by every module that produces them and
//! by the service that returns them unchanged: search results and their citations, fetched
//! chunks with their verdicts, collection status and listings.
//!
//! This module imports nothing else from the engine, so every other module can depend on it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod freshness;
mod vector_graph;

pub(crate) use freshness::rfc3339;
pub use freshness::{LastChange, WatchMode, WatcherStatus};
pub use vector_graph::VectorGraph;

/// How a document's text was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceClass {
    /// A plain text, Markdown or source-code file; offsets index its bytes.
    Text,
    /// A file whose text came from an extractor (HTML, PDF, a BEIR record); offsets index the
    /// extractor's output.
    Extracted,
    /// A fetched URL whose text is kept in the collection's snapshot directory.
    Snapshot,
}

impl SourceClass {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceClass::Text => "text",
            SourceClass::Extracted => "extracted",
            SourceClass::Snapshot => "snapshot",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "text" => Some(SourceClass::Text),
            "extracted" => Some(SourceClass::Extracted),
            "snapshot" => Some(SourceClass::Snapshot),
            _ => None,
        }
    }
}

/// Where a chunk came from, precisely enough to check it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Citation {
    /// The id of the document (source) the chunk belongs to.
    pub document_id: String,
    /// The chunk's id.
    pub chunk_id: String,
    /// The source: a path relative to the base directory, or the URL of a snapshot.
    pub source: String,
    /// How the text was obtained.
    pub source_class: SourceClass,
    /// The extractor (`name@version`) for `extracted` sources and extracted snapshots; for a
    /// source-code file, the chunker that cut it (`code-rust@2`, or `code-text@1` when it was
    /// chunked as text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extractor: Option<String>,
    /// Byte offset where the chunk starts in the source text.
    pub start_offset: u64,
    /// Byte offset where the chunk ends (exclusive).
    pub end_offset: u64,
    /// The line of the source the chunk starts on, from 1. Present for `text` sources (plain
    /// text, Markdown, source code), absent for others and for chunks indexed before lines were
    /// recorded. Lines end at `\n` (a `\r\n` pair is one break); the offsets stay what
    /// verification checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub start_line: Option<u32>,
    /// The line the chunk's last byte is on, from 1, inclusive: a chunk that ends with a line
    /// break ends on the line that break closes. Present exactly when `start_line` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub end_line: Option<u32>,
}

/// The verdict of re-reading a cited source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// The source still holds exactly the indexed bytes at the cited offsets.
    Verified,
    /// The source exists but no longer holds the indexed bytes there.
    Drifted,
    /// The source cannot be checked: missing, unreadable, outside its root, or extracted by an
    /// extractor this build does not have.
    Unresolvable,
}

/// One chunk, its citation and a fresh verification verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FetchChunkResponse {
    /// The chunk's id.
    pub chunk_id: String,
    /// The id of the document (source) the chunk belongs to.
    pub document_id: String,
    /// Position of the chunk in its document, from 0.
    pub chunk_index: u32,
    /// Where it came from.
    pub citation: Citation,
    /// The definitions enclosing a source-code chunk, outermost first, joined by ` › `
    /// (`impl Parser › fn parse_header`, `class Session › def close`); absent for prose and for
    /// code outside any definition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Whether the source still says what was indexed.
    pub verification: Verification,
    /// The text read back from the source; present only when `verified`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Why the verdict is not `verified`, in terms of the source (never a path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// True when this chunk is no longer one that `search` can return: an ingest since it was
    /// indexed found its source changed or removed. `verification` still checks the source as it
    /// is now, so a superseded chunk is usually `drifted` or `unresolvable`. Superseded chunks stay
    /// fetchable for a retention window (24 hours by default); once it has passed, a later ingest
    /// forgets them and fetching one fails with `chunk_not_found`.
    pub superseded: bool,
}

/// How to rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// BM25 over the analysed chunk text.
    #[default]
    Lexical,
    /// Cosine similarity between the query's vector and each chunk's, from the collection's
    /// embedder.
    Dense,
    /// The lexical and dense rankings fused (see [`FusionMethod`]).
    Hybrid,
}

impl SearchMode {
    /// The serialized spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Lexical => "lexical",
            SearchMode::Dense => "dense",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

/// How a `hybrid` search combines its lexical and its dense ranking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FusionMethod {
    /// Reciprocal Rank Fusion: each ranking's places count, whatever the scores behind them.
    Rrf,
    /// Each ranking's scores scaled to 0..1 over its candidates (the best 1, the worst and a
    /// chunk the ranking does not hold 0), then added, the dense one weighted: how far apart
    /// two candidates score counts, not only their order. The default: better than `rrf` by
    /// nDCG@10 on SciFact's training split, its test split, Cranfield and a code-search set
    /// (bench/README.md).
    #[default]
    MinMax,
}

/// Where an embedder runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EmbedderKind {
    /// A model run inside the groundkit process.
    InProcess,
    /// An OpenAI-compatible `/v1/embeddings` endpoint.
    Http,
}

/// What produced a collection's vectors. Two embedders with the same `fingerprint` give the same
/// vector for the same text; dense search needs the server's fingerprint to equal the
/// collection's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EmbeddingIdentity {
    /// Where the embedder runs.
    pub kind: EmbedderKind,
    /// The model's name.
    pub model: String,
    /// A digest of everything that decides the vectors: for a model run in process its weights,
    /// tokenizer and sentence-transformers configuration; for an endpoint its model name and
    /// dimension.
    pub fingerprint: String,
    /// Values per vector.
    pub dimension: u32,
    /// How token states become one vector (`mean`, `cls`, `max`, `mean_sqrt_len`), or
    /// `provider` when an endpoint decides.
    pub pooling: String,
    /// Whether the model normalises its vectors to unit length. Stored vectors are unit length
    /// either way, so dense scores are cosine similarities.
    pub normalized: bool,
    /// The longest input in tokens, special tokens included; longer text is truncated. Absent
    /// when an endpoint decides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// Which chunks a search may return. Every condition given must hold (an empty filter keeps
/// everything); within one list, any value will do.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Filter {
    /// Keep only chunks whose source matches one of these: a path relative to the collection's
    /// base directory, matched as a prefix at a `/` (`src/net` keeps `src/net/tcp.rs`, not
    /// `src/network.rs`), or a glob when it holds `*`, `?`, `[` or `{` (`*` stays within one
    /// directory, `**` crosses them: `**/*.py`, `docs/*.md`). Also matches a snapshot's URL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 512)))]
    pub paths: Vec<String>,
    /// Leave out chunks whose source matches one of these (the same syntax as `paths`), even
    /// when `paths` keeps them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(length(min = 1, max = 512)))]
    pub exclude_paths: Vec<String>,
    /// Keep only chunks of these source classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub source_class: Vec<SourceClass>,
    /// Keep only chunks of these formats: a source file's language (`rust`, `python`, ...)
    /// when it was chunked at its definitions, the extracted format (`pdf`, `html`, `docx`,
    /// `beir`, ...), or else the file's extension (`markdown` for `.md`, `text` for `.txt`,
    /// `yaml` for `.yml`, `text` without an extension).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(regex(pattern = r"^[a-z0-9+_-]{1,32}$")))]
    pub format: Vec<String>,
    /// Keep only chunks of these documents (the `document_id`s of hits).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 1000), inner(length(min = 1, max = 1024)))]
    pub document_ids: Vec<String>,
    /// Keep only chunks of files modified at or after this time: RFC 3339
    /// (`2026-12-01T09:30:00Z`) or a date (`2026-12-01`, midnight UTC). The time is the file's
    /// when ingest last read a change in it; sources without one (BEIR records, URLs) never
    /// pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "time_schema")]
    pub modified_after: Option<String>,
    /// Keep only chunks of files modified before this time (the same forms as
    /// `modified_after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "time_schema")]
    pub modified_before: Option<String>,
    /// Keep only chunks of Markdown files whose front matter (YAML between `---` lines or TOML
    /// between `+++` lines) has these fields: each named field must hold the value given, or
    /// one of the values of a list given (`{"tags": ["rust", "cli"], "draft": false}`); a field
    /// holding a list matches when any of its items does. Values compare exactly, as text:
    /// `true`, `3`, `"2026-05-01"`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    #[schemars(length(max = 100))]
    pub metadata: std::collections::BTreeMap<String, MetaValue>,
    /// Any other field, refused by `Filter::compile` as a `validation_error` naming it (read
    /// here rather than refused by the parser, which would call it an `invalid_request`).
    #[serde(flatten, skip_serializing)]
    #[schemars(skip)]
    pub unknown: std::collections::BTreeMap<String, serde_json::Value>,
}

/// A value a metadata field must hold: one, or any of a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum MetaValue {
    /// This value.
    One(MetaScalar),
    /// Any of these values.
    Any(#[schemars(length(min = 1, max = 100))] Vec<MetaScalar>),
}

/// A metadata value: compared as text (`true`, `3`, `2026-05-01`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum MetaScalar {
    /// A string.
    Text(String),
    /// A number, as written.
    Number(serde_json::Number),
    /// A boolean.
    Flag(bool),
}

impl MetaScalar {
    /// The value as text, as a document's metadata holds it.
    pub fn text(&self) -> String {
        match self {
            MetaScalar::Text(text) => text.clone(),
            MetaScalar::Number(number) => number.to_string(),
            MetaScalar::Flag(flag) => flag.to_string(),
        }
    }
}

/// The schema of a filter's time: a date or an RFC 3339 date and time.
fn time_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            { "type": "string", "format": "date" },
            { "type": "string", "format": "date-time" }
        ]
    })
}

impl Filter {
    /// Whether the filter keeps every chunk.
    pub fn is_empty(&self) -> bool {
        self == &Filter::default()
    }
}

/// A search request against an already chosen collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchParams {
    /// Text to search for; plain text, never query syntax.
    pub query: String,
    /// How many chunks to return, `1..=MAX_RANK_DEPTH`.
    pub top_k: u32,
    /// How to rank.
    #[serde(default)]
    pub mode: SearchMode,
    /// How `hybrid` combines its two rankings (ignored by the other modes).
    #[serde(default)]
    pub fusion: FusionMethod,
    /// Which chunks may be returned (`None`: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Filter>,
}

/// How much of each hit a search returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// Ids, scores, ranks, citations and scopes, no text: the shortest answer, to choose from
    /// before fetching a chunk with `fetch_chunk`.
    Ids,
    /// A passage of each chunk around the query's matches (about 300 bytes), the matches marked
    /// by byte offsets into the source.
    Snippets,
    /// Each chunk's whole text.
    #[default]
    Full,
}

impl Detail {
    /// The serialized spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Detail::Ids => "ids",
            Detail::Snippets => "snippets",
            Detail::Full => "full",
        }
    }
}

/// A byte range of a source, in the offsets of its citation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Span {
    /// Where the range starts.
    pub start_offset: u64,
    /// Where it ends (exclusive).
    pub end_offset: u64,
}

/// A passage of a chunk around the query's matches. Its text is the source's bytes from
/// `start_offset` to `end_offset`, in the offsets of the hit's citation, so a snippet is checked
/// like its chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Snippet {
    /// The passage.
    pub text: String,
    /// Where it starts in the source.
    pub start_offset: u64,
    /// Where it ends in the source (exclusive).
    pub end_offset: u64,
    /// The words of the passage that match a query term (as the index analyses words, so
    /// "tests" matches "testing"), in order; empty when none does (a `dense` hit may share no
    /// word with its query).
    pub matches: Vec<Span>,
}

/// One ranked chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RetrievalResult {
    /// The chunk's id: pass it to `fetch_chunk` to re-verify the text against its source.
    pub chunk_id: String,
    /// The id of the document (source) the chunk belongs to.
    pub document_id: String,
    /// Relevance of this chunk to the query: higher is better, and scores compare only within
    /// one response. In `lexical` mode it is the BM25 score, >= 0. When `metadata.reranked` is
    /// true, the order is the reranker's.
    pub score: f32,
    /// Position in the ranking: 1 for the best result.
    #[schemars(range(min = 1))]
    pub rank: u32,
    /// The chunk's text, the source's bytes from the citation's `start_offset` to its
    /// `end_offset`; present with `detail: "full"` (the default). When `content_truncated` is
    /// true it is only the first part of them, cut to keep the answer within `max_chars`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// True when `content` was cut to keep the answer within `max_chars`: it is then a prefix
    /// of the chunk's text, cut between two characters. `fetch_chunk` returns the whole chunk.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub content_truncated: bool,
    /// A passage of the chunk around the query's matches; present with `detail: "snippets"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<Snippet>,
    /// Where the chunk came from.
    pub citation: Citation,
    /// The definitions enclosing a source-code chunk, outermost first, joined by ` › `
    /// (`impl Parser › fn parse_header`, `class Session › def close`); absent for prose and for
    /// code outside any definition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The collection the chunk belongs to, when a search asked several (`collections`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
}

impl RetrievalResult {
    /// The chunk's text as the engine returns it before an answer is fitted to a budget (empty
    /// once [`Detail::Ids`] or [`Detail::Snippets`] left it out).
    pub fn text(&self) -> &str {
        self.content.as_deref().unwrap_or_default()
    }
}

/// How a response was produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchMetadata {
    /// The mode that ranked the results.
    pub mode: SearchMode,
    /// How a `hybrid` answer fused its two rankings; absent in the other modes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fusion: Option<FusionMethod>,
    /// The collection generation the results come from. For several collections, the sum of
    /// their generations, which grows whenever one of them changes; `generations` has each.
    pub generation: u64,
    /// The generation of each collection searched, when a search asked several.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub generations: std::collections::BTreeMap<String, u64>,
    /// The `top_k` asked for.
    pub top_k: u32,
    /// Analysed query terms used (0: every word was a stop word or punctuation).
    pub query_terms: u32,
    /// Whether a reranker reordered the results.
    pub reranked: bool,
    /// The reranker's model, when reranked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_model: Option<String>,
    /// How many candidates the reranker saw, when reranked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_input_depth: Option<u32>,
    /// How much of each hit the results carry.
    pub detail: Detail,
    /// The most characters (Unicode scalar values) the answer's JSON may take, the budget it was
    /// fitted to; absent when it was not fitted to one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<u32>,
    /// True when the answer was cut to fit `max_chars`: ranked results were left out
    /// (`omitted_results`) or the last one's `content` was cut (`content_truncated`).
    pub truncated: bool,
    /// Ranked results left out to fit `max_chars`, after the last one returned.
    pub omitted_results: u32,
}

impl SearchMetadata {
    /// How a backend ranked a search for `params`: at `generation`, with `query_terms`
    /// analysed terms; not reranked, not yet fitted to a budget (whole chunks).
    pub fn ranked(params: &SearchParams, generation: u64, query_terms: u32) -> Self {
        Self {
            mode: params.mode,
            fusion: (params.mode == SearchMode::Hybrid).then_some(params.fusion),
            top_k: params.top_k,
            generation,
            generations: Default::default(),
            query_terms,
            reranked: false,
            rerank_model: None,
            rerank_input_depth: None,
            detail: Detail::Full,
            max_chars: None,
            truncated: false,
            omitted_results: 0,
        }
    }
}

/// Ranked chunks and how they were produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResponse {
    /// The ranked chunks, best first.
    pub results: Vec<RetrievalResult>,
    /// How many results were returned (at most `top_k`; fewer when fewer chunks match, or when
    /// `max_chars` left some out: see `metadata.omitted_results`).
    pub total_results: u32,
    /// How they were produced.
    pub metadata: SearchMetadata,
    /// Present when more hits follow this page (a walk through the pages ends after 1,000
    /// hits; a reranked answer is one page): send it back as `cursor`, with the same
    /// collection, query, mode, fusion and `min_score`, for the next page, which starts right after
    /// this one's last hit in the same ranking. `top_k`, `detail` and `max_chars` may change
    /// from page to page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// How often this process opened (rebuilt) a collection, and what that cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RebuildStats {
    /// Acquires of the collection.
    pub acquires: u64,
    /// Acquires that had to open the collection (first use or a moved generation).
    pub rebuilds: u64,
    /// Seconds spent opening, in total.
    pub rebuild_seconds_total: f64,
    /// Seconds the last open took.
    pub last_rebuild_seconds: Option<f64>,
}

/// How a collection's vectors are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DenseIndex {
    /// The query is compared with every vector: the nearest are exactly the nearest.
    Exact,
    /// Through an HNSW graph: approximate (a near vector can be missed), fast on large
    /// collections.
    Hnsw,
}

/// A collection's size, identity and this process's cache counters. Never a source, content or
/// path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexStatus {
    /// The collection.
    pub collection: String,
    /// How many documents (ingested sources) the collection holds.
    pub document_count: u64,
    /// How many chunks (searchable passages) the collection holds.
    pub chunk_count: u64,
    /// The collection's generation: it grows by one with every ingest that changes it.
    pub generation: u64,
    /// Version of the collection's storage format.
    pub schema_version: u32,
    /// The embedder that computed the vectors of the generation this server has open; absent
    /// when the collection has no vectors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<EmbeddingIdentity>,
    /// Whether this server can search the collection in `dense` and `hybrid` mode: it has
    /// vectors, and the server embeds queries with the same embedder.
    pub dense_search_available: bool,
    /// How `dense` and `hybrid` searches find the nearest vectors; absent when the collection
    /// has no vectors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_index: Option<DenseIndex>,
    /// The model this server reranks with when a search asks for `rerank: true`; absent when it
    /// has no reranker (such a search is refused with `reranker_not_configured`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_model: Option<String>,
    /// Requests this server has served from this collection since it started.
    pub retriever_acquires: u64,
    /// Times this server had to open the collection: on first use and after each new
    /// generation.
    pub retriever_rebuilds: u64,
    /// Seconds this server has spent opening the collection, in total.
    pub rebuild_seconds_total: f64,
    /// Seconds the last open took; absent until the collection has been opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_rebuild_seconds: Option<f64>,
    /// When the committed generation was published, and what it changed; absent when an older
    /// build committed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_change: Option<LastChange>,
    /// The watcher following the collection's files (`grk ingest --watch`, `grk serve
    /// --watch`); absent when none is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watcher: Option<WatcherStatus>,
}

/// The collections this server can search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListCollectionsResponse {
    /// Collection names, sorted; pass one as `collection` to the other tools.
    pub collections: Vec<String>,
}
