//! The `grk` command line: `--json` prints exactly the engine's response types.

use std::process::Command;

use groundkit_retrieval::{
    FetchChunkResponse, IndexStatus, ListCollectionsResponse, SearchResponse, Verification,
};

use super::Fixture;

const GRK: &str = env!("CARGO_BIN_EXE_grk-it");

fn grk(fx: &Fixture, args: &[&str]) -> std::process::Output {
    Command::new(GRK)
        .arg("--index-dir")
        .arg(&fx.index)
        .args(args)
        .current_dir(&fx.base)
        .env_remove("GROUNDKIT_INDEX_DIR")
        .output()
        .expect("run grk")
}

fn json<T: serde::de::DeserializeOwned>(out: &std::process::Output) -> T {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("response JSON")
}

#[test]
fn json_output_is_the_service_response_and_human_output_is_readable() {
    let fx = Fixture::new();
    fx.write("notes/tea.md", "Green tea wants water at 80 degrees.");
    fx.write("notes/coffee.md", "Espresso wants water at 93 degrees.");
    let out = grk(&fx, &["ingest", "--collection", "n", "notes"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 added"), "{text}");

    let search: SearchResponse = json(&grk(
        &fx,
        &["search", "--collection", "n", "green tea", "--json"],
    ));
    assert_eq!(search.results[0].document_id, "notes/tea.md");
    let human = grk(&fx, &["search", "--collection", "n", "green tea"]);
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("notes/tea.md") && human.contains("[0..36]") && human.contains("Green tea"),
        "{human}"
    );

    // Filters: the other file only, then nothing (both files are Markdown), then a bad glob.
    let filtered: SearchResponse = json(&grk(
        &fx,
        &[
            "search",
            "--collection",
            "n",
            "water",
            "--exclude-path",
            "**/tea.md",
            "--format",
            "markdown",
            "--json",
        ],
    ));
    let sources: Vec<&str> = filtered
        .results
        .iter()
        .map(|r| r.citation.source.as_str())
        .collect();
    assert_eq!(sources, ["notes/coffee.md"]);
    let none: SearchResponse = json(&grk(
        &fx,
        &[
            "search",
            "--collection",
            "n",
            "water",
            "--format",
            "pdf",
            "--json",
        ],
    ));
    assert!(none.results.is_empty());
    let bad = grk(
        &fx,
        &["search", "--collection", "n", "tea", "--path", "notes/[x"],
    );
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("filter.paths[0]"), "{stderr}");

    let fetched: FetchChunkResponse = json(&grk(
        &fx,
        &[
            "fetch",
            "--collection",
            "n",
            &search.results[0].chunk_id,
            "--json",
        ],
    ));
    assert_eq!(fetched.verification, Verification::Verified);

    let status: IndexStatus = json(&grk(&fx, &["status", "--collection", "n", "--json"]));
    assert_eq!(status.document_count, 2);

    let list: ListCollectionsResponse = json(&grk(&fx, &["list", "--json"]));
    assert_eq!(list.collections, vec!["n".to_owned()]);
}

