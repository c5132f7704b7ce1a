//! An ingest limited to what changed ([`IngestOptions::changed`](super::IngestOptions::changed)):
//! of what discovery finds, a file is read again only when it, a directory above it or (for a
//! symbolic link) where it leads is among the changed paths, or when the collection does not hold
//! it and no earlier ingest found it unreadable. Every other file the collection holds is kept as
//! stored, unread.
//!
//! Discovery itself still runs whole, so what an ingest covers (`.gitignore`, vendored folders,
//! the base directory) is decided by the same walk as a full ingest, and whatever the corpus no
//! longer has is removed as a full ingest removes it, changed or not.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use groundkit_core::Error;

use super::IngestFailure;
use super::discover::Item;
use super::writer::Writer;

/// The paths that changed: files, and directories standing for everything under them; and the
/// files an earlier ingest could not read, with why.
pub(super) struct Changed<'a> {
    paths: HashSet<PathBuf>,
    unreadable: HashMap<&'a str, &'a str>,
}

impl<'a> Changed<'a> {
    pub(super) fn new(paths: &[PathBuf], unreadable: &'a [IngestFailure]) -> Self {
        Self {
            paths: paths.iter().cloned().collect(),
            unreadable: unreadable
                .iter()
                .map(|f| (f.source.as_str(), f.reason.as_str()))
                .collect(),
        }
    }

    /// Whether `path`, or a directory above it, changed.
    fn covers(&self, path: &Path) -> bool {
        path.ancestors().any(|at| self.paths.contains(at))
    }
}

/// What a narrowed ingest reads, and the roots it keeps unread.
pub(super) struct Narrowed {
    /// The items to read.
    pub(super) items: Vec<Item>,
    /// BEIR corpora that did not change: their records stay as stored.
    pub(super) kept_roots: Vec<String>,
}

/// Narrows `items` to those to read again; marks every file kept unread as seen, so the
/// collection keeps it. A file the collection does not hold is read unless an earlier ingest
/// could not read it and it did not change since: then it is reported as it was.
pub(super) fn narrow(
    items: Vec<Item>,
    changed: &Changed<'_>,
    writer: &mut Writer<'_>,
) -> Result<Narrowed, Error> {
    let mut narrowed = Narrowed {
        items: Vec::new(),
        kept_roots: Vec::new(),
    };
    for item in items {
        let covered = match item.paths() {
            Some((path, target)) => {
                changed.covers(path) || target.is_some_and(|t| changed.covers(t))
            }
            // A URL's snapshot stays as it was fetched: the collection never removes it by scope.
            None if matches!(item, Item::Url(_)) => continue,
            // An input that is not there, or a file found where it should not be, is reported
            // when it changed; an input's own error, always.
            None => item.invalid_path().is_none_or(|path| changed.covers(path)),
        };
        if covered {
            narrowed.items.push(item);
            continue;
        }
        match &item {
            Item::Beir { rel, .. } => narrowed.kept_roots.push(rel.clone()),
            Item::Invalid { .. } => {}
            _ => {
                let Some(rel) = item.file_name() else {
                    continue; // a file not worth reading, counted when it changes
                };
                if !writer.holds(rel)? {
                    match changed.unreadable.get(rel) {
                        Some(reason) => writer.fail(rel, *reason),
                        None => narrowed.items.push(item),
                    }
                    continue;
                }
                writer.ledger.see(rel)?;
                #[cfg(feature = "office")]
                if item.is_mail() {
                    writer.keep_stored_under(&format!("{rel}#"))?;
                }
            }
        }
    }
    Ok(narrowed)
}
