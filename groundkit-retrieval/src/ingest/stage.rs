//! Staging: an ingest's files read, hashed, extracted and chunked on worker threads, a batch at
//! a time, while the writer takes the batch before, in the inputs' order. Besides the batch being
//! staged, at most two are held: one waiting for the writer and the one it is writing.
//!
//! A file whose hash the collection already held when the ingest began is read and hashed, not
//! extracted or chunked (`sources::stage_file`); the writer still decides, on the store as it is,
//! what changed.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Mutex, OnceLock};

use super::discover::Item;
use super::sources::{self, FileError, Known, StagedFile};

/// Files given to each worker in one batch.
const ITEMS_PER_WORKER: usize = 8;

/// An input, ready for the writer.
pub(super) enum Staged {
    /// A file, read and prepared; `item` names it again should it have to be staged again.
    File {
        item: Item,
        staged: Box<Result<StagedFile, FileError>>,
    },
    /// Anything else, which the writer reads itself (a URL, a BEIR corpus) or only counts.
    Other(Item),
}

/// What staging needs: where the files are, the chunk budget, the hashes the collection held,
/// and how many threads read.
pub(super) struct Stager<'a> {
    pub(super) base: &'a Path,
    pub(super) max_bytes: usize,
    pub(super) known: &'a Known,
    pub(super) workers: usize,
}

impl Stager<'_> {
    /// Stages `items` and hands each to `write`, in order; stops at the first error `write`
    /// returns (staging stops with it).
    pub(super) fn run<E>(
        &self,
        items: Vec<Item>,
        mut write: impl FnMut(Staged) -> Result<(), E>,
    ) -> Result<(), E> {
        let batch_len = self.workers.max(1) * ITEMS_PER_WORKER;
        std::thread::scope(|scope| {
            let (batches, staged) = sync_channel::<Vec<Staged>>(1);
            scope.spawn(move || {
                let mut items = items.into_iter();
                loop {
                    let batch: Vec<Item> = items.by_ref().take(batch_len).collect();
                    // A send fails once the writer has stopped.
                    if batch.is_empty() || batches.send(self.stage_batch(batch)).is_err() {
                        break;
                    }
                }
            });
            for batch in staged {
                for item in batch {
                    write(item)?;
                }
            }
            Ok(())
        })
    }

    /// Stages a file again as if the collection held nothing.
    pub(super) fn restage(&self, item: &Item) -> Result<StagedFile, FileError> {
        self.stage_file(item, &Known::new())
    }

    /// Stages one batch on the workers, each taking the next file as it finishes one.
    fn stage_batch(&self, batch: Vec<Item>) -> Vec<Staged> {
        let items: Vec<Mutex<Option<Item>>> =
            batch.into_iter().map(|i| Mutex::new(Some(i))).collect();
        let staged: Vec<OnceLock<Staged>> = items.iter().map(|_| OnceLock::new()).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..self.workers.clamp(1, items.len()) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(cell) = items.get(i) else { break };
                        if let Some(item) = cell.lock().ok().and_then(|mut item| item.take()) {
                            let _ = staged[i].set(self.stage(item));
                        }
                    }
                });
            }
        });
        staged
            .into_iter()
            .filter_map(OnceLock::into_inner)
            .collect()
    }

    fn stage(&self, item: Item) -> Staged {
        match item {
            #[cfg(feature = "code")]
            Item::File { .. } | Item::Code { .. } => self.file(item),
            #[cfg(not(feature = "code"))]
            Item::File { .. } => self.file(item),
            other => Staged::Other(other),
        }
    }

    fn file(&self, item: Item) -> Staged {
        let staged = Box::new(self.stage_file(&item, self.known));
        Staged::File { item, staged }
    }

    fn stage_file(&self, item: &Item, known: &Known) -> Result<StagedFile, FileError> {
        match item {
            Item::File {
                path, rel, kind, ..
            } => sources::stage_file(self.base, path, rel, *kind, self.max_bytes, known),
            #[cfg(feature = "code")]
            Item::Code {
                path, rel, kind, ..
            } => sources::stage_code(self.base, path, rel, *kind, self.max_bytes, known),
            _ => Err(FileError::Skip("is not a file".into())),
        }
    }
}
