//! The command line's grammar: the clap types `grk` parses, with the help text each option
//! prints. Nothing here acts on them; `cli`'s other modules do.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use groundkit_retrieval::chunk::DEFAULT_MAX_CHUNK_BYTES;
use groundkit_retrieval::{self as retrieval, DEFAULT_SUPERSEDED_RETENTION};

use super::cluster::{BackendArg, ClusterArgs};

/// Ground agents and programs in a local corpus.
#[derive(Debug, Parser)]
#[command(name = "grk", version, about)]
pub struct Cli {
    /// Directory holding the collections.
    #[arg(
        long,
        global = true,
        env = "GROUNDKIT_INDEX_DIR",
        default_value = ".groundkit"
    )]
    pub(crate) index_dir: PathBuf,
    /// Root that every file source lies in and citations resolve inside.
    #[arg(long, global = true, default_value = ".")]
    pub(crate) base_dir: PathBuf,
    /// How chunks and queries are embedded for dense and hybrid search.
    #[command(flatten)]
    pub(crate) embed: super::embedder::EmbedArgs,
    /// How `serve` and `search` rerank when a search asks for it.
    #[command(flatten)]
    pub(crate) rerank: super::reranker::RerankArgs,
    /// The OpenSearch cluster that serves (and `ingest --backend opensearch` publishes)
    /// collections.
    #[command(flatten)]
    pub(crate) cluster: ClusterArgs,
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create or update a collection from files, directories, URLs or a BEIR corpus.
    Ingest(IngestArgs),
    /// Search a collection.
    Search(SearchArgs),
    /// Fetch one chunk and verify its citation against the source.
    Fetch(FetchArgs),
    /// Show a collection's size, identity and generation.
    Status(StatusArgs),
    /// List the collections in the index directory (and the cluster, with `--opensearch-url`).
    List(ListArgs),
    /// Measure retrieval quality on BEIR-format queries and relevance judgements.
    Eval(EvalArgs),
    /// Serve search, fetch_chunk, list_collections and index_status over REST and MCP.
    Serve(ServeCommand),
}

/// `grk serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeCommand {
    /// Where and how to serve.
    #[command(flatten)]
    pub(crate) serve: crate::serve::ServeArgs,
    /// Keep a collection of these files and directories and follow them as they change: a
    /// watcher process (`grk ingest --watch`), started, restarted and stopped with the server,
    /// ingests them and publishes a generation for each settled burst of changes.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub(crate) watch: Vec<String>,
    /// The collection `--watch` keeps (default: the name of the first watched directory, or of
    /// the directory of the first watched file).
    #[arg(long, value_name = "NAME", requires = "watch")]
    pub(crate) watch_collection: Option<String>,
}

/// `grk ingest`.
#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// Collection to create or update.
    #[arg(long, short)]
    pub(crate) collection: String,
    /// How to read the inputs.
    #[arg(long, value_enum, default_value_t = FormatArg::Files)]
    pub(crate) format: FormatArg,
    /// Largest chunk, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_CHUNK_BYTES)]
    pub(crate) chunk_bytes: usize,
    /// When this ingest commits, drop the chunks superseded (replaced or removed) more than
    /// SECONDS ago; more recent ones stay fetchable, marked superseded. 0 keeps none.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_SUPERSEDED_RETENTION.as_secs())]
    pub(crate) keep_superseded: u64,
    /// Write no vectors, even where the collection has some (without it, ingesting a collection
    /// that has vectors needs its embedder).
    #[arg(long)]
    pub(crate) drop_vectors: bool,
    /// Build an HNSW graph over the vectors when there are at least N of them, making dense
    /// search approximate and fast; below N it compares the query with every vector.
    #[arg(long, value_name = "N", default_value_t = retrieval::vectors::graph::DEFAULT_MIN_VECTORS)]
    pub(crate) graph_min_vectors: usize,
    /// Where the collection is served from: `local` (the index directory) or `opensearch` (the
    /// `--opensearch-url` cluster: ingested into the index directory as a staging copy, then
    /// its new generation published to the cluster).
    #[arg(long, value_enum, default_value_t = BackendArg::Local)]
    pub(crate) backend: BackendArg,
    /// Print the summary as JSON (with `--watch`, one line per ingest).
    #[arg(long)]
    pub(crate) json: bool,
    /// After the ingest, keep following the files and directories and publish a new generation
    /// for each settled burst of changes, reading only what changed, until stopped.
    #[arg(long)]
    pub(crate) watch: bool,
    /// With `--watch`: look for changes by reading the inputs' metadata every SECONDS instead
    /// of through the system's file notifications (for file systems that send none, such as
    /// network mounts).
    #[arg(long, value_name = "SECONDS", requires = "watch", value_parser = parse_seconds)]
    pub(crate) poll_interval: Option<std::time::Duration>,
    /// With `--watch`: stop when standard input closes (how `grk serve --watch` stops the
    /// watcher it runs, even when it is killed).
    #[arg(long, requires = "watch")]
    pub(crate) stop_on_eof: bool,
    /// Files, directories (walked, honouring .gitignore) and http:// URLs.
    #[arg(required = true)]
    pub(crate) inputs: Vec<String>,
}

/// A positive number of seconds, such as `2` or `0.5`.
fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= 86_400.0 => {
            Ok(std::time::Duration::from_secs_f64(seconds))
        }
        _ => Err("expected a number of seconds above 0, at most 86400".to_owned()),
    }
}

