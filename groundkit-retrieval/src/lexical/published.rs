//! A published lexical generation, opened for reading only.
//!
//! A generation directory `g<N>` never changes once its rename published it: only the ingest that
//! builds `g<N>.tmp` writes, and the ingest that publishes a later generation deletes it. Tantivy's
//! reader nevertheless takes its meta lock while it opens segments, creating a lock file in the
//! directory if there is none. [`PublishedDirectory`] serves the files of a published generation
//! and refuses every write, and its locks are held in memory only: opening a reader creates
//! nothing, and cannot recreate a file in a directory that an ingest is removing.
//!
//! The files a search walks (terms, postings, fast fields) are memory-mapped. The document
//! stores (`*.store`), read only for the few chunks a response returns, are read with `pread`
//! into the block a fetch needs instead: their pages stay in the kernel's page cache, shared and
//! reclaimable, rather than mapped into every serving process, where a store read once would stay
//! resident for as long as the generation is open.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    DirectoryLock, FileHandle, Lock, MmapDirectory, OwnedBytes, WatchCallback, WatchHandle,
    WritePtr,
};
use tantivy::{Directory, HasLen};

use crate::source_file::read_exact_at;

/// The files of one published generation, read-only.
#[derive(Debug, Clone)]
pub(crate) struct PublishedDirectory {
    root: PathBuf,
    mmap: MmapDirectory,
}

impl PublishedDirectory {
    /// Opens the generation directory `dir`.
    pub(crate) fn open(dir: &Path) -> tantivy::Result<Self> {
        Ok(Self {
            root: dir.to_path_buf(),
            mmap: MmapDirectory::open(dir)?,
        })
    }
}

/// A file of a published generation read with positional reads: each read allocates the range
/// it returns. The handle keeps the file readable after a sweep unlinks it, as a mapping would.
#[derive(Debug)]
struct PositionalFile {
    file: File,
    len: usize,
}

impl PositionalFile {
    fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "file too large"))?;
        Ok(Self { file, len })
    }
}

impl HasLen for PositionalFile {
    fn len(&self) -> usize {
        self.len
    }
}

impl FileHandle for PositionalFile {
    fn read_bytes(&self, range: Range<usize>) -> io::Result<OwnedBytes> {
        if range.start > range.end || range.end > self.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "read past the end of a published file",
            ));
        }
        let mut bytes = vec![0; range.len()];
        read_exact_at(&self.file, &mut bytes, range.start as u64)?;
        Ok(OwnedBytes::new(bytes))
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
        if path.extension() != Some(OsStr::new("store")) {
            return self.mmap.get_file_handle(path);
        }
        match PositionalFile::open(&self.root.join(path)) {
            Ok(file) => Ok(Arc::new(file)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                Err(OpenReadError::FileDoesNotExist(path.to_path_buf()))
            }
            Err(err) => Err(OpenReadError::wrap_io_error(err, path.to_path_buf())),
        }
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(read_only()),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.mmap.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: Arc::new(read_only()),
            filepath: path.to_path_buf(),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.mmap.atomic_read(path)
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
        self.mmap.watch(watch_callback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_positional_file_returns_the_bytes_asked_for_and_refuses_a_range_past_its_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("0.store");
        std::fs::write(&path, b"0123456789").expect("write");
        let file = PositionalFile::open(&path).expect("open");
        assert_eq!(file.len(), 10);
        assert_eq!(file.read_bytes(3..7).expect("read").as_slice(), b"3456");
        assert_eq!(file.read_bytes(10..10).expect("empty").as_slice(), b"");
        let past = file.read_bytes(8..11).expect_err("past the end");
        assert_eq!(past.kind(), io::ErrorKind::InvalidInput);
    }

    // Removing an open file is a unix behaviour (a sweep there unlinks what readers hold).
    #[cfg(unix)]
    #[test]
    fn a_store_stays_readable_after_its_generation_is_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("0.store"), b"stored bytes").expect("write");
        let published = PublishedDirectory::open(dir.path()).expect("open");
        let handle = published
            .get_file_handle(Path::new("0.store"))
            .expect("handle");
        std::fs::remove_file(dir.path().join("0.store")).expect("remove");
        assert_eq!(handle.read_bytes(0..6).expect("read").as_slice(), b"stored");
        let missing = published.get_file_handle(Path::new("1.store"));
        assert!(matches!(missing, Err(OpenReadError::FileDoesNotExist(_))));
    }
}
