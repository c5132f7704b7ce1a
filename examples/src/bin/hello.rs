//! Serve the hello tool set: `cargo run -p groundkit-examples --bin hello -- --port 8080` for REST
//! and MCP over HTTP (`/mcp`), or `-- --stdio` for MCP on stdin/stdout.

use std::process::ExitCode;

use groundkit_examples::hello::HelloContext;

fn main() -> ExitCode {
    groundkit_examples::serve::run(
        "Serve the hello example tools over REST and MCP (HTTP or stdio).",
        "groundkit hello",
        HelloContext::default(),
    )
}