/// Input formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum FormatArg {
    /// Text, Markdown, HTML and PDF files; source code; URLs.
    Files,
    /// BEIR `corpus.jsonl`.
    Beir,
}

/// Search modes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ModeArg {
    /// BM25.
    Lexical,
    /// Cosine similarity of embeddings.
    Dense,
    /// Both fused (see --fusion).
    Hybrid,
}

impl ModeArg {
    pub(super) fn mode(self) -> retrieval::SearchMode {
        match self {
            ModeArg::Lexical => retrieval::SearchMode::Lexical,
            ModeArg::Dense => retrieval::SearchMode::Dense,
            ModeArg::Hybrid => retrieval::SearchMode::Hybrid,
        }
    }
}

/// How a hybrid search combines its rankings.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum FusionArg {
    /// Reciprocal Rank Fusion.
    Rrf,
    /// Min-max normalised scores, added.
    MinMax,
}

impl FusionArg {
    pub(super) fn method(self) -> retrieval::FusionMethod {
        match self {
            FusionArg::Rrf => retrieval::FusionMethod::Rrf,
            FusionArg::MinMax => retrieval::FusionMethod::MinMax,
        }
    }
}

/// How much of each hit a search returns.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum DetailArg {
    /// Ids, scores and citations, no text.
    Ids,
    /// A passage around the query's matches.
    Snippets,
    /// Each chunk's whole text.
    Full,
}

impl DetailArg {
    pub(super) fn detail(self) -> retrieval::Detail {
        match self {
            DetailArg::Ids => retrieval::Detail::Ids,
            DetailArg::Snippets => retrieval::Detail::Snippets,
            DetailArg::Full => retrieval::Detail::Full,
        }
    }
}

/// `grk search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// Collection to search; repeat to search several as one (`*`: every collection).
    #[arg(long, short, required = true)]
    pub(crate) collection: Vec<String>,
    /// Query text (plain text; no query syntax).
    pub(crate) query: String,
    /// Number of chunks to return (the service's default, 10, when absent).
    #[arg(long)]
    pub(crate) top_k: Option<u32>,
    /// Ranking mode (`dense` and `hybrid` need the collection's embedder).
    #[arg(long, value_enum, default_value_t = ModeArg::Lexical)]
    pub(crate) mode: ModeArg,
    /// How `hybrid` combines its rankings (the service's default, `min-max`, when absent).
    #[arg(long, value_enum)]
    pub(crate) fusion: Option<FusionArg>,
    /// Rerank the candidates with the reranker the `--rerank-*` options name.
    #[arg(long)]
    pub(crate) rerank: bool,
    /// How much of each hit to return (the service's default, `full`, when absent).
    #[arg(long, value_enum)]
    pub(crate) detail: Option<DetailArg>,
    /// The most characters the answer's JSON may take (the service's default, 32000, when
    /// absent).
    #[arg(long, value_name = "CHARS")]
    pub(crate) max_chars: Option<u32>,
    /// Leave out hits scoring below SCORE (BM25 in `lexical` mode, cosine in `dense`).
    #[arg(long, value_name = "SCORE", allow_negative_numbers = true)]
    pub(crate) min_score: Option<f64>,
    /// Continue from the `next_cursor` of an earlier answer (the same query, mode, filter and
    /// --min-score).
    #[arg(long)]
    pub(crate) cursor: Option<String>,
    /// Search only sources under this path or matching this glob (`src/net`, `**/*.py`);
    /// repeat for several.
    #[arg(long = "path", value_name = "PATH|GLOB")]
    pub(crate) paths: Vec<String>,
    /// Leave out sources under this path or matching this glob; repeat for several.
    #[arg(long = "exclude-path", value_name = "PATH|GLOB")]
    pub(crate) exclude_paths: Vec<String>,
    /// Search only sources of this class (`text`, `extracted`, `snapshot`); repeat for several.
    #[arg(long = "source-class", value_name = "CLASS")]
    pub(crate) source_classes: Vec<String>,
    /// Search only chunks of this format (`python`, `markdown`, `pdf`, ...); repeat for several.
    #[arg(long = "format", value_name = "FORMAT")]
    pub(crate) formats: Vec<String>,
    /// Search only this document; repeat for several.
    #[arg(long = "document-id", value_name = "ID")]
    pub(crate) document_ids: Vec<String>,
    /// Print the service's JSON response.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `grk fetch`.
#[derive(Debug, Args)]
pub(crate) struct FetchArgs {
    /// Collection holding the chunk.
    #[arg(long, short)]
    pub(crate) collection: String,
    /// Chunk id, as a search returned it.
    pub(crate) chunk_id: String,
    /// Print the service's JSON response.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `grk status`.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Collection to describe.
    #[arg(long, short)]
    pub(crate) collection: String,
    /// Print the service's JSON response.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `grk list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Print the service's JSON response.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `grk eval`.
#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// Collection to evaluate.
    #[arg(long, short)]
    pub(crate) collection: String,
    /// BEIR `queries.jsonl`.
    #[arg(long)]
    pub(crate) queries: PathBuf,
    /// BEIR qrels TSV (`query-id`, `corpus-id`, `score`).
    #[arg(long)]
    pub(crate) qrels: PathBuf,
    /// Ranking mode (`dense` and `hybrid` need the collection's embedder).
    #[arg(long, value_enum, default_value_t = ModeArg::Lexical)]
    pub(crate) mode: ModeArg,
    /// How `hybrid` combines its rankings.
    #[arg(long, value_enum, default_value_t = FusionArg::MinMax)]
    pub(crate) fusion: FusionArg,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}
