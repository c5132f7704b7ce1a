//! Ingest: incremental re-ingest, per-source failures, .gitignore, BEIR import, URL snapshots.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use groundkit_core::Error;
use groundkit_retrieval::{self as retrieval, InputFormat, NoProgress, SourceClass, Verification};

use super::Fixture;

/// Ingests BEIR corpus `inputs` into collection `beir`.
fn ingest_beir(fx: &Fixture, inputs: &[&std::path::Path]) -> retrieval::IngestSummary {
    let mut options = fx.options("beir", inputs);
    options.format = InputFormat::Beir;
    retrieval::ingest(&options, &mut NoProgress).expect("BEIR ingest")
}

#[test]
fn reingest_skips_unchanged_replaces_changed_and_removes_deleted() {
    let fx = Fixture::new();
    fx.write("a.md", "alpha apples");
    fx.write("b.md", "bravo bananas");
    let c = fx.write("c.md", "charlie cherries");
    let first = fx.ingest_all("col");
    assert_eq!(
        (first.added, first.updated, first.unchanged, first.removed),
        (3, 0, 0, 0)
    );
    assert_eq!(first.generation, 1);

    let again = fx.ingest_all("col");
    assert_eq!(
        (again.added, again.updated, again.unchanged, again.removed),
        (0, 0, 3, 0)
    );
    assert_eq!(again.generation, 1, "nothing changed, so no new generation");

    fx.write("a.md", "alpha apricots");
    std::fs::remove_file(c).expect("delete");
    fx.write("d.md", "delta dates");
    let third = fx.ingest_all("col");
    assert_eq!(
        (third.added, third.updated, third.unchanged, third.removed),
        (1, 1, 1, 1)
    );
    assert_eq!(third.generation, 2);
    assert_eq!((third.documents, third.chunks), (3, 3));

    assert!(fx.search("col", "cherries", 5).results.is_empty());
    assert!(fx.search("col", "apples", 5).results.is_empty());
    assert_eq!(
        fx.search("col", "apricots", 5).results[0].document_id,
        "a.md"
    );
    assert_eq!(fx.search("col", "dates", 5).results[0].document_id, "d.md");
}

#[test]
fn bad_inputs_are_reported_per_file_and_skipped() {
    let fx = Fixture::new();
    fx.write("good.md", "good content about kites");
    fx.write("bad.txt", [0xff, 0xfe, 0x00, 0x41]);
    fx.write("empty.md", "   \n");
    fx.write("broken.pdf", "not a pdf at all");
    let missing = fx.base.join("missing.md");
    let options = fx.options("col", &[&fx.base, &missing]);
    let summary = retrieval::ingest(&options, &mut NoProgress).expect("ingest completes");
    assert_eq!(summary.added, 1);
    let mut failed: Vec<&str> = summary.failed.iter().map(|f| f.source.as_str()).collect();
    failed.sort_unstable();
    assert_eq!(failed.len(), 4, "{:?}", summary.failed);
    assert!(failed.contains(&"bad.txt") && failed.contains(&"empty.md"));
    assert!(failed.contains(&"broken.pdf"));
    for failure in &summary.failed {
        assert!(
            !failure.reason.contains(fx.base.to_str().expect("utf8")),
            "{failure:?}"
        );
    }
    assert_eq!(fx.search("col", "kites", 5).total_results, 1);
}

#[test]
fn gitignored_files_are_not_ingested() {
    let fx = Fixture::new();
    fx.write(".gitignore", "drafts/\n*.secret.md\n");
    fx.write("keep.md", "published notes on owls");
    fx.write("drafts/wip.md", "draft notes on owls");
    fx.write("x.secret.md", "secret notes on owls");
    let summary = fx.ingest_all("col");
    assert_eq!(summary.added, 1, "{summary:?}");
    let hits = fx.search("col", "owls", 10);
    assert_eq!(hits.results.len(), 1);
    assert_eq!(hits.results[0].document_id, "keep.md");
}

