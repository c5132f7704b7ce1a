//! The collection cache: generation checks, counters, status, concurrent readers.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use groundkit_retrieval::{self as retrieval, SearchMode, SearchParams};

use super::Fixture;

#[test]
fn acquire_reuses_until_the_generation_moves_and_counts_rebuilds() {
    let fx = Fixture::new();
    fx.write("a.md", "alpha");
    fx.ingest_all("c");
    let cache = fx.cache();
    let first = cache.acquire("c").expect("open");
    let second = cache.acquire("c").expect("open");
    assert!(Arc::ptr_eq(&first, &second));
    let stats = cache.stats("c");
    assert_eq!((stats.acquires, stats.rebuilds), (2, 1));

    fx.write("b.md", "bravo");
    fx.ingest_all("c");
    let third = cache.acquire("c").expect("reopen");
    assert!(!Arc::ptr_eq(&first, &third));
    assert_eq!(third.generation(), 2);
    // The old object keeps answering from its own generation.
    assert_eq!(first.generation(), 1);
    let old = retrieval::search(
        &first,
        &SearchParams {
            query: "bravo".into(),
            top_k: 5,
            mode: SearchMode::Lexical,
            fusion: Default::default(),
            filter: None,
        },
        None,
    )
    .expect("search");
    assert!(old.results.is_empty());

    let status = retrieval::index_status(&third, &cache, None).expect("status");
    assert_eq!(
        (status.retriever_acquires, status.retriever_rebuilds),
        (3, 2)
    );
    assert_eq!(
        (status.document_count, status.chunk_count, status.generation),
        (2, 2, 2)
    );
    assert!(status.rebuild_seconds_total > 0.0);
    // Reading the status does not move the counters.
    retrieval::index_status(&third, &cache, None).expect("status");
    assert_eq!(cache.stats("c").acquires, 3);
    let json = serde_json::to_string(&status).expect("json");
    assert!(!json.contains(fx.base.to_str().expect("utf8")) && !json.contains("a.md"));
}

#[test]
fn readers_keep_answering_during_an_ingest() {
    let fx = Fixture::new();
    for i in 0..200 {
        fx.write(
            &format!("d{i}.md"),
            format!("common word document number {i} about lighthouses"),
        );
    }
    fx.ingest_all("c");
    let cache = fx.cache();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let cache = cache.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut answered = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let open = cache.acquire("c").expect("acquire during ingest");
                let hits = retrieval::search(
                    &open,
                    &SearchParams {
                        query: "lighthouses".into(),
                        top_k: 10,
                        mode: SearchMode::Lexical,
                        fusion: Default::default(),
                        filter: None,
                    },
                    None,
                )
                .expect("search during ingest");
                assert_eq!(hits.results.len(), 10);
                answered += 1;
            }
            answered
        })
    };
    for round in 0..3 {
        for i in 0..200 {
            fx.write(
                &format!("d{i}.md"),
                format!("common word document number {i} round {round} about lighthouses"),
            );
        }
        fx.ingest_all("c");
    }
    stop.store(true, Ordering::Relaxed);
    let answered = reader.join().expect("reader thread");
    assert!(answered > 0);
    assert_eq!(cache.acquire("c").expect("open").generation(), 4);
}

#[test]
fn cache_is_bounded_and_evicts_the_least_recently_used_collection() {
    let fx = Fixture::new();
    fx.write("a.md", "alpha");
    fx.ingest_all("one");
    fx.ingest_all("two");
    let cache = retrieval::CollectionCache::new(&fx.index, &fx.base, 1);
    let first = cache.acquire("one").expect("open one");
    cache.acquire("two").expect("open two");
    assert_eq!(
        cache.stats("one").acquires,
        0,
        "evicted: its counters are gone"
    );
    assert_eq!(cache.stats("two").acquires, 1);
    // An evicted collection's object keeps working for whoever still holds it.
    assert_eq!(first.generation(), 1);
    let again = cache.acquire("one").expect("reopen one");
    assert!(!Arc::ptr_eq(&first, &again));
    assert_eq!(cache.stats("one").rebuilds, 1);
}

#[test]
fn collection_recreated_under_the_same_name_is_reopened() {
    let fx = Fixture::new();
    fx.write("a.md", "alpha");
    fx.ingest_all("c");
    let cache = fx.cache();
    let first = cache.acquire("c").expect("open");
    for companion in ["c.sqlite3", "c.sqlite3-wal", "c.sqlite3-shm"] {
        let _ = std::fs::remove_file(fx.index.join(companion));
    }
    std::fs::remove_dir_all(fx.index.join("c.tantivy")).expect("remove index");
    std::fs::remove_file(fx.base.join("a.md")).expect("remove a");
    fx.write("b.md", "bravo");
    fx.ingest_all("c");
    let second = cache.acquire("c").expect("reopen");
    assert!(
        !Arc::ptr_eq(&first, &second),
        "the old file's object was reused"
    );
    assert_eq!(second.generation(), 1);
    let hits = retrieval::search(
        &second,
        &SearchParams {
            query: "bravo".into(),
            top_k: 5,
            mode: SearchMode::Lexical,
            fusion: Default::default(),
            filter: None,
        },
        None,
    )
    .expect("search");
    assert_eq!(hits.results.len(), 1);
}
