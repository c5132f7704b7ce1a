//! The watcher's lock and state files beside the collection (`<name>.watch.lock`,
//! `<name>.watch.json`), which `index_status` reads: one watcher per collection, its state
//! replaced whole (written aside, then renamed over) whenever it changes. The state is a
//! report, not a record: a state that cannot be written (a full disk) leaves the one before,
//! and the watcher goes on.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::time::SystemTime;

use crate::collection::CollectionPaths;
use crate::model::{WatchMode, WatcherStatus, rfc3339};
use groundkit_core::Error;

/// The state of the running watcher, published while it holds the collection's watch lock.
pub(super) struct State {
    paths: CollectionPaths,
    /// Held for the watcher's life; the system releases it when the process ends.
    _lock: File,
    status: WatcherStatus,
}

impl State {
    /// Takes the collection's watch lock; refused while another watcher holds it.
    pub(super) fn claim(paths: &CollectionPaths, mode: WatchMode) -> Result<Self, Error> {
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(paths.watch_lock())
            .map_err(|err| Error::storage("cannot create the watch lock", err))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::Validation {
                    field: "collection".to_owned(),
                    message: format!(
                        "another watcher already follows collection '{}'",
                        paths.name
                    ),
                });
            }
            Err(fs::TryLockError::Error(err)) => {
                return Err(Error::storage("cannot take the watch lock", err));
            }
        }
        let mut state = Self {
            paths: paths.clone(),
            _lock: lock,
            status: WatcherStatus {
                since: now(),
                mode,
                pending_changes: 0,
                pending_since: None,
                publishing: false,
                generations: 0,
            },
        };
        state.write();
        Ok(state)
    }

    /// Records how the watcher now learns of changes.
    pub(super) fn set_mode(&mut self, mode: WatchMode) {
        self.status.mode = mode;
        self.write();
    }

    /// Records `pending` changes noticed and not yet published (the oldest noticed now, when
    /// none were pending before).
    pub(super) fn pending(&mut self, pending: usize) {
        let before = self.status.pending_changes;
        self.status.pending_changes = pending as u64;
        match (before, pending) {
            (0, 0) => return,
            (0, _) => self.status.pending_since = Some(now()),
            (_, 0) => self.status.pending_since = None,
            _ => {}
        }
        self.write();
    }

    /// Records that a generation is being built, or no longer is (`published` when one was).
    pub(super) fn publishing(&mut self, publishing: bool, published: bool) {
        self.status.publishing = publishing;
        if published {
            self.status.generations += 1;
        }
        if !publishing {
            self.status.pending_changes = 0;
            self.status.pending_since = None;
        }
        self.write();
    }

    /// Replaces the state file; on failure the previous one stays.
    fn write(&mut self) {
        let target = self.paths.watch_state();
        let aside = target.with_extension("json.tmp");
        let Ok(bytes) = serde_json::to_vec(&self.status) else {
            return;
        };
        let written = File::create(&aside)
            .and_then(|mut file| file.write_all(&bytes))
            .and_then(|()| fs::rename(&aside, &target));
        if written.is_err() {
            let _ = fs::remove_file(&aside);
        }
    }
}

fn now() -> String {
    rfc3339(SystemTime::now().into())
}
