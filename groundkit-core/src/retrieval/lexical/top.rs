//! The best `k` hits of a scored query over every segment of a generation, with block-max WAND
//! pruning that carries its threshold from one segment to the next.
//!
//! tantivy's `TopDocs` collector ranks each segment on its own, so each segment's pruning
//! starts from no threshold and scores its way up to the k-th best score again. Here the
//! segments share one top-k: the largest segment goes first, and every later one starts from
//! the k-th best score found so far, so it skips every block that cannot beat it. The ranking
//! rule is the collector's: by score, ties to the lower address. A score can differ from the
//! collector's in its last bit, because block-max WAND adds a document's term scores in the
//! order its pruning reaches them (over 500,000 synthetic chunks, one of SciFact's 300 test
//! queries swapped two hits whose scores differed by one unit in the last place).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use tantivy::query::{EnableScoring, Query};
use tantivy::{DocAddress, Score, Searcher};

/// A scored item; greater is better: a higher score, or the same score at a lower key (the
/// ranking rule of a search, the key being a chunk's address or number).
#[derive(Clone, Copy)]
pub(super) struct Ranked<K> {
    pub(super) score: Score,
    pub(super) key: K,
}

impl<K: Ord> Ord for Ranked<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.key.cmp(&self.key))
    }
}

impl<K: Ord> PartialOrd for Ranked<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: Ord> PartialEq for Ranked<K> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<K: Ord> Eq for Ranked<K> {}

/// One hit.
type Hit = Ranked<DocAddress>;

/// The best `k` hits so far; the worst of them on top of the heap.
struct Best {
    k: usize,
    heap: BinaryHeap<Reverse<Hit>>,
}

impl Best {
    fn offer(&mut self, hit: Hit) {
        if self.heap.len() < self.k {
            self.heap.push(Reverse(hit));
        } else if self.heap.peek().is_some_and(|Reverse(worst)| hit > *worst) {
            self.heap.pop();
            self.heap.push(Reverse(hit));
        }
    }

    /// The score a hit must reach to be offered: pruning skips what scores at or below it. Just
    /// under the k-th best score, so a hit that ties it still reaches `offer`, which keeps the
    /// lower address.
    fn threshold(&self) -> Score {
        match self.heap.peek() {
            Some(Reverse(worst)) if self.heap.len() == self.k => worst.score.next_down(),
            _ => Score::MIN,
        }
    }
}

/// The best `k` hits of `query` over `searcher`'s segments, best first.
pub fn top_k(
    searcher: &Searcher,
    query: &dyn Query,
    k: usize,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    if k == 0 {
        return Ok(Vec::new());
    }
    let readers = searcher.segment_readers();
    let mut order: Vec<usize> = (0..readers.len()).collect();
    order.sort_by_key(|&ord| Reverse(readers[ord].num_docs()));
    top_k_in_order(searcher, query, k, &order)
}

/// [`top_k`], visiting the segments in `order` (any order gives the same hits).
fn top_k_in_order(
    searcher: &Searcher,
    query: &dyn Query,
    k: usize,
    order: &[usize],
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    let weight = query.weight(EnableScoring::enabled_from_searcher(searcher))?;
    let readers = searcher.segment_readers();
    let mut best = Best {
        k,
        heap: BinaryHeap::with_capacity(k + 1),
    };
    for &ord in order {
        let reader = &readers[ord];
        let segment = ord as u32;
        let alive = reader.alive_bitset();
        let start = best.threshold();
        weight.for_each_pruning(start, reader, &mut |doc, score| {
            if alive.is_none_or(|bits| bits.is_alive(doc)) {
                best.offer(Ranked {
                    score,
                    key: DocAddress::new(segment, doc),
                });
            }
            best.threshold()
        })?;
    }
    let mut hits: Vec<Hit> = best.heap.into_iter().map(|Reverse(hit)| hit).collect();
    hits.sort_unstable_by(|a, b| b.cmp(a));
    Ok(hits.into_iter().map(|h| (h.score, h.key)).collect())
}

#[cfg(test)]
pub(super) mod tests {
    use tantivy::collector::TopDocs;
    use tantivy::query::{BooleanQuery, Occur, TermQuery};
    use tantivy::schema::{Field, IndexRecordOption, STRING, Schema, TEXT};
    use tantivy::{Index, IndexWriter, TantivyDocument, Term};

    use super::*;

    /// The words of [`segmented_index`].
    pub(in crate::retrieval::lexical) const WORDS: [&str; 7] =
        ["ant", "bee", "cat", "dog", "eel", "fox", "gnu"];

    /// Four segments of different sizes, every ninth document deleted, and many exact ties: the
    /// same thirteen texts of one to six [`WORDS`] repeated in every segment. Returns the searcher
    /// and the text field.
    pub(in crate::retrieval::lexical) fn segmented_index() -> tantivy::Result<(Searcher, Field)> {
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

    /// Segments of different sizes, deleted documents and many exact ties (repeated texts):
    /// every query at every `k`, visiting the segments in any order, ranks exactly as tantivy's
    /// own collector does.
    #[test]
    fn ranks_exactly_as_the_collector_does_across_segments_deletes_and_ties() -> tantivy::Result<()>
    {
        let (searcher, body) = segmented_index()?;
        let words = WORDS;
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
            &words,
        ] {
            let query = BooleanQuery::new(terms.iter().map(|w| (Occur::Should, term(w))).collect());
            for k in [1, 3, 10, 60, 1000] {
                let expected = searcher.search(&query, &TopDocs::with_limit(k).order_by_score())?;
                assert_eq!(top_k(&searcher, &query, k)?, expected, "{terms:?}, k {k}");
                // Whatever the order, ties go to the lower address.
                for order in [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
                    let got = top_k_in_order(&searcher, &query, k, &order)?;
                    assert_eq!(got, expected, "{terms:?}, k {k}, segments {order:?}");
                }
            }
        }
        Ok(())
    }
}
