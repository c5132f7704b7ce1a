//! Opening source files under a root, and bounded reads from the opened handle.
//!
//! Sources live in a corpus the server does not control, so a path checked once may be something
//! else by the time it is read: a directory swapped for a symlink, a file swapped for a FIFO. Every
//! source read therefore goes through `open_within`, which
//!
//! 1. on Linux, resolves the path once to a handle that only names the file (`O_PATH`): nothing
//!    is opened for reading, so a device or FIFO the path leads to is never opened, and its
//!    driver never runs;
//! 2. refuses anything that is not a regular file, judged on that handle (`fstat`);
//! 3. proves that the file lies inside the root by the handle's own path, as the kernel names it
//!    (`/proc/self/fd/N`): it holds no symlink, and swapping a path component after the
//!    resolution cannot change it;
//! 4. opens that very file for reading through the handle (`/proc/self/fd/N`, non-blocking,
//!    without acquiring a controlling terminal) and checks it is the file the handle named
//!    (device and inode);
//! 5. returns the opened file, and every byte that is read comes from it.
//!
//! Elsewhere (or without `/proc`), the path is opened for reading, non-blocking, and the checks
//! are made on the opened file: a device is refused but has been opened, and the path is
//! resolved after the open and must lie inside the root and name the opened file, a weaker
//! check that a swap between resolution and comparison can defeat.
//!
//! Reads are bounded: `read_span` reads one byte range, `read_bounded` a whole file of at most
//! a given size, and `BoundedLines` lines of at most a given length.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;

/// The largest file a source may be to be read whole: at ingest, and when `fetch_chunk`
/// re-runs an extractor. Also the longest record line of a BEIR corpus.
pub const MAX_SOURCE_BYTES: u64 = 64 * 1024 * 1024;

/// Why a source could not be opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// Missing, or not readable.
    Unreadable(#[cfg_attr(not(feature = "ingest"), allow(dead_code))] io::Error),
    /// Not a regular file: a directory, FIFO, socket or device.
    NotRegular,
    /// Resolves outside the root, or the path and the opened file disagree.
    Outside,
}

impl OpenError {
    /// A reason to show a person: names no path.
    #[cfg(feature = "ingest")]
    pub(crate) fn reason(&self) -> String {
        match self {
            OpenError::Unreadable(err) => match err.kind() {
                io::ErrorKind::NotFound => "does not exist".into(),
                io::ErrorKind::PermissionDenied => "cannot be read: permission denied".into(),
                _ => "cannot be read".into(),
            },
            OpenError::NotRegular => "is not a regular file".into(),
            OpenError::Outside => "resolves outside the base directory".into(),
        }
    }
}

/// A regular file opened inside a root, with its size when opened.
#[derive(Debug)]
pub(crate) struct SourceFile {
    pub(crate) file: File,
    pub(crate) len: u64,
    /// When the opened file was last modified, in seconds since the Unix epoch (`None` when
    /// the platform does not say, or before the epoch).
    #[cfg_attr(not(feature = "ingest"), allow(dead_code))]
    pub(crate) modified: Option<u64>,
}

impl SourceFile {
    /// The opened `file`, as its metadata `meta` (read from the handle) describes it.
    fn new(file: File, meta: &std::fs::Metadata) -> Self {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        Self {
            len: meta.len(),
            modified,
            file,
        }
    }
}

/// Opens `path` for reading if, and only if, it is a regular file inside `root` (see the module
/// documentation for the order of checks). `root` must be canonical.
pub(crate) fn open_within(path: &Path, root: &Path) -> Result<SourceFile, OpenError> {
    #[cfg(target_os = "linux")]
    if let Some(opened) = linux::open_within(path, root) {
        return opened;
    }
    let file = open_nonblocking(path).map_err(open_error)?;
    let meta = file.metadata().map_err(OpenError::Unreadable)?;
    if !meta.is_file() {
        return Err(OpenError::NotRegular);
    }
    if !resolves_to_same_file_within(path, root, &meta) {
        return Err(OpenError::Outside);
    }
    Ok(SourceFile::new(file, &meta))
}

/// The file named first and opened second (steps 1 to 5 of the module documentation).
#[cfg(target_os = "linux")]
mod linux {
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::{Path, PathBuf};

    use super::{OpenError, SourceFile, open_error, open_nonblocking, same_file};

    /// `None` when `/proc` does not name handles, so the portable way must be taken.
    pub(super) fn open_within(path: &Path, root: &Path) -> Option<Result<SourceFile, OpenError>> {
        let named = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open(path)
        {
            Ok(named) => named,
            Err(err) => return Some(Err(open_error(err))),
        };
        let meta = match named.metadata() {
            Ok(meta) => meta,
            Err(err) => return Some(Err(OpenError::Unreadable(err))),
        };
        let handle = handle_path(&named);
        let where_ = std::fs::read_link(&handle).ok()?;
        if !meta.is_file() {
            return Some(Err(OpenError::NotRegular));
        }
        if !where_.starts_with(root) {
            return Some(Err(OpenError::Outside));
        }
        Some(reopen(&handle, &meta))
    }

