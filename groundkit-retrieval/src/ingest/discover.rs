//! Discovery: resolves the inputs of an ingest to the sources it will read.
//!
//! Discovery only names candidates. Whether a file really lies inside the base directory is
//! decided again, on the opened handle, when it is read (`source_file::open_within`), since the
//! tree can change between the walk and the read.
//!
//! With the `code` feature, source files are candidates too, and what is not worth reading as
//! source (lock files, generated files by name, the files of vendored and build-output folders
//! met in a walk) is named here as skipped, with its reason.

use std::path::{Path, PathBuf};

#[cfg(feature = "code")]
use crate::code::{self, skip::SkipReason};
use crate::ingest::{IngestOptions, InputFormat};

/// Why a named file of an unknown kind is refused.
const UNSUPPORTED: &str =
    "unsupported file type: not a document format or source code this build reads";

/// Extensions of plain-text formats, read as `text` sources: prose and markup (Markdown,
/// reStructuredText, AsciiDoc, Org, LaTeX) and data kept as text (JSON, YAML, TOML, CSV). They
/// are documents, not source code, whether or not the `code` feature is on.
const TEXT_EXTENSIONS: &[&str] = &[
    "txt", "text", "md", "markdown", "rst", "adoc", "asciidoc", "org", "tex", "json", "yaml",
    "yml", "toml", "csv",
];

/// One source found by discovery.
pub(super) enum Item {
    File {
        path: PathBuf,
        rel: String,
        kind: FileKind,
        /// Where `path` leads when it is a symbolic link.
        target: Option<PathBuf>,
    },
    /// A source-code file.
    #[cfg(feature = "code")]
    Code {
        path: PathBuf,
        rel: String,
        kind: code::SourceKind,
        target: Option<PathBuf>,
    },
    Url(String),
    Beir {
        path: PathBuf,
        rel: String,
    },
    Invalid {
        source: String,
        reason: String,
        /// The file a walk found, for an error of the walk (not of an input).
        found: Option<PathBuf>,
    },
    /// A file not worth reading, counted by its reason.
    #[cfg(feature = "code")]
    Skipped {
        path: PathBuf,
        rel: String,
        reason: SkipReason,
    },
}

impl Item {
    /// The document id of a file a stager reads (`File`, `Code`); `None` for the rest.
    pub(super) fn file_name(&self) -> Option<&str> {
        match self {
            Item::File { rel, .. } => Some(rel),
            #[cfg(feature = "code")]
            Item::Code { rel, .. } => Some(rel),
            _ => None,
        }
    }

    /// The file's path as walked and, for a symbolic link, where it leads (`File`, `Code`,
    /// `Beir`, `Skipped`); `None` for the rest.
    pub(super) fn paths(&self) -> Option<(&Path, Option<&Path>)> {
        match self {
            Item::File { path, target, .. } => Some((path, target.as_deref())),
            #[cfg(feature = "code")]
            Item::Code { path, target, .. } => Some((path, target.as_deref())),
            #[cfg(feature = "code")]
            Item::Skipped { path, .. } => Some((path, None)),
            Item::Beir { path, .. } => Some((path, None)),
            _ => None,
        }
    }

    /// The file a walk found, for an invalid item the walk found (`None` for the rest).
    pub(super) fn invalid_path(&self) -> Option<&Path> {
        match self {
            Item::Invalid { found, .. } => found.as_deref(),
            _ => None,
        }
    }

    /// Whether it is a mail file, whose attachments are documents of their own.
    #[cfg(feature = "office")]
    pub(super) fn is_mail(&self) -> bool {
        use crate::office::Format;
        matches!(
            self,
            Item::File {
                kind: FileKind::Office(Format::Email | Format::Mbox),
                ..
            }
        )
    }

    /// The source it names, as a summary reports it: a path, a URL, or what was given.
    pub(super) fn name(&self) -> &str {
        match self {
            Item::File { rel, .. } | Item::Beir { rel, .. } => rel,
            #[cfg(feature = "code")]
            Item::Code { rel, .. } | Item::Skipped { rel, .. } => rel,
            Item::Url(url) => url,
            Item::Invalid { source, .. } => source,
        }
    }
}

#[derive(Clone, Copy)]
pub(super) enum FileKind {
    Text,
    Html,
    Pdf,
    /// An office document, workbook, notebook, mailbox or book.
    #[cfg(feature = "office")]
    Office(crate::office::Format),
}

/// How a candidate file is read.
#[derive(Clone, Copy)]
enum Kind {
    Document(FileKind),
    #[cfg(feature = "code")]
    Code(code::SourceKind),
}

fn file_kind(path: &Path) -> Option<Kind> {
    if let Some(kind) = document_kind(path) {
        return Some(Kind::Document(kind));
    }
    #[cfg(feature = "code")]
    return code::source_kind(path.file_name()?.to_str()?).map(Kind::Code);
    #[cfg(not(feature = "code"))]
    None
}

/// How a document named `path` (a file, or a mail attachment) is read, by its extension; `None`
/// when it is not a document (source code is judged apart).
pub(super) fn document_kind(path: &Path) -> Option<FileKind> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    #[cfg(feature = "office")]
    if let Some(format) = ext
        .as_deref()
        .and_then(crate::office::Format::from_extension)
    {
        return Some(FileKind::Office(format));
    }
    match ext.as_deref() {
        Some(ext) if TEXT_EXTENSIONS.contains(&ext) => Some(FileKind::Text),
        Some("html" | "htm" | "xhtml") => Some(FileKind::Html),
        Some("pdf") => Some(FileKind::Pdf),
        _ => None,
    }
}

