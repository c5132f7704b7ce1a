//! Sources the server does not control: special files planted where a source was, sources far
//! larger than what was indexed, and paths swapped between a check and a read. Every verdict is
//! decided on the opened handle, quickly, reading no more than it needs, and never from outside
//! the base directory.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use groundkit_retrieval::{
    self as retrieval, FetchChunkResponse, IngestOptions, NoProgress, Verification,
};
use groundkit_tests::send_raw;

use super::Fixture;

const GRK: &str = env!("CARGO_BIN_EXE_grk-it");

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo failed");
}

/// Fetches `chunk_id` from collection `c` on another thread, failing the test if the fetch does
/// not finish within `limit` (a fetch blocked on a FIFO would never finish), and joins the thread.
fn fetch_within(fx: &Fixture, chunk_id: &str, limit: Duration) -> FetchChunkResponse {
    let (tx, rx) = std::sync::mpsc::channel();
    let cache = fx.cache();
    let open = cache.acquire("c").expect("opens");
    let id = chunk_id.to_owned();
    let thread = std::thread::spawn(move || {
        let _ = tx.send(retrieval::fetch_chunk(&open, &id));
    });
    let got = rx
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("fetch did not finish within {limit:?}"));
    thread.join().expect("the fetching thread ends");
    got.expect("fetch answers")
}

/// A one-file collection `c` whose only chunk cites `a.md`; returns the chunk id.
fn one_file(fx: &Fixture, text: &str) -> String {
    fx.write("a.md", text);
    fx.ingest_all("c");
    fx.chunk_ids("c").remove(0)
}

/// Puts something other than a regular file at a path.
type Plant = fn(&Fixture, &Path);

#[test]
fn special_files_in_place_of_a_source_are_unresolvable_at_once() {
    let text = "mike november text that was indexed";
    let cases: [(&str, Plant); 5] = [
        ("fifo", |_, p| mkfifo(p)),
        ("directory", |_, p| std::fs::create_dir(p).expect("dir")),
        ("socket", |_, p| {
            std::os::unix::net::UnixListener::bind(p).expect("socket");
        }),
        ("symlink to a character device", |_, p| {
            std::os::unix::fs::symlink("/dev/zero", p).expect("symlink")
        }),
        ("symlink to a FIFO inside the base", |fx, p| {
            let fifo = fx.base.join("pipe");
            mkfifo(&fifo);
            std::os::unix::fs::symlink(&fifo, p).expect("symlink");
        }),
    ];
    for (name, plant) in cases {
        let fx = Fixture::new();
        let id = one_file(&fx, text);
        let source = fx.base.join("a.md");
        std::fs::remove_file(&source).expect("remove source");
        plant(&fx, &source);
        for _ in 0..5 {
            let got = fetch_within(&fx, &id, Duration::from_secs(10));
            assert_eq!(got.verification, Verification::Unresolvable, "{name}");
            assert_eq!(
                got.detail.as_deref(),
                Some("the source is no longer a regular file"),
                "{name}"
            );
            assert_eq!(got.content, None, "{name}");
        }
    }
}

#[test]
fn fifo_sources_never_take_the_servers_call_permits() {
    let fx = crate::service::corpus();
    let hit = fx.search("papers", "green tea", 1).results.remove(0);
    assert_eq!(hit.citation.source, "tea.txt");
    std::fs::remove_file(fx.base.join("tea.txt")).expect("remove");
    mkfifo(&fx.base.join("tea.txt"));
    let server = crate::service::server(&fx);
    let addr = server.addr;
    let path = format!("/collections/papers/chunks/{}", hit.chunk_id);
    // Two rounds of as many fetches at once as the server has call permits (32): a fetch that
    // blocked on the FIFO would keep its permit, and the second round would be refused.
    for round in 0..2 {
        let fetches: Vec<_> = (0..32)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    send_raw(
                        addr,
                        &format!(
                            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
                        ),
                    )
                })
            })
            .collect();
        for fetch in fetches {
            let response = fetch.join().expect("client thread");
            assert_eq!(response.status, 200, "round {round}: {}", response.body);
            assert_eq!(response.json()["verification"], "unresolvable");
        }
    }
    let search = server.post_json("/search", r#"{"collection":"papers","query":"bicycle"}"#);
    assert_eq!(search.status, 200, "{}", search.body);
}

