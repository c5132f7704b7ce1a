//! Reads across generations: readers looping while ingests commit never get an error, a chunk
//! id stays fetchable after later ingests (stable while its bytes and offsets are unchanged,
//! `superseded` for the retention window otherwise), and reads create no file.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use groundkit_core::Error;
use groundkit_retrieval::{
    self as retrieval, CollectionCache, FetchChunkResponse, NoProgress, SearchParams, Verification,
};

use super::{Fixture, snapshot_tree};

fn paragraph(word: &str) -> String {
    let mut text = String::new();
    while text.len() < 1000 {
        text.push_str(word);
        text.push_str(" sentence about the topic continues here. ");
    }
    text
}

fn fetch(fx: &Fixture, chunk_id: &str) -> Result<FetchChunkResponse, Error> {
    let cache = fx.cache();
    let open = cache.acquire("c").expect("collection opens");
    retrieval::fetch_chunk(&open, chunk_id)
}

fn ingest_with_retention(fx: &Fixture, retention: Duration) -> u64 {
    let mut options = fx.options("c", &[&fx.base]);
    options.superseded_retention = retention;
    retrieval::ingest(&options, &mut NoProgress)
        .expect("ingest")
        .generation
}

fn ids_of(fx: &Fixture, document: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open store");
    let mut stmt = conn
        .prepare("SELECT chunk_id FROM chunks WHERE document_id = ?1 ORDER BY chunk_index")
        .expect("query");
    stmt.query_map([document], |row| row.get(0))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect()
}

#[test]
fn hits_stay_fetchable_after_one_and_several_later_generations() {
    let fx = Fixture::new();
    let (p1, p2, p3) = (paragraph("alpha"), paragraph("bravo"), paragraph("charlie"));
    fx.write("a.md", format!("{p1}\n\n{p2}\n\n{p3}"));
    fx.write("b.md", "delta is the only document about deltas");
    assert_eq!(ingest_with_retention(&fx, Duration::from_secs(3600)), 1);
    let a1 = ids_of(&fx, "a.md");
    assert_eq!(a1.len(), 3, "one chunk per paragraph");
    let hit = fx.search("c", "delta", 1).results.remove(0);
    assert_eq!(hit.document_id, "b.md");

    // Generation 2: an append to a.md. The three chunks keep their bytes and offsets, so their
    // ids, and the new paragraph is a fourth chunk.
    fx.write(
        "a.md",
        format!("{p1}\n\n{p2}\n\n{p3}\n\n{}", paragraph("echo")),
    );
    assert_eq!(ingest_with_retention(&fx, Duration::from_secs(3600)), 2);
    let a2 = ids_of(&fx, "a.md");
    assert_eq!(a2.len(), 4);
    assert_eq!(a2[..3], a1[..], "unchanged chunks keep their ids");
    for id in &a1 {
        let got = fetch(&fx, id).expect("a generation-1 hit is fetchable");
        assert_eq!(
            (got.verification, got.superseded),
            (Verification::Verified, false)
        );
    }

    // Generations 3 and 4: b.md is removed, then a.md's first paragraph is rewritten with
    // other words of the same length, so only that chunk's bytes change.
    std::fs::remove_file(fx.base.join("b.md")).expect("remove b");
    assert_eq!(ingest_with_retention(&fx, Duration::from_secs(3600)), 3);
    fx.write(
        "a.md",
        format!(
            "{}\n\n{p2}\n\n{p3}\n\n{}",
            paragraph("hotel"),
            paragraph("echo")
        ),
    );
    assert_eq!(ingest_with_retention(&fx, Duration::from_secs(3600)), 4);

    let removed = fetch(&fx, &hit.chunk_id).expect("removed document's chunk is still fetchable");
    assert!(removed.superseded);
    assert_eq!(removed.verification, Verification::Unresolvable);
    assert_eq!(
        removed.citation, hit.citation,
        "the citation the search returned"
    );
    assert!(
        fx.search("c", "delta", 5).results.is_empty(),
        "but search no longer finds it"
    );

    let rewritten = fetch(&fx, &a1[0]).expect("rewritten chunk is still fetchable");
    assert!(rewritten.superseded);
    assert_eq!(rewritten.verification, Verification::Drifted);
    for id in &a1[1..] {
        let kept = fetch(&fx, id).expect("unchanged chunk");
        assert_eq!(
            (kept.verification, kept.superseded),
            (Verification::Verified, false),
            "the unchanged paragraphs keep their ids through the rewrite"
        );
    }

    // With no retention, the next committing ingest drops what was superseded before it.
    fx.write("c.md", "a new document so the ingest commits");
    assert_eq!(ingest_with_retention(&fx, Duration::ZERO), 5);
    for gone in [&hit.chunk_id, &a1[0]] {
        let err = fetch(&fx, gone).expect_err("swept after the retention window");
        assert!(matches!(err, Error::ChunkNotFound { .. }), "{err:?}");
    }
    assert!(fetch(&fx, &a1[1]).is_ok());
}

