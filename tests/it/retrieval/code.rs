//! Source code: every language's files cut at their definitions, each chunk with its scope (in
//! the store and in search results) and verified byte for byte by `fetch_chunk`; identifiers
//! found by their parts and as a whole; files without a grammar or that their grammar cannot
//! parse chunked as text, and files that are not source skipped, both counted in the summary.

use std::path::Path;

use groundkit_retrieval::{self as retrieval, IngestSummary, NoProgress, Verification};

use super::Fixture;

/// The committed per-language fixtures.
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/code");

/// A chunk budget small enough that each fixture has a definition larger than it.
const BUDGET: usize = 400;

fn copy_fixtures(fx: &Fixture) {
    for entry in std::fs::read_dir(FIXTURES).expect("fixtures") {
        let entry = entry.expect("fixture");
        let name = entry.file_name().into_string().expect("utf8 name");
        fx.write(&name, std::fs::read(entry.path()).expect("read fixture"));
    }
}

fn ingest(fx: &Fixture, inputs: &[&Path]) -> IngestSummary {
    let mut options = fx.options("code", inputs);
    options.max_chunk_bytes = BUDGET;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest succeeds")
}

/// One stored chunk of collection `code`.
#[derive(Debug)]
struct Row {
    source: String,
    chunk_id: String,
    start: usize,
    end: usize,
    scope: Option<String>,
    extractor: Option<String>,
}

fn rows(fx: &Fixture) -> Vec<Row> {
    let conn = rusqlite::Connection::open(fx.index.join("code.sqlite3")).expect("open store");
    let mut stmt = conn
        .prepare(
            "SELECT d.source, c.chunk_id, c.start_offset, c.end_offset, c.scope, d.extractor
             FROM chunks c JOIN documents d ON d.document_id = c.document_id
             ORDER BY d.source, c.chunk_index",
        )
        .expect("query");
    stmt.query_map([], |row| {
        Ok(Row {
            source: row.get(0)?,
            chunk_id: row.get(1)?,
            start: row.get::<_, i64>(2)? as usize,
            end: row.get::<_, i64>(3)? as usize,
            scope: row.get(4)?,
            extractor: row.get(5)?,
        })
    })
    .expect("rows")
    .map(|r| r.expect("row"))
    .collect()
}

/// `(source, scope, first line)` of every chunk.
fn outline(fx: &Fixture) -> Vec<(String, String, String)> {
    rows(fx)
        .into_iter()
        .map(|row| {
            let text = std::fs::read_to_string(fx.base.join(&row.source)).expect("source");
            let first = text[row.start..row.end].lines().next().expect("a line");
            (row.source, row.scope.unwrap_or_default(), first.to_owned())
        })
        .collect()
}

