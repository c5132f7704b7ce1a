//! Champion lists: the file that bounds a generation's lexical search, written by an ingest
//! asked for it (`IngestOptions::lexical_bound`), and read by every search of that generation.
//!
//! For every term in more than `bound` chunks, the file keeps the `bound` live chunks where that
//! term alone scores highest (its BM25 score, as tantivy computes it), in chunk order, with those
//! scores; rarer terms have none. The search that uses them is [`super::bounded_top_k`].
//!
//! Layout of `champions.bin` (little endian): the magic `GKCHMP01`, the bound (u32), the number
//! of segments (u32), and per segment its id (32 hex digits), `max_doc` and deleted-document
//! count (u32 each), checked against the searcher that opens the file; then each list's chunks
//! (u32, numbered across segments in the searcher's order) followed by its scores (f32); then the
//! table of lists (per term: its length in bytes, its bytes, its document frequency and its
//! number of entries, u32 each); then the table's offset (u64), the number of lists (u32) and
//! the magic again.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::{self, Write};
use std::ops::Range;

use tantivy::directory::OwnedBytes;
use tantivy::postings::Postings;
use tantivy::query::Bm25Weight;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Score, Searcher, TERMINATED, Term};

use super::top::Ranked;
use groundkit_core::Error;

/// The champion lists' file, inside a generation's directory.
pub const FILE_NAME: &str = "champions.bin";

const MAGIC: &[u8; 8] = b"GKCHMP01";

/// The statistics BM25 needs beyond a term's document frequency, as tantivy computes them for a
/// searcher: every document of every segment, deleted ones included.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bm25Stats {
    pub(crate) total_docs: u64,
    pub(crate) average_fieldnorm: Score,
}

impl Bm25Stats {
    pub(crate) fn of(searcher: &Searcher, field: Field) -> tantivy::Result<Self> {
        let mut tokens = 0u64;
        let mut total_docs = 0u64;
        for segment in searcher.segment_readers() {
            tokens += segment.inverted_index(field)?.total_num_tokens();
            total_docs += u64::from(segment.max_doc());
        }
        Ok(Self {
            total_docs,
            average_fieldnorm: tokens as Score / total_docs.max(1) as Score,
        })
    }

    /// The weight of a term in `doc_freq` documents: tantivy's, for a one-term query.
    pub(crate) fn weight(&self, doc_freq: u64) -> Bm25Weight {
        Bm25Weight::for_one_term_without_explain(doc_freq, self.total_docs, self.average_fieldnorm)
    }
}

/// One generation's champion lists, opened against its searcher.
pub struct Champions {
    bytes: OwnedBytes,
    bound: u32,
    lists: HashMap<Box<[u8]>, Stored>,
}

/// Where one list is: its term's document frequency, and the byte ranges of its chunks and
/// scores.
struct Stored {
    doc_freq: u64,
    docs: Range<usize>,
    scores: Range<usize>,
}

impl std::fmt::Debug for Champions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Champions")
            .field("bound", &self.bound)
            .field("lists", &self.lists.len())
            .finish_non_exhaustive()
    }
}

/// A term's champion list: its chunks in order, each with the term's score there.
#[derive(Clone, Copy)]
pub(crate) struct List<'a> {
    docs: &'a [u8],
    scores: &'a [u8],
}

impl List<'_> {
    pub(crate) fn len(&self) -> usize {
        self.docs.len() / 4
    }

    #[inline]
    pub(crate) fn doc(&self, i: usize) -> u32 {
        u32::from_le_bytes(self.docs[4 * i..4 * i + 4].try_into().expect("4 bytes"))
    }

    /// The chunks and their scores from the `from`-th on.
    #[inline]
    pub(crate) fn entries_from(&self, from: usize) -> impl Iterator<Item = (u32, Score)> + '_ {
        let docs = self.docs[4 * from..].chunks_exact(4);
        let scores = self.scores[4 * from..].chunks_exact(4);
        docs.zip(scores).map(|(doc, score)| {
            (
                u32::from_le_bytes(doc.try_into().expect("4 bytes")),
                f32::from_le_bytes(score.try_into().expect("4 bytes")),
            )
        })
    }
}

fn corrupt(what: &str) -> Error {
    Error::Storage {
        message: format!("the champion lists are unreadable: {what}"),
        source: None,
    }
}

/// Reads the file's fields front to back, refusing to read past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], Error> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| corrupt("truncated"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

/// Each segment's id, `max_doc` and deleted-document count, as the file records them.
fn segment_header(searcher: &Searcher) -> Vec<u8> {
    let mut header = Vec::new();
    for segment in searcher.segment_readers() {
        header.extend_from_slice(segment.segment_id().uuid_string().as_bytes());
        header.extend_from_slice(&segment.max_doc().to_le_bytes());
        header.extend_from_slice(&segment.num_deleted_docs().to_le_bytes());
    }
    header
}