#[test]
fn a_chunk_that_comes_back_is_live_again_not_superseded() {
    let fx = Fixture::new();
    fx.write("a.md", "foxtrot text that will be removed and restored");
    ingest_with_retention(&fx, Duration::from_secs(3600));
    let id = ids_of(&fx, "a.md").remove(0);
    std::fs::remove_file(fx.base.join("a.md")).expect("remove");
    fx.write("other.md", "keeps the collection non-empty");
    ingest_with_retention(&fx, Duration::from_secs(3600));
    assert!(fetch(&fx, &id).expect("superseded").superseded);
    fx.write("a.md", "foxtrot text that will be removed and restored");
    ingest_with_retention(&fx, Duration::from_secs(3600));
    assert_eq!(ids_of(&fx, "a.md"), vec![id.clone()]);
    let back = fetch(&fx, &id).expect("live");
    assert_eq!(
        (back.verification, back.superseded),
        (Verification::Verified, false)
    );
}

/// A corpus of `n` small files whose text depends on `round`, so every ingest rewrites some.
fn write_corpus(fx: &Fixture, n: usize, round: usize) {
    for i in 0..n {
        let text = if i % 10 == round % 10 {
            format!("document {i} kilo lima revised in round {round}\n")
        } else {
            format!("document {i} kilo lima steady text\n")
        };
        fx.write(&format!("d/{i:03}.md"), text);
    }
    // One file comes and goes, so documents are removed as well as replaced.
    let transient = fx.base.join("d/transient.md");
    if round.is_multiple_of(2) {
        std::fs::write(&transient, "transient kilo text").expect("write");
    } else {
        let _ = std::fs::remove_file(&transient);
    }
}

/// One reader pass: the operations of an agent, each counted; an error is recorded, not raised.
fn read_once(fx: &Fixture, cache: &CollectionCache, reads: &AtomicU64) -> Result<(), String> {
    let count = || reads.fetch_add(1, Ordering::Relaxed);
    let listed = retrieval::list_collections(&fx.index).map_err(|e| format!("list: {e:?}"))?;
    count();
    if listed != ["c"] {
        return Err(format!("list_collections flickered: {listed:?}"));
    }
    let open = cache.acquire("c").map_err(|e| format!("acquire: {e:?}"))?;
    count();
    let found = retrieval::search(
        &open,
        &SearchParams {
            query: "kilo lima".into(),
            top_k: 10,
            mode: Default::default(),
            fusion: Default::default(),
            filter: None,
        },
        None,
    )
    .map_err(|e| format!("search: {e:?}"))?;
    count();
    if found.results.is_empty() {
        return Err("search found nothing".into());
    }
    retrieval::index_status(&open, cache, None).map_err(|e| format!("status: {e:?}"))?;
    count();
    for hit in found.results.iter().take(3) {
        retrieval::fetch_chunk(&open, &hit.chunk_id).map_err(|e| format!("fetch: {e:?}"))?;
        count();
    }
    Ok(())
}

