//! `grk ingest --watch` and `grk serve --watch`: a real watcher process on a real tree, changed
//! the ways editors, `git` and builds change one; the collection read back from its store and
//! through the server.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use groundkit_retrieval::{IndexStatus, IngestSummary, WatchMode};

use super::Fixture;

/// How long a change may take to be published before a test fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running `grk ingest --watch --json --stop-on-eof` of the whole base directory.
struct Watcher {
    child: Child,
    stdin: Option<ChildStdin>,
    summaries: Receiver<IngestSummary>,
    stderr: Receiver<String>,
}

impl Watcher {
    fn start(fx: &Fixture, collection: &str, extra: &[&str]) -> Self {
        let mut command = fx.grk();
        command
            .args(["ingest", "--collection", collection])
            .args(["--watch", "--json", "--stop-on-eof"])
            .args(extra)
            .arg(&fx.base);
        Self::spawn(command)
    }

    fn spawn(mut command: std::process::Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the watcher");
        let (send, summaries) = channel();
        let stdout = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.expect("the watcher's output");
                let summary = serde_json::from_str(&line).expect("a JSON summary per line");
                if send.send(summary).is_err() {
                    break;
                }
            }
        });
        let (send, stderr) = channel();
        let err = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            summaries,
            stderr,
        }
    }

    /// The next summary it prints.
    fn next(&self) -> IngestSummary {
        self.summaries
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|err| panic!("no ingest within {PATIENCE:?} ({err}): {}", self.log()))
    }

    /// The summaries it prints within `window`.
    fn during(&self, window: Duration) -> Vec<IngestSummary> {
        let end = Instant::now() + window;
        let mut seen = Vec::new();
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.summaries.recv_timeout(left) {
                Ok(summary) => seen.push(summary),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the watcher stopped: {}", self.log())
                }
            }
        }
        seen
    }

    /// The summaries up to the first after which the collection holds exactly `documents`.
    fn until_documents(
        &self,
        fx: &Fixture,
        collection: &str,
        documents: &[impl AsRef<str>],
    ) -> Vec<IngestSummary> {
        let documents: Vec<&str> = documents.iter().map(AsRef::as_ref).collect();
        let mut seen = Vec::new();
        loop {
            seen.push(self.next());
            if document_ids(fx, collection) == documents {
                return seen;
            }
        }
    }

    /// What it has written on stderr so far.
    fn log(&self) -> String {
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
    }

    /// Closes its input, which stops it; its exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        self.stdin = None;
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the watcher did not stop when its input closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The document ids the collection's store holds, sorted.
fn document_ids(fx: &Fixture, collection: &str) -> Vec<String> {
    let Ok(conn) = rusqlite::Connection::open_with_flags(
        fx.index.join(format!("{collection}.sqlite3")),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    ) else {
        return Vec::new();
    };
    let mut stmt = conn
        .prepare("SELECT document_id FROM documents ORDER BY document_id")
        .expect("query");
    stmt.query_map([], |row| row.get(0))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect()
}

fn status_of(fx: &Fixture, collection: &str) -> IndexStatus {
    fx.grk_json(&["status", "--collection", collection, "--json"])
}

/// The text of the first hit for `query`, if any.
fn top_text(fx: &Fixture, collection: &str, query: &str) -> Option<String> {
    let response = fx.search(collection, query, 1);
    let hit = response.results.first()?;
    Some(format!("{}: {}", hit.document_id, hit.content.as_deref()?))
}

/// Replaces `rel` the way editors save: the new text written to a file beside it, renamed over.
fn save_atomically(fx: &Fixture, rel: &str, text: &str) {
    let aside = fx.base.join(format!("{rel}.tmp~"));
    std::fs::write(&aside, text).expect("write aside");
    std::fs::rename(&aside, fx.base.join(rel)).expect("rename over");
}