/// Runs `grk ARGS` in a `grk-it` process and returns its stdout, its exit code and its peak
/// resident memory in bytes, as the kernel counted it for that process (`VmHWM`).
fn run_measured(fx: &Fixture, args: &[&str]) -> (String, Option<i32>, u64) {
    let out = Command::new(GRK)
        .arg("peak-memory")
        .arg("--index-dir")
        .arg(&fx.index)
        .arg("--base-dir")
        .arg(&fx.base)
        .args(args)
        .output()
        .expect("run grk");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak_kib: u64 = stderr
        .lines()
        .find_map(|line| line.strip_prefix("peak-rss-kib "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak memory reported: {stderr}"));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
        peak_kib * 1024,
    )
}

/// Extends `path` to `len` bytes without writing them: a sparse file, zeros past the old end.
fn extend_sparse(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open")
        .set_len(len)
        .expect("set_len");
}

const TWO_GIB: u64 = 2 << 30;
/// Peak memory a fetch may use: the process's own footprint plus the bounded reads, far below
/// the 2 GiB a whole-file read would take.
const FETCH_PEAK_BOUND: u64 = 160 << 20;

#[test]
fn a_huge_source_is_fetched_with_bounded_memory() {
    let fx = Fixture::new();
    fx.write("a.md", "oscar papa text at the start of a file that grows");
    fx.write(
        "page.html",
        "<html><body><p>quebec romeo page text</p></body></html>",
    );
    fx.ingest_all("c");
    let text_hit = fx.search("c", "oscar", 1).results.remove(0);
    let html_hit = fx.search("c", "quebec", 1).results.remove(0);
    extend_sparse(&fx.base.join("a.md"), TWO_GIB);
    extend_sparse(&fx.base.join("page.html"), TWO_GIB);

    let (out, code, peak) = run_measured(&fx, &["fetch", "-c", "c", &text_hit.chunk_id, "--json"]);
    assert_eq!(code, Some(0));
    let got: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        got["verification"], "verified",
        "the cited span is unchanged"
    );
    assert!(
        peak < FETCH_PEAK_BOUND,
        "text fetch peaked at {} MiB",
        peak >> 20
    );

    let (out, code, peak) = run_measured(&fx, &["fetch", "-c", "c", &html_hit.chunk_id, "--json"]);
    assert_eq!(code, Some(0));
    let got: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(got["verification"], "unresolvable");
    assert_eq!(
        got["detail"],
        "the source is larger than the 64 MiB that groundkit reads to re-extract it"
    );
    assert!(
        peak < FETCH_PEAK_BOUND,
        "HTML fetch peaked at {} MiB",
        peak >> 20
    );
}

#[test]
fn a_huge_beir_corpus_is_fetched_with_bounded_memory() {
    let fx = Fixture::new();
    let corpus = fx.write(
        "beir/corpus.jsonl",
        concat!(
            r#"{"_id":"d1","title":"Sierra","text":"sierra tango record one"}"#,
            "\n",
            r#"{"_id":"d2","title":"Uniform","text":"uniform victor record two"}"#,
            "\n"
        ),
    );
    let mut options = IngestOptions::new(
        &fx.index,
        &fx.base,
        "c",
        vec![fx.base.join("beir").display().to_string()],
    );
    options.format = retrieval::InputFormat::Beir;
    retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    let hit = fx.search("c", "uniform victor", 1).results.remove(0);
    assert_eq!(hit.document_id, "d2");
    // The corpus grows by 2 GiB of zeros after its last line: one unterminated line.
    extend_sparse(&corpus, TWO_GIB);
    let (out, code, peak) = run_measured(&fx, &["fetch", "-c", "c", &hit.chunk_id, "--json"]);
    assert_eq!(code, Some(0));
    let got: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(got["verification"], "verified");
    assert!(
        peak < FETCH_PEAK_BOUND,
        "BEIR fetch peaked at {} MiB",
        peak >> 20
    );
}

/// Flips `link` between a real directory (`real`, renamed into place) and a symlink to
/// `outside`, until `stop` is set; leaves the real directory in place.
fn flip_directory(link: &Path, real: &Path, outside: &Path, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        std::fs::rename(link, real).expect("move the directory away");
        std::os::unix::fs::symlink(outside, link).expect("plant the symlink");
        std::thread::yield_now();
        std::fs::remove_file(link).expect("remove the symlink");
        std::fs::rename(real, link).expect("put the directory back");
        std::thread::yield_now();
    }
}

#[test]
fn swapping_a_directory_for_a_symlink_during_ingest_never_ingests_outside_files() {
    const ROUNDS: usize = 30;
    let fx = Arc::new(Fixture::new());
    let outside = fx.outside();
    for i in 0..40 {
        std::fs::write(
            outside.join(format!("{i:02}.md")),
            format!("whiskey xray secret outside file {i}"),
        )
        .expect("outside file");
    }
    fx.write("keep.md", "a file outside the swapped directory");
    let mut escapes = 0;
    for round in 0..ROUNDS {
        for i in 0..40 {
            fx.write(
                &format!("docs/{i:02}.md"),
                format!("yankee inside file {i} round {round}"),
            );
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let (fx, stop, outside) = (fx.clone(), stop.clone(), outside.clone());
            std::thread::spawn(move || {
                flip_directory(
                    &fx.base.join("docs"),
                    &fx.base.join("docs.real"),
                    &outside,
                    &stop,
                )
            })
        };
        let options = fx.options("c", &[&fx.base]);
        let _ = retrieval::ingest(&options, &mut NoProgress).expect("ingest");
        stop.store(true, Ordering::Relaxed);
        flipper.join().expect("flipper");
        if !fx.search("c", "whiskey xray secret", 5).results.is_empty() {
            escapes += 1;
        }
    }
    assert_eq!(
        escapes, 0,
        "outside files were ingested in {escapes} of {ROUNDS} rounds"
    );
}

