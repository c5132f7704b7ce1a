//! Discovery: resolves the inputs of an ingest to the sources it will read.
//!
//! Discovery only names candidates. Whether a file really lies inside the base directory is
//! decided again, on the opened handle, when it is read (`source_file::open_within`), since the
//! tree can change between the walk and the read.

use std::path::{Path, PathBuf};

use crate::ingest::{IngestOptions, InputFormat};

/// One source found by discovery.
pub(super) enum Item {
    File {
        path: PathBuf,
        rel: String,
        kind: FileKind,
    },
    Url(String),
    Beir {
        path: PathBuf,
        rel: String,
    },
    Invalid {
        source: String,
        reason: String,
    },
}

#[derive(Clone, Copy)]
pub(super) enum FileKind {
    Text,
    Html,
    Pdf,
}

fn file_kind(path: &Path) -> Option<FileKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "txt" | "md" | "markdown" | "text" => Some(FileKind::Text),
        "html" | "htm" | "xhtml" => Some(FileKind::Html),
        "pdf" => Some(FileKind::Pdf),
        _ => None,
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
            });
            continue;
        };
        let Some(rel) = relative_source(&path, base) else {
            items.push(Item::Invalid {
                source: input.clone(),
                reason: "lies outside the base directory".into(),
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
                    }),
                }
            }
            InputFormat::Files if path.is_dir() => walk(&path, base, &mut items),
            InputFormat::Files => match file_kind(&path) {
                Some(kind) => items.push(Item::File { path, rel, kind }),
                None => items.push(Item::Invalid {
                    source: rel,
                    reason: "unsupported file type (expected .txt, .md, .html or .pdf)".into(),
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
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if !entry
            .file_type()
            .is_some_and(|t| t.is_file() || t.is_symlink())
        {
            continue;
        }
        let Some(kind) = file_kind(entry.path()) else {
            continue;
        };
        let shown = relative_source(entry.path(), base)
            .unwrap_or_else(|| entry.path().display().to_string());
        match entry.path().canonicalize() {
            Ok(real) if real.starts_with(base) => {
                // The walk's own path is read, not `real`: a symlink inside the base is cited by
                // the name the corpus gives it, and `open_within` checks where it leads when read.
                items.push(Item::File {
                    path: entry.path().to_path_buf(),
                    rel: shown,
                    kind,
                });
            }
            _ => items.push(Item::Invalid {
                source: shown,
                reason: "resolves outside the base directory or is unreadable".into(),
            }),
        }
    }
}