    /// Opens the file `handle` names for reading: the same inode, whatever its path is now.
    fn reopen(handle: &Path, named: &std::fs::Metadata) -> Result<SourceFile, OpenError> {
        let file = open_nonblocking(handle).map_err(open_error)?;
        let meta = file.metadata().map_err(OpenError::Unreadable)?;
        if !meta.is_file() || !same_file(named, &meta) {
            return Err(OpenError::NotRegular);
        }
        Ok(SourceFile::new(file, &meta))
    }

    fn handle_path(file: &File) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
    }
}

/// The check where handles have no path: the path, resolved after the open, lies inside
/// `root` and names the opened file (device and inode). A component swapped between the
/// resolution and the comparison can defeat it, which a handle's own path cannot.
fn resolves_to_same_file_within(path: &Path, root: &Path, opened: &std::fs::Metadata) -> bool {
    let Ok(resolved) = path.canonicalize() else {
        return false;
    };
    resolved.starts_with(root)
        && std::fs::metadata(&resolved).is_ok_and(|now| same_file(opened, &now))
}

/// Opens `path` read-only without blocking on a FIFO or device and without acquiring a
/// controlling terminal.
#[cfg(unix)]
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// The reason for a failed open. A socket cannot be opened at all (`ENXIO`): it is refused as
/// what it is, not a regular file, rather than as unreadable.
#[cfg(unix)]
fn open_error(err: io::Error) -> OpenError {
    if err.raw_os_error() == Some(libc::ENXIO) {
        OpenError::NotRegular
    } else {
        OpenError::Unreadable(err)
    }
}

#[cfg(not(unix))]
fn open_error(err: io::Error) -> OpenError {
    OpenError::Unreadable(err)
}

#[cfg(not(unix))]
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.is_file() && b.is_file() && a.len() == b.len()
}

/// Reads bytes `start..end` of `file`; `Ok(None)` when the file is shorter than `end`.
pub(crate) fn read_span(file: &File, start: u64, end: u64) -> io::Result<Option<Vec<u8>>> {
    let len = usize::try_from(end.saturating_sub(start))
        .map_err(|_| io::Error::other("span too large"))?;
    let mut buf = vec![0; len];
    match read_exact_at(file, &mut buf, start) {
        Ok(()) => Ok(Some(buf)),
        Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(err) => Err(err),
    }
}

/// Reads `buf.len()` bytes of `file` from `offset` with a positional read: each call names its
/// own offset, so threads can share one handle.
#[cfg(unix)]
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Reads `buf.len()` bytes of `file` from `offset` with positional reads: each call names its
/// own offset, so threads can share one handle.
#[cfg(windows)]
pub(crate) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Why a whole-file read stopped.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The file is larger than the bound (checked before reading, and again while reading, since
    /// a file can grow).
    TooLarge,
    /// Reading failed.
    Io(io::Error),
}

/// Reads the whole file, refusing one larger than `max` bytes without reading it.
pub(crate) fn read_bounded(source: SourceFile, max: u64) -> Result<Vec<u8>, ReadError> {
    if source.len > max {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(source.len).unwrap_or(0));
    source
        .file
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// Lines of a reader, each with the byte offset it starts at, none longer than a bound.
///
/// A line longer than the bound is an error, found without ever holding more than the bound.
pub(crate) struct BoundedLines<R> {
    reader: R,
    max: u64,
    offset: u64,
}

impl<R: BufRead> BoundedLines<R> {
    pub(crate) fn new(reader: R, max: u64, offset: u64) -> Self {
        Self {
            reader,
            max,
            offset,
        }
    }

    /// The next line without its `\n`, and the offset it starts at; `None` at the end.
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        let start = self.offset;
        let mut line = Vec::new();
        let read = (&mut self.reader)
            .take(self.max + 1)
            .read_until(b'\n', &mut line)
            .map_err(ReadError::Io)?;
        if read == 0 {
            return Ok(None);
        }
        self.offset += read as u64;
        if line.last() == Some(&b'\n') {
            line.pop();
        } else if line.len() as u64 > self.max {
            return Err(ReadError::TooLarge);
        }
        Ok(Some((start, line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_their_offsets_and_a_long_line_is_refused() {
        let text = b"ab\n\ncdef\nlast";
        let mut lines = BoundedLines::new(&text[..], 4, 0);
        let mut seen = Vec::new();
        while let Some((offset, line)) = lines.next_line().expect("within bound") {
            seen.push((offset, String::from_utf8(line).expect("utf8")));
        }
        assert_eq!(
            seen,
            [
                (0, "ab".to_owned()),
                (3, String::new()),
                (4, "cdef".to_owned()),
                (9, "last".to_owned())
            ]
        );
        let mut long = BoundedLines::new(&b"abcde\n"[..], 4, 0);
        assert!(matches!(long.next_line(), Err(ReadError::TooLarge)));
    }
}
