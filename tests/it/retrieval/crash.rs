//! Crash consistency: a real `grk ingest` process killed with SIGKILL at several points leaves
//! readers on the last complete generation, and the next ingest succeeds with no cleanup.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use groundkit_retrieval as retrieval;

use super::Fixture;

const GRK: &str = env!("CARGO_BIN_EXE_grk-it");

/// Runs an ingest of the whole corpus in a real process until it reports reaching `phase`, then
/// kills it with SIGKILL.
fn ingest_killed_at(fx: &Fixture, phase: &str) {
    ingest_with_model_killed_at(fx, phase, None);
}

/// [`ingest_killed_at`], embedding with the model in `model` when given.
fn ingest_with_model_killed_at(fx: &Fixture, phase: &str, model: Option<&std::path::Path>) {
    let mut child = Command::new(GRK)
        .arg("pause-ingest")
        .arg(phase)
        .arg(&fx.index)
        .arg(&fx.base)
        .arg("c")
        .args(model)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn grk");
    let stderr = child.stderr.take().expect("stderr");
    let mut reached = false;
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("stderr line");
        if line.contains(&format!("paused at {phase}")) {
            reached = true;
            break;
        }
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    assert!(reached, "ingest never reached {phase}");
}

fn ingest_ok(fx: &Fixture) -> serde_json::Value {
    ingest_with_model_ok(fx, None)
}

fn ingest_with_model_ok(fx: &Fixture, model: Option<&std::path::Path>) -> serde_json::Value {
    let mut cmd = fx.grk();
    if let Some(model) = model {
        cmd.arg("--embed-model").arg(model);
    }
    let out = cmd
        .args(["ingest", "--collection", "c", "--json", "."])
        .output()
        .expect("run grk");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("summary JSON")
}

/// The entries of the collection's lexical index directory.
fn generation_dirs(fx: &Fixture) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(fx.index.join("c.tantivy"))
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .collect()
}

fn version_one(fx: &Fixture) {
    fx.write("a.md", "alpha original text");
    fx.write("b.md", "bravo original text");
}

fn version_two(fx: &Fixture) {
    fx.write("a.md", "alpha edited text");
    std::fs::remove_file(fx.base.join("b.md")).expect("delete b");
    fx.write("c.md", "charlie new text");
}

fn found(fx: &Fixture, query: &str) -> bool {
    !fx.search("c", query, 5).results.is_empty()
}

#[test]
fn killed_ingest_before_the_sqlite_commit_leaves_readers_on_the_previous_generation() {
    for phase in ["indexing", "lexical-committed", "published"] {
        let fx = Fixture::new();
        version_one(&fx);
        let first = ingest_ok(&fx);
        assert_eq!(first["generation"], 1);
        version_two(&fx);
        ingest_killed_at(&fx, phase);

        let cache = fx.cache();
        let open = cache.acquire("c").expect("collection still opens");
        assert_eq!(open.generation(), 1, "{phase}");
        assert!(
            found(&fx, "original") && found(&fx, "bravo"),
            "{phase}: generation 1 answers"
        );
        assert!(
            !found(&fx, "charlie") && !found(&fx, "edited"),
            "{phase}: nothing of the killed ingest"
        );
        let status = retrieval::index_status(&open, &cache, None).expect("status");
        assert_eq!(
            (status.document_count, status.chunk_count),
            (2, 2),
            "{phase}"
        );

        let next = ingest_ok(&fx);
        assert_eq!(
            (
                next["added"].as_u64(),
                next["updated"].as_u64(),
                next["removed"].as_u64()
            ),
            (Some(1), Some(1), Some(1)),
            "{phase}"
        );
        assert_eq!(next["generation"], 2, "{phase}");
        assert!(
            found(&fx, "charlie") && found(&fx, "edited") && !found(&fx, "bravo"),
            "{phase}"
        );
        let dirs = generation_dirs(&fx);
        assert_eq!(
            dirs,
            vec![std::ffi::OsString::from("g2")],
            "{phase}: debris removed"
        );
    }
}