#[test]
fn readers_never_fail_while_ingests_commit() {
    const INGESTS: usize = 15;
    let fx = Arc::new(Fixture::new());
    write_corpus(&fx, 300, 0);
    fx.ingest_all("c");

    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let readers: Vec<_> = (0..3)
        .map(|reader| {
            let (fx, stop, reads, failures) =
                (fx.clone(), stop.clone(), reads.clone(), failures.clone());
            std::thread::spawn(move || {
                // Reader 0 keeps one cache (cached collections, rebuilt per generation); the
                // others start from a fresh cache every time, so they probe and open the store
                // on every pass, the path a new server or a CLI call takes.
                let shared = fx.cache();
                while !stop.load(Ordering::Relaxed) {
                    let fresh;
                    let cache = if reader == 0 {
                        &shared
                    } else {
                        fresh = fx.cache();
                        &fresh
                    };
                    if let Err(err) = read_once(&fx, cache, &reads) {
                        failures.lock().expect("lock").push(err);
                    }
                }
            })
        })
        .collect();

    let mut generations = BTreeSet::new();
    for round in 1..=INGESTS {
        write_corpus(&fx, 300, round);
        generations.insert(fx.ingest_all("c").generation);
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.join().expect("reader thread");
    }

    let failures = failures.lock().expect("lock");
    let reads = reads.load(Ordering::Relaxed);
    eprintln!(
        "{reads} reads across {INGESTS} commits, {} failed",
        failures.len()
    );
    assert_eq!(generations.len(), INGESTS, "every ingest committed");
    assert!(reads > 500, "the readers ran throughout ({reads} reads)");
    assert!(
        failures.is_empty(),
        "{} of {reads} reads failed, first: {:?}",
        failures.len(),
        failures.first()
    );
}