impl Champions {
    /// Reads the champion lists in `bytes`, written for the generation `searcher` reads; a file
    /// written for other segments is refused.
    pub fn from_bytes(bytes: OwnedBytes, searcher: &Searcher) -> Result<Self, Error> {
        let all = bytes.as_slice();
        if all.len() < 8 + 20 || &all[..8] != MAGIC || &all[all.len() - 8..] != MAGIC {
            return Err(corrupt("not a champion lists file"));
        }
        let mut header = Reader { bytes: all, at: 8 };
        let bound = header.u32()?;
        let segments = header.u32()? as usize;
        let expected = segment_header(searcher);
        if segments != searcher.segment_readers().len()
            || header.take(expected.len())? != expected.as_slice()
        {
            return Err(corrupt("written for other segments"));
        }
        let entries_start = header.at;
        let mut trailer = Reader {
            bytes: all,
            at: all.len() - 20,
        };
        let table_start = usize::try_from(trailer.u64()?).map_err(|_| corrupt("bad table"))?;
        let count = trailer.u32()? as usize;
        if table_start < entries_start || table_start > all.len() - 20 {
            return Err(corrupt("bad table"));
        }
        let mut table = Reader {
            bytes: &all[..all.len() - 20],
            at: table_start,
        };
        let mut lists = HashMap::with_capacity(count);
        let mut at = entries_start;
        for _ in 0..count {
            let len = table.u32()? as usize;
            let term: Box<[u8]> = table.take(len)?.into();
            let doc_freq = u64::from(table.u32()?);
            let entries = table.u32()? as usize;
            let docs = at..at + 4 * entries;
            let scores = docs.end..docs.end + 4 * entries;
            if scores.end > table_start {
                return Err(corrupt("a list runs past its end"));
            }
            at = scores.end;
            lists.insert(
                term,
                Stored {
                    doc_freq,
                    docs,
                    scores,
                },
            );
        }
        if at != table_start || table.at != all.len() - 20 {
            return Err(corrupt("bad table"));
        }
        Ok(Self {
            bytes,
            bound,
            lists,
        })
    }

    /// The most chunks a list holds: terms in more chunks than this have one.
    pub fn bound(&self) -> u32 {
        self.bound
    }

    /// The list of the term whose bytes are `term`, with the term's document frequency.
    pub(crate) fn list(&self, term: &[u8]) -> Option<(u64, List<'_>)> {
        let stored = self.lists.get(term)?;
        let bytes = self.bytes.as_slice();
        Some((
            stored.doc_freq,
            List {
                docs: &bytes[stored.docs.clone()],
                scores: &bytes[stored.scores.clone()],
            },
        ))
    }
}

/// One chunk of a champion list being chosen, keyed by its number.
type Entry = Ranked<u32>;

/// The terms of `field` in more than `bound` documents of `searcher`, with their document
/// frequencies, in byte order. A term in more than `bound` documents of `s` segments is in more
/// than `bound / s` of at least one, so only those terms are looked up everywhere.
fn frequent_terms(
    searcher: &Searcher,
    field: Field,
    bound: u32,
) -> tantivy::Result<Vec<(Vec<u8>, u64)>> {
    let segments = searcher.segment_readers();
    let per_segment = u64::from(bound) / segments.len().max(1) as u64;
    let mut candidates = std::collections::BTreeSet::new();
    for segment in segments {
        let inverted = segment.inverted_index(field)?;
        let mut stream = inverted.terms().stream()?;
        while stream.advance() {
            if u64::from(stream.value().doc_freq) > per_segment {
                candidates.insert(stream.key().to_vec());
            }
        }
    }
    let mut frequent = Vec::new();
    for bytes in candidates {
        let term = Term::from_field_bytes(field, &bytes);
        let doc_freq = searcher.doc_freq(&term)?;
        if doc_freq > u64::from(bound) {
            frequent.push((bytes, doc_freq));
        }
    }
    Ok(frequent)
}

