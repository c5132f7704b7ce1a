//! The watcher's lock and state files beside the collection (`<name>.watch.lock`,
//! `<name>.watch.json`), which `index_status` reads: one watcher per collection, its state
//! replaced whole (written aside, then renamed over) whenever it changes.

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
        state.write()?;
        Ok(state)
    }

    /// Records how the watcher now learns of changes.
    pub(super) fn set_mode(&mut self, mode: WatchMode) -> Result<(), Error> {
        self.status.mode = mode;
        self.write()
    }

    /// Records `pending` changes noticed and not yet published (the oldest noticed now, when
    /// none were pending before).
    pub(super) fn pending(&mut self, pending: usize) -> Result<(), Error> {
        let before = self.status.pending_changes;
        self.status.pending_changes = pending as u64;
        match (before, pending) {
            (0, 0) => return Ok(()),
            (0, _) => self.status.pending_since = Some(now()),
            (_, 0) => self.status.pending_since = None,
            _ => {}
        }
        self.write()
    }

    /// Records that a generation is being built, or no longer is (`published` when one was).
    pub(super) fn publishing(&mut self, publishing: bool, published: bool) -> Result<(), Error> {
        self.status.publishing = publishing;
        if published {
            self.status.generations += 1;
        }
        if !publishing {
            self.status.pending_changes = 0;
            self.status.pending_since = None;
        }
        self.write()
    }

    fn write(&mut self) -> Result<(), Error> {
        let target = self.paths.watch_state();
        let aside = target.with_extension("json.tmp");
        let bytes = serde_json::to_vec(&self.status)
            .map_err(|err| Error::internal(format!("cannot render the watch state: {err}")))?;
        let written = File::create(&aside)
            .and_then(|mut file| file.write_all(&bytes))
            .and_then(|()| fs::rename(&aside, &target));
        written.map_err(|err| Error::storage("cannot write the watch state", err))
    }
}

fn now() -> String {
    rfc3339(SystemTime::now().into())
}
