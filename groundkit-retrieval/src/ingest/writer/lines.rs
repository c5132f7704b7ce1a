//! Lines for the chunks of a store upgraded from before chunks had them.
//!
//! Upgrading a store adds empty line columns ([`write`]'s migration). The ingest that upgrades
//! fills them from the sources as they are now: a `text` document whose file still holds every one
//! of its chunks' bytes at their offsets gets its lines; one whose file changed, went missing or
//! cannot be read keeps its chunks without lines (an ingest that sees the changed file writes it
//! again, with lines). The offsets, not the lines, are what `fetch_chunk` verifies.

use std::path::Path;

use rusqlite::Connection;

use crate::chunk::LineIndex;
use crate::source_file::{MAX_SOURCE_BYTES, open_within, read_bounded};
use crate::store::write;
use groundkit_core::Error;

/// Records the lines of every chunk of a `text` document without them whose source under `base`
/// (canonical) still holds the chunks' bytes; returns how many documents got their lines.
pub(super) fn fill_missing_lines(conn: &Connection, base: &Path) -> Result<usize, Error> {
    let mut filled = 0;
    for (document_id, source) in write::text_documents_without_lines(conn)? {
        let Some(bytes) = open_within(&base.join(&source), base)
            .ok()
            .and_then(|file| read_bounded(file, MAX_SOURCE_BYTES).ok())
        else {
            continue;
        };
        let chunks = write::chunks_of(conn, &document_id)?;
        let holds = |start: u64, end: u64, content: &str| {
            usize::try_from(start)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(start, end)| bytes.get(start..end))
                .is_some_and(|span| span == content.as_bytes())
        };
        if !chunks.iter().all(|c| holds(c.start, c.end, &c.content)) {
            continue;
        }
        let index = LineIndex::new(&bytes);
        for chunk in &chunks {
            let lines = index.lines(chunk.start as usize, chunk.end as usize);
            write::set_chunk_lines(conn, &chunk.chunk_id, lines)?;
        }
        filled += 1;
    }
    Ok(filled)
}