#[test]
fn a_watcher_reads_only_what_changed_and_follows_every_kind_of_change() {
    let fx = Fixture::new();
    for i in 0..30 {
        fx.write(
            &format!("notes/n{i:02}.md"),
            format!("Ordinary note number {i}."),
        );
    }
    fx.write("keep.md", "A file that never changes.");
    // A folder a build writes into, ignored.
    fx.write(".gitignore", "build/\n");
    fx.write("build/out.md", "Build output, ignored.");
    let watcher = Watcher::start(&fx, "w", &[]);
    let first = watcher.next();
    assert_eq!((first.added, first.generation), (31, 1), "{first:?}");
    let mut expected: Vec<String> = document_ids(&fx, "w");

    // An edit in place: one document read, none of the 30 others.
    fx.write("notes/n05.md", "The kettle whistles at a boiling point.");
    let summaries = watcher.until_documents(&fx, "w", &expected);
    let last = summaries.last().expect("a summary");
    assert_eq!(
        (last.updated, last.unchanged, last.added),
        (1, 0, 0),
        "{summaries:?}"
    );
    assert_eq!(
        top_text(&fx, "w", "kettle whistles").as_deref(),
        Some("notes/n05.md: The kettle whistles at a boiling point.")
    );
    let status = status_of(&fx, "w");
    let change = status.last_change.expect("the last change");
    assert_eq!((change.added, change.updated, change.removed), (0, 1, 0));
    let following = status.watcher.expect("a watcher follows the collection");
    assert_eq!(following.mode, WatchMode::Notify);
    assert_eq!(following.pending_changes, 0);
    assert!(following.generations >= 2, "{following:?}");

    // An editor's atomic save: written aside, renamed over.
    save_atomically(&fx, "notes/n06.md", "Oolong leaves unfurl slowly.");
    let summaries = watcher.until_documents(&fx, "w", &expected);
    assert!(summaries.iter().any(|s| s.updated == 1), "{summaries:?}");
    assert!(top_text(&fx, "w", "oolong unfurl").is_some_and(|t| t.starts_with("notes/n06.md")));

    // A new file, a rename, a deletion.
    fx.write("notes/new.md", "Freshly written about saffron.");
    std::fs::rename(
        fx.base.join("notes/n07.md"),
        fx.base.join("notes/renamed.md"),
    )
    .expect("rename");
    std::fs::remove_file(fx.base.join("notes/n08.md")).expect("delete");
    expected.retain(|id| id != "notes/n07.md" && id != "notes/n08.md");
    expected.extend(["notes/new.md".to_owned(), "notes/renamed.md".to_owned()]);
    expected.sort();
    watcher.until_documents(&fx, "w", &expected);
    assert!(top_text(&fx, "w", "saffron").is_some());

    // A directory moved in from outside the tree, and one moved out of it.
    let outside = fx.outside();
    std::fs::create_dir_all(outside.join("incoming/deep")).expect("dirs");
    std::fs::write(
        outside.join("incoming/deep/a.md"),
        "Moved in with cardamom.",
    )
    .expect("write");
    std::fs::write(outside.join("incoming/b.md"), "Moved in as well.").expect("write");
    std::fs::rename(outside.join("incoming"), fx.base.join("incoming")).expect("move in");
    std::fs::rename(fx.base.join("notes"), outside.join("notes")).expect("move out");
    expected.retain(|id| !id.starts_with("notes/"));
    expected.extend(["incoming/b.md".to_owned(), "incoming/deep/a.md".to_owned()]);
    expected.sort();
    watcher.until_documents(&fx, "w", &expected);
    assert!(top_text(&fx, "w", "cardamom").is_some_and(|t| t.starts_with("incoming/deep/a.md")));

    // A .gitignore edit: the ignored folder leaves, the folder no longer ignored comes in.
    fx.write(".gitignore", "incoming/\n");
    expected.retain(|id| !id.starts_with("incoming/"));
    expected.push("build/out.md".to_owned());
    expected.sort();
    watcher.until_documents(&fx, "w", &expected);

    // Symbolic links: one to a file inside the base is read under its own name and follows its
    // target; one leading outside the base is refused and nothing of it is read.
    #[cfg(unix)]
    {
        std::fs::write(outside.join("secret.md"), "Outside the base: never read.").expect("write");
        std::os::unix::fs::symlink(outside.join("secret.md"), fx.base.join("leak.md"))
            .expect("link");
        std::os::unix::fs::symlink(fx.base.join("keep.md"), fx.base.join("alias.md"))
            .expect("link");
        expected.push("alias.md".to_owned());
        expected.sort();
        let summaries = watcher.until_documents(&fx, "w", &expected);
        assert!(
            summaries
                .iter()
                .flat_map(|s| &s.failed)
                .any(|f| f.source == "leak.md"),
            "{summaries:?}"
        );
        std::fs::write(fx.base.join("keep.md"), "Now about bergamot.").expect("write");
        let summaries = watcher.until_documents(&fx, "w", &expected);
        let _ = summaries;
        let deadline = Instant::now() + PATIENCE;
        while fx.search("w", "bergamot", 5).results.len() < 2 {
            assert!(
                Instant::now() < deadline,
                "the link did not follow its target"
            );
            watcher.next();
        }
        assert!(fx.search("w", "outside base never", 5).results.is_empty());
    }

    // A file written many times in a row, and one created and removed within a burst: what
    // stays is the last text, and nothing of the vanished file.
    for i in 0..20 {
        fx.write("draft.md", format!("Draft revision {i} of the essay."));
        std::thread::sleep(Duration::from_millis(15));
    }
    fx.write("ephemeral.md", "Here for an instant.");
    std::fs::remove_file(fx.base.join("ephemeral.md")).expect("delete");
    expected.push("draft.md".to_owned());
    expected.sort();
    watcher.until_documents(&fx, "w", &expected);
    watcher.during(Duration::from_millis(500));
    assert_eq!(
        top_text(&fx, "w", "draft revision essay").as_deref(),
        Some("draft.md: Draft revision 19 of the essay.")
    );
    assert_eq!(document_ids(&fx, "w"), expected);

    // Writes into an ignored folder and the watcher's own writes to the index publish nothing.
    let generation = status_of(&fx, "w").generation;
    for i in 0..10 {
        fx.write(&format!("incoming/gen{i}.md"), "Generated, ignored.");
    }
    let quiet = watcher.during(Duration::from_secs(2));
    assert!(
        quiet.iter().all(|s| s.generation == generation),
        "{quiet:?}"
    );
    assert_eq!(status_of(&fx, "w").generation, generation);
    assert!(watcher.stop().success());
    assert!(
        status_of(&fx, "w").watcher.is_none(),
        "a stopped watcher is not reported"
    );
}

