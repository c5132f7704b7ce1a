//! Logging set-up: everything to stderr (stdout belongs to MCP frames on stdio), filtered by
//! `GROUNDKIT_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

/// Install the stderr subscriber. Call once, before serving anything.
pub fn init() {
    let filter =
        EnvFilter::try_from_env("GROUNDKIT_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