fn digest(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

#[test]
fn reads_create_no_file_in_the_index_directory() {
    let fx = Fixture::new();
    fx.write("a.md", "juliet text for reads");
    fx.ingest_all("c");
    // Every file under the index directory with its bytes, except the WAL index (`-shm`),
    // which is shared memory that readers update by design.
    let tree = || -> Vec<(std::path::PathBuf, Option<u64>)> {
        snapshot_tree(&fx.index)
            .into_iter()
            .map(|(path, bytes, _)| {
                let shm = path.to_string_lossy().ends_with("-shm");
                (path, (!shm).then(|| digest(&bytes)))
            })
            .collect()
    };
    let before = tree();
    assert!(
        before.iter().any(|(p, _)| p.ends_with("c.sqlite3-wal")),
        "the writer leaves its WAL file in place for readers"
    );
    for _ in 0..3 {
        let cache = CollectionCache::new(&fx.index, &fx.base, 0);
        let open = cache.acquire("c").expect("opens");
        let hit = fx.search("c", "juliet", 1).results.remove(0);
        retrieval::fetch_chunk(&open, &hit.chunk_id).expect("fetch");
        retrieval::index_status(&open, &cache, None).expect("status");
        retrieval::list_collections(&fx.index).expect("list");
        let err = cache.acquire("absent").expect_err("no such collection");
        assert!(matches!(err, Error::CollectionNotFound { .. }));
    }
    assert_eq!(tree(), before, "a read created, removed or changed a file");
}

/// A store downgraded by `downgrade` to an older layout is refused by readers, and the next
/// ingest upgrades it, keeping its chunks.
fn an_older_store_is_refused_by_readers_and_upgraded_by_the_next_ingest(downgrade: &str) {
    let fx = Fixture::new();
    fx.write("a.md", "kilo text kept across the upgrade");
    fx.ingest_all("c");
    let id = ids_of(&fx, "a.md").remove(0);
    {
        let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open");
        conn.execute_batch(downgrade).expect("downgrade");
    }
    let err = fx.cache().acquire("c").expect_err("a reader refuses it");
    assert_eq!(err.kind(), "storage_error", "{err:?}");
    assert!(err.to_string().contains("grk ingest"), "{err}");

    fx.write("b.md", "lima text added by the upgrading ingest");
    let summary = fx.ingest_all("c");
    assert_eq!((summary.added, summary.unchanged), (1, 1));
    let kept = fetch(&fx, &id).expect("the old chunk, unchanged");
    assert_eq!(kept.verification, Verification::Verified);
    assert_eq!(fx.search("c", "lima", 1).results.len(), 1);
}

#[test]
fn a_version_1_store_is_refused_by_readers_and_upgraded_by_the_next_ingest() {
    // The version-1 layout: no superseded chunks, no BEIR record offsets, no scopes, no lines.
    an_older_store_is_refused_by_readers_and_upgraded_by_the_next_ingest(
        "DROP TABLE superseded_chunks;
         ALTER TABLE documents DROP COLUMN record_offset;
         ALTER TABLE chunks DROP COLUMN scope;
         ALTER TABLE chunks DROP COLUMN start_line;
         ALTER TABLE chunks DROP COLUMN end_line;
         ALTER TABLE documents DROP COLUMN modified;
         ALTER TABLE documents DROP COLUMN metadata;
         PRAGMA user_version = 1;",
    );
}

#[test]
fn a_version_2_store_is_refused_by_readers_and_upgraded_by_the_next_ingest() {
    // The version-2 layout: no scopes, no lines.
    an_older_store_is_refused_by_readers_and_upgraded_by_the_next_ingest(
        "ALTER TABLE chunks DROP COLUMN scope;
         ALTER TABLE superseded_chunks DROP COLUMN scope;
         ALTER TABLE chunks DROP COLUMN start_line;
         ALTER TABLE chunks DROP COLUMN end_line;
         ALTER TABLE superseded_chunks DROP COLUMN start_line;
         ALTER TABLE superseded_chunks DROP COLUMN end_line;
         ALTER TABLE documents DROP COLUMN modified;
         ALTER TABLE documents DROP COLUMN metadata;
         PRAGMA user_version = 2;",
    );
}

#[test]
fn a_version_4_store_is_served_and_the_next_ingest_records_times_and_front_matter() {
    let fx = Fixture::new();
    fx.write(
        "a.md",
        "---
tags: [quay]
---
mike text kept across the upgrade",
    );
    fx.ingest_all("c");
    let id = ids_of(&fx, "a.md").remove(0);
    {
        let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open");
        conn.execute_batch(
            "ALTER TABLE documents DROP COLUMN modified;
             ALTER TABLE documents DROP COLUMN metadata;
             PRAGMA user_version = 4;",
        )
        .expect("downgrade");
    }
    // Served as it is.
    assert_eq!(fx.search("c", "mike", 1).results[0].chunk_id, id);
    let summary = fx.ingest_all("c");
    assert_eq!(
        (summary.added, summary.updated, summary.unchanged),
        (0, 0, 1)
    );
    let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open");
    let (version, metadata, modified): (i64, String, Option<i64>) = conn
        .query_row(
            "SELECT (SELECT user_version FROM pragma_user_version), metadata, modified \
             FROM documents",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .expect("the upgraded row");
    assert_eq!(version, i64::from(retrieval::SCHEMA_VERSION));
    assert_eq!(metadata, r#"{"tags":["quay"]}"#);
    assert!(modified.is_some_and(|t| t > 1_700_000_000), "{modified:?}");
    // The chunk keeps its id, live, and the generation knows its front matter.
    let kept = fetch(&fx, &id).expect("the chunk");
    assert_eq!(kept.verification, Verification::Verified);
    assert!(!kept.superseded);
    let open = fx.cache().acquire("c").expect("open");
    let filter = serde_json::from_value(serde_json::json!({"metadata": {"tags": "quay"}}))
        .expect("a filter");
    let params = SearchParams {
        query: "mike".to_owned(),
        top_k: 5,
        mode: Default::default(),
        fusion: Default::default(),
        filter: Some(filter),
    };
    let found = retrieval::search(&open, &params, None).expect("search");
    assert_eq!(found.results.len(), 1);
    // An ingest with nothing new changes nothing.
    let again = fx.ingest_all("c");
    assert_eq!((again.added, again.updated, again.unchanged), (0, 0, 1));
    assert_eq!(again.generation, summary.generation);
}

#[test]
fn status_counts_are_the_commits_and_a_store_without_them_is_counted() {
    let fx = Fixture::new();
    let long = "november paragraph of the long file. ".repeat(120);
    fx.write("a.md", "oscar alone");
    fx.write("b.md", &long);
    fx.write("c.md", "papa alone");
    fx.ingest_all("c");
    let status = |fx: &Fixture| {
        let cache = fx.cache();
        let open = cache.acquire("c").expect("opens");
        let status = retrieval::index_status(&open, &cache, None).expect("status");
        (status.document_count, status.chunk_count)
    };
    let (documents, chunks) = status(&fx);
    assert_eq!(documents, 3);
    assert!(chunks >= 4, "the long file makes several chunks: {chunks}");
    std::fs::remove_file(fx.base.join("a.md")).expect("remove");
    fx.ingest_all("c");
    assert_eq!(
        status(&fx),
        (2, chunks - 1),
        "the next commit records new counts"
    );

    let store = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open");
    // The counts come from the commit, not from counting rows on every request.
    store
        .execute(
            "UPDATE meta SET value = 1000000 WHERE key = 'chunk_count'",
            [],
        )
        .expect("edit");
    assert_eq!(status(&fx), (2, 1_000_000));
    // A store committed before counts were recorded is counted.
    store
        .execute(
            "DELETE FROM meta WHERE key IN ('document_count', 'chunk_count')",
            [],
        )
        .expect("edit");
    assert_eq!(status(&fx), (2, chunks - 1));
    // The next ingest records them, even one that changes nothing.
    let summary = fx.ingest_all("c");
    assert_eq!((summary.added, summary.unchanged), (0, 2));
    let recorded: i64 = store
        .query_row(
            "SELECT value FROM meta WHERE key = 'chunk_count'",
            [],
            |row| row.get(0),
        )
        .expect("recorded again");
    assert_eq!(recorded, chunks as i64 - 1);
}

#[test]
fn an_ingest_where_every_source_failed_creates_no_collection() {
    let fx = Fixture::new();
    let notes = fx.write("notes.docx", "not a supported type");
    let options = fx.options("c", &[&notes, &fx.base.join("missing.md")]);
    let summary = retrieval::ingest(&options, &mut NoProgress).expect("a summary");
    assert_eq!(summary.failed.len(), 2);
    assert_eq!(summary.generation, 0);
    assert!(
        snapshot_tree(&fx.index).is_empty(),
        "no file in the index directory"
    );
    assert!(
        retrieval::list_collections(&fx.index)
            .expect("list")
            .is_empty()
    );
}

#[test]
fn a_zero_retention_ingest_that_changes_nothing_still_forgets_every_superseded_chunk() {
    let fx = Fixture::new();
    fx.write("a.md", "quebec text before the edit");
    assert_eq!(ingest_with_retention(&fx, Duration::from_secs(3600)), 1);
    let old = ids_of(&fx, "a.md").remove(0);
    fx.write("a.md", "romeo text after the edit");
    assert_eq!(ingest_with_retention(&fx, Duration::from_secs(3600)), 2);
    assert!(fetch(&fx, &old).expect("superseded, kept").superseded);

    // Nothing changed, so no generation is made; the sweep is committed on its own.
    fx.grk_ok(&["ingest", "--collection", "c", "--keep-superseded", "0", "."]);
    let err = fetch(&fx, &old).expect_err("swept");
    assert!(matches!(err, Error::ChunkNotFound { .. }), "{err:?}");
    let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open store");
    let (superseded, generation): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM superseded_chunks),
                    (SELECT value FROM meta WHERE key = 'generation')",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("counts");
    assert_eq!((superseded, generation), (0, 2));
}
