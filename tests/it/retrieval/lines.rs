//! Citation lines: every chunk of a `text` source (plain text, Markdown, source code) carries the
//! lines of its first and last byte, in search results and `fetch_chunk` answers alike, checked
//! against the source by walking its lines here; extracted sources carry none; a version-3 store
//! is served without lines and the next ingest records them; `grk search` and `grk fetch` print
//! `path:START-END`.

use std::path::Path;

use groundkit_retrieval::{
    self as retrieval, FetchChunkResponse, NoProgress, SourceClass, Verification,
};

use super::Fixture;

/// The lines (from 1) holding the first and the last byte of `start..end` in `text`, found by
/// walking its `\n`-terminated lines.
fn expected_lines(text: &[u8], start: usize, end: usize) -> (u32, u32) {
    let mut first = None;
    let mut line_start = 0;
    for (number, line) in (1..).zip(text.split_inclusive(|&byte| byte == b'\n')) {
        let line_end = line_start + line.len();
        if (line_start..line_end).contains(&start) {
            first = Some(number);
        }
        if (line_start..line_end).contains(&(end - 1)) {
            return (first.expect("the first byte comes first"), number);
        }
        line_start = line_end;
    }
    panic!("{start}..{end} is not inside the text");
}

/// Every live chunk of `collection`, fetched.
fn fetch_all(fx: &Fixture, collection: &str) -> Vec<FetchChunkResponse> {
    let cache = fx.cache();
    let open = cache.acquire(collection).expect("open");
    fx.chunk_ids(collection)
        .iter()
        .map(|id| retrieval::fetch_chunk(&open, id).expect("fetch"))
        .collect()
}

/// A citation's first and last line, when it has them.
type Lines = Option<(u32, u32)>;

fn lines_of(fetched: &FetchChunkResponse) -> Lines {
    fetched.citation.start_line.zip(fetched.citation.end_line)
}

/// Checks every chunk of `collection` against its source file under the base directory, and
/// returns how many it checked.
fn check_against_sources(fx: &Fixture, collection: &str) -> usize {
    let fetched = fetch_all(fx, collection);
    for chunk in &fetched {
        let c = &chunk.citation;
        assert_eq!(chunk.verification, Verification::Verified, "{}", c.source);
        let text = std::fs::read(fx.base.join(&c.source)).expect("source");
        let (start, end) = (c.start_offset as usize, c.end_offset as usize);
        assert_eq!(
            lines_of(chunk),
            Some(expected_lines(&text, start, end)),
            "{} [{start}..{end}]",
            c.source
        );
    }
    fetched.len()
}

#[test]
fn small_files_carry_their_lines_first_last_crlf_and_one_line() {
    let fx = Fixture::new();
    // CRLF, the last line without a trailing newline: lines 1 to 4.
    fx.write("crlf.txt", "alpha line\r\nbeta line\r\n\r\ngamma line");
    // One line, with its newline: line 1 to 1.
    fx.write("one.md", "just one line\n");
    // Leading blank lines are not part of the chunk: line 3.
    fx.write("late.txt", "\n\n  delta starts on line three\n\n");
    fx.ingest_all("c");
    let mut found: Vec<(String, Lines)> = fetch_all(&fx, "c")
        .iter()
        .map(|f| (f.citation.source.clone(), lines_of(f)))
        .collect();
    found.sort();
    assert_eq!(
        found,
        vec![
            ("crlf.txt".to_owned(), Some((1, 4))),
            ("late.txt".to_owned(), Some((3, 3))),
            ("one.md".to_owned(), Some((1, 1))),
        ]
    );
    assert_eq!(check_against_sources(&fx, "c"), 3);
}

#[test]
fn chunks_of_long_text_markdown_and_crlf_files_carry_the_lines_of_their_bytes() {
    let fx = Fixture::new();
    let paragraph = |word: &str, n: usize| {
        (0..n)
            .map(|i| format!("{word} sentence number {i} of this paragraph."))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let text = (0..8)
        .map(|i| paragraph("sierra", i % 4 + 1))
        .collect::<Vec<_>>()
        .join("\n\n");
    fx.write("long.txt", &text);
    fx.write("long.md", format!("# Title\n\n{text}\n"));
    fx.write("long-crlf.txt", text.replace('\n', "\r\n"));
    let mut options = fx.options("c", &[&fx.base]);
    options.max_chunk_bytes = 120;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    let checked = check_against_sources(&fx, "c");
    assert!(checked > 12, "several chunks per file: {checked}");

    // Search results carry the same lines as fetching their chunk.
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    for hit in fx.search("c", "sierra paragraph", 50).results {
        let fetched = retrieval::fetch_chunk(&open, &hit.chunk_id).expect("fetch");
        assert_eq!(hit.citation, fetched.citation);
        assert!(hit.citation.start_line.is_some());
    }
}

#[test]
fn source_code_chunks_in_several_languages_carry_their_lines() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/code");
    let fx = Fixture::new();
    let files = [
        "parser.rs",
        "session.py",
        "session.go",
        "cart.js",
        "Session.java",
    ];
    for name in files {
        fx.write(name, std::fs::read(fixtures.join(name)).expect("fixture"));
    }
    let mut options = fx.options("code", &[&fx.base]);
    options.max_chunk_bytes = 400;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    assert!(check_against_sources(&fx, "code") > files.len());
    // One definition, its doc comment included, written out: `fn parse_header` is lines 14-20
    // of parser.rs, and its chunk starts with the `impl Parser {` line before it (13).
    let hit = fx
        .search("code", "parse_header", 10)
        .results
        .into_iter()
        .find(|r| {
            r.citation.source == "parser.rs"
                && r.scope.as_deref() == Some("impl Parser › fn parse_header")
        })
        .expect("the definition's chunk");
    assert_eq!(
        (hit.citation.start_line, hit.citation.end_line),
        (Some(13), Some(20))
    );
}