/// The best `bound` live documents of one term, in document order (numbered across segments).
fn champions_of(
    searcher: &Searcher,
    field: Field,
    term: &Term,
    weight: &Bm25Weight,
    bound: usize,
) -> tantivy::Result<Vec<Entry>> {
    let mut best: BinaryHeap<Reverse<Entry>> = BinaryHeap::with_capacity(bound + 1);
    let mut base = 0u32;
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(field)?;
        let fieldnorms = segment.get_fieldnorms_reader(field)?;
        let alive = segment.alive_bitset();
        if let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::WithFreqs)? {
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|alive| alive.is_alive(doc)) {
                    let score = weight.score(fieldnorms.fieldnorm_id(doc), postings.term_freq());
                    let entry = Entry {
                        score,
                        key: base + doc,
                    };
                    if best.len() < bound {
                        best.push(Reverse(entry));
                    } else if let Some(mut worst) = best.peek_mut()
                        && entry > worst.0
                    {
                        *worst = Reverse(entry);
                    }
                }
                doc = postings.advance();
            }
        }
        base += segment.max_doc();
    }
    let mut entries: Vec<Entry> = best.into_iter().map(|Reverse(e)| e).collect();
    entries.sort_unstable_by_key(|e| e.key);
    Ok(entries)
}

/// Writes the champion lists of `field` over `searcher`'s generation to `out`: for every term in
/// more than `bound` documents, the `bound` live documents where it scores highest. Returns how
/// many terms have a list.
pub fn write(
    searcher: &Searcher,
    field: Field,
    bound: u32,
    out: &mut impl Write,
) -> Result<usize, Error> {
    let failed = |err: tantivy::TantivyError| Error::storage("cannot write champion lists", err);
    let io_failed = |err: io::Error| Error::storage("cannot write champion lists", err);
    let stats = Bm25Stats::of(searcher, field).map_err(failed)?;
    let frequent = frequent_terms(searcher, field, bound).map_err(failed)?;
    let segments = u32::try_from(searcher.segment_readers().len())
        .map_err(|_| Error::internal("too many segments"))?;
    let mut written = 0u64;
    let mut put = |out: &mut dyn Write, bytes: &[u8]| -> Result<u64, Error> {
        written += bytes.len() as u64;
        out.write_all(bytes).map_err(io_failed)?;
        Ok(written)
    };
    put(out, MAGIC)?;
    put(out, &bound.to_le_bytes())?;
    put(out, &segments.to_le_bytes())?;
    let mut table_start = put(out, &segment_header(searcher))?;
    let mut table = Vec::new();
    for (bytes, doc_freq) in &frequent {
        let term = Term::from_field_bytes(field, bytes);
        let weight = stats.weight(*doc_freq);
        let entries =
            champions_of(searcher, field, &term, &weight, bound as usize).map_err(failed)?;
        let mut list = Vec::with_capacity(8 * entries.len());
        list.extend(entries.iter().flat_map(|e| e.key.to_le_bytes()));
        list.extend(entries.iter().flat_map(|e| e.score.to_le_bytes()));
        table_start = put(out, &list)?;
        table.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        table.extend_from_slice(bytes);
        let doc_freq = u32::try_from(*doc_freq).map_err(|_| Error::internal("too many chunks"))?;
        table.extend_from_slice(&doc_freq.to_le_bytes());
        table.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    }
    put(out, &table)?;
    put(out, &table_start.to_le_bytes())?;
    put(out, &(frequent.len() as u32).to_le_bytes())?;
    put(out, MAGIC)?;
    Ok(frequent.len())
}

/// The bound of the champion lists in generation directory `dir`, or `None` when it has none.
#[cfg(feature = "ingest")]
pub(crate) fn bound_in(dir: &std::path::Path) -> Result<Option<u32>, Error> {
    use std::io::Read;
    let mut file = match std::fs::File::open(dir.join(FILE_NAME)) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::storage("cannot read the champion lists", err)),
    };
    let mut head = [0u8; 12];
    file.read_exact(&mut head)
        .map_err(|err| Error::storage("cannot read the champion lists", err))?;
    if &head[..8] != MAGIC {
        return Err(corrupt("not a champion lists file"));
    }
    Ok(Some(u32::from_le_bytes(
        head[8..].try_into().expect("4 bytes"),
    )))
}

/// Writes `champions.bin` of bound `bound` for the generation committed in `dir`.
#[cfg(feature = "ingest")]
pub(crate) fn write_generation(
    dir: &std::path::Path,
    fields: &super::Fields,
    bound: u32,
) -> Result<usize, Error> {
    let failed = |err| Error::storage("cannot open the new lexical generation", err);
    let index = tantivy::Index::open_in_dir(dir).map_err(failed)?;
    let reader = index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()
        .map_err(failed)?;
    let io_failed = |err| Error::storage("cannot write champion lists", err);
    let file = std::fs::File::create_new(dir.join(FILE_NAME)).map_err(io_failed)?;
    let mut out = io::BufWriter::with_capacity(1 << 20, file);
    let lists = write(&reader.searcher(), fields.content, bound, &mut out)?;
    let file = out
        .into_inner()
        .map_err(|err| io_failed(err.into_error()))?;
    file.sync_all().map_err(io_failed)?;
    Ok(lists)
}