#[test]
fn eval_prints_the_three_metrics() {
    let fx = Fixture::new();
    fx.write(
        "beir/corpus.jsonl",
        concat!(
            r#"{"_id": "d1", "title": "Tea", "text": "Green tea is brewed cool."}"#,
            "\n",
            r#"{"_id": "d2", "title": "Coffee", "text": "Espresso is brewed hot."}"#,
            "\n",
        ),
    );
    fx.write(
        "beir/queries.jsonl",
        concat!(
            r#"{"_id": "q1", "text": "green tea"}"#,
            "\n",
            r#"{"_id": "q2", "text": "espresso coffee"}"#,
            "\n",
        ),
    );
    fx.write(
        "beir/qrels.tsv",
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n",
    );
    let out = grk(
        &fx,
        &["ingest", "--collection", "b", "--format", "beir", "beir"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let eval = [
        "eval",
        "--collection",
        "b",
        "--queries",
        "beir/queries.jsonl",
        "--qrels",
        "beir/qrels.tsv",
    ];
    let report: serde_json::Value = json(&grk(&fx, &[&eval[..], &["--json"]].concat()));
    assert_eq!(report["queries"], 2);
    assert_eq!(report["ndcg_at_10"], 1.0);
    assert_eq!(report["recall_at_100"], 1.0);
    assert_eq!(report["mrr_at_10"], 1.0);
    let human = grk(&fx, &eval);
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("nDCG@10") && human.contains("Recall@100") && human.contains("MRR@10"),
        "{human}"
    );
}

#[test]
fn unknown_collection_fails_with_a_clear_message_and_creates_nothing() {
    let fx = Fixture::new();
    let out = grk(&fx, &["search", "--collection", "nope", "tea"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("'nope' does not exist"));
    assert!(!fx.index.exists());
}

#[test]
fn bundled_sample_ingests_cleanly_and_answers_a_question() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let index = tempfile::tempdir().expect("temp index");
    let run = |args: &[&str]| {
        Command::new(GRK)
            .arg("--index-dir")
            .arg(index.path())
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("run grk")
    };
    let summary: serde_json::Value = json(&run(&[
        "ingest",
        "--collection",
        "sample",
        "--json",
        "sample",
    ]));
    assert_eq!(
        summary["failed"].as_array().map(Vec::len),
        Some(0),
        "{summary}"
    );
    assert!(
        summary["added"].as_u64().is_some_and(|n| n >= 13),
        "{summary}"
    );
    let hits: SearchResponse = json(&run(&[
        "search",
        "--collection",
        "sample",
        "how hot should the water be for green tea",
        "--json",
    ]));
    assert_eq!(hits.results[0].document_id, "sample/notes/tea.txt");
    let burns: SearchResponse = json(&run(&[
        "search",
        "--collection",
        "sample",
        "burn first aid",
        "--json",
    ]));
    assert_eq!(
        burns.results[0].citation.extractor.as_deref(),
        Some("groundkit-html@1")
    );
}

/// `scripts/run-sample.sh --embed`'s ingest and query: the sample embedded with all-MiniLM-L6-v2
/// answers a question asked in other words than its text's, in dense and hybrid mode.
#[test]
fn bundled_sample_embedded_answers_in_other_words_with_dense_and_hybrid_search() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let index = tempfile::tempdir().expect("temp index");
    let model = crate::embed::model_dir();
    let run = |args: &[&str]| {
        Command::new(GRK)
            .arg("--index-dir")
            .arg(index.path())
            .arg("--embed-model")
            .arg(&model)
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("run grk")
    };
    let summary: serde_json::Value = json(&run(&["ingest", "-c", "sample", "--json", "sample"]));
    assert_eq!(summary["embedded"], summary["chunks"], "{summary}");
    let question = "what helps with jet lag";
    let lexical: SearchResponse = json(&run(&["search", "-c", "sample", question, "--json"]));
    assert_ne!(
        lexical.results.first().map(|r| r.document_id.as_str()),
        Some("sample/notes/travel.md")
    );
    let dense: SearchResponse = json(&run(&[
        "search", "-c", "sample", question, "--mode", "dense", "--json",
    ]));
    assert_eq!(dense.results[0].document_id, "sample/notes/travel.md");
    // Hybrid: lexical's first (a guide that says "help") and dense's first share the top places.
    let hybrid: SearchResponse = json(&run(&[
        "search", "-c", "sample", question, "--mode", "hybrid", "--top-k", "2", "--json",
    ]));
    assert!(
        hybrid
            .results
            .iter()
            .any(|r| r.document_id == "sample/notes/travel.md"),
        "{hybrid:?}"
    );
}

