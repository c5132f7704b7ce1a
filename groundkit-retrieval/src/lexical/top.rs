//! The exact top `k` chunks of a query over every segment of a generation: MaxScore over windows
//! of chunk numbers, each term bounded in each window by the highest score it has there.
//!
//! A generation's segments are visited largest first and share one top `k`. Each segment is cut
//! into windows of [`WindowMaxima::window`] chunk numbers. In a window, every query term is
//! bounded by its window maximum ([`maxima`](super::maxima); a term in fewer chunks than a window
//! holds is bounded by its score at unbounded frequency). The terms whose bounds add up to less
//! than the k-th best score so far cannot lift a chunk into the top `k` on their own: their
//! postings are not read, but looked up by seeking, for the chunks the other terms bring up, and
//! only while the chunk could still make the top `k`. A window whose bounds all add up to less is
//! skipped. Nothing that can enter the top `k` is skipped, so the result is exact.
//!
//! A chunk's score is the sum of its terms' BM25 scores, added in `f64` and rounded once, so it
//! does not depend on the order pruning reaches the terms in: two chunks of the same terms and
//! length tie exactly, and the lower address wins, the ranking rule of a search. tantivy's
//! collector adds in `f32`, so a score can differ from its in the last bit, and two chunks whose
//! scores differ by that little can swap places (on SciFact's 809 training queries over 500,000
//! and 5,000,000 synthetic chunks, no query's top 10 differed from the collector's; bench/README.md,
//! "Window maxima").

use std::cmp::Reverse;
use std::sync::Arc;

use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::Field;
use tantivy::{DocAddress, Score, Searcher, Term};

use super::cursor::{TermCursor, weights};
use super::maxima::WindowMaxima;
use super::topn::{Ranked, TopN};

/// Which chunks may enter a ranking (a filter's decision, per chunk).
pub(crate) type Keep<'a> = &'a dyn Fn(DocAddress) -> bool;

/// What a top k is taken over: the chunks that may enter, and the statistics scores are
/// computed with.
#[derive(Clone, Copy, Default)]
pub(crate) struct Scope<'a> {
    /// The chunks a filter keeps (`None`: every chunk).
    pub(crate) keep: Option<Keep<'a>>,
    /// The statistics of a whole the generation is part of, for scores that compare across
    /// collections (`None`: the generation's own). A window maximum, computed with the
    /// generation's own weight, is raised to bound the score under these
    /// ([`bound_scale`]).
    pub(crate) statistics: Option<&'a dyn Bm25StatisticsProvider>,
}

/// The best `k` hits so far.
type Best = TopN<DocAddress>;

/// One query term's postings in one segment, with its window maxima there.
struct Cursor {
    postings: TermCursor,
    /// The term's highest score in each window, when it is in more chunks than a window holds.
    maxima: Option<Arc<[Score]>>,
    /// What a window maximum is multiplied by to bound the term's score (1 but for scores
    /// computed with other statistics than the maxima were).
    scale: f64,
}

impl Cursor {
    fn score(&self) -> f64 {
        f64::from(self.postings.score())
    }

    /// The highest score the term can have in window `w`.
    fn bound(&self, w: usize) -> f64 {
        if self.postings.done() {
            return 0.0;
        }
        match &self.maxima {
            Some(maxima) => f64::from(maxima[w]) * self.scale,
            None => f64::from(self.postings.max_score()),
        }
    }
}

/// The best `k` chunks for the distinct analysed `terms` (a disjunction of them, scored by BM25)
/// over `searcher`'s segments, best first; within `scope`: the best `k` of the chunks it keeps (a
/// chunk it leaves out is never offered, so the bounds stay bounds and the result exact), scored
/// with its statistics.
pub fn top_k(
    searcher: &Searcher,
    field: Field,
    terms: &[String],
    maxima: &WindowMaxima,
    k: usize,
    scope: Scope<'_>,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    let readers = searcher.segment_readers();
    let mut order: Vec<usize> = (0..readers.len()).collect();
    order.sort_by_key(|&ord| Reverse(readers[ord].num_docs()));
    top_k_in_order(searcher, field, terms, maxima, k, &order, scope)
}

