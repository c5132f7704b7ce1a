//! Where changes come from: the system's file notifications through `notify` (inotify, FSEvents,
//! ReadDirectoryChangesW) or, where those are unavailable or past the system's limit on watches,
//! `notify`'s polling watcher; and which of the paths they name a collection cares about.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use crate::model::WatchMode;
use groundkit_core::Error;

/// What reaches the watch loop.
pub(super) enum Message {
    /// Paths that changed (maybe several times, maybe not in a way that matters).
    Changed(Vec<PathBuf>),
    /// Changes may have been missed (a notification queue overflowed): read everything.
    Rescan,
    /// The system refused a watch past its limit while following: switch to polling.
    WatchLimit,
    /// Stop after the generation being built, if any.
    Stop,
}

/// One watched input: a directory followed with everything under it, or a file (followed
/// through its directory, so a file replaced by a rename is still followed). A directory is
/// followed through its parent as well, so its removal, and its return, are noticed; while it
/// does not exist, only through its parent.
#[derive(Debug, Clone)]
pub(super) struct Root {
    pub(super) path: PathBuf,
    /// Followed as a directory: it is one, or does not exist (yet).
    pub(super) dir: bool,
}

/// What stands at each of `roots` now: `None` where nothing does, else which file or directory
/// (a directory moved away and another moved in its place is another one).
pub(super) fn presence(roots: &[Root]) -> Vec<Option<FileId>> {
    roots.iter().map(|root| file_id(&root.path)).collect()
}

/// Which file a path names: its device and inode where the system has them.
pub(super) type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(path: &Path) -> Option<FileId> {
    path.exists().then_some((0, 0))
}

/// A running watcher of the roots; dropping it stops it.
pub(super) struct Follower {
    _watcher: Box<dyn Watcher + Send>,
    pub(super) mode: WatchMode,
    /// What stood at each root when it started (what it follows there).
    pub(super) present: Vec<Option<FileId>>,
}

/// Starts following `roots`, sending what it notices to `sender`: by polling every `poll` when
/// given, else by notifications, falling back to polling every `fallback` (with `said` called
/// once with the reason) when notifications cannot follow them.
pub(super) fn follow(
    roots: &[Root],
    sender: &Sender<Message>,
    poll: Option<Duration>,
    fallback: Duration,
    said: &mut dyn FnMut(&str),
) -> Result<Follower, Error> {
    if let Some(interval) = poll {
        return polling(roots, sender, interval);
    }
    match notifying(roots, sender) {
        Ok(follower) => Ok(follower),
        Err(err) => {
            let reason = match err.kind {
                notify::ErrorKind::MaxFilesWatch => {
                    "the system's limit on file watches is reached (fs.inotify.max_user_watches)"
                        .to_owned()
                }
                _ => format!("file notifications are unavailable ({err})"),
            };
            said(&format!(
                "{reason}: polling every {:.1} s instead",
                fallback.as_secs_f64()
            ));
            polling(roots, sender, fallback)
        }
    }
}

fn notifying(roots: &[Root], sender: &Sender<Message>) -> notify::Result<Follower> {
    let sender = sender.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let _ = sender.send(message(event));
    })?;
    let present = watch_roots(&mut watcher, roots)?;
    Ok(Follower {
        _watcher: Box::new(watcher),
        mode: WatchMode::Notify,
        present,
    })
}

fn polling(
    roots: &[Root],
    sender: &Sender<Message>,
    interval: Duration,
) -> Result<Follower, Error> {
    let sender = sender.clone();
    let config = notify::Config::default()
        .with_poll_interval(interval)
        .with_follow_symlinks(false);
    let mut watcher = notify::PollWatcher::new(
        move |event: notify::Result<notify::Event>| {
            let _ = sender.send(message(event));
        },
        config,
    )
    .map_err(|err| Error::internal(format!("cannot start polling: {err}")))?;
    let present = watch_roots(&mut watcher, roots)
        .map_err(|err| Error::internal(format!("cannot poll the inputs: {err}")))?;
    Ok(Follower {
        _watcher: Box::new(watcher),
        mode: WatchMode::Poll,
        present,
    })
}

