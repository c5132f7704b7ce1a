//! Bounded lexical search: the top-k of a query over a generation that has champion lists, reading
//! at most `bound` postings per query term whatever the collection's size.
//!
//! Every query term in more than `bound` chunks contributes its champion list (the `bound` chunks
//! where it scores highest); every rarer term contributes its whole posting list, which is no
//! longer. The chunks these lists bring up are ranked by the sum of the scores the lists hold,
//! which can only fall short of a chunk's BM25 score (a frequent term it holds outside the term's
//! champions is missing). The best [`RESCORED`] of them (or the number asked for, if more) are then
//! scored exactly, the missing terms looked up in their posting lists, and ranked by that score
//! with a search's rule (by score, ties to the lower address). Every score returned is the chunk's
//! BM25 score; what is approximate is which chunks are considered: one that is in no champion
//! list of its frequent terms, and holds none of the rarer ones, is never found.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tantivy::postings::Postings;
use tantivy::query::Bm25Weight;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, DocSet, Score, Searcher, TERMINATED, Term};

use super::champions::{Bm25Stats, Champions, List};
use super::top::Ranked;

/// The fewest best candidates a search scores exactly. Chosen on SciFact's training queries
/// hidden among 500k and 5M synthetic chunks: 300 gained 0.0006-0.019 nDCG@10 over 100 (the
/// most where the bound was smallest against the collection) for 0.1-0.3 ms
/// (`bench/README.md`, "Bounded lexical search").
pub const RESCORED: usize = 300;

/// Chunk numbers are accumulated in windows of this many.
const WINDOW: usize = 4096;

/// One query term's postings, numbered across segments.
enum Source<'a> {
    /// A frequent term's champion list.
    Champions(List<'a>),
    /// A rarer term's whole posting list, scored.
    Whole(Vec<(u32, Score)>),
}

impl Source<'_> {
    fn len(&self) -> usize {
        match self {
            Self::Champions(list) => list.len(),
            Self::Whole(postings) => postings.len(),
        }
    }

    fn doc(&self, i: usize) -> u32 {
        match self {
            Self::Champions(list) => list.doc(i),
            Self::Whole(postings) => postings[i].0,
        }
    }
}

/// One window's sums: per chunk of the window, its score so far, the bits of the champion lists
/// holding it, and whether anything holds it.
struct Window {
    start: u32,
    scores: Box<[Score; WINDOW]>,
    found: Box<[u64; WINDOW]>,
    seen: [u64; WINDOW / 64],
}

impl Window {
    /// Adds the postings `postings` yields from `*at` on, up to the window's end.
    #[inline]
    fn add(&mut self, bit: u64, at: &mut usize, postings: impl Iterator<Item = (u32, Score)>) {
        let end = self.start.saturating_add(WINDOW as u32);
        for (doc, score) in postings {
            if doc >= end {
                break;
            }
            // Below `WINDOW`: the mask only tells the compiler so.
            let slot = (doc - self.start) as usize & (WINDOW - 1);
            self.scores[slot] += score;
            self.found[slot] |= bit;
            self.seen[slot / 64] |= 1 << (slot % 64);
            *at += 1;
        }
    }
}

/// A chunk brought up by the lists, keyed by its number and the bits of the champion lists that
/// hold it (bit `j` for the `j`-th frequent term); a chunk is one candidate, so the bits never
/// decide between two.
type Candidate = Ranked<(u32, u64)>;

/// A frequent query term: its weight, and the bit its champion list sets (none past 64 terms:
/// such a term only adds its score to candidates the others found).
struct Frequent<'a> {
    term: Term,
    weight: Bm25Weight,
    bit: u64,
    list: List<'a>,
}