#[test]
fn extracted_sources_carry_no_lines() {
    let fx = Fixture::new();
    fx.write(
        "page.html",
        "<html><body>\n<p>tango extracted\nfrom html</p>\n</body></html>",
    );
    fx.ingest_all("c");
    let fetched = fetch_all(&fx, "c");
    assert_eq!(fetched.len(), 1);
    assert_eq!(fetched[0].citation.source_class, SourceClass::Extracted);
    assert_eq!(lines_of(&fetched[0]), None);
    let hit = fx.search("c", "tango", 1).results.remove(0);
    assert_eq!(
        (hit.citation.start_line, hit.citation.end_line),
        (None, None)
    );
}

#[test]
fn a_version_3_store_is_served_without_lines_and_the_next_ingest_records_them() {
    let fx = Fixture::new();
    fx.write("a.txt", "quebec first line\nquebec second line\n");
    let b = fx.write("b/b.txt", "romeo only line");
    fx.ingest_all("c");
    {
        // The version-3 layout: chunks without lines.
        let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open");
        conn.execute_batch(
            "ALTER TABLE chunks DROP COLUMN start_line;
             ALTER TABLE chunks DROP COLUMN end_line;
             ALTER TABLE superseded_chunks DROP COLUMN start_line;
             ALTER TABLE superseded_chunks DROP COLUMN end_line;
             ALTER TABLE documents DROP COLUMN modified;
             ALTER TABLE documents DROP COLUMN metadata;
             PRAGMA user_version = 3;",
        )
        .expect("downgrade");
    }
    let served = fetch_all(&fx, "c");
    assert_eq!(served.len(), 2);
    for chunk in &served {
        assert_eq!(chunk.verification, Verification::Verified);
        assert_eq!(lines_of(chunk), None, "a version-3 store records no lines");
    }
    assert_eq!(fx.search("c", "quebec", 1).results.len(), 1);
    {
        let cache = fx.cache();
        let open = cache.acquire("c").expect("open");
        let status = retrieval::index_status(&open, &cache, None).expect("status");
        assert_eq!(status.schema_version, 3);
    }

    // b.txt changes, and the upgrading ingest reads only a.txt: b's chunk is kept, without
    // lines, since its file no longer holds its bytes.
    std::fs::write(&b, "romeo changed line").expect("edit");
    let options = fx.options("c", &[&fx.base.join("a.txt")]);
    let summary = retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    assert_eq!((summary.unchanged, summary.removed), (1, 0));
    let mut after: Vec<(String, Verification, Lines)> = fetch_all(&fx, "c")
        .iter()
        .map(|f| (f.citation.source.clone(), f.verification, lines_of(f)))
        .collect();
    after.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        after,
        vec![
            ("a.txt".to_owned(), Verification::Verified, Some((1, 2))),
            ("b/b.txt".to_owned(), Verification::Drifted, None),
        ]
    );
    let hit = fx.search("c", "quebec", 1).results.remove(0);
    assert_eq!(
        (hit.citation.start_line, hit.citation.end_line),
        (Some(1), Some(2))
    );
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let status = retrieval::index_status(&open, &cache, None).expect("status");
    assert_eq!(status.schema_version, retrieval::SCHEMA_VERSION);
}

#[test]
fn grk_search_and_fetch_print_path_and_lines() {
    let fx = Fixture::new();
    fx.write(
        "notes/uniform.md",
        "# Uniform\n\nuniform text\nspans three lines\n",
    );
    fx.ingest_all("c");
    let search =
        String::from_utf8(fx.grk_ok(&["search", "--collection", "c", "uniform"])).expect("utf8");
    assert!(search.contains("notes/uniform.md:1-4  [0..41]"), "{search}");
    let id = fx.chunk_ids("c").remove(0);
    let fetch = String::from_utf8(fx.grk_ok(&["fetch", "--collection", "c", &id])).expect("utf8");
    assert!(
        fetch.contains("source     notes/uniform.md:1-4 (text)"),
        "{fetch}"
    );
}