/// Watches every root that exists (a directory with everything under it) and the directory
/// holding each root, unless a watched directory covers it already. Returns what stood at each.
fn watch_roots(watcher: &mut dyn Watcher, roots: &[Root]) -> notify::Result<Vec<Option<FileId>>> {
    let present = presence(roots);
    let recursive: Vec<&Path> = roots
        .iter()
        .zip(&present)
        .filter(|(root, present)| root.dir && present.is_some())
        .map(|(root, _)| root.path.as_path())
        .collect();
    for dir in &recursive {
        // A root inside another is followed with it.
        if !recursive
            .iter()
            .any(|other| dir != other && dir.starts_with(other))
        {
            watcher.watch(dir, RecursiveMode::Recursive)?;
        }
    }
    let mut parents: HashSet<&Path> = HashSet::new();
    for root in roots {
        let Some(parent) = root.path.parent() else {
            continue;
        };
        let covered = recursive.iter().any(|dir| parent.starts_with(dir));
        if !covered && parent.is_dir() && parents.insert(parent) {
            watcher.watch(parent, RecursiveMode::NonRecursive)?;
        }
    }
    Ok(present)
}

fn message(event: notify::Result<notify::Event>) -> Message {
    match event {
        Ok(event) if event.need_rescan() => Message::Rescan,
        // Reading a file changes nothing; every write is a modification too.
        Ok(event) if matches!(event.kind, EventKind::Access(_)) => Message::Changed(Vec::new()),
        Ok(event) => Message::Changed(event.paths),
        Err(err) if matches!(err.kind, notify::ErrorKind::MaxFilesWatch) => Message::WatchLimit,
        // Any other error of the watcher may have lost an event.
        Err(_) => Message::Rescan,
    }
}

/// Which changed paths a collection cares about: those under its roots, outside the index
/// directory, and not hidden below a root (a walk never reads hidden files), but for the ignore
/// files that decide what a walk reads.
pub(super) struct Relevance {
    pub(super) roots: Vec<Root>,
    pub(super) index_dir: PathBuf,
}

/// Files that change what a walk reads, though hidden.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore"];

impl Relevance {
    pub(super) fn cares(&self, path: &Path) -> bool {
        if path.starts_with(&self.index_dir) {
            return false;
        }
        let Some(root) = self.roots.iter().find(|root| path.starts_with(&root.path)) else {
            return false;
        };
        let Ok(below) = path.strip_prefix(&root.path) else {
            return false;
        };
        let hidden = |c: &Component<'_>| {
            c.as_os_str()
                .to_str()
                .is_some_and(|name| name.starts_with('.'))
        };
        let components: Vec<Component<'_>> = below.components().collect();
        match components.split_last() {
            None => true,
            Some((last, above)) => {
                let name = last.as_os_str().to_str().unwrap_or("");
                below == Path::new(".git/info/exclude")
                    || (!above.iter().any(hidden)
                        && (!hidden(last) || IGNORE_FILES.contains(&name)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_a_walk_would_read_or_that_decide_what_it_reads_matter() {
        let relevance = Relevance {
            roots: vec![
                Root {
                    path: PathBuf::from("/work/tree"),
                    dir: true,
                },
                Root {
                    path: PathBuf::from("/work/notes.md"),
                    dir: false,
                },
            ],
            index_dir: PathBuf::from("/work/tree/.groundkit"),
        };
        for (path, cares) in [
            ("/work/tree", true),
            ("/work/tree/src/lib.rs", true),
            ("/work/tree/src", true),
            ("/work/tree/.gitignore", true),
            ("/work/tree/src/.ignore", true),
            ("/work/tree/.git/info/exclude", true),
            ("/work/notes.md", true),
            // The index directory, hidden files and folders, and what lies outside the inputs.
            ("/work/tree/.groundkit/t.sqlite3", false),
            ("/work/tree/.git/index", false),
            ("/work/tree/src/.lib.rs.swp", false),
            ("/work/tree/.cache/x.md", false),
            ("/work/tree/.cache/.gitignore", false),
            ("/work/tree/sub/.git/info/exclude", false),
            ("/work/other.md", false),
            ("/work/treetop/a.md", false),
        ] {
            assert_eq!(relevance.cares(Path::new(path)), cares, "{path}");
        }
    }
}