#[test]
fn beir_corpus_keeps_record_ids_and_indexes_title_and_text() {
    let fx = Fixture::new();
    let corpus = fx.write(
        "beir/corpus.jsonl",
        concat!(
            r#"{"_id": "doc-1", "title": "Vitamin D and bones", "text": "Supplements reduce fractures."}"#,
            "\n",
            r#"{"_id": "doc-2", "title": "", "text": "Coffee and sleep quality."}"#,
            "\n",
            "not json\n",
        ),
    );
    let summary = ingest_beir(&fx, &[&corpus]);
    assert_eq!(summary.added, 2);
    assert_eq!(summary.failed.len(), 1);
    assert_eq!(summary.failed[0].source, "beir/corpus.jsonl:3");

    let hits = fx.search("beir", "vitamin", 5);
    assert_eq!(hits.results[0].document_id, "doc-1");
    assert_eq!(
        hits.results[0].text(),
        "Vitamin D and bones\n\nSupplements reduce fractures."
    );
    let citation = &hits.results[0].citation;
    assert_eq!(citation.source, "beir/corpus.jsonl");
    assert_eq!(citation.source_class, SourceClass::Extracted);

    let cache = fx.cache();
    let open = cache.acquire("beir").expect("open");
    let fetched = retrieval::fetch_chunk(&open, &hits.results[0].chunk_id).expect("fetch");
    assert_eq!(fetched.verification, Verification::Verified);

    let again = ingest_beir(&fx, &[&corpus]);
    assert_eq!((again.added, again.unchanged), (0, 2));
}

/// Serves `body` as `content_type` to every request until the listener is dropped with the
/// test process; bounded to `max_requests`.
fn serve_once(body: &'static str, content_type: &'static str, max_requests: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().take(max_requests) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}/page")
}

#[test]
fn url_is_ingested_as_a_snapshot_and_verified_from_the_snapshot_dir() {
    let fx = Fixture::new();
    let url = serve_once(
        "<html><body><p>Lighthouses guide ships at night.</p></body></html>",
        "text/html; charset=utf-8",
        4,
    );
    let options = fx.options("web", &[]);
    let options = retrieval::IngestOptions {
        inputs: vec![url.clone()],
        ..options
    };
    let summary = retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    assert_eq!(summary.added, 1, "{summary:?}");

    let hits = fx.search("web", "lighthouse", 5);
    let hit = &hits.results[0];
    assert_eq!(hit.citation.source, url);
    assert_eq!(hit.citation.source_class, SourceClass::Snapshot);
    assert_eq!(hit.text(), "Lighthouses guide ships at night.");
    let snapshots: Vec<_> = std::fs::read_dir(fx.index.join("web.snapshots"))
        .expect("snapshot dir")
        .collect();
    assert_eq!(snapshots.len(), 1);

    let cache = fx.cache();
    let open = cache.acquire("web").expect("open");
    let fetched = retrieval::fetch_chunk(&open, &hit.chunk_id).expect("fetch");
    assert_eq!(fetched.verification, Verification::Verified);
}

#[test]
fn failing_url_is_reported_and_skipped() {
    let fx = Fixture::new();
    // A port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    fx.write("a.md", "some text");
    let options = fx.options("web", &[&fx.base]);
    let mut inputs = options.inputs.clone();
    inputs.push(format!("http://127.0.0.1:{port}/gone"));
    let summary = retrieval::ingest(
        &retrieval::IngestOptions { inputs, ..options },
        &mut NoProgress,
    )
    .expect("ingest completes");
    assert_eq!(summary.added, 1);
    assert_eq!(summary.failed.len(), 1);
    assert!(summary.failed[0].source.ends_with("/gone"));
}

#[test]
fn traversal_shaped_collection_name_is_refused_before_touching_disk() {
    let fx = Fixture::new();
    fx.write("a.md", "text");
    for name in ["../escape", "a/b", ".hidden", "", "x.sqlite3"] {
        let options = fx.options(name, &[&fx.base]);
        let err = retrieval::ingest(&options, &mut NoProgress).expect_err(name);
        assert!(
            matches!(err, Error::Validation { ref field, .. } if field == "collection"),
            "{err:?}"
        );
    }
    assert!(!fx.index.exists(), "the index directory was created");
}

#[test]
fn lost_lexical_index_is_rebuilt_by_the_next_ingest() {
    let fx = Fixture::new();
    fx.write("a.md", "alpha apples");
    fx.write("b.md", "bravo bananas");
    fx.ingest_all("col");
    std::fs::remove_dir_all(fx.index.join("col.tantivy")).expect("lose the index");
    let err = fx
        .cache()
        .acquire("col")
        .expect_err("cannot search without it");
    assert_eq!(err.kind(), "storage_error");

    std::fs::remove_file(fx.base.join("b.md")).expect("delete b");
    let summary = fx.ingest_all("col");
    assert_eq!(
        (summary.unchanged, summary.removed, summary.generation),
        (1, 1, 2)
    );
    assert_eq!(fx.search("col", "apples", 5).results[0].document_id, "a.md");
    assert!(fx.search("col", "bananas", 5).results.is_empty());
}