/// [`top_k`], visiting the segments in `order` (any order gives the same hits).
fn top_k_in_order(
    searcher: &Searcher,
    field: Field,
    terms: &[String],
    maxima: &WindowMaxima,
    k: usize,
    order: &[usize],
    scope: Scope<'_>,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    if k == 0 || terms.is_empty() {
        return Ok(Vec::new());
    }
    let terms: Vec<Term> = terms
        .iter()
        .map(|t| Term::from_field_text(field, t))
        .collect();
    let own = weights(searcher, &terms)?;
    let (scored, scales) = match scope.statistics {
        None => (own.clone(), vec![1.0; terms.len()]),
        Some(whole) => (
            weights(whole, &terms)?,
            terms
                .iter()
                .map(|term| bound_scale(searcher, whole, term))
                .collect::<tantivy::Result<_>>()?,
        ),
    };
    let window = maxima.window();
    let mut best = Best::new(k);
    let mut sums = vec![0.0f64; window as usize];
    let mut seen = vec![0u64; window as usize / 64];
    for &ord in order {
        let segment = &searcher.segment_readers()[ord];
        let mut cursors = Vec::with_capacity(terms.len());
        for (i, term) in terms.iter().enumerate() {
            let Some(postings) = TermCursor::open(segment, field, term, &scored[i])? else {
                continue;
            };
            let weight = &own[i];
            let maxima = maxima.of(
                ord as u32,
                segment,
                field,
                term,
                weight,
                postings.doc_freq(),
            )?;
            cursors.push(Cursor {
                postings,
                maxima,
                scale: scales[i],
            });
        }
        let mut search = SegmentSearch {
            segment: ord as u32,
            alive: segment.alive_bitset(),
            keep: scope.keep,
            window,
            bounds: vec![0.0; cursors.len()],
            by_bound: (0..cursors.len()).collect(),
            cursors,
            sums: &mut sums,
            seen: &mut seen,
        };
        for w in 0..segment.max_doc().div_ceil(window) {
            search.window(w, &mut best);
        }
    }
    Ok(best
        .into_sorted()
        .into_iter()
        .map(|h| (h.score, h.key))
        .collect())
}

/// What `term`'s window maxima in `part` (scored with its own statistics) are multiplied by to
/// bound its scores under the statistics of `whole`, which `part` belongs to.
///
/// A BM25 score is `idf * (k1 + 1) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`. Under `whole`
/// the idf changes by the ratio of the two idfs; a larger average length shrinks the
/// denominator by at most the ratio of the averages, a smaller one only grows it. So every score
/// grows by at most `idf ratio * max(1, avgdl ratio)`, and the maxima times that stay bounds
/// (with a margin for rounding): the top k stays exact.
fn bound_scale(
    part: &Searcher,
    whole: &dyn Bm25StatisticsProvider,
    term: &Term,
) -> tantivy::Result<f64> {
    let field = term.field();
    let stats = |s: &dyn Bm25StatisticsProvider| -> tantivy::Result<(f64, f64)> {
        let docs = s.total_num_docs()? as f64;
        let freq = s.doc_freq(term)? as f64;
        let idf = (1.0 + (docs - freq + 0.5) / (freq + 0.5)).ln();
        let average = s.total_num_tokens(field)? as f64 / docs.max(1.0);
        Ok((idf, average))
    };
    let ((idf, average), (whole_idf, whole_average)) = (stats(part)?, stats(whole)?);
    if idf <= 0.0 || average <= 0.0 {
        return Ok(f64::INFINITY); // no bound: every window is read
    }
    Ok(whole_idf / idf * (whole_average / average).max(1.0) * (1.0 + 1e-4))
}

