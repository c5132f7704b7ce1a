//! `grk`'s exit codes, as the README lists them: a script can tell a complete ingest from a
//! partial one and from one that ingested nothing, and a refused bind from a failure.

use std::process::{Command, Output};

use crate::retrieval::Fixture;

const GRK: &str = env!("CARGO_BIN_EXE_grk-it");

fn grk(fx: &Fixture, args: &[&str]) -> Output {
    Command::new(GRK)
        .arg("--index-dir")
        .arg(&fx.index)
        .arg("--base-dir")
        .arg(&fx.base)
        .args(args)
        .current_dir(&fx.base)
        .env_remove("GROUNDKIT_INDEX_DIR")
        .output()
        .expect("run grk")
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited, not killed")
}

fn summary(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("the summary as JSON")
}

#[test]
fn an_ingest_of_every_source_exits_0_and_a_partial_one_3_with_the_failures_listed() {
    let fx = Fixture::new();
    fx.write("tea.txt", "Green tea is steeped at 80 degrees.\n");
    let ok = grk(&fx, &["ingest", "--collection", "c", "--json", "tea.txt"]);
    assert_eq!(code(&ok), 0, "{}", String::from_utf8_lossy(&ok.stderr));
    assert_eq!(summary(&ok)["added"], 1);

    fx.write("more.txt", "Oolong is steeped longer.\n");
    let partial = grk(
        &fx,
        &[
            "ingest",
            "--collection",
            "c",
            "--json",
            "tea.txt",
            "more.txt",
            "missing.txt",
        ],
    );
    assert_eq!(
        code(&partial),
        3,
        "{}",
        String::from_utf8_lossy(&partial.stderr)
    );
    let partial = summary(&partial);
    assert_eq!(partial["added"], 1);
    assert_eq!(partial["unchanged"], 1);
    assert_eq!(partial["failed"].as_array().map(Vec::len), Some(1));

    let again = grk(&fx, &["ingest", "--collection", "c", "tea.txt", "more.txt"]);
    assert_eq!(code(&again), 0, "unchanged sources are ingested sources");
}

#[test]
fn an_ingest_where_every_source_failed_exits_4() {
    let fx = Fixture::new();
    let out = grk(
        &fx,
        &[
            "ingest",
            "--collection",
            "empty",
            "--json",
            "missing.txt",
            "gone.md",
        ],
    );
    assert_eq!(code(&out), 4, "{}", String::from_utf8_lossy(&out.stderr));
    let out = summary(&out);
    assert_eq!(out["failed"].as_array().map(Vec::len), Some(2));
    assert_eq!(out["added"], 0);
    assert!(
        !fx.index.join("empty.sqlite3").exists(),
        "an ingest that wrote nothing creates no collection"
    );
    let listed = grk(&fx, &["list", "--json"]);
    assert_eq!(code(&listed), 0);
    assert_eq!(summary(&listed)["collections"], serde_json::json!([]));
}

#[test]
fn a_refused_bind_is_a_usage_error_with_exit_code_2() {
    let fx = Fixture::new();
    let out = grk(&fx, &["serve", "--host", "0.0.0.0", "--port", "0"]);
    assert_eq!(code(&out), 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--allow-remote-access"), "{stderr}");
    assert!(!stderr.contains("storage"), "{stderr}");

    let unnamed = grk(
        &fx,
        &[
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--allow-remote-access",
        ],
    );
    assert_eq!(
        code(&unnamed),
        2,
        "a wildcard bind names the Hosts it serves"
    );
    let stderr = String::from_utf8_lossy(&unnamed.stderr);
    assert!(stderr.contains("--allowed-host"), "{stderr}");
}

#[test]
fn a_failed_command_exits_1() {
    let fx = Fixture::new();
    let out = grk(&fx, &["status", "--collection", "nope"]);
    assert_eq!(code(&out), 1);
}

/// The `--rerank-*` options are global flags, but only search, status and serve rerank: any other
/// command given one is a usage error, and an ingest refused that way writes nothing.
#[test]
fn rerank_options_on_a_command_that_does_not_rerank_are_a_usage_error() {
    let fx = Fixture::new();
    fx.write("tea.txt", "Green tea is steeped at 80 degrees.\n");
    for args in [
        &[
            "ingest",
            "--collection",
            "c",
            "tea.txt",
            "--rerank-depth",
            "5",
        ][..],
        &[
            "ingest",
            "--collection",
            "c",
            "tea.txt",
            "--rerank-allow-private",
        ],
        &["list", "--rerank-model", "/nowhere"],
    ] {
        let out = grk(&fx, args);
        assert_eq!(code(&out), 2, "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("apply to search, status and serve"),
            "{stderr}"
        );
    }
    assert!(
        !fx.index.join("c.sqlite3").exists(),
        "the refused ingest wrote nothing"
    );
    let ok = grk(&fx, &["ingest", "--collection", "c", "tea.txt"]);
    assert_eq!(code(&ok), 0, "{}", String::from_utf8_lossy(&ok.stderr));
}
