//! `list_collections` and the identity probe: unrelated files are never listed nor written.

use groundkit_core::Error;
use groundkit_retrieval::{self as retrieval, NoProgress};

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

#[test]
fn a_store_swapped_after_the_identity_probe_is_not_found_never_read() {
    let fx = Fixture::new();
    fx.write("a.md", "text of the real collection");
    fx.ingest_all("c");
    let store = fx.index.join("c.sqlite3");
    let real = fx.index.join("real.keep");
    std::fs::hard_link(&store, &real).expect("keep the real store");
    let unrelated = fx.index.join("unrelated.keep");
    {
        let conn = rusqlite::Connection::open(&unrelated).expect("create");
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .expect("fill");
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, store, real, unrelated) =
            (stop.clone(), store.clone(), real.clone(), unrelated.clone());
        let staged = fx.index.join("staged.keep");
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for file in [&unrelated, &real] {
                    std::fs::hard_link(file, &staged).expect("stage");
                    std::fs::rename(&staged, &store).expect("swap");
                }
            }
        })
    };
    let (mut opened, mut not_found) = (0, 0);
    let mut other = Vec::new();
    for _ in 0..2000 {
        match fx.cache().acquire("c") {
            Ok(open) => {
                opened += 1;
                assert_eq!(open.generation(), 1);
            }
            Err(Error::CollectionNotFound { .. }) => not_found += 1,
            Err(err) => other.push(format!("{err:?}")),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().expect("swapper");
    eprintln!(
        "opened {opened}, not found {not_found}, other {}",
        other.len()
    );
    assert!(
        other.is_empty(),
        "{} opens read the swapped-in file: {:?}",
        other.len(),
        other.first()
    );
    assert!(opened > 0 && not_found > 0, "the swap raced the opens");
}

/// Copies `from` (a file or a directory tree) to `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read dir").flatten() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).expect("copy");
    }
}

/// Sets the mode of `path` and, for a directory, of everything under it: `dir` for directories,
/// `file` for files.
fn chmod_tree(path: &std::path::Path, dir: u32, file: u32) {
    use std::os::unix::fs::PermissionsExt;
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("read dir").flatten() {
            chmod_tree(&entry.path(), dir, file);
        }
    }
    let mode = if path.is_dir() { dir } else { file };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A collection copied without its `-wal` and `-shm` (as copying `NAME.sqlite3` and
/// `NAME.tantivy` does) into a directory made read-only (directories 0555, files 0444) is listed
/// and served, and nothing is created in the directory. Where the tests run as root the modes do
/// not stop a write, so what is asserted is that no file was created or changed, which holds
/// whatever the modes enforce. An ingest into the copy, made writable again, creates the
/// companions, and readers move to the generation it commits. A `-wal` with frames but no
/// `-shm` is refused with a storage error naming the missing file.
#[test]
fn a_copy_without_its_wal_files_is_served_read_only_and_nothing_is_created() {
    let fx = Fixture::new();
    fx.write("a.md", "sierra text of the copied collection");
    fx.ingest_all("c");
    let copy = fx.outside().join("copy");
    std::fs::create_dir(&copy).expect("copy dir");
    copy_tree(&fx.index.join("c.sqlite3"), &copy.join("c.sqlite3"));
    copy_tree(&fx.index.join("c.tantivy"), &copy.join("c.tantivy"));
    chmod_tree(&copy, 0o555, 0o444);
    let before = snapshot_tree(&copy);

    assert_eq!(retrieval::list_collections(&copy).expect("list"), vec!["c"]);
    let cache = retrieval::CollectionCache::new(&copy, &fx.base, 8);
    let open = cache.acquire("c").expect("the copy opens");
    let hits = retrieval::search(
        &open,
        &retrieval::SearchParams {
            query: "sierra".to_owned(),
            top_k: 1,
            mode: Default::default(),
            fusion: Default::default(),
            filter: None,
        },
        None,
    )
    .expect("search");
    let fetched = retrieval::fetch_chunk(&open, &hits.results[0].chunk_id).expect("fetch");
    assert_eq!(fetched.verification, retrieval::Verification::Verified);
    let status = retrieval::index_status(&open, &cache, None).expect("status");
    assert_eq!((status.generation, status.document_count), (1, 1));
    drop(open);
    let after = snapshot_tree(&copy);
    let names = |tree: &[(std::path::PathBuf, Vec<u8>, _)]| -> Vec<std::path::PathBuf> {
        tree.iter().map(|(path, _, _)| path.clone()).collect()
    };
    assert_eq!(names(&after), names(&before), "a read created a file");
    assert!(after == before, "a read changed a file");

    chmod_tree(&copy, 0o755, 0o644);
    fx.write("b.md", "tango text ingested into the copy");
    let mut options = fx.options("c", &[&fx.base]);
    options.index_dir = copy.clone();
    retrieval::ingest(&options, &mut NoProgress).expect("ingest into the copy");
    assert!(copy.join("c.sqlite3-wal").exists() && copy.join("c.sqlite3-shm").exists());
    let open = cache.acquire("c").expect("reopens");
    assert_eq!(
        open.generation(),
        2,
        "readers moved to the ingest's generation"
    );
    drop(open);

    let other = fx.outside().join("partial");
    std::fs::create_dir(&other).expect("dir");
    copy_tree(&copy.join("c.sqlite3"), &other.join("c.sqlite3"));
    copy_tree(&copy.join("c.tantivy"), &other.join("c.tantivy"));
    std::fs::write(other.join("c.sqlite3-wal"), [1u8; 64]).expect("a wal with bytes");
    let err = retrieval::CollectionCache::new(&other, &fx.base, 8)
        .acquire("c")
        .expect_err("refused");
    assert_eq!(err.kind(), "storage_error", "{err:?}");
    assert!(
        err.to_string().contains("c.sqlite3-shm is missing"),
        "{err}"
    );
    assert!(!other.join("c.sqlite3-shm").exists());
}
