//! `list_collections` and the identity probe: unrelated files are never listed nor written.

use groundkit_core::Error;
use groundkit_core::retrieval::{self, NoProgress};
use groundkit_server::edge::problem::mapping;

use super::{Fixture, snapshot_tree};

#[test]
fn unrelated_sqlite_file_is_never_listed_nor_written() {
    let fx = Fixture::new();
    fx.write("a.md", "text");
    fx.ingest_all("real");
    let unrelated = fx.index.join("other.sqlite3");
    {
        let conn = rusqlite::Connection::open(&unrelated).expect("create");
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .expect("fill");
    }
    let before = snapshot_tree(&fx.index);

    assert_eq!(
        retrieval::list_collections(&fx.index).expect("list"),
        vec!["real".to_owned()]
    );
    let cache = fx.cache();
    let err = cache.acquire("other").expect_err("not a collection");
    assert!(matches!(err, Error::CollectionNotFound { .. }), "{err:?}");
    let options = fx.options("other", &[&fx.base]);
    let err = retrieval::ingest(&options, &mut NoProgress).expect_err("refused");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");

    let after = snapshot_tree(&fx.index);
    let pick = |tree: &[(std::path::PathBuf, Vec<u8>, Option<std::time::SystemTime>)]| {
        tree.iter()
            .filter(|(p, _, _)| {
                p.starts_with(&unrelated) || p.to_string_lossy().contains("other.sqlite3")
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pick(&before),
        pick(&after),
        "the unrelated database or its companions changed"
    );
    assert_eq!(pick(&after).len(), 1, "no -wal/-shm companion was created");
}

#[test]
fn symlinked_collection_outside_index_dir_is_not_listed() {
    let fx = Fixture::new();
    fx.write("a.md", "text");
    // A real groundkit collection, but in another directory, linked into the index directory.
    let elsewhere = fx.outside().join("idx");
    let options = retrieval::IngestOptions::new(
        &elsewhere,
        &fx.base,
        "remote",
        vec![fx.base.display().to_string()],
    );
    retrieval::ingest(&options, &mut NoProgress).expect("ingest elsewhere");
    fx.ingest_all("local");
    std::os::unix::fs::symlink(
        elsewhere.join("remote.sqlite3"),
        fx.index.join("evil.sqlite3"),
    )
    .expect("symlink");
    assert_eq!(
        retrieval::list_collections(&fx.index).expect("list"),
        vec!["local".to_owned()]
    );
}

#[test]
fn missing_collection_is_not_found_and_creates_no_file() {
    let fx = Fixture::new();
    std::fs::create_dir_all(&fx.index).expect("index dir");
    let cache = fx.cache();
    let err = cache.acquire("nothing").expect_err("missing");
    assert!(matches!(err, Error::CollectionNotFound { .. }), "{err:?}");
    assert_eq!(mapping(&err.into()).status.as_u16(), 404);
    assert!(snapshot_tree(&fx.index).is_empty());
    assert!(
        retrieval::list_collections(&fx.index)
            .expect("list")
            .is_empty()
    );
}

#[test]
fn traversal_shaped_names_are_validation_errors_without_any_probe() {
    // The index directory does not exist: a probe would have to fail differently.
    let fx = Fixture::new();
    let cache = fx.cache();
    for name in [
        "../etc/passwd",
        "..",
        "a/../../b",
        "/abs",
        "name\0",
        "x".repeat(65).as_str(),
    ] {
        let err = cache.acquire(name).expect_err(name);
        assert!(
            matches!(err, Error::Validation { ref field, .. } if field == "collection"),
            "{err:?}"
        );
        assert!(retrieval::validate_name(name).is_err());
    }
    assert!(!fx.index.exists());
}