/// Why the file at `path` is skipped whatever it holds, if it is.
#[cfg(feature = "code")]
fn skipped_by_name(path: &Path) -> Option<SkipReason> {
    code::skip::skip_by_name(path.file_name()?.to_str()?)
}

/// The item of a candidate file (a symbolic link to `target`): skipped by its name, or read as
/// `kind`.
fn candidate(path: PathBuf, rel: String, kind: Kind, target: Option<PathBuf>) -> Item {
    #[cfg(feature = "code")]
    if let Some(reason) = skipped_by_name(&path) {
        return Item::Skipped { path, rel, reason };
    }
    match kind {
        Kind::Document(kind) => Item::File {
            path,
            rel,
            kind,
            target,
        },
        #[cfg(feature = "code")]
        Kind::Code(kind) => Item::Code {
            path,
            rel,
            kind,
            target,
        },
    }
}

fn relative_source(path: &Path, base: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Resolves the inputs to items, and the relative roots whose vanished documents are removed.
/// `base` is canonical.
pub(super) fn discover(options: &IngestOptions, base: &Path) -> (Vec<Item>, Vec<String>) {
    let mut items = Vec::new();
    let mut roots = Vec::new();
    for input in &options.inputs {
        if input.starts_with("http://") || input.starts_with("https://") {
            items.push(Item::Url(input.clone()));
            continue;
        }
        let Ok(path) = Path::new(input).canonicalize() else {
            items.push(Item::Invalid {
                source: input.clone(),
                reason: "does not exist".into(),
                found: None,
            });
            continue;
        };
        let Some(rel) = relative_source(&path, base) else {
            items.push(Item::Invalid {
                source: input.clone(),
                reason: "lies outside the base directory".into(),
                found: None,
            });
            continue;
        };
        roots.push(rel.clone());
        match options.format {
            InputFormat::Beir => {
                let corpus = if path.is_dir() {
                    path.join("corpus.jsonl")
                } else {
                    path
                };
                let named_before = items
                    .iter()
                    .any(|item| matches!(item, Item::Beir { path, .. } if *path == corpus));
                match relative_source(&corpus, base) {
                    // A corpus named twice (as itself and by its directory, say) is read once.
                    Some(_) if named_before && corpus.is_file() => {}
                    Some(rel) if corpus.is_file() => items.push(Item::Beir { path: corpus, rel }),
                    _ => items.push(Item::Invalid {
                        source: input.clone(),
                        reason: "holds no corpus.jsonl".into(),
                        found: None,
                    }),
                }
            }
            InputFormat::Files if path.is_dir() => walk(&path, base, &mut items),
            InputFormat::Files => match file_kind(&path) {
                Some(kind) => items.push(candidate(path, rel, kind, None)),
                None => items.push(Item::Invalid {
                    source: rel,
                    reason: UNSUPPORTED.into(),
                    found: None,
                }),
            },
        }
    }
    (items, roots)
}

/// Walks a directory (honouring `.gitignore`), in file-name order.
fn walk(dir: &Path, base: &Path, items: &mut Vec<Item>) {
    let walker = ignore::WalkBuilder::new(dir)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    // Vendored and build-output folders below `dir` met so far (a walk meets a folder before
    // its files).
    #[cfg(feature = "code")]
    let mut vendored: Vec<PathBuf> = Vec::new();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        #[cfg(feature = "code")]
        if entry.depth() > 0
            && entry.file_type().is_some_and(|t| t.is_dir())
            && code::skip::is_vendored_dir(entry.path())
        {
            vendored.push(entry.path().to_path_buf());
        }
        if !entry
            .file_type()
            .is_some_and(|t| t.is_file() || t.is_symlink())
        {
            continue;
        }
        let shown = || {
            relative_source(entry.path(), base)
                .unwrap_or_else(|| entry.path().display().to_string())
        };
        #[cfg(feature = "code")]
        {
            // A lock file is counted whatever its extension; another file only when it would
            // have been read.
            let lock = skipped_by_name(entry.path()) == Some(SkipReason::LockFile);
            let reason = if vendored.iter().any(|dir| entry.path().starts_with(dir)) {
                Some(SkipReason::Vendored)
            } else {
                lock.then_some(SkipReason::LockFile)
            };
            if let Some(reason) = reason.filter(|_| lock || file_kind(entry.path()).is_some()) {
                items.push(Item::Skipped {
                    path: entry.path().to_path_buf(),
                    rel: shown(),
                    reason,
                });
                continue;
            }
        }
        let Some(kind) = file_kind(entry.path()) else {
            continue;
        };
        let shown = shown();
        match entry.path().canonicalize() {
            Ok(real) if real.starts_with(base) => {
                // The walk's own path is read, not `real`: a symlink inside the base is cited by
                // the name the corpus gives it, and `open_within` checks where it leads when read.
                let target = entry.path_is_symlink().then_some(real);
                items.push(candidate(entry.path().to_path_buf(), shown, kind, target));
            }
            _ => items.push(Item::Invalid {
                source: shown,
                reason: "resolves outside the base directory or is unreadable".into(),
                found: Some(entry.path().to_path_buf()),
            }),
        }
    }
}