#[test]
fn killed_ingest_while_embedding_leaves_readers_on_the_previous_generation_and_its_vectors() {
    let model = crate::embed::model_dir();
    let embedder = crate::embed::minilm();
    // More chunks than one embedding batch (256), so the kill lands between batches.
    let write_round = |fx: &Fixture, round: u32| {
        for i in 0..300 {
            fx.write(
                &format!("d{i:03}.md"),
                format!("Field note {i}, draft{round}."),
            );
        }
    };
    for phase in ["embedding", "vectors-written"] {
        let fx = Fixture::new();
        fx.write(
            "travel.md",
            "Crossing time zones disrupts the circadian rhythm.",
        );
        write_round(&fx, 0);
        let first = ingest_with_model_ok(&fx, Some(&model));
        assert_eq!(
            (first["generation"].as_u64(), first["embedded"].as_u64()),
            (Some(1), Some(301))
        );
        write_round(&fx, 1);
        ingest_with_model_killed_at(&fx, phase, Some(&model));

        let cache = fx.cache();
        let open = cache.acquire("c").expect("collection still opens");
        assert_eq!(open.generation(), 1, "{phase}");
        let status =
            retrieval::index_status(&open, &cache, Some(embedder.as_ref())).expect("status");
        assert!(
            status.dense_search_available,
            "{phase}: generation 1 keeps its vectors"
        );
        let params = retrieval::SearchParams {
            query: "what helps with jet lag".into(),
            top_k: 1,
            mode: retrieval::SearchMode::Dense,
            fusion: Default::default(),
            filter: None,
        };
        let hits = retrieval::search(&open, &params, Some(embedder.as_ref())).expect("dense");
        assert_eq!(hits.results[0].citation.source, "travel.md", "{phase}");
        assert!(
            found(&fx, "draft0") && !found(&fx, "draft1"),
            "{phase}: nothing of the killed ingest"
        );
        drop(open);

        let next = ingest_with_model_ok(&fx, Some(&model));
        assert_eq!(next["generation"], 2, "{phase}");
        assert_eq!(
            (next["embedded"].as_u64(), next["reused_vectors"].as_u64()),
            (Some(300), Some(1)),
            "{phase}: the edited notes, not the unchanged one"
        );
        let dirs = generation_dirs(&fx);
        assert_eq!(
            dirs,
            vec![std::ffi::OsString::from("g2")],
            "{phase}: debris removed"
        );
    }
}

#[test]
fn killed_ingest_after_the_sqlite_commit_is_complete_and_cleaned_up_next_time() {
    let fx = Fixture::new();
    version_one(&fx);
    ingest_ok(&fx);
    version_two(&fx);
    ingest_killed_at(&fx, "committed");
    let cache = fx.cache();
    assert_eq!(cache.acquire("c").expect("open").generation(), 2);
    assert!(found(&fx, "charlie") && !found(&fx, "bravo"));
    let next = ingest_ok(&fx);
    assert_eq!(next["unchanged"], 2);
    assert_eq!(next["generation"], 2);
    let dirs = generation_dirs(&fx);
    assert_eq!(dirs, vec![std::ffi::OsString::from("g2")]);
}

#[test]
fn killed_first_ingest_leaves_an_empty_collection_and_the_next_ingest_succeeds() {
    let fx = Fixture::new();
    version_one(&fx);
    ingest_killed_at(&fx, "lexical-committed");
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    assert_eq!(open.generation(), 0);
    assert!(fx.search("c", "alpha", 5).results.is_empty());
    let next = ingest_ok(&fx);
    assert_eq!(next["added"], 2);
    assert!(found(&fx, "alpha"));
}

#[test]
fn ingest_killed_at_arbitrary_moments_never_mixes_generations() {
    let fx = Fixture::new();
    let write_round = |round: u32| {
        for i in 0..300 {
            fx.write(
                &format!("d{i:03}.md"),
                format!("lighthouse keeper log {i} written in round{round}"),
            );
        }
    };
    write_round(0);
    ingest_ok(&fx);
    let mut committed_round = 0;
    // A debug-build ingest of this corpus takes about 100 ms: the delays land before, inside and
    // after its commit.
    for (round, delay_ms) in [
        (1u32, 2u64),
        (2, 15),
        (3, 35),
        (4, 55),
        (5, 75),
        (6, 95),
        (7, 150),
    ] {
        write_round(round);
        let mut child = fx
            .grk()
            .args(["ingest", "--collection", "c", "."])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn grk");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");

        let cache = fx.cache();
        let open = cache.acquire("c").expect("collection opens after a kill");
        let status = retrieval::index_status(&open, &cache, None).expect("status");
        assert_eq!(status.document_count, 300);
        let hits = |word: &str| fx.search("c", word, 100).results.len();
        // All 300 documents answer from exactly one round: the committed one.
        if hits(&format!("round{round}")) == 0 {
            assert_eq!(
                hits(&format!("round{committed_round}")),
                100,
                "delay {delay_ms} ms"
            );
        } else {
            assert_eq!(hits(&format!("round{round}")), 100, "delay {delay_ms} ms");
            assert_eq!(
                hits(&format!("round{committed_round}")),
                0,
                "delay {delay_ms} ms"
            );
            committed_round = round;
        }
    }
    let last = ingest_ok(&fx);
    assert_eq!(last["failed"].as_array().map(Vec::len), Some(0));
    assert_eq!(fx.search("c", "round7", 100).results.len(), 100);
}

