//! A published lexical generation, opened for reading only.
//!
//! A generation directory `g<N>` never changes once its rename published it: only the ingest that
//! builds `g<N>.tmp` writes, and the ingest that publishes a later generation deletes it. Tantivy's
//! reader nevertheless takes its meta lock while it opens segments, creating a lock file in the
//! directory if there is none. [`PublishedDirectory`] serves the files of a published generation
//! and refuses every write, and its locks are held in memory only: opening a reader creates
//! nothing, and cannot recreate a file in a directory that an ingest is removing.

use std::io;
use std::path::Path;
use std::sync::Arc;

use tantivy::Directory;
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

/// The memory-mapped files of one published generation, read-only.
#[derive(Debug, Clone)]
pub(crate) struct PublishedDirectory(MmapDirectory);

impl PublishedDirectory {
    /// Opens the generation directory `dir`.
    pub(crate) fn open(dir: &Path) -> tantivy::Result<Self> {
        Ok(Self(MmapDirectory::open(dir)?))
    }
}

fn read_only() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "a published lexical generation is read-only",
    )
}

impl Directory for PublishedDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.0.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(read_only()),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: Arc::new(read_only()),
            filepath: path.to_path_buf(),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.0.atomic_read(path)
    }

    fn atomic_write(&self, _path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(read_only())
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// Nothing to exclude: no one deletes or rewrites segment files of a published generation
    /// while it is published, so the lock guards nothing and lives in memory only.
    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.0.watch(watch_callback)
    }
}