#[test]
fn a_watched_directory_that_comes_goes_and_is_replaced_is_followed_each_time() {
    let fx = Fixture::new();
    fx.write("beside.md", "Not an input.");
    let tree = fx.base.join("tree");
    let mut command = fx.grk();
    command
        .args([
            "ingest",
            "--collection",
            "t",
            "--watch",
            "--json",
            "--stop-on-eof",
        ])
        .arg(&tree);
    let watcher = Watcher::spawn(command);
    // Not there yet: followed where it would be.
    let first = watcher.next();
    assert_eq!(first.failed.len(), 1, "{first:?}");
    assert_eq!(first.failed[0].reason, "does not exist");
    fx.write("tree/a.md", "Kestrels hover over verges.");
    watcher.until_documents(&fx, "t", &["tree/a.md"]);
    // What changes beside it is not its business.
    fx.write("beside.md", "Still not an input.");
    assert!(watcher.during(Duration::from_millis(800)).is_empty());

    // Removed: its documents stay (a directory unmounted or moved for a moment is not a
    // collection emptied), and the watcher says so.
    std::fs::remove_dir_all(&tree).expect("remove the tree");
    let gone = watcher.next();
    assert_eq!(gone.failed.len(), 1, "{gone:?}");
    assert_eq!(document_ids(&fx, "t"), ["tree/a.md"]);
    let deadline = Instant::now() + PATIENCE;
    let mut log = String::new();
    while !log.contains("is gone") {
        assert!(Instant::now() < deadline, "the watcher never said: {log}");
        log.push_str(&watcher.stderr.recv_timeout(PATIENCE).expect("a log line"));
    }

    // Back, with other files: read whole, and followed again.
    fx.write("tree/b.md", "Herons stand in the shallows.");
    watcher.until_documents(&fx, "t", &["tree/b.md"]);
    fx.write("tree/deep/c.md", "Coots dive for weed.");
    watcher.until_documents(&fx, "t", &["tree/b.md", "tree/deep/c.md"]);

    // Replaced: moved away, another directory moved in its place. The new one is followed, the
    // old one no longer.
    fx.write("next/d.md", "Dippers walk under water.");
    std::fs::rename(&tree, fx.base.join("old")).expect("move away");
    std::fs::rename(fx.base.join("next"), &tree).expect("move in");
    watcher.until_documents(&fx, "t", &["tree/d.md"]);
    fx.write("old/e.md", "Egrets are white herons.");
    assert!(watcher.during(Duration::from_millis(800)).is_empty());
    fx.write("tree/f.md", "Fieldfares come in winter.");
    watcher.until_documents(&fx, "t", &["tree/d.md", "tree/f.md"]);
    assert!(watcher.stop().success());
}

