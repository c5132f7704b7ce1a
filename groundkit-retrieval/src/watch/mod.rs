//! Following a collection's files (feature `watch`): after an ingest of everything (which
//! reconciles the collection with the tree as it is now, so a watcher restarted after any stop
//! catches up), every settled burst of changes becomes one ingest of what changed
//! ([`IngestOptions::changed`]), published as a generation by the same commit protocol as any
//! ingest, so a watcher killed at any point leaves readers on the last complete generation.
//!
//! - `events`: notifications, or polling where they are unavailable or past the system's limit
//!   on watches, and which changed paths matter.
//! - `state`: the lock that makes one watcher per collection, and the state `index_status`
//!   reports.
//!
//! A burst is settled when no change has arrived for [`WatchOptions::settle`], or once it is
//! [`WatchOptions::longest_burst`] old, so changes that never stop are published in bounded
//! steps. Changes that arrive while a generation is built wait for the next one. An ingest that
//! fails keeps its changes pending and is tried again, sooner at first, then less often.

mod events;
mod state;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use crate::collection::CollectionPaths;
use crate::ingest::{IngestOptions, IngestProgress, IngestSummary, NoProgress, ingest};
use crate::model::WatchMode;
use groundkit_core::Error;

use events::{Follower, Message, Relevance, Root};
use state::State;

/// How a watcher follows its inputs.
#[derive(Debug, Clone, Copy)]
pub struct WatchOptions {
    /// Poll the inputs at this interval instead of using the system's notifications (for file
    /// systems that send none, such as network mounts).
    pub poll: Option<Duration>,
    /// The polling interval used when notifications cannot follow the inputs.
    pub fallback_poll: Duration,
    /// How long no change must arrive before a burst is published.
    pub settle: Duration,
    /// The longest a burst waits to settle: changes that keep coming are published in steps.
    pub longest_burst: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            poll: None,
            fallback_poll: Duration::from_secs(2),
            settle: Duration::from_millis(100),
            longest_burst: Duration::from_secs(1),
        }
    }
}

/// What a watcher tells its operator. All methods default to doing nothing.
pub trait WatchReport {
    /// Progress of the first ingest, which reconciles the collection with the tree.
    fn reconciling(&mut self) -> &mut dyn IngestProgress;
    /// The first ingest is done; the watcher follows the inputs `mode`'s way.
    fn following(&mut self, _summary: &IngestSummary, _mode: WatchMode) {}
    /// A burst of `changes` changed paths was ingested (a new generation when it changed
    /// anything, `summary.generation` then).
    fn ingested(&mut self, _summary: &IngestSummary, _changes: usize) {}
    /// Something the operator should know once, such as a fallback to polling.
    fn notice(&mut self, _message: &str) {}
    /// An ingest failed; its changes stay pending and it is tried again in `retry`.
    fn failed(&mut self, _err: &Error, _retry: Duration) {}
}

/// Stops a running watcher after the generation it is building, if any.
#[derive(Debug, Clone)]
pub struct Stopper(Sender<Message>);

impl Stopper {
    /// Asks the watcher to stop.
    pub fn stop(&self) {
        let _ = self.0.send(Message::Stop);
    }
}

/// The first wait before an ingest that failed is tried again, and the longest.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_LAST: Duration = Duration::from_secs(30);

/// A watcher of one collection's inputs.
pub struct Watch {
    options: IngestOptions,
    watch: WatchOptions,
    sender: Sender<Message>,
    receiver: Receiver<Message>,
}

impl Watch {
    /// A watcher that will ingest `options.inputs` (files and directories; a URL is fetched
    /// by the first ingest only) into `options.collection`.
    pub fn new(options: IngestOptions, watch: WatchOptions) -> Self {
        let (sender, receiver) = channel();
        Self {
            options: IngestOptions {
                changed: None,
                ..options
            },
            watch,
            sender,
            receiver,
        }
    }

    /// A handle that stops [`run`](Self::run) from another thread.
    pub fn stopper(&self) -> Stopper {
        Stopper(self.sender.clone())
    }

