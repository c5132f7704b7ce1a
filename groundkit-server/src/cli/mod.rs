//! The `grk` command line: ingest, search, fetch, status, list and eval over the collections of
//! the index directory and, with `--opensearch-url`, of an OpenSearch cluster.
//!
//! `--json` prints exactly the response types the service returns, so a script parsing
//! `grk search --json` and a client of the REST or MCP surface parse the same shape.

mod cluster;
mod output;
mod progress;
mod tools;

pub use cluster::{BackendArg, ClusterArgs};

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use groundkit_core::Error;
use groundkit_retrieval::chunk::DEFAULT_MAX_CHUNK_BYTES;
use groundkit_retrieval::embed::Embedder;
use groundkit_retrieval::{
    self as retrieval, CollectionCache, DEFAULT_SUPERSEDED_RETENTION, IngestOptions, InputFormat,
};

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
    pub index_dir: PathBuf,
    /// Root that every file source lies in and citations resolve inside.
    #[arg(long, global = true, default_value = ".")]
    pub base_dir: PathBuf,
    /// How chunks and queries are embedded for dense and hybrid search.
    #[command(flatten)]
    pub embed: crate::embedder::EmbedArgs,
    /// How `serve` and `search` rerank when a search asks for it.
    #[command(flatten)]
    pub rerank: crate::reranker::RerankArgs,
    /// The OpenSearch cluster that serves (and `ingest --backend opensearch` publishes)
    /// collections.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
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
pub struct ServeCommand {
    /// Where and how to serve.
    #[command(flatten)]
    pub serve: crate::serve::ServeArgs,
}

/// `grk ingest`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Collection to create or update.
    #[arg(long, short)]
    pub collection: String,
    /// How to read the inputs.
    #[arg(long, value_enum, default_value_t = FormatArg::Files)]
    pub format: FormatArg,
    /// Largest chunk, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_CHUNK_BYTES)]
    pub chunk_bytes: usize,
    /// When this ingest commits, drop the chunks superseded (replaced or removed) more than
    /// SECONDS ago; more recent ones stay fetchable, marked superseded. 0 keeps none.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_SUPERSEDED_RETENTION.as_secs())]
    pub keep_superseded: u64,
    /// Write no vectors, even where the collection has some (without it, ingesting a collection
    /// that has vectors needs its embedder).
    #[arg(long)]
    pub drop_vectors: bool,
    /// Build an HNSW graph over the vectors when there are at least N of them, making dense
    /// search approximate and fast; below N it compares the query with every vector.
    #[arg(long, value_name = "N", default_value_t = retrieval::vectors::graph::DEFAULT_MIN_VECTORS)]
    pub graph_min_vectors: usize,
    /// Where the collection is served from: `local` (the index directory) or `opensearch` (the
    /// `--opensearch-url` cluster: ingested into the index directory as a staging copy, then
    /// its new generation published to the cluster).
    #[arg(long, value_enum, default_value_t = BackendArg::Local)]
    pub backend: BackendArg,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Files, directories (walked, honouring .gitignore) and http:// URLs.
    #[arg(required = true)]
    pub inputs: Vec<String>,
}

/// Input formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// Text, Markdown, HTML and PDF files; URLs.
    Files,
    /// BEIR `corpus.jsonl`.
    Beir,
}

/// Search modes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// BM25.
    Lexical,
    /// Cosine similarity of embeddings.
    Dense,
    /// Reciprocal Rank Fusion of both.
    Hybrid,
}

impl ModeArg {
    fn mode(self) -> retrieval::SearchMode {
        match self {
            ModeArg::Lexical => retrieval::SearchMode::Lexical,
            ModeArg::Dense => retrieval::SearchMode::Dense,
            ModeArg::Hybrid => retrieval::SearchMode::Hybrid,
        }
    }
}

/// `grk search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Collection to search.
    #[arg(long, short)]
    pub collection: String,
    /// Query text (plain text; no query syntax).
    pub query: String,
    /// Number of chunks to return (the service's default, 10, when absent).
    #[arg(long)]
    pub top_k: Option<u32>,
    /// Ranking mode (`dense` and `hybrid` need the collection's embedder).
    #[arg(long, value_enum, default_value_t = ModeArg::Lexical)]
    pub mode: ModeArg,
    /// Rerank the candidates with the reranker the `--rerank-*` options name.
    #[arg(long)]
    pub rerank: bool,
    /// Print the service's JSON response.
    #[arg(long)]
    pub json: bool,
}