#[test]
fn a_file_that_cannot_be_read_is_not_read_again_until_it_changes() {
    let fx = Fixture::new();
    fx.write("a.md", "Avocets sweep the mud.");
    fx.write("empty.md", "");
    // Another name for the empty file, outside the inputs: what is written through it changes the
    // file without a notification about the watched name.
    let outside = fx.outside().join("alias.md");
    std::fs::hard_link(fx.base.join("empty.md"), &outside).expect("hard link");
    let watcher = Watcher::start(&fx, "t", &[]);
    let first = watcher.next();
    let failures = |summary: &IngestSummary| -> Vec<(String, String)> {
        let mut failed: Vec<_> = summary
            .failed
            .iter()
            .map(|f| (f.source.clone(), f.reason.clone()))
            .collect();
        failed.sort();
        failed
    };
    let unreadable = vec![("empty.md".to_owned(), "contains no text".to_owned())];
    assert_eq!(failures(&first), unreadable);

    std::fs::write(&outside, "Bitterns boom in the reeds.").expect("write through the alias");
    fx.write("a.md", "Avocets sweep the mud with their bills.");
    let edit = watcher.next();
    assert_eq!((edit.updated, edit.added), (1, 0), "{edit:?}");
    assert_eq!(
        failures(&edit),
        unreadable,
        "reported as it was, not read again"
    );
    assert_eq!(document_ids(&fx, "t"), ["a.md"]);

    // Changed under its own name: read again.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(fx.base.join("empty.md"))
        .expect("open");
    std::io::Write::write_all(&mut file, b" And herons.").expect("append");
    drop(file);
    watcher.until_documents(&fx, "t", &["a.md", "empty.md"]);
    assert!(watcher.stop().success());
}

