//! Serve the hello tool set: `cargo run -p groundkit-examples --bin hello -- --port 8080` for REST
//! and MCP over HTTP (`/mcp`), or `-- --stdio` for MCP on stdin/stdout.

use std::process::ExitCode;

use clap::Parser;
use groundkit_core::openapi::ApiInfo;
use groundkit_examples::hello::HelloContext;
use groundkit_server::Limits;
use groundkit_server::serve::{self, ServeArgs};

/// Serve the hello example tools over REST and MCP (HTTP or stdio).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    groundkit_server::logging::init();
    let info = ApiInfo {
        title: "groundkit hello".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    serve::run_tools(HelloContext::default(), info, Limits::default(), &cli.serve)
}
