//! The hybrid ranking, computed by groundkit from the lexical and the dense rankings of a query:
//! min-max normalised scores ([`min_max_fusion`], the default), or Reciprocal Rank Fusion
//! ([`reciprocal_rank_fusion`]).
//!
//! A chunk's fused score is the sum, over the rankings that contain it, of `weight / (k + rank)`
//! (ranks from 1; the lexical ranking weighs 1, the dense ranking [`DENSE_WEIGHT`]). The
//! constant, the weight and the depth of each ranking were chosen on SciFact's training split
//! (`bench/README.md` gives the sweep, `bench/src/bin/hybrid_sweep.rs`, and the
//! figures on the test split).

use std::collections::HashMap;
use std::hash::Hash;

/// The fusion constant `k`. On SciFact's training split (809 queries, all-MiniLM-L6-v2), mean
/// nDCG@10 at the shipped depths peaks at 2 (0.7358; 0.7354 at 1, 0.7330 at 3) and falls
/// steadily beyond (0.7309 at 10, 0.7224 at the customary 60): a small `k` lets the first places
/// of either ranking decide.
pub const RRF_K: f32 = 2.0;

/// How many candidates the lexical ranking contributes at least (a search asking for more takes
/// as many as it asks for). On the training split at `k = 2`, nDCG@10 is 0.7353 with 100 lexical
/// candidates and 0.7358 with 200 or 500: a chunk the dense ranking places high gains from a
/// lexical place even far down.
pub const LEXICAL_DEPTH: usize = 500;

/// How many candidates the dense ranking contributes at least: at most
/// [`EF_SEARCH`](crate::vectors::graph::EF_SEARCH), the most a search through a
/// generation's graph returns. On the training split, 128 and 100 differ by less than 0.0001.
pub const DENSE_DEPTH: usize = 128;

/// The dense ranking's weight against the lexical ranking's 1. On the training split, at every
/// `k` from 0.5 to 2, nDCG@10 peaks at equal weights (0.7358 at `k = 2`; 0.7341 at 0.85 and
/// 0.7217 at 1.2): with a small `k`, a weight other than 1 lets one ranking's places outrank
/// the other's.
pub const DENSE_WEIGHT: f32 = 1.0;

/// The dense ranking's weight in [`min_max_fusion`] against the lexical ranking's 1. On
/// SciFact's training split (809 queries, all-MiniLM-L6-v2, the shipped depths), mean nDCG@10
/// peaks at 0.5 (0.7415; 0.7250 at 0.25, 0.7401 at 0.75, 0.7352 at 1, 0.6990 at 4): a cosine
/// spread scaled to 0..1 says less than a BM25 spread does.
pub const MIN_MAX_DENSE_WEIGHT: f32 = 0.5;

/// Fuses `rankings` (each best first, with its weight) and returns the best `limit`, best first.
/// Ties are broken by the best rank in any ranking, then by the order of the first ranking that
/// has the chunk.
pub fn reciprocal_rank_fusion<T: Copy + Eq + Hash>(
    rankings: &[(&[T], f32)],
    k: f32,
    limit: usize,
) -> Vec<(f32, T)> {
    // address -> (score, best rank, first appearance)
    let mut fused: HashMap<T, (f32, usize, usize)> = HashMap::new();
    let mut order = 0;
    for &(ranking, weight) in rankings {
        for (i, address) in ranking.iter().enumerate() {
            let entry = fused.entry(*address).or_insert_with(|| {
                order += 1;
                (0.0, usize::MAX, order)
            });
            entry.0 += weight / (k + (i + 1) as f32);
            entry.1 = entry.1.min(i + 1);
        }
    }
    best_first(
        fused
            .into_iter()
            .map(|(address, (score, best, first))| (f64::from(score), best, first, address)),
        limit,
    )
}

/// The best `limit` of fused chunks `(score, best rank, first appearance, chunk)`, best first:
/// by score, then by the best rank in any ranking, then by the order of first appearance.
fn best_first<T>(
    fused: impl Iterator<Item = (f64, usize, usize, T)>,
    limit: usize,
) -> Vec<(f32, T)> {
    let mut out: Vec<_> = fused.collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    out.truncate(limit);
    out.into_iter()
        .map(|(score, _, _, a)| (score as f32, a))
        .collect()
}