/// `grk fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// Collection holding the chunk.
    #[arg(long, short)]
    pub collection: String,
    /// Chunk id, as a search returned it.
    pub chunk_id: String,
    /// Print the service's JSON response.
    #[arg(long)]
    pub json: bool,
}

/// `grk status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Collection to describe.
    #[arg(long, short)]
    pub collection: String,
    /// Print the service's JSON response.
    #[arg(long)]
    pub json: bool,
}

/// `grk list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the service's JSON response.
    #[arg(long)]
    pub json: bool,
}

/// `grk eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Collection to evaluate.
    #[arg(long, short)]
    pub collection: String,
    /// BEIR `queries.jsonl`.
    #[arg(long)]
    pub queries: PathBuf,
    /// BEIR qrels TSV (`query-id`, `corpus-id`, `score`).
    #[arg(long)]
    pub qrels: PathBuf,
    /// Ranking mode (`dense` and `hybrid` need the collection's embedder).
    #[arg(long, value_enum, default_value_t = ModeArg::Lexical)]
    pub mode: ModeArg,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Parses the process arguments and runs the command.
pub fn main() -> ExitCode {
    run(Cli::parse())
}

/// The exit codes of `grk` (the README lists them).
pub mod exit {
    /// The command did what it was asked; for `ingest`, every source was ingested.
    pub const SUCCESS: u8 = 0;
    /// The command failed (storage, a missing collection, ...); the error is on stderr.
    pub const ERROR: u8 = 1;
    /// The command line is wrong: arguments the parser refuses, or a bind `serve` refuses.
    pub const USAGE: u8 = crate::serve::ServeError::USAGE;
    /// `ingest`: some sources failed (listed in the summary); the others were ingested.
    pub const SOME_SOURCES_FAILED: u8 = 3;
    /// `ingest`: no source yielded a document, so the collection holds nothing new.
    pub const NOTHING_INGESTED: u8 = 4;
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> ExitCode {
    // The embedder the options name, loaded (or connected) once; a model that does not load or
    // an endpoint that is refused is a usage error.
    let embedder = match cli.embed.load() {
        Ok(embedder) => embedder,
        Err(err) => {
            report_error(&err);
            return ExitCode::from(exit::USAGE);
        }
    };
    // The reranker, loaded only by the commands that use one.
    let reranking = match &cli.command {
        Command::Search(_) | Command::Status(_) | Command::Serve(_) => match cli.rerank.load() {
            Ok(reranking) => reranking,
            Err(err) => {
                report_error(&err);
                return ExitCode::from(exit::USAGE);
            }
        },
        _ if cli.rerank.any_given() => {
            report_error(&Error::Validation {
                field: "rerank".to_owned(),
                message: "the --rerank-* options apply to search, status and serve only".to_owned(),
            });
            return ExitCode::from(exit::USAGE);
        }
        _ => None,
    };
    let result = match &cli.command {
        Command::Ingest(args) => ingest(&cli, args, embedder),
        Command::Search(args) => {
            tools::search(&cli, args, embedder, reranking.as_ref()).map(|()| exit::SUCCESS)
        }
        Command::Fetch(args) => tools::fetch(&cli, args).map(|()| exit::SUCCESS),
        Command::Status(args) => {
            tools::status(&cli, args, embedder, reranking.as_ref()).map(|()| exit::SUCCESS)
        }
        Command::List(args) => tools::list(&cli, args).map(|()| exit::SUCCESS),
        Command::Eval(args) => eval(&cli, args, embedder.as_deref()).map(|()| exit::SUCCESS),
        Command::Serve(args) => return serve(&cli, args, embedder, reranking.as_ref()),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            report_error(&err);
            ExitCode::from(exit::ERROR)
        }
    }
}

/// Prints an error for the operator: the message and its causes.
fn report_error(err: &Error) {
    let mut line = format!("error: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        line.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    eprintln!("{line}");
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|err| Error::internal(format!("cannot render JSON: {err}")))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}").map_err(|err| Error::storage("cannot write to stdout", err))
}