/// `strace`, which the creation test needs to kill a process at an exact system call.
fn strace() -> Command {
    let probe = Command::new("strace").arg("-V").output();
    assert!(
        probe.is_ok_and(|out| out.status.success()),
        "this test needs strace (apt-get install strace)"
    );
    Command::new("strace")
}

/// Names `grk list` shows in the fixture's index directory.
fn listed(fx: &Fixture) -> Vec<String> {
    fx.grk_json::<retrieval::ListCollectionsResponse>(&["list", "--json"])
        .collections
}

/// `grk status` of `name`, which must succeed.
fn status_of(fx: &Fixture, name: &str) -> retrieval::IndexStatus {
    fx.grk_json(&["status", "--collection", name, "--json"])
}

/// A new collection's first ingest, killed (SIGKILL, through strace's fault injection) at each
/// of its `fsync`s in turn until one runs to the end: the creation file's sync, the index
/// directory's after the link, then the store's commit. After each kill, either no name is listed
/// and no store file exists, or the name is listed and `grk status` answers for it; the next
/// ingest always succeeds, and removes the creation files left behind.
#[test]
fn a_first_ingest_killed_at_each_of_its_fsyncs_never_leaves_a_name_that_is_refused() {
    let fx = Fixture::new();
    version_one(&fx);
    let mut kills = 0;
    let mut killed_before_the_name = 0;
    for n in 1..=40 {
        let name = format!("c{n}");
        let status = strace()
            .args(["-f", "-o", "/dev/null", "-e", "trace=fsync", "-e"])
            .arg(format!("inject=fsync:signal=KILL:when={n}"))
            .arg(GRK)
            .arg("--index-dir")
            .arg(&fx.index)
            .arg("--base-dir")
            .arg(&fx.base)
            .args(["ingest", "--collection", &name, "."])
            .current_dir(&fx.base)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run strace");
        if status.success() {
            break; // the ingest has fewer than n fsyncs
        }
        kills += 1;

        if listed(&fx).contains(&name) {
            let status = status_of(&fx, &name);
            assert!(status.generation <= 1, "{name}: {status:?}");
        } else {
            killed_before_the_name += 1;
            assert!(
                !fx.index.join(format!("{name}.sqlite3")).exists(),
                "{name}: a store file that no listing shows"
            );
        }

        fx.grk_ok(&["ingest", "--collection", &name, "."]);
        let status = status_of(&fx, &name);
        assert_eq!(
            (status.document_count, status.chunk_count, status.generation),
            (2, 2, 1),
            "{name}"
        );
    }
    assert!(
        kills >= 3 && killed_before_the_name >= 1,
        "{kills} kills, {killed_before_the_name} before the store was linked into place"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&fx.index)
        .expect("index dir")
        .flatten()
        .map(|e| e.file_name())
        .filter(|name| name.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "creation files left: {leftovers:?}");
}

/// What a creation interrupted by an earlier groundkit (which created the store in place) left
/// under the collection's name holds nothing, and the next ingest replaces it with a whole store:
/// an empty file beside a leftover journal, and a store with groundkit's application id but no
/// tables (schema version 0, or the current one).
#[test]
fn what_an_interrupted_creation_left_in_place_is_replaced_by_the_next_ingest() {
    let fx = Fixture::new();
    version_one(&fx);
    std::fs::create_dir_all(&fx.index).expect("index dir");
    std::fs::write(fx.index.join("empty.sqlite3"), b"").expect("empty store");
    std::fs::write(fx.index.join("empty.sqlite3-journal"), [0u8; 512]).expect("journal");
    for (name, version) in [("version0", 0), ("tableless", retrieval::SCHEMA_VERSION)] {
        let conn =
            rusqlite::Connection::open(fx.index.join(format!("{name}.sqlite3"))).expect("create");
        conn.execute_batch(&format!(
            "PRAGMA application_id = {}; PRAGMA user_version = {version};",
            retrieval::APPLICATION_ID
        ))
        .expect("stamp");
    }
    for name in ["empty", "version0", "tableless"] {
        fx.grk_ok(&["ingest", "--collection", name, "."]);
        let status = status_of(&fx, name);
        assert_eq!((status.document_count, status.generation), (2, 1), "{name}");
    }
    assert!(!fx.index.join("empty.sqlite3-journal").exists());
}