#[test]
fn the_read_commands_answer_exactly_what_rest_answers() {
    let fx = Fixture::new();
    for i in 0..12 {
        fx.write(
            &format!("notes/{i:02}.md"),
            format!("Note {i} about green tea."),
        );
    }
    let out = grk(&fx, &["ingest", "--collection", "n", "notes"]);
    assert!(out.status.success());
    let server = crate::service::server(&fx);
    let cli = |args: &[&str]| -> serde_json::Value { json(&grk(&fx, args)) };

    let rest = server.post_json("/search", r#"{"collection":"n","query":"green tea"}"#);
    let search = cli(&["search", "--collection", "n", "green tea", "--json"]);
    assert_eq!(search, rest.json(), "same default top_k, same answer");
    assert_eq!(search["results"].as_array().map(Vec::len), Some(10));

    let chunk = search["results"][0]["chunk_id"].as_str().expect("chunk id");
    let rest = server.get(&format!("/collections/n/chunks/{chunk}"));
    assert_eq!(
        cli(&["fetch", "--collection", "n", chunk, "--json"]),
        rest.json()
    );
    assert_eq!(cli(&["list", "--json"]), server.get("/collections").json());

    // Refused the same way: the service's validation, not a command-line check.
    let out = grk(
        &fx,
        &["search", "--collection", "n", "tea", "--top-k", "101"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rest = server.post_json("/search", r#"{"collection":"n","query":"tea","top_k":101}"#);
    assert_eq!(rest.json()["field"], "top_k");
    assert!(stderr.contains("top_k"), "{stderr}");
}

/// `cmd` run as a user the file modes apply to: the unprivileged `nobody` (uid and gid 65534)
/// when the tests run as root, for whom they do not; the current user otherwise. Everything
/// under `root` is handed to that user (and its directories opened to it).
fn unprivileged(cmd: &mut Command, root: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    // `/proc/self` belongs to the process's effective user.
    if std::fs::metadata("/proc/self").expect("/proc/self").uid() != 0 {
        return;
    }
    fn hand_over(path: &std::path::Path) {
        std::os::unix::fs::chown(path, Some(65534), Some(65534)).expect("chown");
        if path.is_dir() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            for entry in std::fs::read_dir(path).expect("read dir").flatten() {
                hand_over(&entry.path());
            }
        }
    }
    hand_over(root);
    cmd.uid(65534).gid(65534);
}

/// An ingest that meets a permission error part-way (the previous generation's segment files,
/// which the new generation links and applies its deletes to, made unreadable) fails with the cause in words and
/// the file relative to the index directory: no absolute path, no `Debug` structure.
#[test]
fn a_permission_error_mid_ingest_names_the_cause_in_words_and_the_file_relative_to_the_index() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let root = fx.base.parent().expect("root").to_path_buf();
    fx.write("a.md", "uniform text before the edit");
    let ingest = || {
        let mut cmd = Command::new(GRK);
        cmd.arg("--index-dir")
            .arg(&fx.index)
            .args(["ingest", "--collection", "c", "."])
            .current_dir(&fx.base)
            .env_remove("GROUNDKIT_INDEX_DIR");
        std::fs::create_dir_all(&fx.index).expect("index dir");
        unprivileged(&mut cmd, &root);
        cmd.output().expect("run grk")
    };
    let first = ingest();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    for entry in std::fs::read_dir(fx.index.join("c.tantivy/g1"))
        .expect("g1")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') && name != "meta.json" {
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o000))
                .expect("chmod");
        }
    }
    fx.write("a.md", "victor text after the edit");
    let out = ingest();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line = stderr.lines().last().expect("an error line");
    assert!(line.contains("permission denied"), "{line}");
    assert!(line.contains("(c.tantivy/g2.tmp/"), "{line}");
    for leak in [root.to_string_lossy().as_ref(), "{", "Os {", "kind:"] {
        assert!(!line.contains(leak), "{leak:?} in {line}");
    }
}

/// A store whose header cannot be read (mode 000, `grk` run as a user the mode applies to) is a
/// storage error naming the file relative to the index directory, never "does not exist"; the
/// listing skips it.
#[test]
fn an_unreadable_store_is_a_storage_error_not_a_missing_collection() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let root = fx.base.parent().expect("root").to_path_buf();
    fx.write("a.md", "whiskey text of a store made unreadable");
    fx.ingest_all("c");
    let store = fx.index.join("c.sqlite3");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let run = |args: &[&str]| {
        let mut cmd = Command::new(GRK);
        cmd.arg("--index-dir")
            .arg(&fx.index)
            .args(args)
            .current_dir(&fx.base)
            .env_remove("GROUNDKIT_INDEX_DIR");
        unprivileged(&mut cmd, &root);
        cmd.output().expect("run grk")
    };
    let out = run(&["status", "--collection", "c"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot read the header of c.sqlite3: Permission denied"),
        "{stderr}"
    );
    assert!(!stderr.contains("does not exist"), "{stderr}");
    assert!(
        !stderr.contains(root.to_string_lossy().as_ref()),
        "{stderr}"
    );
    let list = run(&["list", "--json"]);
    let list: ListCollectionsResponse = json(&list);
    assert!(list.collections.is_empty(), "{list:?}");
}