/// A BEIR corpus over several of the pages in which ingest reads the store back (1,024
/// documents): records that vanished from the first, a middle and the last page are removed and
/// nothing else; a record id used twice in one file is refused at its second line; a lost
/// lexical index is rebuilt with every kept record.
#[test]
fn beir_reingest_across_store_pages_removes_exactly_the_vanished_records() {
    let fx = Fixture::new();
    let record = |i: usize, word: &str| {
        format!("{{\"_id\": \"r{i:05}\", \"title\": \"\", \"text\": \"{word} tag{i}x\"}}\n")
    };
    let mut corpus: String = (0..2500).map(|i| record(i, "plain")).collect();
    corpus.push_str(&record(7, "again"));
    let path = fx.write("beir/corpus.jsonl", &corpus);
    let first = ingest_beir(&fx, &[&path]);
    assert_eq!((first.added, first.documents), (2500, 2500));
    assert_eq!(first.failed.len(), 1, "{:?}", first.failed);
    assert_eq!(first.failed[0].source, "beir/corpus.jsonl:2501");
    assert!(
        first.failed[0]
            .reason
            .contains("duplicate document id 'r00007'")
    );

    let gone = [0, 1500, 2499];
    let edited = 1024;
    let corpus: String = (0..2500)
        .filter(|i| !gone.contains(i))
        .map(|i| record(i, if i == edited { "edited" } else { "plain" }))
        .collect();
    fx.write("beir/corpus.jsonl", &corpus);
    let again = ingest_beir(&fx, &[&path]);
    assert_eq!(
        (again.added, again.updated, again.unchanged, again.removed),
        (0, 1, 2496, 3)
    );
    assert_eq!(again.documents, 2497);
    for i in gone {
        assert!(fx.search("beir", &format!("tag{i}x"), 5).results.is_empty());
    }
    assert_eq!(
        fx.search("beir", "edited", 5).results[0].document_id,
        "r01024"
    );

    std::fs::remove_dir_all(fx.index.join("beir.tantivy")).expect("lose the index");
    let rebuilt = ingest_beir(&fx, &[&path]);
    assert_eq!((rebuilt.unchanged, rebuilt.removed), (2497, 0));
    for (i, id) in [
        (1, "r00001"),
        (1499, "r01499"),
        (2498, "r02498"),
        (1024, "r01024"),
    ] {
        let hits = fx.search("beir", &format!("tag{i}x"), 5);
        assert_eq!(hits.results[0].document_id, id);
    }
}

/// The same BEIR id in two corpus files of one run: the first record keeps the id, the second is
/// reported at its line, and nothing of it is indexed or stored.
#[test]
fn a_beir_id_in_two_files_of_one_run_is_kept_by_the_first_and_refused_in_the_second() {
    let fx = Fixture::new();
    let first = fx.write(
        "a/corpus.jsonl",
        "{\"_id\": \"x\", \"title\": \"\", \"text\": \"first version walrus\"}\n",
    );
    let second = fx.write(
        "b/corpus.jsonl",
        "{\"_id\": \"x\", \"title\": \"\", \"text\": \"second version narwhal\"}\n",
    );
    let summary = ingest_beir(&fx, &[&first, &second]);
    assert_eq!(
        (summary.added, summary.updated, summary.documents),
        (1, 0, 1)
    );
    assert_eq!(summary.failed.len(), 1, "{:?}", summary.failed);
    assert_eq!(summary.failed[0].source, "b/corpus.jsonl:1");
    assert!(
        summary.failed[0]
            .reason
            .contains("duplicate document id 'x'")
    );
    assert_eq!(fx.search("beir", "walrus", 5).results[0].document_id, "x");
    assert!(fx.search("beir", "narwhal", 5).results.is_empty());

    // One corpus named twice, as its file and as its directory, is read once.
    let dir = fx.base.join("a");
    let again = ingest_beir(&fx, &[&first, &dir]);
    assert_eq!((again.unchanged, again.removed), (1, 0));
    assert!(again.failed.is_empty(), "{:?}", again.failed);
}

