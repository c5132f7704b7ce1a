//! groundkit transports: everything between a [`Registry`](groundkit_core::Registry) and the
//! network, plus the `grk` command line.
//!
//! What a user reaches: [`app::build`], the actix application of a registry, with a REST
//! route per tool and MCP at `/mcp`; [`mcp`], MCP mounted in an app of one's own or over
//! stdio; [`serve`], which runs it all from the serving flags; [`AppState`] and [`Limits`],
//! what a running server holds and the bounds on what requests may cost; [`HostPolicy`] and
//! its kin, which Host and Origin values are answered; [`logging`]; [`service`] (feature
//! `retrieval`), the grounding service on the engine's read surface; [`testing`] (feature
//! `testing`), a test client that calls a registry on every transport; and [`cli`] (feature
//! `cli`), `grk`, the one user of ingest.
//!
//! The plumbing is private: `invoke`, the single call path every transport uses; `edge`, what
//! the transports share (the one error mapping and problem+json, body reading, request ids,
//! the access log), which depends on nothing above it; `state`; `guard`, the bind guard and the
//! Host/Origin allow-list; and MCP's framing, method table and sessions.
//!
//! REST and MCP never import each other: REST lives privately inside [`app`], so MCP cannot
//! name it, and a test reads the sources for the other direction.

pub mod app;
#[cfg(feature = "cli")]
pub mod cli;
mod edge;
mod guard;
mod invoke;
pub mod logging;
pub mod mcp;
pub mod serve;
#[cfg(feature = "retrieval")]
pub mod service;
mod state;
#[cfg(feature = "testing")]
pub mod testing;

pub use guard::{AllowedHosts, BindError, BindTarget, HostPolicy};
pub use state::{AppState, Limits};

/// The README's Rust, compiled (not run) as a doctest so the example a library author copies is
/// complete.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;

/// REST and MCP never import each other. `app::rest` is private to [`app`], so MCP cannot even
/// name it (the compiler keeps that direction); this reads the sources for both directions.
#[cfg(test)]
mod boundaries {
    use std::path::{Path, PathBuf};

    /// Every `.rs` file below `dir`.
    fn sources(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                files.extend(sources(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
        files
    }

    /// The code lines of `file` (comments and docs left out) that name any of `paths`.
    fn naming(file: &Path, paths: &[&str]) -> Vec<String> {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{e}"));
        text.lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .filter(|line| paths.iter().any(|path| line.contains(path)))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn rest_and_mcp_never_import_each_other() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mcp = sources(&src.join("mcp"));
        assert!(mcp.len() > 5, "the MCP sources were found");
        for file in mcp {
            let lines = naming(&file, &["crate::app", "rest::"]);
            assert!(lines.is_empty(), "{} names REST: {lines:?}", file.display());
        }
        let rest = src.join("app").join("rest.rs");
        let lines = naming(&rest, &["crate::mcp", "super::mcp", "mcp::"]);
        assert!(lines.is_empty(), "{} names MCP: {lines:?}", rest.display());
    }

    /// `edge` is below both transports: it names nothing that is built on it.
    #[test]
    fn edge_depends_on_nothing_above_it() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let above = [
            "crate::app",
            "crate::mcp",
            "crate::state",
            "crate::invoke",
            "crate::serve",
            "crate::service",
            "crate::cli",
        ];
        for file in sources(&src.join("edge")) {
            let lines = naming(&file, &above);
            assert!(lines.is_empty(), "{} names {lines:?}", file.display());
        }
    }
}
