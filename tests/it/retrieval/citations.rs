//! Citation verification: verified, drifted and unresolvable, for text and extracted sources.

use groundkit_core::Error;
use groundkit_retrieval::{self as retrieval, FetchChunkResponse, SourceClass, Verification};

use super::Fixture;

fn only_chunk(fx: &Fixture, collection: &str) -> String {
    let ids = fx.chunk_ids(collection);
    assert_eq!(ids.len(), 1, "expected one chunk, got {ids:?}");
    ids[0].clone()
}

/// Fetches the one chunk of collection `c` through a fresh cache.
fn fetch_only_chunk(fx: &Fixture) -> FetchChunkResponse {
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    retrieval::fetch_chunk(&open, &only_chunk(fx, "c")).expect("fetch")
}

#[test]
fn unchanged_source_is_verified_with_content() {
    let fx = Fixture::new();
    fx.write("a.md", "# Tea\n\nGreen tea wants water at 80 degrees.\n");
    fx.ingest_all("c");
    let fetched = fetch_only_chunk(&fx);
    assert_eq!(fetched.verification, Verification::Verified);
    assert_eq!(
        fetched.content.as_deref(),
        Some("# Tea\n\nGreen tea wants water at 80 degrees.")
    );
    assert_eq!(fetched.citation.source, "a.md");
    assert_eq!(fetched.citation.source_class, SourceClass::Text);
    assert_eq!(
        (fetched.citation.start_offset, fetched.citation.end_offset),
        (0, 43)
    );
}

#[test]
fn edited_source_is_reported_drifted_without_content() {
    let fx = Fixture::new();
    let path = fx.write("a.md", "Green tea wants water at 80 degrees.");
    fx.ingest_all("c");
    // Same length, one byte different: only a byte comparison notices.
    std::fs::write(&path, "Green tea wants water at 90 degrees.").expect("edit");
    let fetched = fetch_only_chunk(&fx);
    assert_eq!(fetched.verification, Verification::Drifted);
    assert_eq!(fetched.content, None);
    assert!(
        fetched
            .detail
            .is_some_and(|d| d.contains("no longer holds the indexed text"))
    );
    // Search still answers with the indexed text.
    let hits = fx.search("c", "green tea", 5);
    assert_eq!(
        hits.results[0].text(),
        "Green tea wants water at 80 degrees."
    );
}

#[test]
fn deleted_source_is_reported_unresolvable() {
    let fx = Fixture::new();
    let path = fx.write("a.md", "Green tea wants water at 80 degrees.");
    fx.ingest_all("c");
    std::fs::remove_file(path).expect("delete");
    let fetched = fetch_only_chunk(&fx);
    assert_eq!(fetched.verification, Verification::Unresolvable);
    assert_eq!(fetched.content, None);
}

#[test]
fn source_replaced_by_symlink_escaping_base_dir_is_unresolvable() {
    let fx = Fixture::new();
    let text = "Green tea wants water at 80 degrees.";
    let path = fx.write("a.md", text);
    fx.ingest_all("c");
    // The same bytes, but outside the base directory: never read, never verified.
    let outside = fx.outside().join("secret.md");
    std::fs::write(&outside, text).expect("outside file");
    std::fs::remove_file(&path).expect("remove");
    std::os::unix::fs::symlink(&outside, &path).expect("symlink");
    let fetched = fetch_only_chunk(&fx);
    assert_eq!(fetched.verification, Verification::Unresolvable);
    assert_eq!(fetched.content, None);
    let detail = fetched.detail.expect("a reason");
    assert!(!detail.contains('/'), "no path in {detail}");
}

#[test]
fn symlink_escaping_base_dir_is_not_ingested() {
    let fx = Fixture::new();
    let outside = fx.outside().join("secret.md");
    std::fs::write(&outside, "private notes").expect("outside file");
    std::os::unix::fs::symlink(&outside, fx.base.join("link.md")).expect("symlink");
    fx.write("ok.md", "public notes");
    let summary = fx.ingest_all("c");
    assert_eq!(summary.added, 1);
    assert_eq!(summary.failed.len(), 1);
    assert_eq!(summary.failed[0].source, "link.md");
    assert!(fx.search("c", "private", 5).results.is_empty());
}

