//! Reciprocal Rank Fusion: the hybrid ranking, computed by groundkit from the lexical and the
//! dense rankings of a query.
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
    let mut out: Vec<(f32, usize, usize, T)> = fused
        .into_iter()
        .map(|(address, (score, best, first))| (score, best, first, address))
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    out.truncate(limit);
    out.into_iter().map(|(score, _, _, a)| (score, a)).collect()
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
}
