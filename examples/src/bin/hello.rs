//! Serve the hello tool set: `cargo run -p groundkit-examples --bin hello -- --port 8080` for REST
//! and MCP over HTTP (`/mcp`), or `-- --stdio` for MCP on stdin/stdout.

use std::process::ExitCode;

use clap::Parser;
use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_examples::hello::HelloContext;
use groundkit_server::serve::{self, ServeArgs};
use groundkit_server::{AppState, Limits};

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
    let registry = match Registry::<HelloContext>::collect() {
        Ok(registry) => registry,
        Err(err) => {
            tracing::error!("cannot serve the hello tools: {err}");
            return ExitCode::FAILURE;
        }
    };
    let info = ApiInfo {
        title: "groundkit hello".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    let state = AppState::new(registry, HelloContext::default(), info, Limits::default());
    match serve::run(state, &cli.serve) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("hello: {err}");
            ExitCode::FAILURE
        }
    }
}
