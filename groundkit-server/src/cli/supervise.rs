//! `grk serve --watch`: the watcher the server runs beside itself. The watcher is a process of
//! its own (`grk ingest --watch --stop-on-eof --json`), so the serving process never holds the
//! engine's write surface: this module only starts it, logs what each of its ingests changed,
//! restarts it when it dies (waiting longer after each quick death), and stops it with the
//! server by closing its standard input (which also stops it when the server is killed).

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use groundkit_core::Error;
use groundkit_retrieval::{IngestSummary, validate_name};

use super::args::{Cli, ServeCommand};

/// The first wait before a watcher that died is started again, and the longest.
const RESTART_FIRST: Duration = Duration::from_secs(1);
const RESTART_LAST: Duration = Duration::from_secs(60);
/// A watcher that ran this long before it died is restarted after the first wait again.
const HEALTHY: Duration = Duration::from_secs(60);
/// How long a stopping watcher may take to finish the generation it is building.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// A running supervisor of one watcher process.
pub(super) struct Supervisor {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<Running>,
    wake: Condvar,
}

#[derive(Default)]
struct Running {
    stopping: bool,
    /// The running watcher's standard input: dropping it asks the watcher to stop.
    stdin: Option<ChildStdin>,
    /// The running watcher, while its output is read.
    child: Option<Child>,
}

/// The watcher's command line: this program, with the options that decide where and how it
/// writes.
struct Launch {
    program: PathBuf,
    args: Vec<OsString>,
    collection: String,
}

