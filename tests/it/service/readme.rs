//! The README's quick start, run: the bundled sample ingested as `scripts/run-sample.sh`
//! ingests it, served by `grk serve`, and every request of the quick start under which the
//! README shows JSON sent to it. The answer must be what the README shows, `...` standing for
//! any text. Both the commands and the outputs are read from README.md when the test runs, so
//! a README and a program that disagree (a count, a chunk id, a key) fail here.

use std::path::{Path, PathBuf};
use std::process::Command;

use groundkit_tests::{ServerProcess, send_raw};
use serde_json::Value;

const GRK: &str = env!("CARGO_BIN_EXE_grk-it");

/// The base the README's curl commands address.
const BASE_URL: &str = "http://127.0.0.1:8080";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository")
        .to_path_buf()
}

/// One request of the quick start, and the output the README shows under it (none when what
/// follows is prose).
#[derive(Debug)]
struct Example {
    command: String,
    output: Option<String>,
}

/// The examples of the README's block that follows "With the sample server running:".
fn quick_start(readme: &str) -> Vec<Example> {
    let block = readme
        .split("With the sample server running:")
        .nth(1)
        .and_then(|rest| rest.split("```sh\n").nth(1))
        .and_then(|rest| rest.split("```").next())
        .expect("the quick start's block in README.md");
    let mut examples = Vec::new();
    let mut lines = block.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with("curl ") {
            continue;
        }
        let mut command = line.to_owned();
        while command.ends_with('\\') {
            command.pop();
            command.push_str(lines.next().expect("a continued command").trim_start());
        }
        let command = command
            .split("  #")
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        let mut output: Option<String> = None;
        while let Some(next) = lines.peek() {
            let continues = output.is_some() && next.starts_with("#  ");
            let starts = output.is_none() && (next.starts_with("# {") || next.starts_with("# ["));
            if !(continues || starts) {
                break;
            }
            output.get_or_insert_default().push_str(next[1..].trim());
            lines.next();
        }
        examples.push(Example { command, output });
    }
    examples
}

/// Send a README `curl` command (`-X METHOD`, `-d BODY`, the URL) to `addr`.
fn send(command: &str, addr: std::net::SocketAddr) -> groundkit_tests::Response {
    let method = if command.contains("-X POST") {
        "POST"
    } else {
        "GET"
    };
    let url = command
        .split_whitespace()
        .find(|word| word.starts_with(BASE_URL))
        .expect("a URL");
    let path = &url[BASE_URL.len()..];
    let body = command
        .split_once(" -d '")
        .map(|(_, body)| body.trim_end().trim_end_matches('\''))
        .unwrap_or_default();
    send_raw(
        addr,
        &format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Whether `text` is `pattern` with each `...` standing for any text.
fn matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return text == pattern;
    }
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The arguments `scripts/run-sample.sh` gives `grk ingest`.
fn sample_ingest_args(root: &Path) -> Vec<String> {
    let script = std::fs::read_to_string(root.join("scripts/run-sample.sh")).expect("the script");
    let line = script
        .lines()
        .find(|line| line.starts_with("\"$grk\"") && line.contains(" ingest "))
        .expect("the ingest line");
    let args = line.split(" ingest ").nth(1).unwrap_or_default();
    let args = args.split(">&").next().unwrap_or_default();
    std::iter::once("ingest")
        .chain(args.split_whitespace())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_quick_start_shows_what_the_bundled_sample_answers() {
    let root = repo_root();
    let index = tempfile::tempdir().expect("index dir");
    let grk = || {
        let mut command = Command::new(GRK);
        command
            .arg("--index-dir")
            .arg(index.path())
            .arg("--base-dir")
            .arg(&root)
            .current_dir(&root);
        command
    };
    let ingested = grk()
        .args(sample_ingest_args(&root))
        .output()
        .expect("grk ingest");
    assert!(ingested.status.success(), "{ingested:?}");
    let server = ServerProcess::spawn(grk().args(["serve", "--port", "0"]))
        .unwrap_or_else(|(status, log)| panic!("grk serve exited ({status}): {log}"));

    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let examples = quick_start(&readme);
    let mut chunk_id: Option<String> = None;
    let mut cursor: Option<String> = None;
    let mut checked = 0;
    for Example { command, output } in &examples {
        let Some(output) = output else {
            continue;
        };
        let mut command = command.clone();
        for (placeholder, value) in [("CHUNK_ID", &chunk_id), ("NEXT_CURSOR", &cursor)] {
            if let Some(value) = value {
                command = command.replace(placeholder, value);
            }
        }
        let response = send(&command, server.addr);
        assert_eq!(response.status, 200, "{command}: {}", response.body);
        let answer: Value = response.json();
        if let Some(id) = answer["results"][0]["chunk_id"].as_str() {
            chunk_id.get_or_insert_with(|| id.to_owned());
        }
        if let Some(next) = answer["next_cursor"].as_str() {
            cursor = Some(next.to_owned());
        }
        assert!(
            matches(output, &response.body),
            "{command}\nthe README shows:\n{output}\nthe sample answers:\n{}",
            response.body
        );
        checked += 1;
    }
    assert_eq!(
        checked, 8,
        "the quick start's examples with output: {examples:#?}"
    );
}

#[test]
fn three_dots_in_an_example_stand_for_any_text_and_nothing_else_does() {
    assert!(matches(r#"{"a":1,...,"z":2}"#, r#"{"a":1,"b":[3],"z":2}"#));
    assert!(matches(r#"{"id":"..."}"#, r#"{"id":""}"#));
    assert!(!matches(r#"{"count":13,...}"#, r#"{"count":14,"x":1}"#));
    assert!(!matches(r#"{"a":1}"#, r#"{"a":1,"b":2}"#));
}
