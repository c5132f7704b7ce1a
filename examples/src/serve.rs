//! The `main` every example binary shares: parse the serving flags, log to stderr, serve one
//! tool set over REST and MCP until stopped (or over stdio until input ends).

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};
use groundkit_core::openapi::ApiInfo;
use groundkit_server::Limits;
use groundkit_server::serve::{self, ServeArgs};

/// The example binaries' command line: the serving flags every groundkit binary shares.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

/// Serve the tools of `context` under `title`; `about` is the binary's one-line `--help`.
pub fn run<Ctx: Send + Sync + 'static>(about: &'static str, title: &str, context: Ctx) -> ExitCode {
    let matches = Cli::command().about(about).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    groundkit_server::logging::init();
    let info = ApiInfo {
        title: title.into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    serve::run_tools(context, info, Limits::default(), &cli.serve)
}
