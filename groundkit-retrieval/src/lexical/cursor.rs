//! A query term's postings in one segment, scored by BM25: the one postings cursor every ranker
//! and bound reads through, and the one source of BM25 weights (tantivy's [`Bm25Weight`], from
//! the statistics of the whole generation).

use tantivy::fieldnorm::FieldNormReader;
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::query::{Bm25StatisticsProvider, Bm25Weight};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Score, SegmentReader, TERMINATED, Term};

/// The BM25 weight of each of `terms` over the whole of what `statistics` counts (a generation's
/// searcher, or several collections' together): the same weight in every segment, so scores
/// compare across segments.
pub(super) fn weights(
    statistics: &dyn Bm25StatisticsProvider,
    terms: &[Term],
) -> tantivy::Result<Vec<Bm25Weight>> {
    terms
        .iter()
        .map(|term| Bm25Weight::for_terms(statistics, std::slice::from_ref(term)))
        .collect()
}

/// One term's postings in one segment, positioned on a chunk, with what scores it there.
pub(super) struct TermCursor {
    postings: SegmentPostings,
    weight: Bm25Weight,
    norms: FieldNormReader,
}

impl TermCursor {
    /// `term`'s postings in `segment`, or `None` when the segment has no chunk with it.
    pub(super) fn open(
        segment: &SegmentReader,
        field: Field,
        term: &Term,
        weight: &Bm25Weight,
    ) -> tantivy::Result<Option<Self>> {
        let Some(postings) = segment
            .inverted_index(field)?
            .read_postings(term, IndexRecordOption::WithFreqs)?
        else {
            return Ok(None);
        };
        Ok(Some(Self {
            postings,
            weight: weight.clone(),
            norms: segment.get_fieldnorms_reader(field)?,
        }))
    }

    /// The chunk the cursor is on ([`TERMINATED`] past the last).
    pub(super) fn doc(&self) -> u32 {
        self.postings.doc()
    }

    /// Moves to the next chunk with the term.
    pub(super) fn advance(&mut self) -> u32 {
        self.postings.advance()
    }

    /// Moves to the first chunk at or after `target` with the term.
    pub(super) fn seek(&mut self, target: u32) -> u32 {
        self.postings.seek(target)
    }

    /// Whether the cursor is past its last chunk.
    pub(super) fn done(&self) -> bool {
        self.doc() == TERMINATED
    }

    /// How many chunks of the segment have the term, deleted ones included.
    pub(super) fn doc_freq(&self) -> u32 {
        self.postings.doc_freq()
    }

    /// The term's score in the chunk the cursor is on.
    pub(super) fn score(&self) -> Score {
        let doc = self.postings.doc();
        self.weight
            .score(self.norms.fieldnorm_id(doc), self.postings.term_freq())
    }

    /// The highest score the term can have in any chunk (at unbounded frequency).
    pub(super) fn max_score(&self) -> Score {
        self.weight.max_score()
    }
}