#[test]
fn html_is_verified_by_rerunning_its_extractor() {
    let fx = Fixture::new();
    let path = fx.write(
        "page.html",
        "<html><body><h1>Burns</h1><p>Cool the burn under <b>running</b> water.</p></body></html>",
    );
    fx.ingest_all("c");
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let id = only_chunk(&fx, "c");
    let fetched = retrieval::fetch_chunk(&open, &id).expect("fetch");
    assert_eq!(fetched.citation.source_class, SourceClass::Extracted);
    assert_eq!(
        fetched.citation.extractor.as_deref(),
        Some("groundkit-html@1")
    );
    assert_eq!(fetched.verification, Verification::Verified);
    assert_eq!(
        fetched.content.as_deref(),
        Some("Burns\n\nCool the burn under running water.")
    );

    // Markup-only edits leave the extracted text, and so the verdict, unchanged.
    std::fs::write(
        &path,
        "<html><body><h1 class=x>Burns</h1><p>Cool the burn under <i>running</i> water.</p></body></html>",
    )
    .expect("edit markup");
    assert_eq!(
        retrieval::fetch_chunk(&open, &id)
            .expect("fetch")
            .verification,
        Verification::Verified
    );

    std::fs::write(&path, "<p>Use ice.</p>").expect("edit text");
    assert_eq!(
        retrieval::fetch_chunk(&open, &id)
            .expect("fetch")
            .verification,
        Verification::Drifted
    );
}

#[test]
fn extracted_source_from_another_extractor_version_cannot_be_verified() {
    let fx = Fixture::new();
    fx.write("page.html", "<p>Cool the burn under running water.</p>");
    fx.ingest_all("c");
    let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open store");
    conn.execute("UPDATE documents SET extractor = 'groundkit-html@0'", [])
        .expect("rewrite");
    drop(conn);
    let fetched = fetch_only_chunk(&fx);
    assert_eq!(fetched.verification, Verification::Unresolvable);
    assert_eq!(fetched.content, None);
}

#[test]
fn unknown_chunk_is_chunk_not_found() {
    let fx = Fixture::new();
    fx.write("a.md", "text");
    fx.ingest_all("c");
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let err = retrieval::fetch_chunk(&open, "nope").expect_err("missing chunk");
    assert!(matches!(err, Error::ChunkNotFound { .. }), "{err:?}");
}

#[test]
fn chunk_offsets_are_exact_and_never_split_utf8() {
    let fx = Fixture::new();
    let text = "Crème brûlée — «brûlée» means burnt. 抹茶 is whisked matcha ✓. ".repeat(30);
    fx.write("u.md", &text);
    let mut options = fx.options("c", &[&fx.base]);
    options.max_chunk_bytes = 70;
    let summary = retrieval::ingest(&options, &mut retrieval::NoProgress).expect("ingest");
    assert!(summary.chunks > 20, "{summary:?}");
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let bytes = text.as_bytes();
    for id in fx.chunk_ids("c") {
        let fetched = retrieval::fetch_chunk(&open, &id).expect("fetch");
        assert_eq!(fetched.verification, Verification::Verified, "{id}");
        let (s, e) = (
            fetched.citation.start_offset as usize,
            fetched.citation.end_offset as usize,
        );
        assert!(text.is_char_boundary(s) && text.is_char_boundary(e));
        assert!(e - s <= 70);
        assert_eq!(
            fetched.content.as_deref().map(str::as_bytes),
            Some(&bytes[s..e])
        );
    }
}

fn tidepools_pdf() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/tidepools.pdf"
    ))
    .expect("fixture")
}

#[test]
fn pdf_is_extracted_and_verified_by_rerunning_its_extractor() {
    let fx = Fixture::new();
    let pdf = tidepools_pdf();
    let path = fx.write("tidepools.pdf", &pdf);
    fx.ingest_all("c");
    let hits = fx.search("c", "anemones", 5);
    assert_eq!(
        hits.results[0].text(),
        "Tidal pools shelter anemones and crabs."
    );
    let fetched = fetch_only_chunk(&fx);
    assert_eq!(fetched.citation.source_class, SourceClass::Extracted);
    assert_eq!(
        fetched.citation.extractor.as_deref(),
        Some("groundkit-pdf@1")
    );
    assert_eq!(fetched.scope.as_deref(), Some("page 1"));
    assert_eq!(fetched.verification, Verification::Verified);

    // A text edit inside the PDF changes the extracted text: drifted, not verified.
    let edited = String::from_utf8_lossy(&pdf).replace("crabs", "fish!");
    std::fs::write(&path, edited.as_bytes()).expect("edit");
    assert_eq!(fetch_only_chunk(&fx).verification, Verification::Drifted);
}