/// The search of one segment, window by window.
struct SegmentSearch<'a> {
    segment: u32,
    alive: Option<&'a tantivy::fastfield::AliveBitSet>,
    /// The chunks a filter keeps, when the search is filtered.
    keep: Option<Keep<'a>>,
    window: u32,
    cursors: Vec<Cursor>,
    /// Per cursor, its bound in the current window.
    bounds: Vec<f64>,
    /// The cursors by their bound in the current window, lowest first.
    by_bound: Vec<usize>,
    /// Per chunk of the window, the sum of the scores read so far.
    sums: &'a mut [f64],
    /// The chunks of the window some term brought up.
    seen: &'a mut [u64],
}

impl SegmentSearch<'_> {
    /// Offers `best` every chunk of window `w` that can enter it.
    fn window(&mut self, w: u32, best: &mut Best) {
        let start = w * self.window;
        let end = start.saturating_add(self.window);
        for (bound, cursor) in self.bounds.iter_mut().zip(&self.cursors) {
            *bound = cursor.bound(w as usize);
        }
        let (bounds, by_bound) = (&self.bounds, &mut self.by_bound);
        by_bound.sort_unstable_by(|&a, &b| bounds[a].total_cmp(&bounds[b]));
        let (bounds, by_bound) = (&self.bounds[..], &self.by_bound[..]);
        // The terms whose bounds add up to less than the threshold only look chunks up.
        let threshold = best.threshold();
        let mut looked_up = 0.0;
        let mut lookups = 0;
        for &c in by_bound {
            if looked_up + bounds[c] >= threshold {
                break;
            }
            looked_up += bounds[c];
            lookups += 1;
        }
        if lookups == by_bound.len() {
            return;
        }
        for &c in &by_bound[lookups..] {
            let cursor = &mut self.cursors[c];
            let mut doc = cursor.postings.doc();
            if doc < start {
                doc = cursor.postings.seek(start);
            }
            while doc < end {
                let slot = (doc - start) as usize;
                self.sums[slot] += cursor.score();
                self.seen[slot / 64] |= 1 << (slot % 64);
                doc = cursor.postings.advance();
            }
        }
        for word in 0..self.seen.len() {
            let mut bits = std::mem::take(&mut self.seen[word]);
            while bits != 0 {
                let slot = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let mut sum = std::mem::take(&mut self.sums[slot]);
                let doc = start + slot as u32;
                if self.alive.is_some_and(|alive| !alive.is_alive(doc)) {
                    continue;
                }
                let threshold = best.threshold();
                let mut rest = looked_up;
                if sum + rest < threshold {
                    continue;
                }
                // Read only for a chunk that could still enter: most never get this far.
                let address = DocAddress::new(self.segment, doc);
                if self.keep.is_some_and(|keep| !keep(address)) {
                    continue;
                }
                let mut reachable = true;
                for &c in by_bound[..lookups].iter().rev() {
                    rest -= bounds[c];
                    let cursor = &mut self.cursors[c];
                    if cursor.postings.doc() < doc {
                        cursor.postings.seek(doc);
                    }
                    if cursor.postings.doc() == doc {
                        sum += cursor.score();
                    }
                    if sum + rest < threshold {
                        reachable = false;
                        break;
                    }
                }
                if reachable {
                    best.offer(Ranked {
                        score: sum as Score,
                        key: DocAddress::new(self.segment, doc),
                    });
                }
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use tantivy::collector::TopDocs;
    use tantivy::postings::Postings;
    use tantivy::query::{Bm25Weight, BooleanQuery, Occur, Query, TermQuery};
    use tantivy::schema::{IndexRecordOption, STRING, Schema, TEXT};
    use tantivy::{DocSet, Index, IndexWriter, TERMINATED, TantivyDocument};

    use super::*;

    /// The words of [`segmented_index`].
    pub(in crate::lexical) const WORDS: [&str; 7] =
        ["ant", "bee", "cat", "dog", "eel", "fox", "gnu"];

    /// Four segments of different sizes, every ninth document deleted, and many exact ties: the
    /// same thirteen texts of one to six [`WORDS`] repeated in every segment. Returns the searcher
    /// and the text field.
    pub(in crate::lexical) fn segmented_index() -> tantivy::Result<(Searcher, Field)> {
        let mut schema = Schema::builder();
        let id = schema.add_text_field("id", STRING);
        let body = schema.add_text_field("body", TEXT);
        let index = Index::create_in_ram(schema.build());
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
        writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        let mut n = 0u32;
        for segment_size in [40, 400, 13, 150] {
            for _ in 0..segment_size {
                // Scores tie across segments, and the lower address must win.
                let m = (n % 13) as usize;
                let text: Vec<&str> = (0..1 + m % 6)
                    .map(|i| WORDS[(m * 5 + i * i) % WORDS.len()])
                    .collect();
                let mut doc = TantivyDocument::new();
                doc.add_text(id, n.to_string());
                doc.add_text(body, text.join(" "));
                writer.add_document(doc)?;
                n += 1;
            }
            writer.commit()?;
        }
        for deleted in (0..n).step_by(9) {
            writer.delete_term(Term::from_field_text(id, &deleted.to_string()));
        }
        writer.commit()?;
        let searcher = index.reader()?.searcher();
        assert_eq!(searcher.segment_readers().len(), 4);
        Ok((searcher, body))
    }

    /// Every live chunk scored, summed in `f64` and rounded once, then ranked by the rule: the
    /// exact answer, by brute force.
    fn every_chunk_scored(
        searcher: &Searcher,
        body: Field,
        words: &[&str],
        k: usize,
    ) -> tantivy::Result<Vec<(Score, DocAddress)>> {
        every_chunk_scored_in(searcher, searcher, body, words, k)
    }

    /// [`every_chunk_scored`], with the statistics of `whole`.
    fn every_chunk_scored_in(
        searcher: &Searcher,
        whole: &dyn Bm25StatisticsProvider,
        body: Field,
        words: &[&str],
        k: usize,
    ) -> tantivy::Result<Vec<(Score, DocAddress)>> {
        let mut hits = Vec::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            let norms = segment.get_fieldnorms_reader(body)?;
            let mut sums = vec![None::<f64>; segment.max_doc() as usize];
            for word in words {
                let term = Term::from_field_text(body, word);
                let weight = Bm25Weight::for_terms(whole, std::slice::from_ref(&term))?;
                let inverted = segment.inverted_index(body)?;
                let Some(mut postings) =
                    inverted.read_postings(&term, IndexRecordOption::WithFreqs)?
                else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    let score = weight.score(norms.fieldnorm_id(doc), postings.term_freq());
                    *sums[doc as usize].get_or_insert(0.0) += f64::from(score);
                    doc = postings.advance();
                }
            }
            for (doc, sum) in sums.into_iter().enumerate() {
                let doc = doc as u32;
                if let Some(sum) = sum
                    && segment.alive_bitset().is_none_or(|a| a.is_alive(doc))
                {
                    hits.push(Ranked {
                        score: sum as Score,
                        key: DocAddress::new(ord as u32, doc),
                    });
                }
            }
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        hits.truncate(k);
        Ok(hits.into_iter().map(|h| (h.score, h.key)).collect())
    }

    /// Segments of different sizes, deleted documents and many exact ties (repeated texts):
    /// every query at every `k`, visiting the segments in any order, with window maxima or
    /// without (a window larger than any segment), ranks every chunk exactly as scoring all of
    /// them does, and as tantivy's own collector does, up to the last bit of a score.
    #[test]
    fn ranks_exactly_as_scoring_every_chunk_across_segments_deletes_and_ties() -> tantivy::Result<()>
    {
        let (searcher, body) = segmented_index()?;
        let term = |w: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_text(body, w),
                IndexRecordOption::WithFreqs,
            ))
        };
        for terms in [
            &["ant"][..],
            &["bee", "gnu"],
            &["cat", "dog", "eel"],
            &["gnu", "ant", "fox", "bee"],
            &WORDS,
        ] {
            let texts: Vec<String> = terms.iter().map(|w| w.to_string()).collect();
            let query = BooleanQuery::new(terms.iter().map(|w| (Occur::Should, term(w))).collect());
            for k in [1, 3, 10, 60, 1000] {
                let expected = every_chunk_scored(&searcher, body, terms, k)?;
                let collector =
                    searcher.search(&query, &TopDocs::with_limit(k).order_by_score())?;
                assert_eq!(collector.len(), expected.len(), "{terms:?}, k {k}");
                for ((a, _), (b, _)) in collector.iter().zip(&expected) {
                    assert!((a - b).abs() <= a.abs() * 1e-6, "{terms:?}, k {k}: {a} {b}");
                }
                // Windows of 64 chunks: the frequent words of the larger segments have maxima.
                for maxima in [
                    WindowMaxima::new(64, 1 << 20),
                    WindowMaxima::new(4096, 1 << 20),
                ] {
                    let got = top_k(&searcher, body, &texts, &maxima, k, Scope::default())?;
                    assert_eq!(got, expected, "{terms:?}, k {k}, {maxima:?}");
                    for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
                        let got = top_k_in_order(
                            &searcher,
                            body,
                            &texts,
                            &maxima,
                            k,
                            &order,
                            Scope::default(),
                        )?;
                        assert_eq!(got, expected, "{terms:?}, k {k}, segments {order:?}");
                    }
                }
            }
        }
        Ok(())
    }

    /// Scored with the statistics of a whole it is part of (a second index with other
    /// frequencies and far longer chunks), a generation's top k is still exactly what scoring
    /// every chunk with those statistics gives: the raised window maxima stay bounds.
    #[test]
    fn ranks_exactly_with_the_statistics_of_a_larger_whole() -> tantivy::Result<()> {
        let (searcher, body) = segmented_index()?;
        let mut schema = Schema::builder();
        schema.add_text_field("id", STRING);
        let other_body = schema.add_text_field("body", TEXT);
        let other = Index::create_in_ram(schema.build());
        let mut writer: IndexWriter = other.writer_with_num_threads(1, 15_000_000)?;
        for n in 0..300 {
            let mut doc = TantivyDocument::new();
            let words = ["ant", "ant", "bee", "cat", "gnu"];
            let long: Vec<&str> = (0..(5 + n % 40)).map(|i| words[(n + i) % 5]).collect();
            doc.add_text(other_body, long.join(" "));
            writer.add_document(doc)?;
        }
        writer.commit()?;
        let other = other.reader()?.searcher();
        assert_eq!(body, other_body, "both indexes number the field alike");
        let whole = crate::lexical::Together(vec![&searcher, &other]);
        for terms in [
            &["ant"][..],
            &["bee", "gnu"],
            &["cat", "dog", "eel"],
            &WORDS,
        ] {
            let texts: Vec<String> = terms.iter().map(|w| w.to_string()).collect();
            for k in [1, 3, 10, 60] {
                let expected = every_chunk_scored_in(&searcher, &whole, body, terms, k)?;
                let maxima = WindowMaxima::new(64, 1 << 20);
                let scope = Scope {
                    keep: None,
                    statistics: Some(&whole),
                };
                let got = top_k(&searcher, body, &texts, &maxima, k, scope)?;
                assert_eq!(got, expected, "{terms:?}, k {k}");
                let own = top_k(&searcher, body, &texts, &maxima, k, Scope::default())?;
                assert_ne!(
                    own.iter().map(|h| h.0).collect::<Vec<_>>(),
                    got.iter().map(|h| h.0).collect::<Vec<_>>(),
                    "the whole's statistics change the scores"
                );
            }
        }
        Ok(())
    }
}