/// Fuses two scored rankings (each best first) by min-max normalised score: each ranking's scores
/// are scaled to 0..1 over its candidates (all 1 when they are equal), a chunk a ranking does not
/// hold counts 0 there, and a chunk's fused score is its lexical one plus `dense_weight` times its
/// dense one. Returns the best `limit`, best first; ties are broken as
/// [`reciprocal_rank_fusion`] breaks them.
pub fn min_max_fusion<T: Copy + Eq + Hash>(
    lexical: &[(f32, T)],
    dense: &[(f32, T)],
    dense_weight: f32,
    limit: usize,
) -> Vec<(f32, T)> {
    // address -> (score, best rank, first appearance)
    let mut fused: HashMap<T, (f64, usize, usize)> = HashMap::new();
    let mut order = 0;
    for (ranking, weight) in [(lexical, 1.0), (dense, f64::from(dense_weight))] {
        let (low, high) = ranking.iter().fold(
            (f64::INFINITY, f64::NEG_INFINITY),
            |(low, high), &(s, _)| (low.min(f64::from(s)), high.max(f64::from(s))),
        );
        for (i, &(score, address)) in ranking.iter().enumerate() {
            let scaled = if high > low {
                (f64::from(score) - low) / (high - low)
            } else {
                1.0
            };
            let entry = fused.entry(address).or_insert_with(|| {
                order += 1;
                (0.0, usize::MAX, order)
            });
            entry.0 += weight * scaled;
            entry.1 = entry.1.min(i + 1);
        }
    }
    best_first(
        fused
            .into_iter()
            .map(|(address, (score, best, first))| (score, best, first, address)),
        limit,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::DocAddress;

    fn d(doc: u32) -> DocAddress {
        DocAddress::new(0, doc)
    }

    #[test]
    fn a_chunk_found_by_both_rankings_outranks_one_found_by_one() {
        let lexical = [d(1), d(2), d(3)];
        let dense = [d(4), d(2), d(5)];
        let fused = reciprocal_rank_fusion(&[(&lexical, 1.0), (&dense, 1.0)], 60.0, 10);
        assert_eq!(fused[0].1, d(2));
        assert!((fused[0].0 - 2.0 / 62.0).abs() < 1e-7);
        // 1 and 4 tie at 1/61; 1 came first.
        assert_eq!(fused[1].1, d(1));
        assert_eq!(fused[2].1, d(4));
        assert_eq!(fused.len(), 5);
        // Weighted, with k = 1: the dense ranking's first place (4 / 2) now outranks the chunk
        // both rankings have second (1 / 3 + 4 / 3), which outranked it at equal weights.
        let weighted = reciprocal_rank_fusion(&[(&lexical, 1.0), (&dense, 4.0)], 1.0, 10);
        assert_eq!(weighted[0].1, d(4));
        assert!((weighted[0].0 - 2.0).abs() < 1e-6);
        assert_eq!(weighted[1].1, d(2));
        assert!((weighted[1].0 - 5.0 / 3.0).abs() < 1e-6);
        let equal = reciprocal_rank_fusion(&[(&lexical, 1.0), (&dense, 1.0)], 1.0, 10);
        assert_eq!(equal[0].1, d(2));
        assert_eq!(
            reciprocal_rank_fusion(&[(&lexical, 1.0), (&dense, 1.0)], 60.0, 2).len(),
            2
        );
    }

    #[test]
    fn min_max_fusion_lets_a_strong_match_beat_a_weak_one_that_ranks_first() {
        // The lexical ranking's first place barely beats its second; the dense ranking's first
        // place is far ahead of the rest.
        let lexical = [(5.1, d(1)), (5.0, d(2)), (1.0, d(3))];
        let dense = [(0.9, d(2)), (0.2, d(1)), (0.1, d(4))];
        let fused = min_max_fusion(&lexical, &dense, 1.0, 10);
        let order: Vec<_> = fused.iter().map(|&(_, a)| a).collect();
        assert_eq!(order, [d(2), d(1), d(3), d(4)]);
        // 2: 0.9756 + 1; 1: 1 + 0.125. 3 and 4 each score 0 (the lowest of the one ranking that
        // has them), both third there: 3 came first, in the lexical ranking.
        assert!((fused[0].0 - (4.0 / 4.1 + 1.0)).abs() < 1e-6);
        assert!((fused[1].0 - 1.125).abs() < 1e-6);
        // Reciprocal Rank Fusion puts the lexical first place first (1/3 + 1/4 against
        // 1/4 + 1/3, a tie broken by the best rank, then by the first appearance).
        let ids = |r: &[(f32, DocAddress)]| r.iter().map(|&(_, a)| a).collect::<Vec<_>>();
        let rrf = reciprocal_rank_fusion(&[(&ids(&lexical), 1.0), (&ids(&dense), 1.0)], 2.0, 10);
        assert_eq!(rrf[0].1, d(1));
        // Equal scores scale to 1; a weight scales the dense ranking alone.
        let flat = min_max_fusion(&[(3.0, d(1)), (3.0, d(2))], &[(0.5, d(2))], 2.0, 10);
        assert_eq!(flat, vec![(3.0, d(2)), (1.0, d(1))]);
    }
}