    /// Claims the collection (one watcher each), starts following the inputs, ingests
    /// everything once, then publishes each settled burst of changes until stopped. Returns
    /// `Err` when the collection is followed already, or when the first ingest fails.
    pub fn run(self, report: &mut dyn WatchReport) -> Result<(), Error> {
        let paths = CollectionPaths::new(&self.options.index_dir, &self.options.collection)?;
        std::fs::create_dir_all(&self.options.index_dir)
            .map_err(|err| Error::storage("cannot create the index directory", err))?;
        let relevance = Relevance {
            roots: roots(&self.options.inputs),
            index_dir: canonical(&self.options.index_dir),
        };
        // Followed before the first ingest reads the tree, so nothing changed meanwhile is
        // missed; kept alive (dropping it stops it) until the watcher stops.
        let mut follower = self.follow(&relevance.roots, false, report)?;
        // Polling, once notifications failed: not tried again.
        let mut limited = follower.mode == WatchMode::Poll;
        let mut state = State::claim(&paths, follower.mode)?;
        state.publishing(true, false);
        let summary = ingest(&self.options, report.reconciling())?;
        let changed = summary.added + summary.updated + summary.removed > 0;
        state.publishing(false, changed);
        report.following(&summary, follower.mode);
        let mut generation = summary.generation;
        // What the last ingest could not read, not read again until it changes.
        let mut unreadable = summary.failed.clone();

        let mut burst = Burst::default();
        let mut retry = RETRY_FIRST;
        loop {
            // Wait for a change; with a failed burst pending, until it is due again.
            let first = if burst.is_empty() {
                self.receiver
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                self.receiver.recv_timeout(retry)
            };
            match first {
                Ok(message) => {
                    if !burst.take(message, &relevance) {
                        return Ok(());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
            if burst.watch_limit {
                burst.watch_limit = false;
                limited = true;
                report.notice(&format!(
                    "the system's limit on file watches is reached (fs.inotify.max_user_watches): \
                     polling every {:.1} s instead",
                    self.watch.fallback_poll.as_secs_f64()
                ));
                follower = self.follow(&relevance.roots, limited, report)?;
                state.set_mode(follower.mode);
            }
            if burst.is_empty() {
                continue;
            }
            state.pending(burst.len());
            if !self.settle(&mut burst, &relevance) {
                return Ok(());
            }
            if burst.watch_limit {
                // Switched to polling at the top of the loop, after the retry wait; then
                // published as a rescan.
                continue;
            }
            let present = events::presence(&relevance.roots);
            if present != follower.present {
                // A root came, went or was replaced: follow what stands there now, and read all
                // of a root that came (what was written into it before it was followed, too).
                for ((root, was), is) in relevance.roots.iter().zip(&follower.present).zip(&present)
                {
                    match (was, is) {
                        (Some(_), None) => report.notice(&format!(
                            "{} is gone: its documents stay in the collection until it is back",
                            root.path.display()
                        )),
                        (_, Some(_)) => {
                            burst.paths.insert(root.path.clone());
                        }
                        (None, None) => {}
                    }
                }
                follower = self.follow(&relevance.roots, limited, report)?;
                state.set_mode(follower.mode);
            }
            let changes = burst.len();
            state.pending(changes);
            state.publishing(true, false);
            let options = IngestOptions {
                changed: (!burst.rescan).then(|| burst.paths.iter().cloned().collect()),
                unreadable: unreadable.clone(),
                ..self.options.clone()
            };
            match ingest(&options, &mut NoProgress) {
                Ok(summary) => {
                    unreadable.clone_from(&summary.failed);
                    state.publishing(false, summary.generation != generation);
                    generation = summary.generation;
                    report.ingested(&summary, changes);
                    burst = Burst::default();
                    retry = RETRY_FIRST;
                }
                Err(err) => {
                    state.publishing(false, false);
                    state.pending(changes);
                    report.failed(&err, retry);
                    retry = (retry * 2).min(RETRY_LAST);
                }
            }
        }
    }

    /// Gathers changes into `burst` until none has come for the settle time, or the burst is as
    /// old as the longest allowed. `false` when asked to stop.
    fn settle(&self, burst: &mut Burst, relevance: &Relevance) -> bool {
        let started = Instant::now();
        let mut last = started;
        loop {
            let deadline = (last + self.watch.settle).min(started + self.watch.longest_burst);
            let Some(wait) = deadline.checked_duration_since(Instant::now()) else {
                return true;
            };
            match self.receiver.recv_timeout(wait) {
                Ok(message) => {
                    let before = burst.len();
                    if !burst.take(message, relevance) {
                        return false;
                    }
                    if burst.len() != before || burst.rescan || burst.watch_limit {
                        last = Instant::now();
                    }
                    if burst.watch_limit {
                        return true;
                    }
                }
                Err(RecvTimeoutError::Timeout) => return true,
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    /// Starts following `roots`: notifications unless polling was asked for or notifications
    /// reached the system's limit (`limited`). A fallback to polling is said once.
    fn follow(
        &self,
        roots: &[Root],
        limited: bool,
        report: &mut dyn WatchReport,
    ) -> Result<Follower, Error> {
        let poll = match (self.watch.poll, limited) {
            (Some(interval), _) => Some(interval),
            (None, true) => Some(self.watch.fallback_poll),
            (None, false) => None,
        };
        events::follow(
            roots,
            &self.sender,
            poll,
            self.watch.fallback_poll,
            &mut |message| report.notice(message),
        )
    }
}

/// The changes of one burst.
#[derive(Default)]
struct Burst {
    paths: HashSet<PathBuf>,
    /// Changes may have been missed: read everything.
    rescan: bool,
    /// Notifications reached the system's limit on watches.
    watch_limit: bool,
}

impl Burst {
    fn is_empty(&self) -> bool {
        self.paths.is_empty() && !self.rescan
    }

    /// How many changes it holds (a rescan counts as one).
    fn len(&self) -> usize {
        self.paths.len().max(usize::from(self.rescan))
    }

    /// Adds what `message` says; `false` when it asks to stop.
    fn take(&mut self, message: Message, relevance: &Relevance) -> bool {
        match message {
            Message::Changed(paths) => self
                .paths
                .extend(paths.into_iter().filter(|path| relevance.cares(path))),
            Message::Rescan => self.rescan = true,
            Message::WatchLimit => {
                self.watch_limit = true;
                // What the exhausted watches would have said is unknown.
                self.rescan = true;
            }
            Message::Stop => return false,
        }
        true
    }
}

/// The inputs that are files or directories, canonical (as discovery walks them); an input that
/// does not exist (yet) is followed as a directory where it would be. URLs are not followed.
fn roots(inputs: &[String]) -> Vec<Root> {
    inputs
        .iter()
        .filter(|input| !input.starts_with("http://") && !input.starts_with("https://"))
        .filter_map(|input| {
            let path = Path::new(input);
            path.canonicalize()
                .or_else(|_| std::path::absolute(path))
                .ok()
        })
        .map(|path| Root {
            dir: !path.is_file(),
            path,
        })
        .collect()
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}
