//! Serve the conformance fixture tools: `cargo run -p groundkit-examples --bin conformance-fixture
//! -- --port 3001`, then point the MCP conformance suite at `http://127.0.0.1:3001/mcp`.

use std::process::ExitCode;

use clap::Parser;
use groundkit_core::openapi::ApiInfo;
use groundkit_examples::conformance::ConformanceContext;
use groundkit_server::Limits;
use groundkit_server::serve::{self, ServeArgs};

/// Serve the MCP conformance suite's fixture tools over REST and MCP.
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
        title: "groundkit conformance fixture".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    serve::run_tools(ConformanceContext, info, Limits::default(), &cli.serve)
}