#[test]
fn every_language_is_cut_at_its_definitions_with_doc_comments_and_scopes() {
    let fx = Fixture::new();
    copy_fixtures(&fx);
    let summary = ingest(&fx, &[&fx.base]);
    assert_eq!(summary.added, 13, "{:?}", summary.failed);
    assert_eq!(
        (
            summary.code.definitions,
            summary.code.no_grammar,
            summary.code.unparsable
        ),
        (13, 0, 0)
    );
    let outline = outline(&fx);
    // One line per chunk: its file, its scope, its first line. Small neighbouring definitions
    // share a chunk, whose scope lists them after their common parent; the file's leading
    // comments and imports join the first.
    let expected = "\
Session.cs | namespace Net | using System;
Session.java | class Session | package net.example;
app.tsx | function Greeting | import React from 'react';
build.sh | function build | #!/bin/sh
cart.js | class Cart | import { formatPrice } from './format.js';
cart.js | function receipt | /**
greeter.php |  | <?php
greeter.php | namespace App › class Greeter | namespace App;
parse.c | typedef header; function parse_header | #include <string.h>
parser.rs | struct Parser | //! A small HTTP header parser.
parser.rs | impl Parser › fn parse_header | impl Parser {
parser.rs | impl Parser › fn parse_head › fn is_continuation | /// Reads a whole head, line by line, until the blank line that ends it.
parser.rs | impl Parser › fn parse_head | let mut count = 0;
parser.rs | impl Parser › fn parse_head | for line in head.lines() {
parser.rs | impl Parser › fn parse_head | if count == MAX_HEADERS {
parser.rs | impl Parser | }
session.go | type Session; func (s *Session) Close | // Package session keeps client sessions.
session.go | func Dial | // Dial opens a session.
session.py |  | \"\"\"Sessions over a connection.\"\"\"
session.py | class Session › def __init__ | class Session:
session.py | class Session › def open › def backoff | def open(self):
session.py | class Session › def open | for attempt in range(5):
session.py | class Session › def close | def close(self):
session.rb | module Net | require 'socket'
shapes.ts | interface Shape; class Circle | /** Anything with an area. */
shapes.ts | namespace Geometry | export namespace Geometry {
socket.cpp | namespace net | #include <string>";
    let got: Vec<String> = outline
        .iter()
        .map(|(source, scope, first)| format!("{source} | {scope} | {first}"))
        .collect();
    assert_eq!(got.join("\n"), expected);
    // The oversized definitions are cut: the header of `parse_head` and its loop are chunks of
    // their own, beside the nested function.
    let parse_head = outline
        .iter()
        .filter(|o| o.1 == "impl Parser › fn parse_head")
        .count();
    assert!(parse_head >= 2, "{outline:#?}");
    for row in rows(&fx) {
        assert!(row.end - row.start <= BUDGET, "{row:?}");
        let extractor = row.extractor.expect("a chunker");
        assert!(
            extractor.starts_with("code-") && extractor != "code-text@1",
            "{extractor}"
        );
    }
}

#[test]
fn every_code_chunk_verifies_byte_for_byte_and_drifts_when_its_file_changes() {
    let fx = Fixture::new();
    copy_fixtures(&fx);
    ingest(&fx, &[&fx.base]);
    let cache = fx.cache();
    let open = cache.acquire("code").expect("opens");
    let rows = rows(&fx);
    for row in &rows {
        let fetched = retrieval::fetch_chunk(&open, &row.chunk_id).expect("fetch");
        assert_eq!(fetched.verification, Verification::Verified, "{row:?}");
        let bytes = std::fs::read(fx.base.join(&row.source)).expect("source");
        assert_eq!(
            fetched.content.as_deref().map(str::as_bytes),
            Some(&bytes[row.start..row.end])
        );
        assert_eq!(fetched.scope, row.scope);
        assert_eq!(fetched.citation.extractor, row.extractor);
    }
    let first = rows
        .iter()
        .find(|r| r.source == "session.go")
        .expect("a Go chunk");
    fx.write("session.go", "package session\n");
    let fetched = retrieval::fetch_chunk(&open, &first.chunk_id).expect("fetch");
    assert_ne!(fetched.verification, Verification::Verified);

    // Unchanged files are not chunked again.
    let again = ingest(&fx, &[&fx.base]);
    assert_eq!((again.unchanged, again.updated), (12, 1));
    assert_eq!(again.code.definitions, 1);
}

/// One function spelled `parseHostHeader` (JavaScript) and `parse_host_header` (Python), and a
/// note in prose.
pub(crate) fn write_host_parsers(fx: &Fixture) {
    fx.write(
        "host.js",
        "export function parseHostHeader(value) {\n  return value.split(':')[0];\n}\n",
    );
    fx.write(
        "host.py",
        "def parse_host_header(value):\n    return value.split(':')[0]\n",
    );
    fx.write("notes.md", "Notes about the garden: tomatoes and beans.");
}

#[test]
fn identifiers_are_found_by_their_parts_and_as_a_whole() {
    let fx = Fixture::new();
    write_host_parsers(&fx);
    ingest(&fx, &[&fx.base]);
    for query in ["parse host header", "parseHostHeader", "parse_host_header"] {
        let response = fx.search("code", query, 5);
        let mut found: Vec<&str> = response
            .results
            .iter()
            .map(|r| r.document_id.as_str())
            .collect();
        found.sort_unstable();
        assert_eq!(found, vec!["host.js", "host.py"], "{query}");
    }
    let hit = fx.search("code", "parse host header", 1).results.remove(0);
    assert!(
        ["function parseHostHeader", "def parse_host_header"]
            .contains(&hit.scope.as_deref().unwrap_or_default()),
        "{hit:?}"
    );
    // Prose is analysed as before: a word's parts are not its own terms.
    assert!(fx.search("code", "garden", 1).results[0].scope.is_none());
}

#[test]
fn scopes_are_searchable_and_returned_with_results() {
    let fx = Fixture::new();
    copy_fixtures(&fx);
    ingest(&fx, &[&fx.base]);
    let hit = fx.search("code", "backoff attempt", 1).results.remove(0);
    assert_eq!(hit.document_id, "session.py");
    assert_eq!(
        hit.scope.as_deref(),
        Some("class Session › def open › def backoff")
    );
    let grk = |args: &[&str]| {
        let output = fx.grk().args(args).output().expect("grk runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).expect("utf8")
    };
    let search = grk(&[
        "search",
        "--collection",
        "code",
        "backoff attempt",
        "--top-k",
        "1",
    ]);
    assert!(
        search.contains("in class Session › def open › def backoff"),
        "{search}"
    );
    let fetch = grk(&["fetch", "--collection", "code", &hit.chunk_id]);
    assert!(
        fetch.contains("scope      class Session › def open › def backoff"),
        "{fetch}"
    );
    // A method's chunk is found by its class's name, which only its scope holds.
    let inflate: String = (0..16)
        .map(|i| format!("        self.pressure_{i} = {i}\n"))
        .collect();
    fx.write(
        "airship.py",
        format!(
            "class Zeppelin:\n    def inflate(self):\n{inflate}\n    def land(self):\n        return 'ground'\n"
        ),
    );
    ingest(&fx, &[&fx.base]);
    let hits = fx.search("code", "zeppelin", 5).results;
    let land = hits
        .iter()
        .find(|h| h.scope.as_deref() == Some("class Zeppelin › def land"))
        .unwrap_or_else(|| panic!("{hits:?}"));
    assert!(!land.text().contains("Zeppelin"), "{land:?}");
}

#[test]
fn files_without_a_grammar_or_that_do_not_parse_are_chunked_as_text_and_counted() {
    let fx = Fixture::new();
    fx.write(
        "Main.kt",
        "fun main() {\n    println(\"kotlin has no grammar here\")\n}\n",
    );
    fx.write("broken.rs", "}}}} fn (((( impl <<<< >>>> ;; {{ struct");
    fx.write("ok.rs", "/// Fine.\nfn fine() {}\n");
    let summary = ingest(&fx, &[&fx.base]);
    assert_eq!(summary.added, 3, "{:?}", summary.failed);
    assert_eq!(
        (
            summary.code.definitions,
            summary.code.no_grammar,
            summary.code.unparsable
        ),
        (1, 1, 1)
    );
    let cache = fx.cache();
    let open = cache.acquire("code").expect("opens");
    for row in rows(&fx) {
        let fallback = row.source != "ok.rs";
        assert_eq!(
            row.extractor.as_deref() == Some("code-text@1"),
            fallback,
            "{row:?}"
        );
        assert_eq!(row.scope.is_none(), fallback, "{row:?}");
        let fetched = retrieval::fetch_chunk(&open, &row.chunk_id).expect("fetch");
        assert_eq!(fetched.verification, Verification::Verified, "{row:?}");
    }
    assert_eq!(
        fx.search("code", "kotlin grammar", 1).results[0].document_id,
        "Main.kt"
    );
}

#[test]
fn files_that_are_not_source_are_skipped_and_counted_by_reason() {
    let fx = Fixture::new();
    fx.write("src/main.rs", "fn main() {}\n");
    fx.write("src/blob.rs", b"fn main() {}\0\x01\x02".as_slice());
    fx.write("web/app.min.js", "var a=1;");
    fx.write("web/bundle.js", format!("{}\n", "var a=1;".repeat(1000)));
    fx.write(
        "pb/api.go",
        "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage pb\n",
    );
    fx.write("Cargo.lock", "# lock\n");
    fx.write("web/package-lock.json", "{}\n");
    fx.write(
        "web/node_modules/left-pad/index.js",
        "module.exports = 1;\n",
    );
    fx.write("web/node_modules/left-pad/README.md", "left pad\n");
    fx.write(
        "out/CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    );
    fx.write("out/debug/build.rs", "fn main() {}\n");
    fx.write("ignored/.gitignore", "*.py\n");
    fx.write("ignored/skip.py", "x = 1\n");
    let summary = ingest(&fx, &[&fx.base]);
    assert_eq!(summary.added, 1, "{:?}", summary.failed);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    let skipped = summary.skipped;
    assert_eq!(
        (
            skipped.binary,
            skipped.generated,
            skipped.lock_file,
            skipped.vendored
        ),
        (1, 3, 2, 3)
    );

    let output = fx
        .grk()
        .args(["ingest", "--collection", "cli", "--json", "."])
        .output()
        .expect("grk runs");
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(
        json["skipped"],
        serde_json::json!({"binary": 1, "generated": 3, "lock_file": 2, "vendored": 3})
    );
    assert_eq!(json["code"]["definitions"], 1);

    let output = fx
        .grk()
        .args(["ingest", "--collection", "human", "."])
        .output()
        .expect("grk runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "skipped: 1 binary, 3 minified or generated, 2 lock files, 3 vendored or build output"
        ) && stdout.contains("source files: 1 chunked at definitions"),
        "{stdout}"
    );
}
