//! The `grk` command line: ingest, search, fetch, status, list and eval over the collections of
//! the index directory and, with `--opensearch-url`, of an OpenSearch cluster.
//!
//! `--json` prints exactly the response types the service returns, so a script parsing
//! `grk search --json` and a client of the REST or MCP surface parse the same shape.
//!
//! This module is the dispatch: it loads the embedder and the reranker the options name and
//! hands each command to the module that owns it.
//!
//! - `args`: the clap types, the command line's grammar and help text.
//! - `embedder`, `reranker` and `source`: the `--embed-*` and `--rerank-*` options, one rule
//!   for where a model comes from.
//! - `cluster`: the `--opensearch-*` options.
//! - `serve`: the service assembled from the options, for `grk serve` and the read commands.
//! - `tools`: `search`, `fetch`, `status` and `list`, through the service's tools.
//! - `ingest`: ingest and publish; `watch`: `ingest --watch`; `supervise`: the watcher process
//!   `serve --watch` runs; `eval`: retrieval quality.
//! - `output` and `progress`: what the commands print.
//! - `malloc`: how `serve` has the allocator give large blocks back.

mod args;
mod cluster;
mod embedder;
mod eval;
mod ingest;
mod malloc;
mod output;
mod progress;
mod reranker;
mod serve;
mod source;
mod supervise;
mod tools;
mod watch;

pub use args::Cli;

use std::process::ExitCode;

use clap::Parser;
use groundkit_core::Error;

use args::Command;

/// Parses the process arguments and runs the command.
pub fn main() -> ExitCode {
    run(Cli::parse())
}

/// The exit codes of `grk` (the README lists them).
pub(crate) mod exit {
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
    let serving = matches!(cli.command, Command::Serve(_));
    if serving {
        malloc::return_large_blocks();
        crate::logging::init();
    }
    // The embedder the options name, loaded (or connected) once; a model that does not load or
    // an endpoint that is refused is a usage error. A server starts while an endpoint does not
    // answer yet, and serves what needs neither meanwhile.
    let embedder = match cli.embed.load(serving) {
        Ok(embedder) => embedder,
        Err(err) => {
            report_error(&err);
            return ExitCode::from(exit::USAGE);
        }
    };
    // The reranker, loaded only by the commands that use one.
    let reranking = match &cli.command {
        Command::Search(_) | Command::Status(_) | Command::Serve(_) => {
            match cli.rerank.load(serving) {
                Ok(reranking) => reranking,
                Err(err) => {
                    report_error(&err);
                    return ExitCode::from(exit::USAGE);
                }
            }
        }
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
        Command::Ingest(args) => ingest::ingest(&cli, args, embedder),
        Command::Search(args) => {
            tools::search(&cli, args, embedder, reranking.as_ref()).map(|()| exit::SUCCESS)
        }
        Command::Fetch(args) => tools::fetch(&cli, args).map(|()| exit::SUCCESS),
        Command::Status(args) => {
            tools::status(&cli, args, embedder, reranking.as_ref()).map(|()| exit::SUCCESS)
        }
        Command::List(args) => tools::list(&cli, args).map(|()| exit::SUCCESS),
        Command::Eval(args) => eval::eval(&cli, args, embedder.as_deref()).map(|()| exit::SUCCESS),
        Command::Serve(args) => return serve::serve(&cli, args, embedder, reranking.as_ref()),
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