#[test]
fn a_burst_of_thousands_of_writes_is_one_generation_or_a_few() {
    let fx = Fixture::new();
    fx.write("seed.md", "The first file.");
    let watcher = Watcher::start(&fx, "b", &[]);
    assert_eq!(watcher.next().generation, 1);
    // As a checkout rewrites a tree: 2,000 files in one go.
    for i in 0..2000 {
        fx.write(
            &format!("tree/d{}/f{i}.md", i % 40),
            format!("Checked out file {i} of the branch."),
        );
    }
    let mut expected = vec!["seed.md".to_owned()];
    expected.extend((0..2000).map(|i| format!("tree/d{}/f{i}.md", i % 40)));
    expected.sort();
    let summaries = watcher.until_documents(&fx, "b", &expected);
    let published: Vec<u64> = summaries
        .iter()
        .map(|s| s.generation)
        .filter(|g| *g > 1)
        .collect();
    assert!(
        (1..=8).contains(&published.len()),
        "2,000 writes published {} generations: {published:?}",
        published.len()
    );
    assert_eq!(summaries.iter().map(|s| s.added).sum::<u64>(), 2000);
    assert_eq!(
        fx.search("b", "checked out file 1234", 1).results[0].document_id,
        "tree/d34/f1234.md"
    );
}

#[test]
fn polling_follows_changes_where_notifications_are_not_used() {
    let fx = Fixture::new();
    fx.write("a.md", "Alpha text.");
    let watcher = Watcher::start(&fx, "p", &["--poll-interval", "0.2"]);
    watcher.next();
    assert_eq!(
        status_of(&fx, "p").watcher.expect("a watcher").mode,
        WatchMode::Poll
    );
    fx.write("b.md", "Beta text about juniper.");
    std::fs::remove_file(fx.base.join("a.md")).expect("delete");
    watcher.until_documents(&fx, "p", &["b.md"]);
    assert!(top_text(&fx, "p", "juniper").is_some());
}

#[test]
fn past_the_systems_limit_on_watches_the_watcher_says_so_and_polls() {
    let fx = Fixture::new();
    for i in 0..8 {
        fx.write(&format!("d{i}/a.md"), format!("Note {i}."));
    }
    // A user namespace of its own, whose limit on inotify watches is 3: fewer than the tree's
    // nine directories.
    let grk = fx.grk();
    let mut command = std::process::Command::new("unshare");
    command
        .args(["--user", "--map-root-user", "sh", "-c"])
        .arg("echo 3 > /proc/sys/user/max_inotify_watches && exec \"$0\" \"$@\"")
        .arg(grk.get_program())
        .args(grk.get_args())
        .args([
            "ingest",
            "--collection",
            "limited",
            "--watch",
            "--json",
            "--stop-on-eof",
        ])
        .arg(&fx.base)
        .current_dir(&fx.base);
    let watcher = Watcher::spawn(command);
    assert_eq!(watcher.next().added, 8);
    let status = status_of(&fx, "limited");
    assert_eq!(status.watcher.expect("a watcher").mode, WatchMode::Poll);
    fx.write("d3/b.md", "Found by polling: lovage.");
    watcher.until_documents(&fx, "limited", &{
        let mut ids: Vec<String> = (0..8).map(|i| format!("d{i}/a.md")).collect();
        ids.push("d3/b.md".to_owned());
        ids.sort();
        ids
    });
    let log = watcher.log();
    assert_eq!(
        log.matches("the system's limit on file watches is reached")
            .count(),
        1,
        "said once: {log}"
    );
    assert!(log.contains("polling every 2.0 s instead"), "{log}");
}

#[test]
fn one_watcher_per_collection() {
    let fx = Fixture::new();
    fx.write("a.md", "Alpha text.");
    let watcher = Watcher::start(&fx, "one", &[]);
    watcher.next();
    let second = fx
        .grk()
        .args(["ingest", "--collection", "one", "--watch"])
        .arg(&fx.base)
        .output()
        .expect("run grk");
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("another watcher already follows collection 'one'"),
        "{stderr}"
    );
    // Another collection of the same tree may be followed.
    let other = Watcher::start(&fx, "two", &[]);
    assert_eq!(other.next().added, 1);
}

