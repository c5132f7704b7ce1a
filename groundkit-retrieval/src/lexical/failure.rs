//! Tantivy failures as storage errors an operator can read: the cause in words (from the
//! underlying I/O error where there is one: "no space left on the device", "permission denied")
//! and the file it concerns relative to the index directory, never tantivy's own rendering, which
//! prints `Debug` structures and absolute paths.

use std::io;
use std::path::Path;

use tantivy::TantivyError;
use tantivy::directory::error::{OpenDirectoryError, OpenReadError, OpenWriteError};

use crate::collection::in_index_dir;
use groundkit_core::Error;

/// Maps a tantivy failure met while working in the generation directory `dir`.
pub(crate) fn tantivy_err<'a>(
    context: &'static str,
    dir: &'a Path,
) -> impl Fn(TantivyError) -> Error + 'a {
    move |err| tantivy_failure(context, dir, &err)
}

/// The storage error for `err`: `context`, then the cause in words and the file, as its source.
pub(crate) fn tantivy_failure(context: &'static str, dir: &Path, err: &TantivyError) -> Error {
    let (io_error, file): (Option<&io::Error>, Option<&Path>) = match err {
        TantivyError::IoError(io_error) => (Some(io_error), None),
        TantivyError::OpenReadError(OpenReadError::IoError { io_error, filepath })
        | TantivyError::OpenWriteError(OpenWriteError::IoError { io_error, filepath }) => {
            (Some(io_error), Some(filepath))
        }
        TantivyError::OpenDirectoryError(OpenDirectoryError::IoError {
            io_error,
            directory_path,
        }) => (Some(io_error), Some(directory_path)),
        TantivyError::OpenReadError(OpenReadError::FileDoesNotExist(path)) => {
            (None, Some(path.as_path()))
        }
        _ => (None, None),
    };
    // An indexing thread reports its I/O failure as text (`InternalError("No space left on
    // device (os error 28)")`): the OS error number in it is the cause.
    let in_text = io_error
        .is_none()
        .then(|| os_error_in(&err.to_string()))
        .flatten();
    let cause = match (io_error.or(in_text.as_ref()), err) {
        (Some(io_error), _) => io_cause(io_error),
        (None, TantivyError::OpenReadError(OpenReadError::FileDoesNotExist(_))) => {
            "the file does not exist".to_owned()
        }
        (None, TantivyError::ErrorInThread(_)) => {
            "an indexing thread failed without saying why".to_owned()
        }
        (None, _) => "the lexical index is not in the expected form".to_owned(),
    };
    let detail = match file {
        Some(file) => format!("{cause} ({})", in_index_dir(&dir.join(file))),
        None => format!("{cause} (in {})", in_index_dir(dir)),
    };
    let kind = io_error
        .or(in_text.as_ref())
        .map_or(io::ErrorKind::Other, io::Error::kind);
    Error::storage(context, io::Error::new(kind, detail))
}

/// The OS error whose number `text` carries as `(os error N)`, as `io::Error` renders one.
fn os_error_in(text: &str) -> Option<io::Error> {
    let (_, rest) = text.split_once("(os error ")?;
    let (number, _) = rest.split_once(')')?;
    number.parse().ok().map(io::Error::from_raw_os_error)
}

/// The cause of an I/O failure in words, the way an operator would say it.
pub(crate) fn io_cause(err: &io::Error) -> String {
    use io::ErrorKind;
    match (err.raw_os_error(), err.kind()) {
        (Some(28), _) | (_, ErrorKind::StorageFull) => "no space left on the device".to_owned(),
        (Some(122), _) | (_, ErrorKind::QuotaExceeded) => "disk quota exceeded".to_owned(),
        (Some(30), _) | (_, ErrorKind::ReadOnlyFilesystem) => {
            "the file system is read-only".to_owned()
        }
        (_, ErrorKind::PermissionDenied) => "permission denied".to_owned(),
        (_, ErrorKind::NotFound) => "the file does not exist".to_owned(),
        (_, kind) => kind.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// The full chain an operator sees, as `grk` prints it.
    fn shown(err: &Error) -> String {
        let mut line = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            line.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        line
    }

    #[test]
    fn a_full_disk_in_an_indexing_thread_says_no_space_left_and_names_the_file() {
        let dir = Path::new("/srv/index/papers.tantivy/g4.tmp");
        let err = TantivyError::OpenWriteError(OpenWriteError::IoError {
            io_error: Arc::new(io::Error::from_raw_os_error(28)),
            filepath: dir.join("abc.idx"),
        });
        let text = shown(&tantivy_failure("cannot index a chunk", dir, &err));
        assert_eq!(
            text,
            "storage failure: cannot index a chunk: no space left on the device \
             (papers.tantivy/g4.tmp/abc.idx)"
        );
        let err = TantivyError::IoError(Arc::new(io::Error::from_raw_os_error(28)));
        let text = shown(&tantivy_failure(
            "cannot commit the lexical index",
            dir,
            &err,
        ));
        assert!(text.ends_with("no space left on the device (in papers.tantivy/g4.tmp)"));
        // What an indexing thread returned when `grk ingest` filled a 300 KiB tmpfs.
        let err = TantivyError::InternalError(io::Error::from_raw_os_error(28).to_string());
        let text = shown(&tantivy_failure("cannot index a chunk", dir, &err));
        assert_eq!(
            text,
            "storage failure: cannot index a chunk: no space left on the device \
             (in papers.tantivy/g4.tmp)"
        );
        assert_eq!(
            io_cause(&io::Error::from(io::ErrorKind::StorageFull)),
            "no space left on the device"
        );
    }

    #[test]
    fn a_permission_error_names_the_cause_in_words_without_debug_or_absolute_paths() {
        let dir = Path::new("/srv/index/papers.tantivy/g2");
        let err = TantivyError::OpenReadError(OpenReadError::IoError {
            io_error: Arc::new(io::Error::from_raw_os_error(13)),
            filepath: std::path::PathBuf::from("meta.json"),
        });
        let text = shown(&tantivy_failure("cannot open the lexical index", dir, &err));
        assert_eq!(
            text,
            "storage failure: cannot open the lexical index: permission denied \
             (papers.tantivy/g2/meta.json)"
        );
        assert!(!text.contains("/srv") && !text.contains('{'));
    }
}
