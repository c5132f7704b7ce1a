//! The best `n` of a stream of scored items, with the threshold an item must reach to enter:
//! the one top-n structure of the lexical rankers.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use tantivy::Score;

/// A scored item; greater is better: a higher score, or the same score at a lower key (the
/// ranking rule of a search, the key being a chunk's address).
#[derive(Debug, Clone, Copy)]
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

/// The best `n` items offered so far; the worst of them on top of the heap.
pub(super) struct TopN<K> {
    n: usize,
    heap: BinaryHeap<Reverse<Ranked<K>>>,
}

impl<K: Ord> TopN<K> {
    /// Keeps the best `n`.
    pub(super) fn new(n: usize) -> Self {
        Self {
            n,
            heap: BinaryHeap::with_capacity(n.saturating_add(1).min(1 << 16)),
        }
    }

    /// Keeps `item` if it is among the best `n` so far.
    pub(super) fn offer(&mut self, item: Ranked<K>) {
        if self.heap.len() < self.n {
            self.heap.push(Reverse(item));
        } else if self.heap.peek().is_some_and(|Reverse(worst)| item > *worst) {
            self.heap.pop();
            self.heap.push(Reverse(item));
        }
    }

    /// What an item's score must reach to be worth offering: a little under the n-th best score
    /// once there are `n`, so that an item whose score rounds up to a tie still reaches
    /// [`offer`](Self::offer), which keeps the lower key; no bound before.
    pub(super) fn threshold(&self) -> f64 {
        match self.heap.peek() {
            Some(Reverse(worst)) if self.heap.len() == self.n => {
                let score = f64::from(worst.score);
                score - score.abs() * 1e-6
            }
            _ => f64::NEG_INFINITY,
        }
    }

    /// The kept items, best first.
    pub(super) fn into_sorted(self) -> Vec<Ranked<K>> {
        let mut items: Vec<Ranked<K>> = self.heap.into_iter().map(|Reverse(i)| i).collect();
        items.sort_unstable_by(|a, b| b.cmp(a));
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the order items arrive in, the best `n` come out best first, ties going to the
    /// lower key, and the threshold is the n-th best score (just under it) once `n` are kept.
    #[test]
    fn keeps_the_best_n_ties_to_the_lower_key_in_any_order() {
        let items: Vec<Ranked<u32>> = [(1.0, 4), (3.0, 9), (2.0, 1), (3.0, 2), (0.5, 0), (2.0, 0)]
            .into_iter()
            .map(|(score, key)| Ranked { score, key })
            .collect();
        let expected = [(3.0, 2), (3.0, 9), (2.0, 0)];
        for rotation in 0..items.len() {
            let mut top = TopN::new(3);
            assert_eq!(top.threshold(), f64::NEG_INFINITY);
            for item in items.iter().cycle().skip(rotation).take(items.len()) {
                top.offer(*item);
            }
            assert!(top.threshold() < 2.0 && top.threshold() > 1.99);
            let got: Vec<(Score, u32)> =
                top.into_sorted().iter().map(|r| (r.score, r.key)).collect();
            assert_eq!(got, expected, "rotation {rotation}");
        }
        let mut none = TopN::<u32>::new(0);
        none.offer(Ranked { score: 1.0, key: 1 });
        assert!(none.into_sorted().is_empty());
    }
}
