//! Serve the conformance fixture tools: `cargo run -p groundkit-examples --bin conformance-fixture
//! -- --port 3001`, then point the MCP conformance suite at `http://127.0.0.1:3001/mcp`.

use std::process::ExitCode;

use groundkit_examples::conformance::ConformanceContext;

fn main() -> ExitCode {
    groundkit_examples::serve::run(
        "Serve the MCP conformance suite's fixture tools over REST and MCP.",
        "groundkit conformance fixture",
        ConformanceContext,
    )
}