impl Supervisor {
    /// Starts the watcher `args.watch` asks for; `None` when it asks for none.
    pub(super) fn start(cli: &Cli, args: &ServeCommand) -> Result<Option<Self>, Error> {
        if args.watch.is_empty() {
            return Ok(None);
        }
        let launch = launch(cli, args)?;
        tracing::info!(collection = %launch.collection, "starting the watcher");
        let shared = Arc::new(Shared::default());
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("grk-watcher".into())
                .spawn(move || supervise(&launch, &shared))
                .map_err(|err| Error::internal(format!("cannot start the watcher: {err}")))?
        };
        Ok(Some(Self {
            shared,
            thread: Some(thread),
        }))
    }

    /// Stops the watcher: closes its input, gives it time to finish the generation it builds,
    /// then kills it.
    pub(super) fn stop(mut self) {
        {
            let mut state = self.shared.lock();
            state.stopping = true;
            state.stdin = None;
        }
        self.shared.wake.notify_all();
        let Some(thread) = self.thread.take() else {
            return;
        };
        let deadline = Instant::now() + STOP_GRACE;
        while !thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !thread.is_finished()
            && let Some(child) = self.shared.lock().child.as_mut()
        {
            // Its output then closes, and the supervising thread reaps it.
            let _ = child.kill();
        }
        let _ = thread.join();
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Running> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs the watcher until the server stops, restarting it when it dies.
fn supervise(launch: &Launch, shared: &Shared) {
    let mut wait = RESTART_FIRST;
    loop {
        let started = Instant::now();
        match spawn(launch, shared) {
            Ok(stdout) => {
                log_ingests(&launch.collection, stdout);
                let child = shared.lock().child.take();
                let status = child.map(|mut child| child.wait());
                if shared.lock().stopping {
                    return;
                }
                let status = status.unwrap_or_else(|| Err(std::io::Error::other("no watcher")));
                let status = status.map_or_else(|err| err.to_string(), |s| s.to_string());
                tracing::warn!(
                    collection = %launch.collection,
                    %status,
                    restart_in_seconds = wait.as_secs(),
                    "the watcher stopped; restarting it"
                );
            }
            Err(err) => {
                tracing::error!(
                    collection = %launch.collection,
                    error = %err,
                    restart_in_seconds = wait.as_secs(),
                    "cannot start the watcher"
                );
            }
        }
        if started.elapsed() >= HEALTHY {
            wait = RESTART_FIRST;
        }
        let state = shared.lock();
        let (state, _) = shared
            .wake
            .wait_timeout_while(state, wait, |state| !state.stopping)
            .unwrap_or_else(PoisonError::into_inner);
        if state.stopping {
            return;
        }
        drop(state);
        wait = (wait * 2).min(RESTART_LAST);
    }
}

/// Starts the watcher process, unless the server is stopping; returns its output.
fn spawn(launch: &Launch, shared: &Shared) -> std::io::Result<ChildStdout> {
    let mut state = shared.lock();
    if state.stopping {
        return Err(std::io::Error::other("the server is stopping"));
    }
    let mut child = Command::new(&launch.program)
        .args(&launch.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    state.stdin = child.stdin.take();
    let stdout = child.stdout.take();
    state.child = Some(child);
    stdout.ok_or_else(|| std::io::Error::other("the watcher has no output"))
}

/// Logs each ingest the watcher reports (one JSON summary per line) until its output closes.
fn log_ingests(collection: &str, stdout: impl std::io::Read) {
    let mut last_generation = None;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(summary) = serde_json::from_str::<IngestSummary>(&line) else {
            continue;
        };
        if last_generation == Some(summary.generation) {
            continue; // an ingest that changed nothing
        }
        last_generation = Some(summary.generation);
        tracing::info!(
            collection,
            generation = summary.generation,
            added = summary.added,
            updated = summary.updated,
            removed = summary.removed,
            failed = summary.failed.len(),
            documents = summary.documents,
            seconds = summary.seconds,
            "the watcher published a generation"
        );
    }
}

fn launch(cli: &Cli, args: &ServeCommand) -> Result<Launch, Error> {
    let program = std::env::current_exe()
        .map_err(|err| Error::storage("cannot find this program to run the watcher", err))?;
    let collection = match &args.watch_collection {
        Some(name) => {
            validate_name(name)?;
            name.clone()
        }
        None => default_collection(Path::new(&args.watch[0]))?,
    };
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut argv: Vec<OsString> = vec![
        "--index-dir".into(),
        absolute(&cli.index_dir).into(),
        "--base-dir".into(),
        absolute(&cli.base_dir).into(),
    ];
    argv.extend(cli.embed.to_args());
    // A server of a cluster serves what is published there: its watcher publishes each
    // generation to it.
    argv.extend(cli.cluster.to_args());
    argv.extend(["ingest", "--collection", &collection].map(OsString::from));
    if cli.cluster.opensearch_url.is_some() {
        argv.extend(["--backend", "opensearch"].map(OsString::from));
    }
    argv.extend(["--watch", "--stop-on-eof", "--json", "--"].map(OsString::from));
    argv.extend(
        args.watch
            .iter()
            .map(|input| absolute(Path::new(input)).into()),
    );
    Ok(Launch {
        program,
        args: argv,
        collection,
    })
}

/// The collection a watched `path` is kept in by default: its directory's name (the file's
/// directory's, for a file), with what a collection name cannot hold made `-`.
fn default_collection(path: &Path) -> Result<String, Error> {
    let dir = std::fs::canonicalize(path).map_err(|err| Error::Validation {
        field: "watch".to_owned(),
        message: format!("cannot follow a path that cannot be resolved: {err}"),
    })?;
    let dir = if dir.is_dir() {
        dir.as_path()
    } else {
        dir.parent().unwrap_or(&dir)
    };
    let name: String = dir
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(64)
        .collect();
    validate_name(&name).map_err(|_| Error::Validation {
        field: "watch".to_owned(),
        message: "no collection name follows from the watched path; name one with \
                  --watch-collection"
            .to_owned(),
    })?;
    Ok(name)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::args::Command;
    use crate::cli::cluster::BackendArg;

    #[test]
    fn the_watcher_embeds_with_the_options_the_server_was_given() {
        let given = [
            "grk",
            "--embed-model",
            "/models/minilm",
            "--embed-threads",
            "3",
            "--embed-api-key-env",
            "KEY",
            "--embed-allow-private",
            "serve",
        ];
        let cli = Cli::parse_from(given);
        let forwarded = std::iter::once(OsString::from("grk"))
            .chain(cli.embed.to_args())
            .chain(std::iter::once(OsString::from("serve")));
        let again = Cli::parse_from(forwarded);
        assert_eq!(format!("{:?}", again.embed), format!("{:?}", cli.embed));
        let endpoint = Cli::parse_from([
            "grk",
            "--embed-url",
            "http://127.0.0.1:9/v1/embeddings",
            "--embed-api-model",
            "m",
            "serve",
        ]);
        let again = Cli::parse_from(
            std::iter::once(OsString::from("grk"))
                .chain(endpoint.embed.to_args())
                .chain(std::iter::once(OsString::from("serve"))),
        );
        assert_eq!(
            format!("{:?}", again.embed),
            format!("{:?}", endpoint.embed)
        );
        let hub = Cli::parse_from(["grk", "--embed-hub-model", "o/n@rev", "serve"]);
        let again = Cli::parse_from(
            std::iter::once(OsString::from("grk"))
                .chain(hub.embed.to_args())
                .chain(std::iter::once(OsString::from("serve"))),
        );
        assert_eq!(format!("{:?}", again.embed), format!("{:?}", hub.embed));
    }

    #[test]
    fn the_watcher_of_a_cluster_server_publishes_to_that_cluster() {
        let cli = Cli::parse_from([
            "grk",
            "--opensearch-url",
            "https://127.0.0.1:9200",
            "--opensearch-user",
            "reader",
            "--opensearch-password-env",
            "PASS",
            "--opensearch-ca",
            "ca.pem",
            "--opensearch-prefix",
            "team",
            "--opensearch-timeout",
            "7",
            "--opensearch-shards",
            "2",
            "--opensearch-replicas",
            "0",
            "serve",
            "--watch",
            "/srv/tree",
            "--watch-collection",
            "tree",
        ]);
        let Command::Serve(serve) = &cli.command else {
            panic!("serve");
        };
        let argv = launch(&cli, serve).expect("launch").args;
        let watcher = Cli::parse_from(std::iter::once(OsString::from("grk")).chain(argv));
        let mut expected = cli.cluster.clone();
        expected.opensearch_ca = Some(std::path::absolute("ca.pem").expect("absolute"));
        assert_eq!(format!("{:?}", watcher.cluster), format!("{expected:?}"));
        let Command::Ingest(ingest) = &watcher.command else {
            panic!("the watcher is an ingest");
        };
        assert_eq!(ingest.backend, BackendArg::Opensearch);
        assert_eq!(ingest.collection, "tree");
        assert!(ingest.watch);

        // Without a cluster, the watcher writes the index directory only.
        let local = Cli::parse_from([
            "grk",
            "serve",
            "--watch",
            "/srv/tree",
            "--watch-collection",
            "t",
        ]);
        let Command::Serve(serve) = &local.command else {
            panic!("serve");
        };
        let argv = launch(&local, serve).expect("launch").args;
        let watcher = Cli::parse_from(std::iter::once(OsString::from("grk")).chain(argv));
        let Command::Ingest(ingest) = &watcher.command else {
            panic!("the watcher is an ingest");
        };
        assert_eq!(ingest.backend, BackendArg::Local);
        assert!(watcher.cluster.opensearch_url.is_none());
    }

    #[test]
    fn a_watched_directory_names_its_collection() {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("my repo.v2");
        std::fs::create_dir(&dir).expect("dir");
        std::fs::write(dir.join("a.md"), "a").expect("file");
        assert_eq!(default_collection(&dir).expect("name"), "my-repo-v2");
        assert_eq!(
            default_collection(&dir.join("a.md")).expect("name"),
            "my-repo-v2"
        );
        let odd = root.path().join("..."); // nothing a name can start with
        std::fs::create_dir(&odd).expect("dir");
        assert!(default_collection(&odd).is_err());
    }
}
