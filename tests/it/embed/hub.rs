//! Models by name from a model hub: `tests/embed/hub_server.py` answers on loopback as the
//! Hugging Face Hub does (the weights behind a redirect with their SHA-256 announced), serving
//! the installed all-MiniLM-L6-v2 files.

use std::path::Path;
use std::process::Command;

use groundkit_embed::LocalEmbedder;
use groundkit_embed::hub::{Hub, HubModel};
use groundkit_retrieval::embed::{Embedder, Role};

use super::server::{Spawned, get_json, spawn_listening};
use super::{embed_python, json_output, minilm, model_dir, repo_root};

const REPO: &str = "groundkit-it/minilm";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

pub(crate) struct HubServer {
    server: Spawned,
}

impl HubServer {
    /// The installed all-MiniLM-L6-v2 as [`REPO`] at [`COMMIT`].
    fn start(flags: &[&str]) -> Self {
        Self::serve(&model_dir(), REPO, flags)
    }

    /// The model in `dir` as `repo` at [`COMMIT`].
    pub(crate) fn serve(dir: &Path, repo: &str, flags: &[&str]) -> Self {
        let mut command = Command::new(embed_python());
        command
            .arg(repo_root().join("tests/embed/hub_server.py"))
            .arg("--model-dir")
            .arg(dir)
            .args(["--repo", repo, "--commit", COMMIT])
            .args(flags);
        Self {
            server: spawn_listening(command),
        }
    }

    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.server.port)
    }

    pub(crate) fn requests(&self) -> u64 {
        get_json(self.server.port, "/stats")["requests"]
            .as_u64()
            .expect("a count")
    }
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir");
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_model_named_on_the_hub_is_downloaded_once_then_loaded_from_the_cache() {
    let server = HubServer::start(&[]);
    let cache = tempfile::tempdir().expect("cache");
    let hub = Hub::new(server.endpoint(), cache.path());
    let model = HubModel::parse(REPO).expect("name");
    let dir = hub.snapshot(&model).expect("download");
    let model_root = cache.path().join("models--groundkit-it--minilm");
    assert_eq!(dir, model_root.join("snapshots").join(COMMIT));
    let got = files(&dir);
    for needed in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "modules.json",
        "1_Pooling/config.json",
        "sentence_bert_config.json",
    ] {
        assert!(got.iter().any(|f| f == needed), "{needed} in {got:?}");
    }
    assert_eq!(
        std::fs::read_to_string(model_root.join("refs/main")).expect("ref"),
        COMMIT
    );
    assert_eq!(
        std::fs::read(dir.join("model.safetensors")).expect("weights"),
        std::fs::read(model_dir().join("model.safetensors")).expect("installed weights"),
    );

    let downloaded = LocalEmbedder::load(&dir, 1).expect("load");
    assert_eq!(
        downloaded.identity().fingerprint,
        minilm().identity().fingerprint,
        "the same weights and configuration"
    );
    assert_eq!(downloaded.identity().model, REPO, "named as on the hub");
    let texts = ["what helps with jet lag", "green tea"];
    assert_eq!(
        downloaded.embed(&texts, Role::Query).expect("embed"),
        minilm().embed(&texts, Role::Query).expect("embed"),
    );

    // Cached: neither the branch nor the commit asks the hub again, and offline works.
    let asked = server.requests();
    for spec in [REPO.to_owned(), format!("{REPO}@{COMMIT}")] {
        let again = hub
            .snapshot(&HubModel::parse(&spec).expect("name"))
            .expect("cached");
        assert_eq!(again, dir);
    }
    let offline = Hub::new("http://127.0.0.1:9", cache.path()).offline(true);
    assert_eq!(offline.snapshot(&model).expect("offline"), dir);
    assert_eq!(server.requests(), asked, "no request for a cached model");
    assert!(
        files(cache.path())
            .iter()
            .all(|f| f.starts_with("models--")),
        "no temporary file left: {:?}",
        files(cache.path())
    );
}

#[test]
fn weights_that_do_not_match_their_announced_hash_leave_no_model_behind() {
    let server = HubServer::start(&["--corrupt-weights"]);
    let cache = tempfile::tempdir().expect("cache");
    let hub = Hub::new(server.endpoint(), cache.path());
    let model = HubModel::parse(REPO).expect("name");
    let err = hub.snapshot(&model).expect_err("corrupt weights");
    assert_eq!(err.kind(), "embedding_error");
    assert!(err.to_string().contains("SHA-256"), "{err}");
    let left = files(cache.path());
    assert!(
        !left
            .iter()
            .any(|f| f.ends_with("model.safetensors") || f.contains("refs")),
        "{left:?}"
    );
    assert!(
        left.iter().all(|f| f.starts_with("models--")),
        "no temporary file: {left:?}"
    );
    let err = Hub::new(server.endpoint(), cache.path())
        .offline(true)
        .snapshot(&model)
        .expect_err("nothing usable cached");
    assert_eq!(err.kind(), "validation_error");
}

#[test]
fn names_that_are_not_models_on_the_hub_are_refused() {
    for spec in [
        "",
        "minilm",
        "a/b/c",
        "../x",
        "a/..",
        "a/b@",
        "a/b@../main",
        "a b/c",
        "a/b@x/y",
    ] {
        let err = HubModel::parse(spec).expect_err(spec);
        assert_eq!(err.kind(), "validation_error", "{spec}");
    }
    let server = HubServer::start(&[]);
    let cache = tempfile::tempdir().expect("cache");
    let hub = Hub::new(server.endpoint(), cache.path());
    for spec in ["groundkit-it/other", "groundkit-it/minilm@v9"] {
        let err = hub
            .snapshot(&HubModel::parse(spec).expect("well formed"))
            .expect_err(spec);
        assert_eq!(err.kind(), "validation_error", "{spec}");
        assert!(
            err.to_string().contains("give its directory to model_dir"),
            "{err}"
        );
    }
    assert!(files(cache.path()).is_empty(), "{:?}", files(cache.path()));
}

/// `grk --embed-hub-model` takes the hub and the cache from the variables the Hub's own tools
/// read.
#[test]
fn grk_embeds_with_a_model_named_on_the_hub() {
    let server = HubServer::start(&[]);
    let cache = tempfile::tempdir().expect("cache");
    let fx = super::two_notes();
    let grk = |args: &[&str]| {
        fx.grk()
            .args(["--embed-hub-model", REPO])
            .env("HF_ENDPOINT", server.endpoint())
            .env("HF_HUB_CACHE", cache.path())
            .env_remove("HF_HUB_OFFLINE")
            .args(args)
            .output()
            .expect("run grk")
    };
    super::ingest_and_search_by_meaning(grk);
    let asked = server.requests();
    let status = json_output(grk(&["status", "-c", "c", "--json"]));
    assert_eq!(status["embedding"]["model"], REPO);
    assert_eq!(status["dense_search_available"], true);
    assert_eq!(server.requests(), asked, "a later run loads from the cache");
}