/// The best `limit` chunks for the distinct analysed `terms`, best first, the best `rescored`
/// candidates (or `limit`, if more) scored exactly; `None` when no term has a champion list (the
/// exact search then reads no more than this one would). A search rescores [`RESCORED`].
pub fn bounded_top_k(
    searcher: &Searcher,
    field: Field,
    champions: &Champions,
    terms: &[String],
    limit: usize,
    rescored: usize,
) -> tantivy::Result<Option<Vec<(Score, DocAddress)>>> {
    let mut frequent = Vec::new();
    let mut rare = Vec::new();
    for text in terms {
        let term = Term::from_field_text(field, text);
        match champions.list(text.as_bytes()) {
            Some((doc_freq, list)) => frequent.push((term, doc_freq, list)),
            None => rare.push(term),
        }
    }
    if frequent.is_empty() || limit == 0 {
        return Ok(None);
    }
    let stats = Bm25Stats::of(searcher, field)?;
    let frequent: Vec<Frequent<'_>> = frequent
        .into_iter()
        .enumerate()
        .map(|(j, (term, doc_freq, list))| Frequent {
            term,
            weight: stats.weight(doc_freq),
            bit: if j < 64 { 1 << j } else { 0 },
            list,
        })
        .collect();
    let mut sources: Vec<(u64, Source<'_>)> = frequent
        .iter()
        .filter(|f| f.bit != 0)
        .map(|f| (f.bit, Source::Champions(f.list)))
        .collect();
    for term in &rare {
        sources.push((
            0,
            Source::Whole(whole_postings(searcher, field, term, &stats)?),
        ));
    }
    let depth = limit.max(rescored);
    let mut candidates = accumulate(&sources, depth);
    rescore(searcher, field, &frequent, &mut candidates)?;
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.truncate(limit);
    let bases = segment_bases(searcher);
    Ok(Some(
        candidates
            .into_iter()
            .map(|c| (c.score, address(&bases, c.key.0)))
            .collect(),
    ))
}

/// The number of each segment's first chunk, in the searcher's order.
fn segment_bases(searcher: &Searcher) -> Vec<u32> {
    let mut base = 0;
    searcher
        .segment_readers()
        .iter()
        .map(|segment| {
            let first = base;
            base += segment.max_doc();
            first
        })
        .collect()
}

fn address(bases: &[u32], doc: u32) -> DocAddress {
    let segment = bases.partition_point(|&base| base <= doc) - 1;
    DocAddress::new(segment as u32, doc - bases[segment])
}

/// The scored live postings of a term with no champion list, numbered across segments.
fn whole_postings(
    searcher: &Searcher,
    field: Field,
    term: &Term,
    stats: &Bm25Stats,
) -> tantivy::Result<Vec<(u32, Score)>> {
    let mut per_segment = Vec::new();
    let mut doc_freq = 0u64;
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(field)?;
        let info = inverted.get_term_info(term)?;
        doc_freq += info.as_ref().map_or(0, |i| u64::from(i.doc_freq));
        per_segment.push((inverted, info));
    }
    let weight = stats.weight(doc_freq);
    let mut postings = Vec::with_capacity(doc_freq as usize);
    let mut base = 0u32;
    for (segment, (inverted, info)) in searcher.segment_readers().iter().zip(per_segment) {
        if let Some(info) = info {
            let fieldnorms = segment.get_fieldnorms_reader(field)?;
            let alive = segment.alive_bitset();
            let mut list =
                inverted.read_postings_from_terminfo(&info, IndexRecordOption::WithFreqs)?;
            let mut doc = list.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|alive| alive.is_alive(doc)) {
                    let score = weight.score(fieldnorms.fieldnorm_id(doc), list.term_freq());
                    postings.push((base + doc, score));
                }
                doc = list.advance();
            }
        }
        base += segment.max_doc();
    }
    Ok(postings)
}

