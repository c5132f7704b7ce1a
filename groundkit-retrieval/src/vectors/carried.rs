//! A generation's vectors searched through a graph that may have been built for an earlier
//! generation. The graph names its entries by content key, and the generation's rows are matched
//! to them by key when the generation is opened:
//!
//! - a row whose key the graph holds is found through the graph (rows of the same input share
//!   one entry);
//! - a row whose key it does not hold (a chunk embedded since the graph was built) is in the
//!   *delta*, searched exactly beside the graph;
//! - an entry no row holds (a chunk removed since) is a *tombstone*: the graph may find it, the
//!   search drops it.
//!
//! The ingest carries the previous generation's graph (a hard link to its file) while the delta
//! and the tombstones stay small ([`worth_carrying`]) and builds a new graph otherwise, so an
//! edit of one file costs that file's embedding, not a graph of the whole collection.

use std::collections::HashMap;
use std::sync::Arc;

use super::graph::{self, EF_SEARCH, Graph, Key};
use crate::embed::dot;
use groundkit_core::Error;

/// The most rows a generation searches exactly beside a carried graph: exact search over 20,000
/// vectors costs what a search through the graph costs (`bench/README.md`, "Approximate dense
/// search").
#[cfg_attr(not(feature = "ingest"), allow(dead_code))]
pub(crate) const MAX_DELTA: usize = 20_000;

/// Marks a slot as a row of the delta rather than an entry of the graph.
const IN_DELTA: u32 = 1 << 31;
/// No row.
const NONE: u32 = u32::MAX;

/// Whether a generation should carry a graph of `entries` entries, of which `dead` no row of the
/// generation holds any more, beside `delta` rows the graph does not hold: while neither is more
/// than a tenth of the graph (and the delta no more than [`MAX_DELTA`]), a search through it
/// loses little to tombstones and pays little for the delta.
#[cfg_attr(not(feature = "ingest"), allow(dead_code))]
pub(crate) fn worth_carrying(entries: usize, delta: usize, dead: usize) -> bool {
    let tenth = entries / 10;
    entries > 0 && delta <= tenth.min(MAX_DELTA) && dead <= tenth
}

/// A graph and the generation's rows matched to it.
#[derive(Debug)]
pub(crate) struct Carried {
    /// Shared with the earlier generations that carried the same graph.
    graph: Arc<Graph>,
    dimension: usize,
    /// Where each row's vector is: the graph entry, or ([`IN_DELTA`] set) the delta row.
    slots: Vec<u32>,
    /// The first row of each entry ([`NONE`] for a tombstone).
    first_row: Vec<u32>,
    /// For each row, the next row of the same entry ([`NONE`] for the last).
    next_row: Vec<u32>,
    /// The rows of the delta, in row order.
    delta_rows: Vec<u32>,
    /// Their vectors, row after row.
    delta: Vec<f32>,
}

impl Carried {
    /// Matches rows (their content keys, in row order) to `graph`'s entries; `delta` holds the
    /// vectors, in row order, of the rows whose key the graph does not hold.
    pub(crate) fn new(
        graph: Arc<Graph>,
        entry_of: &HashMap<Key, u32>,
        row_keys: &[Key],
        delta: Vec<f32>,
        dimension: usize,
    ) -> Result<Self, Error> {
        let too_many = || Error::Storage {
            message: "too many vectors in one generation".to_owned(),
            source: None,
        };
        if row_keys.len() >= IN_DELTA as usize || graph.len() >= IN_DELTA as usize {
            return Err(too_many());
        }
        let mut first_row = vec![NONE; graph.len()];
        let mut last_row = vec![NONE; graph.len()];
        let mut next_row = vec![NONE; row_keys.len()];
        let mut slots = Vec::with_capacity(row_keys.len());
        let mut delta_rows = Vec::new();
        for (row, key) in (0u32..).zip(row_keys) {
            match entry_of.get(key) {
                Some(&entry) => {
                    let at = entry as usize;
                    match last_row[at] {
                        NONE => first_row[at] = row,
                        last => next_row[last as usize] = row,
                    }
                    last_row[at] = row;
                    slots.push(entry);
                }
                None => {
                    slots.push(IN_DELTA | delta_rows.len() as u32);
                    delta_rows.push(row);
                }
            }
        }
        if delta.len() != delta_rows.len() * dimension {
            return Err(Error::internal("the delta's vectors do not match its rows"));
        }
        Ok(Self {
            graph,
            dimension,
            slots,
            first_row,
            next_row,
            delta_rows,
            delta,
        })
    }

    /// The graph, to share with a later generation that carries it.
    pub(crate) fn graph(&self) -> Arc<Graph> {
        Arc::clone(&self.graph)
    }

    /// The vector of row `row`.
    pub(crate) fn vector(&self, row: usize) -> &[f32] {
        match self.slots[row] {
            slot if slot & IN_DELTA != 0 => {
                let at = (slot & !IN_DELTA) as usize * self.dimension;
                &self.delta[at..at + self.dimension]
            }
            entry => self.graph.vector(entry as usize),
        }
    }

