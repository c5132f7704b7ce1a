//! Window maxima: for a query term in a segment, the highest BM25 score it has in each window of
//! chunk numbers, which the exact top-k ([`top_k`](super::top_k)) uses to skip what cannot make
//! the top `k`.
//!
//! A term's maxima are computed the first time a search needs them, by reading its postings in
//! that segment once, and kept with the open generation: the generation is immutable, and so are
//! its BM25 statistics and the scores. Only terms in more chunks of a segment than a window holds
//! have maxima; a rarer term is bounded by its score at unbounded frequency. The maxima an open
//! generation keeps are bounded in bytes ([`MAXIMA_BUDGET`]); past that, the least recently used
//! are dropped, and computed again when a search needs them. Maxima are upper bounds that hold
//! for deleted chunks too, so the result of a search does not depend on what is kept.

use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;
use tantivy::query::Bm25Weight;
use tantivy::schema::Field;
use tantivy::{Score, SegmentReader, Term};

use super::cursor::TermCursor;

/// Chunk numbers per window of a search.
pub const WINDOW: u32 = 4096;

/// The bytes of window maxima one open generation keeps at most (16 MiB: about 3,400 terms of a
/// generation of 5,000,000 chunks, 4 bytes per window).
pub const MAXIMA_BUDGET: usize = 16 << 20;

/// The window maxima of one open generation, computed when first needed.
pub struct WindowMaxima {
    window: u32,
    budget: usize,
    kept: Mutex<Kept>,
}

struct Kept {
    /// By segment ordinal and term.
    maxima: LruCache<(u32, Term), Arc<[Score]>>,
    bytes: usize,
}

impl WindowMaxima {
    /// Maxima over windows of `window` chunk numbers (a multiple of 64), keeping at most `budget`
    /// bytes of them.
    pub fn new(window: u32, budget: usize) -> Self {
        assert!(
            window >= 64 && window.is_multiple_of(64),
            "window {window} is not a multiple of 64"
        );
        Self {
            window,
            budget,
            kept: Mutex::new(Kept {
                maxima: LruCache::unbounded(),
                bytes: 0,
            }),
        }
    }

    /// Chunk numbers per window.
    pub fn window(&self) -> u32 {
        self.window
    }

    /// The maxima of `term` (of weight `weight`, in `doc_freq` chunks of `segment`, the
    /// generation's segment `ordinal`), or `None` for a term in no more chunks than a window
    /// holds.
    pub(super) fn of(
        &self,
        ordinal: u32,
        segment: &SegmentReader,
        field: Field,
        term: &Term,
        weight: &Bm25Weight,
        doc_freq: u32,
    ) -> tantivy::Result<Option<Arc<[Score]>>> {
        if doc_freq <= self.window {
            return Ok(None);
        }
        let key = (ordinal, term.clone());
        if let Some(maxima) = self.lock().maxima.get(&key) {
            return Ok(Some(Arc::clone(maxima)));
        }
        let maxima = self.compute(segment, field, term, weight)?;
        let mut kept = self.lock();
        let bytes = size_of_val(&*maxima);
        if let Some(old) = kept.maxima.put(key, Arc::clone(&maxima)) {
            kept.bytes -= size_of_val(&*old);
        }
        kept.bytes += bytes;
        while kept.bytes > self.budget {
            let Some((_, dropped)) = kept.maxima.pop_lru() else {
                break;
            };
            kept.bytes -= size_of_val(&*dropped);
        }
        Ok(Some(maxima))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        // What is kept is only ever whole entries: a panic elsewhere leaves it consistent.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads `term`'s postings in `segment` once.
    fn compute(
        &self,
        segment: &SegmentReader,
        field: Field,
        term: &Term,
        weight: &Bm25Weight,
    ) -> tantivy::Result<Arc<[Score]>> {
        let windows = segment.max_doc().div_ceil(self.window) as usize;
        let mut maxima = vec![0.0 as Score; windows];
        if let Some(mut postings) = TermCursor::open(segment, field, term, weight)? {
            while !postings.done() {
                let max = &mut maxima[(postings.doc() / self.window) as usize];
                *max = max.max(postings.score());
                postings.advance();
            }
        }
        Ok(maxima.into())
    }

    /// How many terms' maxima are kept, and their bytes.
    #[cfg(test)]
    fn kept(&self) -> (usize, usize) {
        let kept = self.lock();
        (kept.maxima.len(), kept.bytes)
    }
}

impl std::fmt::Debug for WindowMaxima {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowMaxima")
            .field("window", &self.window)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

/// The default for a search: [`WINDOW`] and [`MAXIMA_BUDGET`].
impl Default for WindowMaxima {
    fn default() -> Self {
        Self::new(WINDOW, MAXIMA_BUDGET)
    }
}

#[cfg(test)]
mod tests {
    use tantivy::postings::Postings;
    use tantivy::schema::IndexRecordOption;
    use tantivy::{DocSet, TERMINATED};

    use super::super::top::tests::{WORDS, segmented_index};
    use super::*;

    /// Every kept maximum is the highest score of its term in its window, every term past the
    /// window's worth of chunks has them, and the budget holds.
    #[test]
    fn maxima_are_each_windows_best_score_and_stay_within_the_budget() -> tantivy::Result<()> {
        let (searcher, body) = segmented_index()?;
        // Room for two of the 400-chunk segment's terms (7 windows of 4 bytes each).
        let maxima = WindowMaxima::new(64, 2 * 7 * 4);
        let (ordinal, segment) = searcher
            .segment_readers()
            .iter()
            .enumerate()
            .find(|(_, s)| s.max_doc() == 400)
            .expect("the 400-chunk segment");
        let norms = segment.get_fieldnorms_reader(body)?;
        let mut with_maxima = 0;
        for word in WORDS {
            let term = Term::from_field_text(body, word);
            let weight = Bm25Weight::for_terms(&searcher, std::slice::from_ref(&term))?;
            let mut postings = segment
                .inverted_index(body)?
                .read_postings(&term, IndexRecordOption::WithFreqs)?
                .expect("every word is in every segment");
            let got = maxima.of(
                ordinal as u32,
                segment,
                body,
                &term,
                &weight,
                postings.doc_freq(),
            )?;
            if postings.doc_freq() <= 64 {
                assert!(got.is_none(), "{word}");
                continue;
            }
            with_maxima += 1;
            let got = got.expect("a frequent word has maxima");
            let mut expected = [0.0 as Score; 7];
            let mut doc = postings.doc();
            while doc != TERMINATED {
                let score = weight.score(norms.fieldnorm_id(doc), postings.term_freq());
                let w = (doc / 64) as usize;
                expected[w] = expected[w].max(score);
                doc = postings.advance();
            }
            assert_eq!(&*got, &expected[..], "{word}");
            assert!(maxima.kept().1 <= 2 * 7 * 4, "{:?}", maxima.kept());
        }
        assert!(with_maxima > 2, "{with_maxima}");
        assert_eq!(maxima.kept(), (2, 2 * 7 * 4));
        Ok(())
    }
}