#[test]
fn swapping_a_source_for_a_symlink_outside_never_verifies_from_the_outside_file() {
    const FETCHES: usize = 1000;
    let indexed = "zulu alpha indexed text";
    let fx = Arc::new(Fixture::new());
    let id = one_file(&fx, indexed);
    // Outside: the indexed bytes exactly. Inside: different bytes of the same length. A fetch
    // that reads the outside file would say `verified`.
    let outside = fx.outside().join("a.md");
    std::fs::write(&outside, indexed).expect("outside copy");
    let inside = fx.base.join("a.real");
    std::fs::write(&inside, "ZULU ALPHA CHANGED TEXT").expect("inside variant");
    let source = fx.base.join("a.md");
    std::fs::remove_file(&source).expect("remove source");
    std::fs::hard_link(&inside, &source).expect("link inside");

    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, source, inside, outside) = (
            stop.clone(),
            source.clone(),
            inside.clone(),
            outside.clone(),
        );
        std::thread::spawn(move || {
            let staged = source.with_extension("next");
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::remove_file(&staged);
                std::os::unix::fs::symlink(&outside, &staged).expect("symlink");
                std::fs::rename(&staged, &source).expect("swap in the symlink");
                std::fs::hard_link(&inside, &staged).expect("hard link");
                std::fs::rename(&staged, &source).expect("swap in the file");
            }
        })
    };
    let cache = fx.cache();
    let open = cache.acquire("c").expect("opens");
    let mut verdicts = std::collections::BTreeMap::new();
    for _ in 0..FETCHES {
        let got = retrieval::fetch_chunk(&open, &id).expect("fetch");
        *verdicts
            .entry(format!("{:?}", got.verification))
            .or_insert(0) += 1;
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().expect("flipper");
    eprintln!("verdicts during the swap race: {verdicts:?}");
    assert_eq!(verdicts.get("Verified"), None, "{verdicts:?}");
    assert_eq!(
        verdicts.values().sum::<usize>(),
        FETCHES,
        "every fetch answered: {verdicts:?}"
    );
}

#[test]
fn special_files_in_the_corpus_never_block_an_ingest() {
    let fx = Fixture::new();
    fx.write("a.md", "romeo text in a regular file");
    mkfifo(&fx.base.join("pipe.md"));
    std::os::unix::fs::symlink(fx.base.join("pipe.md"), fx.base.join("link.md")).expect("link");
    std::os::unix::fs::symlink("/dev/zero", fx.base.join("zero.md")).expect("link");
    let options = fx.options("c", &[&fx.base]);
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let _ = tx.send(retrieval::ingest(&options, &mut NoProgress));
    });
    let summary = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the ingest finished")
        .expect("ingest");
    thread.join().expect("ingest thread");
    assert_eq!(summary.added, 1, "{summary:?}");
    let failed = super::failures(&summary);
    assert_eq!(
        failed,
        vec![
            ("link.md", "is not a regular file"),
            (
                "zero.md",
                "resolves outside the base directory or is unreadable"
            ),
        ],
        "the FIFO itself is not a file the walk offers; what links to one fails"
    );
}

/// A writer opening a FIFO waits until something opens it for reading: the probe that tells
/// whether a special file was opened before it was refused. Linux only names the file first.
#[cfg(target_os = "linux")]
#[test]
fn a_linked_special_file_is_refused_without_being_opened_at_fetch_or_ingest() {
    let fx = Fixture::new();
    let id = one_file(&fx, "oscar papa text that was indexed");
    let fifo = fx.base.join("pipe.md");
    mkfifo(&fifo);
    std::fs::remove_file(fx.base.join("a.md")).expect("remove source");
    std::os::unix::fs::symlink(&fifo, fx.base.join("a.md")).expect("symlink");
    let (opened_tx, opened) = std::sync::mpsc::channel();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let file = std::fs::OpenOptions::new().write(true).open(&fifo);
            let _ = opened_tx.send(());
            file
        })
    };

    let got = fetch_within(&fx, &id, Duration::from_secs(10));
    assert_eq!(got.verification, Verification::Unresolvable);
    let options = fx.options("c", &[&fx.base.join("a.md")]);
    let summary = retrieval::ingest(&options, &mut NoProgress).expect("ingest");
    assert_eq!(summary.failed.len(), 1, "{summary:?}");
    assert_eq!(summary.failed[0].reason, "is not a regular file");
    assert!(
        opened.recv_timeout(Duration::from_millis(500)).is_err(),
        "nothing opened the FIFO for reading"
    );

    // Let the writer go: open the FIFO for reading here.
    let _reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .expect("open the FIFO");
    opened
        .recv_timeout(Duration::from_secs(10))
        .expect("the writer got through");
    writer.join().expect("writer").expect("opened for writing");
}
