//! Creating a collection's store, for ingest only, so that its name appears only on a whole store.
//!
//! The store is built whole (application id, schema version, schema, counts, WAL mode) in a
//! [creation file](CollectionPaths::creation_file), synced, and linked under the collection's name,
//! then the directory is synced. A kill or a failure at any moment before the link leaves at most a
//! creation file, which no listing shows and the next ingest removes
//! ([`remove_creation_leftovers`]); none after it leaves a store an ingest or a reader refuses.
//! What an interrupted creation by an earlier groundkit left in place (an empty file, or a store
//! with groundkit's application id and no tables) holds nothing, and is replaced.

use std::path::Path;

use rusqlite::Connection;

use crate::collection::{CollectionPaths, Identity, identify_store};
use crate::store::sql_err;
use crate::store::write::{COUNTS, SCHEMA, SUPERSEDED};
use crate::{APPLICATION_ID, SCHEMA_VERSION};
use groundkit_core::Error;

/// Makes sure the collection has a store: creates one when there is none, and replaces one that
/// holds nothing ([`holds_nothing`]). Anything else is left as it is, for the caller to judge.
pub(crate) fn ensure(paths: &CollectionPaths) -> Result<(), Error> {
    if !paths.sqlite.exists() {
        return create(paths, false);
    }
    if holds_nothing(paths)? {
        tracing::warn!(
            collection = %paths.name,
            "replacing a store an interrupted creation left without tables"
        );
        return create(paths, true);
    }
    Ok(())
}

/// Whether the file at the collection's name is what an interrupted creation by an earlier
/// groundkit left: empty, or carrying groundkit's application id but no `meta` table (once its
/// hot journal, if any, is rolled back). A store in WAL mode never is (the mode is set only on a
/// store with its tables), so only a store in rollback mode is opened to look.
fn holds_nothing(paths: &CollectionPaths) -> Result<bool, Error> {
    let len = std::fs::metadata(&paths.sqlite)
        .map_err(|err| Error::storage(format!("cannot look up {}.sqlite3", paths.name), err))?
        .len();
    if len == 0 {
        return Ok(true);
    }
    if identify_store(paths)? != (Identity::Ours { wal: false }) {
        return Ok(false);
    }
    let conn = Connection::open(&paths.sqlite).map_err(sql_err("cannot open the collection"))?;
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |row| row.get(0),
        )
        .map_err(sql_err("cannot read the collection's schema"))?;
    Ok(tables == 0)
}

/// Builds a new store in a creation file and puts it under the collection's name: by a link,
/// which never replaces a file (when another ingest created the collection first, its store is
/// kept and this one's discarded), or, with `replace` (or on a file system without hard links),
/// by a rename. Before a replacing rename, the companions of the store replaced are removed, so
/// SQLite cannot take them for the new store's.
fn create(paths: &CollectionPaths, replace: bool) -> Result<(), Error> {
    let tag = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let tmp = paths.creation_file(&tag);
    let rename = || {
        if replace {
            for companion in [paths.journal(), paths.wal(), paths.shm()] {
                match std::fs::remove_file(&companion) {
                    Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                        return Err(Error::storage("cannot replace the empty collection", err));
                    }
                    _ => {}
                }
            }
        }
        std::fs::rename(&tmp, &paths.sqlite)
            .map_err(|err| Error::storage("cannot create the collection", err))
    };
    let result = build_store(&tmp).and_then(|()| {
        if replace {
            return rename();
        }
        match std::fs::hard_link(&tmp, &paths.sqlite) {
            Ok(()) => Ok(()),
            // Another ingest linked its store first (and may have removed this one's file).
            Err(_) if paths.sqlite.exists() => Ok(()),
            // A file system without hard links: a rename, which replaces a store another ingest
            // linked only in the instant since the check above.
            Err(_) => rename(),
        }
    });
    let _ = std::fs::remove_file(&tmp);
    result.and_then(|()| sync_parent(&paths.sqlite))
}

/// Writes a new, empty store at `path` and syncs it. The connection is closed on return, so
/// SQLite has removed its journal and, the store being in WAL mode, its `-wal` and `-shm`.
fn build_store(path: &Path) -> Result<(), Error> {
    let conn = Connection::open(path).map_err(sql_err("cannot create the collection"))?;
    // No sync of its own: the file is synced once, whole, before it is linked, and a creation file
    // a crash interrupts is discarded, never recovered.
    conn.execute_batch(&format!(
        "PRAGMA synchronous = OFF;
         BEGIN;
         PRAGMA application_id = {APPLICATION_ID};
         PRAGMA user_version = {SCHEMA_VERSION};
         {SCHEMA} {SUPERSEDED} INSERT {COUNTS};
         COMMIT;
         PRAGMA journal_mode = WAL;"
    ))
    .map_err(sql_err("cannot create the collection"))?;
    conn.close()
        .map_err(|(_, err)| Error::storage("cannot create the collection", err))?;
    std::fs::File::open(path)
        .and_then(|file| file.sync_all())
        .map_err(|err| Error::storage("cannot create the collection", err))
}

/// Syncs the directory holding `path`, so a link or rename in it is durable.
fn sync_parent(path: &Path) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(|err| Error::storage("cannot sync the index directory", err))
}

/// Removes what killed ingests left while creating this collection (creation files and their
/// SQLite companions). Called with the store's write lock held, once the store exists: any
/// creation file is then a dead one, or one whose link would find the store already there.
pub(crate) fn remove_creation_leftovers(paths: &CollectionPaths) -> Result<(), Error> {
    let Some(dir) = paths.sqlite.parent() else {
        return Ok(());
    };
    let entries = std::fs::read_dir(dir)
        .map_err(|err| Error::storage("cannot read the index directory", err))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| paths.is_creation_file(n)) {
            std::fs::remove_file(entry.path())
                .map_err(|err| Error::storage("cannot remove a killed ingest's leftover", err))?;
        }
    }
    Ok(())
}