/// The best `depth` chunks by the sum of the scores `sources` hold for them, in no order.
fn accumulate(sources: &[(u64, Source<'_>)], depth: usize) -> Vec<Candidate> {
    let mut cursors = vec![0usize; sources.len()];
    let mut window = Window {
        start: 0,
        scores: Box::new([0.0; WINDOW]),
        found: Box::new([0; WINDOW]),
        seen: [0; WINDOW / 64],
    };
    let mut best: BinaryHeap<Reverse<Candidate>> = BinaryHeap::with_capacity(depth + 1);
    // The worst score among `depth` candidates kept: a chunk scoring less cannot enter.
    let mut floor = Score::NEG_INFINITY;
    loop {
        let start = sources
            .iter()
            .zip(&cursors)
            .filter(|((_, source), at)| **at < source.len())
            .map(|((_, source), &at)| source.doc(at))
            .min();
        let Some(start) = start else { break };
        window.start = start;
        for ((bit, source), at) in sources.iter().zip(cursors.iter_mut()) {
            match source {
                Source::Champions(list) => {
                    let from = *at;
                    window.add(*bit, at, list.entries_from(from))
                }
                Source::Whole(postings) => window.add(*bit, at, postings[*at..].iter().copied()),
            }
        }
        for (word, bits) in window.seen.iter_mut().enumerate() {
            let mut rest = *bits;
            while rest != 0 {
                let slot = (word * 64 + rest.trailing_zeros() as usize) & (WINDOW - 1);
                rest &= rest - 1;
                let candidate = Candidate {
                    score: window.scores[slot],
                    key: (start + slot as u32, window.found[slot]),
                };
                window.scores[slot] = 0.0;
                window.found[slot] = 0;
                if candidate.score < floor {
                    continue;
                }
                if best.len() < depth {
                    best.push(Reverse(candidate));
                } else if let Some(mut worst) = best.peek_mut()
                    && candidate > worst.0
                {
                    *worst = Reverse(candidate);
                }
                if best.len() == depth {
                    floor = best.peek().map_or(floor, |worst| worst.0.score);
                }
            }
            *bits = 0;
        }
    }
    best.into_iter().map(|Reverse(c)| c).collect()
}

/// Adds to each candidate the score of every frequent term it holds outside that term's champion
/// list, read from the term's posting lists: the candidates' scores become their BM25 scores.
fn rescore(
    searcher: &Searcher,
    field: Field,
    frequent: &[Frequent<'_>],
    candidates: &mut [Candidate],
) -> tantivy::Result<()> {
    candidates.sort_unstable_by_key(|c| c.key.0);
    let mut base = 0u32;
    let mut rest = &mut candidates[..];
    for segment in searcher.segment_readers() {
        let end = base + segment.max_doc();
        let split = rest.partition_point(|c| c.key.0 < end);
        let (here, later) = rest.split_at_mut(split);
        rest = later;
        if !here.is_empty() {
            let inverted = segment.inverted_index(field)?;
            let fieldnorms = segment.get_fieldnorms_reader(field)?;
            for term in frequent {
                if here.iter().all(|c| c.key.1 & term.bit != 0) {
                    continue;
                }
                let Some(mut postings) =
                    inverted.read_postings(&term.term, IndexRecordOption::WithFreqs)?
                else {
                    continue;
                };
                for candidate in here.iter_mut().filter(|c| c.key.1 & term.bit == 0) {
                    let doc = candidate.key.0 - base;
                    if postings.doc() < doc && postings.seek(doc) == TERMINATED {
                        break;
                    }
                    if postings.doc() == doc {
                        candidate.score += term
                            .weight
                            .score(fieldnorms.fieldnorm_id(doc), postings.term_freq());
                    }
                }
            }
        }
        base = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use tantivy::collector::TopDocs;
    use tantivy::directory::OwnedBytes;
    use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};

    use super::super::champions;
    use super::super::top::tests::{WORDS, segmented_index};
    use super::*;

    fn exact(
        searcher: &Searcher,
        field: Field,
        terms: &[&str],
        k: usize,
    ) -> tantivy::Result<Vec<(Score, DocAddress)>> {
        let clauses = terms
            .iter()
            .map(|w| {
                let term = Term::from_field_text(field, w);
                let query: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, query)
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        searcher.search(&query, &TopDocs::with_limit(k).order_by_score())
    }

    /// Over segments of different sizes with deletes and ties: a one-term query returns the exact
    /// search's best `bound` (or fewer), to the bit, ties to the lower address; a query of longer
    /// terms returns only live chunks, each with its exact score, in the ranking order; a query
    /// whose terms have no list is left to the exact search.
    #[test]
    fn bounded_rankings_keep_exact_scores_and_the_ranking_rule() -> tantivy::Result<()> {
        let (searcher, body) = segmented_index()?;
        // The median document frequency: some words have a list, others do not.
        let mut doc_freqs = WORDS
            .iter()
            .map(|w| searcher.doc_freq(&Term::from_field_text(body, w)))
            .collect::<tantivy::Result<Vec<u64>>>()?;
        doc_freqs.sort_unstable();
        let bound = doc_freqs[WORDS.len() / 2] as u32;
        let mut bytes = Vec::new();
        let lists = champions::write(&searcher, body, bound, &mut bytes).expect("write");
        let champions =
            Champions::from_bytes(OwnedBytes::new(bytes), &searcher).expect("read back");
        assert!(lists > 0 && lists < WORDS.len(), "{lists}");
        let terms = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let everything = exact(&searcher, body, &WORDS, 10_000)?;
        let live = everything.len();
        for word in WORDS {
            let doc_freq = searcher.doc_freq(&Term::from_field_text(body, word))?;
            for k in [1, 3, 10, 60] {
                let got = bounded_top_k(&searcher, body, &champions, &terms(&[word]), k, 5)?;
                if doc_freq <= u64::from(bound) {
                    assert!(got.is_none(), "{word}: no list, the exact search answers");
                    continue;
                }
                let mut expected = exact(&searcher, body, &[word], k)?;
                expected.truncate(bound as usize);
                assert_eq!(got, Some(expected), "{word}, k {k}");
            }
        }
        for words in [&WORDS[..], &["ant", "gnu"], &["cat", "dog", "eel"]] {
            let all = exact(&searcher, body, words, live)?;
            let scores: HashMap<DocAddress, Score> = all.iter().map(|&(s, a)| (a, s)).collect();
            for (k, rescored) in [(10, 10), (10, 100), (60, 5)] {
                let Some(got) =
                    bounded_top_k(&searcher, body, &champions, &terms(words), k, rescored)?
                else {
                    continue;
                };
                assert_eq!(got.len(), k, "{words:?}");
                for pair in got.windows(2) {
                    let ((a, x), (b, y)) = (pair[0], pair[1]);
                    assert!(a > b || (a == b && x < y), "{words:?}: {pair:?}");
                }
                for (score, address) in &got {
                    let exact = scores.get(address).expect("a live chunk that matches");
                    assert!(
                        (score - exact).abs() <= 1e-5 * exact,
                        "{words:?} {address:?}"
                    );
                }
            }
        }
        Ok(())
    }

    /// A query of more frequent terms than a candidate has bits for (64): those past the 64th
    /// bring up no candidate but are still added to every candidate's score, which stays exact.
    #[test]
    fn terms_past_the_sixty_fourth_still_count_in_every_score() -> tantivy::Result<()> {
        use tantivy::schema::{Schema, TEXT};
        use tantivy::{Index, IndexWriter, TantivyDocument};
        let mut schema = Schema::builder();
        let body = schema.add_text_field("body", TEXT);
        let index = Index::create_in_ram(schema.build());
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
        let words: Vec<String> = (0..70).map(|w| format!("w{w}")).collect();
        for d in 0..400usize {
            // Each document holds a third of the words, some twice.
            let text: Vec<&str> = (0..70)
                .filter(|w| (d + w) % 3 == 0)
                .flat_map(|w| std::iter::repeat_n(words[w].as_str(), 1 + (d * w) % 2))
                .collect();
            let mut doc = TantivyDocument::new();
            doc.add_text(body, text.join(" "));
            writer.add_document(doc)?;
        }
        writer.commit()?;
        let searcher = index.reader()?.searcher();
        let mut bytes = Vec::new();
        let lists = champions::write(&searcher, body, 20, &mut bytes).expect("write");
        assert_eq!(lists, 70);
        let champions =
            Champions::from_bytes(OwnedBytes::new(bytes), &searcher).expect("read back");
        let all: Vec<&str> = words.iter().map(String::as_str).collect();
        let exact_scores: HashMap<DocAddress, Score> = exact(&searcher, body, &all, 400)?
            .into_iter()
            .map(|(s, a)| (a, s))
            .collect();
        let got = bounded_top_k(&searcher, body, &champions, &words, 10, 50)?.expect("lists");
        assert_eq!(got.len(), 10);
        for (score, address) in got {
            let exact = exact_scores[&address];
            assert!(
                (score - exact).abs() <= 1e-5 * exact,
                "{address:?}: {score} {exact}"
            );
        }
        Ok(())
    }
}