    /// The `limit` rows `keeps` keeps that are nearest to `query`, best first: the graph's
    /// candidates that are rows of this generation and pass, with every passing row of the
    /// delta scored exactly. `None` when fewer than `wanted` (at most `limit`) of them score at
    /// least the graph's last candidate (below it, rows the graph did not return could rank
    /// higher): the caller then searches exactly.
    pub(crate) fn nearest(
        &self,
        query: &[f32],
        limit: usize,
        keeps: impl Fn(u32) -> bool,
        wanted: usize,
    ) -> Option<Vec<(f32, u32)>> {
        let candidates = self.graph.nearest(query, EF_SEARCH);
        // The graph returned all its entries when it returned fewer than it could.
        let floor = match candidates.last() {
            Some(&(score, _)) if candidates.len() == EF_SEARCH => score,
            _ => f32::NEG_INFINITY,
        };
        let mut found = Vec::new();
        for (score, entry) in candidates {
            let mut row = self.first_row[entry as usize];
            while row != NONE {
                if keeps(row) {
                    found.push((score, row));
                }
                row = self.next_row[row as usize];
            }
        }
        let delta = self.delta.chunks_exact(self.dimension);
        for (&row, vector) in self.delta_rows.iter().zip(delta) {
            if keeps(row) {
                found.push((dot(vector, query), row));
            }
        }
        let found = graph::best(found, limit);
        let sure = found.iter().filter(|(score, _)| *score >= floor).count();
        (sure >= wanted.min(limit)).then_some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::unit_vector;

    const DIMENSION: usize = 8;

    /// `count` deterministic unit vectors (a linear congruential generator).
    fn vectors(count: usize, mut seed: u64) -> Vec<Vec<f32>> {
        let mut next = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        (0..count)
            .map(|_| unit_vector((0..DIMENSION).map(|_| next()).collect()).expect("non-zero"))
            .collect()
    }

    fn key(n: usize) -> Key {
        (n as u128).to_le_bytes()
    }

    /// A graph of `entries`, carried by a generation whose rows are `rows` (keys), with
    /// `delta` the vectors of the rows the graph does not hold.
    fn carry(entries: &[Vec<f32>], rows: &[Key], delta: &[Vec<f32>]) -> Carried {
        let graph = Graph::build(
            entries
                .iter()
                .enumerate()
                .map(|(n, v)| (key(n), v.as_slice())),
            DIMENSION,
        );
        let entry_of = (0u32..).zip(graph.keys()).map(|(e, k)| (*k, e)).collect();
        Carried::new(Arc::new(graph), &entry_of, rows, delta.concat(), DIMENSION).expect("carried")
    }

    #[test]
    fn rows_the_graph_lacks_are_scored_exactly_and_removed_rows_are_never_found() {
        let entries = vectors(400, 1);
        let query = vectors(1, 2).remove(0);
        // Rows: every entry but the first ten, then a row the graph lacks: the query itself.
        let mut rows: Vec<Key> = (10..400).map(key).collect();
        rows.push(key(10_000));
        let carried = carry(&entries, &rows, std::slice::from_ref(&query));
        assert_eq!(carried.vector(rows.len() - 1), query.as_slice());
        assert_eq!(carried.vector(0), entries[10].as_slice());

        let found = carried
            .nearest(&query, 10, |_| true, 10)
            .expect("enough candidates");
        assert_eq!(found.len(), 10);
        assert_eq!(
            found[0].1 as usize,
            rows.len() - 1,
            "the delta row, exactly"
        );
        assert!((found[0].0 - 1.0).abs() < 1e-5);
        assert!(found.iter().all(|&(_, row)| (row as usize) < rows.len()));
        // Half of them only: rows the filter drops are not answers either.
        let odd = carried
            .nearest(&query, 10, |row| row % 2 == 1, 10)
            .expect("enough");
        assert!(odd.iter().all(|&(_, row)| row % 2 == 1));
    }

    #[test]
    fn a_search_among_tombstones_asks_for_exact_search() {
        let entries = vectors(400, 3);
        let query = vectors(1, 4).remove(0);
        // The 300 entries nearest the query are removed: every candidate the graph returns is
        // a tombstone, so the rows it did return prove nothing about the rest.
        let mut by_distance: Vec<usize> = (0..entries.len()).collect();
        by_distance.sort_by(|&a, &b| dot(&entries[b], &query).total_cmp(&dot(&entries[a], &query)));
        let rows: Vec<Key> = by_distance[300..].iter().map(|&n| key(n)).collect();
        let carried = carry(&entries, &rows, &[]);
        assert!(carried.nearest(&query, 10, |_| true, 10).is_none());
        // With every entry held, the graph answers.
        let all: Vec<Key> = (0..entries.len()).map(key).collect();
        let carried = carry(&entries, &all, &[]);
        assert!(carried.nearest(&query, 10, |_| true, 10).is_some());
    }

    #[test]
    fn a_graph_is_carried_while_its_delta_and_its_tombstones_are_small() {
        assert!(worth_carrying(30_000, 3_000, 3_000));
        assert!(!worth_carrying(30_000, 3_001, 0));
        assert!(!worth_carrying(30_000, 0, 3_001));
        assert!(worth_carrying(500_000, MAX_DELTA, 0));
        assert!(!worth_carrying(500_000, MAX_DELTA + 1, 0));
        assert!(!worth_carrying(0, 0, 0));
    }
}
