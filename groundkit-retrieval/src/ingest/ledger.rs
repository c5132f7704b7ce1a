//! The ingest run's own bookkeeping: which documents (files, URLs, BEIR records) this run has
//! seen, and which of them it wrote.
//!
//! It lives in a private temporary SQLite database (on disk, deleted when the run ends), whose
//! page cache is bounded, so an ingest's memory does not grow with the corpus: a run over five
//! million documents holds no per-document set in memory.

use rusqlite::{Connection, OptionalExtension};

use crate::store::sql_err;
use groundkit_core::Error;

/// Page cache of the ledger, in KiB (SQLite's negative `cache_size`). What does not fit spills
/// to the temporary file.
const CACHE_KIB: i64 = 8 * 1024;

/// What this ingest run has seen so far.
pub(super) struct Ledger {
    conn: Connection,
}

impl Ledger {
    pub(super) fn new() -> Result<Self, Error> {
        let err = sql_err("cannot create the ingest's temporary ledger");
        // An empty file name opens a private temporary database on disk.
        let conn = Connection::open("").map_err(&err)?;
        conn.execute_batch(&format!(
            "PRAGMA cache_size = -{CACHE_KIB};
             CREATE TABLE seen (
                 document_id TEXT PRIMARY KEY,
                 written     INTEGER NOT NULL DEFAULT 0
             ) WITHOUT ROWID;
             BEGIN;"
        ))
        .map_err(&err)?;
        Ok(Self { conn })
    }

    /// Records that the corpus still has `document_id` (it is not removed at the end of the run).
    pub(super) fn see(&self, document_id: &str) -> Result<(), Error> {
        self.conn
            .prepare_cached("INSERT OR IGNORE INTO seen (document_id) VALUES (?1)")
            .and_then(|mut stmt| stmt.execute([document_id]))
            .map_err(sql_err("cannot update the ingest's ledger"))?;
        Ok(())
    }

    /// Records that this run wrote `document_id` (added or replaced it).
    pub(super) fn wrote(&self, document_id: &str) -> Result<(), Error> {
        self.conn
            .prepare_cached(
                "INSERT INTO seen (document_id, written) VALUES (?1, 1)
                 ON CONFLICT (document_id) DO UPDATE SET written = 1",
            )
            .and_then(|mut stmt| stmt.execute([document_id]))
            .map_err(sql_err("cannot update the ingest's ledger"))?;
        Ok(())
    }

    /// `Some(written)` when this run has seen `document_id`, `None` when it has not.
    pub(super) fn get(&self, document_id: &str) -> Result<Option<bool>, Error> {
        self.conn
            .prepare_cached("SELECT written FROM seen WHERE document_id = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([document_id], |row| row.get::<_, bool>(0))
                    .optional()
            })
            .map_err(sql_err("cannot read the ingest's ledger"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_what_the_run_saw_and_wrote() -> Result<(), Error> {
        let ledger = Ledger::new()?;
        assert_eq!(ledger.get("a")?, None);
        ledger.see("a")?;
        assert_eq!(ledger.get("a")?, Some(false));
        ledger.wrote("a")?;
        ledger.see("a")?;
        assert_eq!(
            ledger.get("a")?,
            Some(true),
            "seeing again keeps it written"
        );
        ledger.wrote("b")?;
        assert_eq!(ledger.get("b")?, Some(true));

        assert_eq!(ledger.get("c")?, None);
        Ok(())
    }
}