/// A collection built before PDFs were read page by page recorded `pdf-extract@0.12`, the whole
/// document as one flow, and chunk offsets into that flow: its chunks still verify, and the next
/// ingest reads the PDF again, by pages.
#[test]
fn a_pdf_chunk_recorded_as_one_flow_still_verifies_and_gains_its_page_on_reingest() {
    let fx = Fixture::new();
    fx.write("tidepools.pdf", tidepools_pdf());
    fx.ingest_all("c");
    {
        // What the earlier extractor recorded: its identity, the hash it made, and the chunk at
        // its place in the flow ("\n\nTidal pools shelter anemones and crabs.").
        let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open store");
        conn.execute_batch(
            "UPDATE documents SET extractor = 'pdf-extract@0.12', content_hash = 'earlier';
             UPDATE chunks SET start_offset = 2, end_offset = 41, scope = NULL;",
        )
        .expect("rewrite as an earlier collection");
    }
    let old = fetch_only_chunk(&fx);
    assert_eq!(old.citation.extractor.as_deref(), Some("pdf-extract@0.12"));
    assert_eq!(old.verification, Verification::Verified, "{:?}", old.detail);
    assert_eq!(
        old.content.as_deref(),
        Some("Tidal pools shelter anemones and crabs.")
    );
    assert_eq!(old.scope, None);

    let summary = fx.ingest_all("c");
    assert_eq!(summary.updated, 1, "the PDF is read again: {summary:?}");
    let new = fetch_only_chunk(&fx);
    assert_eq!(new.citation.extractor.as_deref(), Some("groundkit-pdf@1"));
    assert_eq!(new.scope.as_deref(), Some("page 1"));
    assert_eq!(new.verification, Verification::Verified);
}

#[test]
fn a_chunk_replaced_by_a_reingest_stays_fetchable_as_superseded_until_its_retention_passes() {
    let fx = Fixture::new();
    let path = fx.write("a.md", "Green tea wants water at 80 degrees.");
    fx.ingest_all("c");
    let old = only_chunk(&fx, "c");
    assert!(!fetch_only_chunk(&fx).superseded, "a live chunk");

    std::fs::write(&path, "Green tea wants water at 90 degrees.").expect("edit");
    fx.ingest_all("c");
    let new = only_chunk(&fx, "c");
    assert_ne!(old, new, "changed content, new chunk id");
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let fetched = retrieval::fetch_chunk(&open, &old).expect("still fetchable");
    assert!(fetched.superseded);
    assert_eq!(fetched.verification, Verification::Drifted);
    assert_eq!(fetched.content, None);
    assert_eq!(fetched.citation.source, "a.md");
    let current = retrieval::fetch_chunk(&open, &new).expect("fetch");
    assert!(!current.superseded);
    assert_eq!(current.verification, Verification::Verified);
    drop(open);

    // The retention window is measured in whole seconds from the ingest that superseded it.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(&path, "Green tea wants water at 70 degrees.").expect("edit again");
    let mut options = fx.options("c", &[&fx.base]);
    options.superseded_retention = std::time::Duration::ZERO;
    retrieval::ingest(&options, &mut retrieval::NoProgress).expect("ingest");
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let err = retrieval::fetch_chunk(&open, &old).expect_err("past its retention");
    assert!(matches!(err, Error::ChunkNotFound { .. }), "{err:?}");
}

#[test]
fn a_source_grown_past_64_mib_is_unresolvable_and_not_read() {
    use groundkit_retrieval::source_file::MAX_SOURCE_BYTES;
    let fx = Fixture::new();
    let path = fx.write("page.html", "<p>Cool the burn under running water.</p>");
    fx.ingest_all("c");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_len(MAX_SOURCE_BYTES + 1))
        .expect("grow the source (sparse)");
    let fetched = fetch_only_chunk(&fx);
    assert_eq!(fetched.verification, Verification::Unresolvable);
    assert!(
        fetched
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("64 MiB")),
        "{fetched:?}"
    );

    let again = fx.ingest_all("c");
    assert_eq!(again.failed.len(), 1, "{again:?}");
    assert!(again.failed[0].reason.contains("64 MiB"), "{again:?}");
    assert_eq!(again.documents, 1, "the indexed document is kept");
}