fn serve(
    cli: &Cli,
    args: &ServeCommand,
    embedder: Option<Arc<dyn Embedder>>,
    reranking: Option<&crate::reranker::Reranking>,
) -> ExitCode {
    use crate::service::{DEFAULT_CACHE_CAPACITY, ServiceContext};
    crate::logging::init();
    let registry = match groundkit_core::Registry::<ServiceContext>::collect() {
        Ok(registry) => registry,
        Err(err) => {
            eprintln!("error: the service tools cannot be served: {err}");
            return ExitCode::from(exit::ERROR);
        }
    };
    let cache = CollectionCache::new(
        cli.index_dir.clone(),
        cli.base_dir.clone(),
        DEFAULT_CACHE_CAPACITY,
    );
    let info = groundkit_core::openapi::ApiInfo {
        title: "groundkit".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    let mut context = ServiceContext::new(cache);
    if let Some(embedder) = embedder {
        context = context.with_embedder(embedder);
    }
    if let Some(reranking) = reranking {
        context = reranking.apply(context);
    }
    match cli.cluster.backend(&cli.base_dir, &cli.index_dir) {
        Ok(Some(cluster)) => context = context.with_backend(cluster),
        Ok(None) => {}
        Err(err) => {
            report_error(&err);
            return ExitCode::from(exit::USAGE);
        }
    }
    let state = crate::AppState::new(registry, context, info, serve_limits(cli));
    match crate::serve::run(state, &args.serve) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            err.exit_code()
        }
    }
}

/// Blocking threads per core for a server whose searches run on this machine alone.
const LOCAL_BLOCKING_THREADS_PER_CORE: usize = 2;

/// The server's limits: the defaults, with as many blocking threads as searches need. A search
/// of the index directory is CPU work, so past a couple of threads per core more threads only
/// add memory and context switches; one that waits on a cluster, an embedding endpoint or a
/// rerank endpoint keeps the default, one thread per concurrent call.
fn serve_limits(cli: &Cli) -> crate::Limits {
    let mut limits = crate::Limits::default();
    let waits_on_network = cli.cluster.opensearch_url.is_some()
        || cli.embed.embed_url.is_some()
        || cli.rerank.rerank_url.is_some();
    if !waits_on_network {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        limits.blocking_threads = LOCAL_BLOCKING_THREADS_PER_CORE * cores;
    }
    limits
}

/// Ingest, then exit with [`exit::NOTHING_INGESTED`] when no source yielded a document and
/// [`exit::SOME_SOURCES_FAILED`] when some sources failed, so a script can tell.
fn ingest(cli: &Cli, args: &IngestArgs, embedder: Option<Arc<dyn Embedder>>) -> Result<u8, Error> {
    let cluster = match args.backend {
        BackendArg::Local => None,
        BackendArg::Opensearch => {
            groundkit_opensearch::check_name(&args.collection)?;
            Some(
                cli.cluster
                    .connect()?
                    .ok_or_else(|| Error::InvalidRequest {
                        field: Some("backend".to_owned()),
                        message: "--backend opensearch needs --opensearch-url".to_owned(),
                    })?,
            )
        }
    };
    let mut options = IngestOptions::new(
        cli.index_dir.clone(),
        cli.base_dir.clone(),
        args.collection.clone(),
        args.inputs.clone(),
    );
    options.format = match args.format {
        FormatArg::Files => InputFormat::Files,
        FormatArg::Beir => InputFormat::Beir,
    };
    options.max_chunk_bytes = args.chunk_bytes;
    options.superseded_retention = std::time::Duration::from_secs(args.keep_superseded);
    options.embedder = embedder;
    options.drop_vectors = args.drop_vectors;
    options.graph_min_vectors = args.graph_min_vectors;
    let mut progress = progress::CliProgress::new(args.json);
    let summary = retrieval::ingest(&options, &mut progress);
    progress.finish();
    let summary = summary?;
    let published = match &cluster {
        Some(cluster) => publish(cli, args, cluster)?,
        None => None,
    };
    match &published {
        None => emit(args.json, &summary, output::print_ingest)?,
        Some(published) if args.json => {
            let mut value = serde_json::to_value(&summary)
                .map_err(|err| Error::internal(format!("cannot render JSON: {err}")))?;
            value["published"] = serde_json::json!({
                "index": published.index,
                "generation": published.generation,
                "chunks": published.chunks,
                "unchanged": published.unchanged,
                "removed": published.removed,
            });
            print_json(&value)?;
        }
        Some(published) => {
            output::print_ingest(&summary);
            output::print_published(published);
        }
    }
    let ingested = summary.added + summary.updated + summary.unchanged;
    Ok(if ingested == 0 {
        exit::NOTHING_INGESTED
    } else if !summary.failed.is_empty() {
        exit::SOME_SOURCES_FAILED
    } else {
        exit::SUCCESS
    })
}