/// A BEIR record that lost its text is reported and changes nothing: the collection keeps the
/// record's earlier version, and a later record with the same id is a duplicate.
#[test]
fn a_beir_record_without_text_keeps_the_stored_version_and_its_id() {
    let fx = Fixture::new();
    let corpus = fx.write(
        "corpus.jsonl",
        "{\"_id\": \"x\", \"title\": \"\", \"text\": \"original walrus\"}\n",
    );
    ingest_beir(&fx, &[&corpus]);

    fx.write(
        "corpus.jsonl",
        concat!(
            "{\"_id\": \"x\", \"title\": \"\", \"text\": \"  \"}\n",
            "{\"_id\": \"x\", \"title\": \"\", \"text\": \"replacement narwhal\"}\n",
        ),
    );
    let summary = ingest_beir(&fx, &[&corpus]);
    let failed: Vec<(&str, &str)> = summary
        .failed
        .iter()
        .map(|f| (f.source.as_str(), f.reason.as_str()))
        .collect();
    assert_eq!(
        failed,
        [
            ("corpus.jsonl:1", "contains no text"),
            ("corpus.jsonl:2", "duplicate document id 'x'"),
        ]
    );
    assert_eq!(
        (
            summary.added,
            summary.updated,
            summary.removed,
            summary.documents
        ),
        (0, 0, 0, 1)
    );
    assert_eq!(fx.search("beir", "walrus", 5).results[0].document_id, "x");
    assert!(fx.search("beir", "narwhal", 5).results.is_empty());
}

/// Records the sources an ingest reports, in the order it reports them.
#[derive(Default)]
struct Reported(Vec<String>);

impl retrieval::IngestProgress for Reported {
    fn item(&mut self, source: &str, _outcome: &retrieval::ItemOutcome) {
        self.0.push(source.to_owned());
    }
}

/// `(document_id, chunk_index, chunk_id)` of every chunk of collection `name`, in the order the
/// ingest wrote them.
fn written(fx: &Fixture, name: &str) -> Vec<(String, u32, String)> {
    let conn = rusqlite::Connection::open(fx.index.join(format!("{name}.sqlite3"))).expect("store");
    let mut stmt = conn
        .prepare("SELECT document_id, chunk_index, chunk_id FROM chunks ORDER BY rowid")
        .expect("query");
    stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("rows")
        .map(|row| row.expect("row"))
        .collect()
}

/// Files are read, extracted and chunked on worker threads, and written in the order of the
/// inputs: two ingests of the same tree write the same chunks in the same order, the walk's
/// (sorted) order, and report their sources in it; a failing file among them fails alone.
#[test]
fn files_read_on_worker_threads_are_written_and_reported_in_the_order_of_the_inputs() {
    let fx = Fixture::new();
    for i in 0..240 {
        let body = format!(
            "Note {i} on tides and kelp. {}",
            "More words here. ".repeat(i % 90)
        );
        match i % 4 {
            0 => fx.write(&format!("d{}/n{i:03}.md", i % 5), body),
            1 => fx.write(
                &format!("d{}/n{i:03}.html", i % 5),
                format!("<p>{body}</p>"),
            ),
            2 => fx.write(
                &format!("d{}/n{i:03}.py", i % 5),
                format!("def f{i}():\n    \"\"\"{body}\"\"\"\n"),
            ),
            _ => fx.write(&format!("d{}/n{i:03}.txt", i % 5), body),
        };
    }
    fx.write("d2/broken.md", [0xff, 0xfe, 0x00].as_slice());
    let mut options = fx.options("a", &[&fx.base]);
    let mut reported = Reported::default();
    let first = retrieval::ingest(&options, &mut reported).expect("ingest");
    assert_eq!(first.added, 240);
    assert_eq!(first.failed.len(), 1, "{:?}", first.failed);
    assert_eq!(first.failed[0].source, "d2/broken.md");
    options.collection = "b".to_owned();
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");

    let (a, b) = (written(&fx, "a"), written(&fx, "b"));
    assert_eq!(a, b);
    let mut documents: Vec<&str> = a.iter().map(|(d, _, _)| d.as_str()).collect();
    documents.dedup();
    assert_eq!(documents.len(), 240);
    assert!(documents.is_sorted(), "written out of order: {documents:?}");
    assert!(
        reported.0.is_sorted(),
        "reported out of order: {:?}",
        reported.0
    );
    assert_eq!(reported.0.len(), 241);
}