#[test]
fn a_killed_watcher_leaves_a_whole_generation_and_a_restarted_one_catches_up() {
    let fx = Fixture::new();
    for i in 0..50 {
        fx.write(&format!("f{i:03}.md"), format!("Original text {i}."));
    }
    let mut watcher = Watcher::start(&fx, "k", &[]);
    watcher.next();
    // Killed at some point of a burst's ingest: before, during or after its commit.
    for i in 0..400 {
        fx.write(
            &format!("burst/b{i:03}.md"),
            format!("Burst text {i} with quince."),
        );
    }
    std::thread::sleep(Duration::from_millis(150));
    watcher.child.kill().expect("kill -9");
    watcher.child.wait().expect("reap");
    let held = document_ids(&fx, "k");
    let burst = held.iter().filter(|id| id.starts_with("burst/")).count();
    // Readers are on a whole generation: the lexical index holds what the store holds, and
    // the counts its commit recorded are the store's rows.
    let status = status_of(&fx, "k");
    assert!(status.watcher.is_none(), "a killed watcher is not reported");
    assert_eq!(status.document_count as usize, held.len());
    assert_eq!(fx.search("k", "original text", 100).results.len(), 50);
    assert_eq!(fx.search("k", "burst quince", 500).results.len(), burst);

    // Changes made while nothing watched are caught up by the next watcher's first ingest.
    std::fs::remove_file(fx.base.join("f000.md")).expect("delete");
    fx.write("f001.md", "Rewritten while unwatched, with yuzu.");
    let watcher = Watcher::start(&fx, "k", &[]);
    let first = watcher.next();
    assert_eq!(first.removed, 1, "{first:?}");
    let ids = document_ids(&fx, "k");
    assert_eq!(ids.len(), 49 + 400);
    assert!(!ids.contains(&"f000.md".to_owned()));
    assert!(top_text(&fx, "k", "yuzu").is_some_and(|t| t.starts_with("f001.md")));
    assert_eq!(fx.search("k", "burst quince", 500).results.len(), 400);
}

#[test]
fn serve_watch_keeps_its_watcher_running_and_stops_it_with_the_server() {
    let fx = Fixture::new();
    fx.write("a.md", "Alpha text.");
    let server = groundkit_tests::ServerProcess::spawn(
        fx.grk()
            .args(["serve", "--port", "0", "--watch"])
            .arg(&fx.base)
            .args(["--watch-collection", "live"]),
    )
    .expect("the server starts");
    let search = |query: &str| {
        let body = serde_json::json!({"collection": "live", "query": query}).to_string();
        server.post_json("/search", &body)
    };
    let wait_for = |query: &str| {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let response = search(query);
            if response.status == 200
                && !response.json()["results"]
                    .as_array()
                    .expect("results")
                    .is_empty()
            {
                return response.json();
            }
            assert!(
                Instant::now() < deadline,
                "'{query}' never became searchable"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for("alpha");
    fx.write("b.md", "Served while watched: tamarind.");
    let found = wait_for("tamarind");
    assert_eq!(found["results"][0]["document_id"], "b.md");
    let status = server.get("/collections/live/status").json();
    assert_eq!(status["watcher"]["mode"], "notify", "{status}");

    // The watcher dies: the server starts another, which catches up with what changed meanwhile.
    let watcher = watcher_of(server.pid()).expect("the server runs a watcher");
    kill(watcher);
    fx.write("c.md", "Written while the watcher was down: sumac.");
    wait_for("sumac");
    let restarted = watcher_of(server.pid()).expect("a watcher again");
    assert_ne!(restarted, watcher);

    // The server killed outright: its watcher's input closes, and it stops.
    drop(server);
    let deadline = Instant::now() + PATIENCE;
    while Path::new(&format!("/proc/{restarted}")).exists() && !is_zombie(restarted) {
        assert!(Instant::now() < deadline, "the watcher outlived its server");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pid of the child process of `pid` (its watcher), read from `/proc`.
fn watcher_of(pid: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<u32>>()
        })
        .find(|child| !is_zombie(*child))
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(true)
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}