/// Publishes the collection's committed generation to `cluster` (nothing when the collection
/// does not exist: no source yielded a document and none ever did).
fn publish(
    cli: &Cli,
    args: &IngestArgs,
    cluster: &groundkit_opensearch::Cluster,
) -> Result<Option<groundkit_opensearch::Published>, Error> {
    let cache = CollectionCache::new(cli.index_dir.clone(), cli.base_dir.clone(), 1);
    let open = match cache.acquire(&args.collection) {
        Ok(open) => open,
        Err(Error::CollectionNotFound { .. }) => return Ok(None),
        Err(err) => return Err(err),
    };
    let options = groundkit_opensearch::PublishOptions {
        shards: cli.cluster.opensearch_shards,
        replicas: cli.cluster.opensearch_replicas,
        retention: std::time::Duration::from_secs(args.keep_superseded),
        ..Default::default()
    };
    groundkit_opensearch::publish(cluster, &open, &cache, options).map(Some)
}

fn eval(cli: &Cli, args: &EvalArgs, embedder: Option<&dyn Embedder>) -> Result<(), Error> {
    let queries = retrieval::eval::read_queries(&args.queries)?;
    let qrels = retrieval::eval::read_qrels(&args.qrels)?;
    if let Some(cluster) = cli.cluster.backend(&cli.base_dir, &cli.index_dir)?
        && cluster.holds(&args.collection)?
    {
        let report = retrieval::evaluate_backend(
            &*cluster,
            &args.collection,
            &queries,
            &qrels,
            args.mode.mode(),
            embedder,
        )?;
        return emit(args.json, &report, output::print_eval);
    }
    let cache = CollectionCache::new(cli.index_dir.clone(), cli.base_dir.clone(), 1);
    let open = cache.acquire(&args.collection)?;
    let how = retrieval::eval::Ranking {
        mode: args.mode.mode(),
        embedder,
        fusion: retrieval::Fusion::default(),
    };
    if how.mode != retrieval::SearchMode::Lexical {
        retrieval::check_dense(&open, how.embedder)?;
    }
    let report = retrieval::eval::evaluate(&open, &queries, &qrels, &how)?;
    emit(args.json, &report, output::print_eval)
}

/// Prints `value` as pretty JSON with `--json`, else through `human`.
fn emit<T: serde::Serialize>(json: bool, value: &T, human: impl FnOnce(&T)) -> Result<(), Error> {
    if json {
        print_json(value)
    } else {
        human(value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, LOCAL_BLOCKING_THREADS_PER_CORE, serve_limits};

    #[test]
    fn a_server_that_waits_on_the_network_keeps_a_thread_per_call_and_a_local_one_a_few_per_core() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let local = serve_limits(&Cli::parse_from(["grk", "serve"]));
        assert_eq!(
            local.blocking_threads,
            LOCAL_BLOCKING_THREADS_PER_CORE * cores
        );
        for network in [
            &["--opensearch-url", "http://127.0.0.1:9200"][..],
            &[
                "--embed-url",
                "http://127.0.0.1:8000/v1/embeddings",
                "--embed-api-model",
                "m",
            ],
            &[
                "--rerank-url",
                "http://127.0.0.1:8000/rerank",
                "--rerank-api-model",
                "m",
            ],
        ] {
            let args = ["grk", "serve"].iter().chain(network);
            let limits = serve_limits(&Cli::parse_from(args));
            assert_eq!(
                limits.blocking_threads, limits.max_concurrent_calls,
                "{network:?}"
            );
        }
    }

    /// Every `--rerank-*` option the parser knows, given alone, counts as given, so a command
    /// that does not rerank refuses it rather than ignore it (an option added to `RerankArgs`
    /// but not to `any_given` fails here).
    #[test]
    fn every_rerank_option_counts_as_given() {
        use clap::CommandFactory;

        assert!(!Cli::parse_from(["grk", "list"]).rerank.any_given());
        let command = Cli::command();
        let options: Vec<&clap::Arg> = command
            .get_arguments()
            .filter(|arg| {
                arg.get_long()
                    .is_some_and(|long| long.starts_with("rerank"))
            })
            .collect();
        assert!(options.len() >= 9, "{} rerank options", options.len());
        for arg in options {
            let long = format!("--{}", arg.get_long().expect("long option"));
            let mut argv = vec!["grk".to_owned(), long.clone()];
            if arg.get_action().takes_values() {
                // A value the parser accepts and that differs from any default.
                let value = arg
                    .get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_owned())
                    .next_back()
                    .unwrap_or_else(|| "7".to_owned());
                argv.push(value);
            }
            argv.push("list".to_owned());
            let cli = Cli::try_parse_from(&argv).unwrap_or_else(|err| panic!("{argv:?}: {err}"));
            assert!(cli.rerank.any_given(), "{long} is not counted");
        }
    }
}
