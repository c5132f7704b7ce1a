//! The approximate nearest-neighbour index of a large generation: an HNSW graph
//! ([`instant_distance`]) over the generation's unit vectors, built by the ingest that writes
//! them and stored beside them as `vectors.hnsw`, so a reader loads it instead of building it.
//!
//! A generation gets a graph when it has at least [`DEFAULT_MIN_VECTORS`] vectors (the ingest's
//! `graph_min_vectors`); below that, exact search costs little (at 20,000 vectors it is as fast
//! as the graph; see `bench/README.md`, "Approximate dense search", for the measurements the
//! threshold and the parameters come from).
//!
//! # Format
//!
//! ```text
//! "GRKHNSW1"                      8 bytes
//! postcard                        dimension (u32), the point id of every row in row order,
//!                                 the graph (its points are the rows' vectors)
//! ```

use std::io::{Read, Write};

use instant_distance::{Builder, Hnsw, Point, PointId, Search};
use serde::{Deserialize, Serialize};

use crate::embed::dot;
use groundkit_core::Error;

const MAGIC: &[u8; 8] = b"GRKHNSW1";

/// The fewest vectors for which an ingest builds a graph, by default.
pub const DEFAULT_MIN_VECTORS: usize = 30_000;
/// Candidates kept while inserting a point (`efConstruction`).
pub const EF_CONSTRUCTION: usize = 100;
/// Candidates kept while searching (`ef`): the most results one search returns, so at least
/// the largest result count any search asks for ([`crate::MAX_TOP_K`], and hybrid
/// search's dense depth).
pub const EF_SEARCH: usize = 128;
/// The seed of each point's random layer, fixed so it does not vary between ingests (the build
/// runs in parallel, so the links it makes may still differ from run to run).
const SEED: u64 = 0x6772_6b67;

/// A unit vector as a point of the graph; its distance to another is `1 - cosine`.
#[derive(Clone, Serialize, Deserialize)]
struct Unit(Box<[f32]>);

impl Point for Unit {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

#[derive(Serialize)]
struct FileRef<'a> {
    dimension: u32,
    points: &'a [PointId],
    hnsw: &'a Hnsw<Unit>,
}

#[derive(Deserialize)]
struct FileOwned {
    dimension: u32,
    points: Vec<PointId>,
    hnsw: Hnsw<Unit>,
}

/// An HNSW graph over rows of unit vectors, answering nearest-row queries.
pub struct Graph {
    dimension: usize,
    hnsw: Hnsw<Unit>,
    /// The graph's point id of each row.
    points: Vec<PointId>,
    /// The row of each point id.
    rows: Vec<u32>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("dimension", &self.dimension)
            .field("len", &self.points.len())
            .finish_non_exhaustive()
    }
}

fn corrupt(message: &str) -> Error {
    Error::Storage {
        message: message.to_owned(),
        source: None,
    }
}

impl Graph {
    /// Builds the graph of `rows` (unit vectors of `dimension` values each), on every thread of
    /// the global rayon pool.
    ///
    /// # Panics
    ///
    /// When a row does not have `dimension` values.
    pub fn build<'a>(rows: impl IntoIterator<Item = &'a [f32]>, dimension: usize) -> Self {
        let units: Vec<Unit> = rows.into_iter().map(|v| Unit(v.into())).collect();
        assert!(
            units.iter().all(|u| u.0.len() == dimension),
            "every row has `dimension` values"
        );
        let (hnsw, points) = Builder::default()
            .ef_construction(EF_CONSTRUCTION)
            .ef_search(EF_SEARCH)
            // Simple neighbour selection: on clustered 384-dimensional vectors it nearly reaches
            // the heuristic's recall with a twelfth of the distance computations.
            .select_heuristic(None)
            .seed(SEED)
            .build_hnsw(units);
        let rows = invert(&points).expect("the builder numbers every point once");
        Self {
            dimension,
            hnsw,
            points,
            rows,
        }
    }

    /// How many rows the graph holds.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the graph holds no rows.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The vector of row `row`.
    pub fn vector(&self, row: usize) -> &[f32] {
        &self.hnsw[self.points[row]].0
    }

    /// Up to `limit` rows nearest to `query` (a unit vector), best first, with their cosine
    /// similarity. At most [`EF_SEARCH`] rows.
    pub fn nearest(&self, query: &[f32], limit: usize) -> Vec<(f32, u32)> {
        let mut search = Search::default();
        let query = Unit(query.into());
        // Scores are computed as exact search computes them, not recovered from the distance,
        // and ordered the same way: a chunk found both ways has the same score and rank.
        let mut found: Vec<(f32, u32)> = self
            .hnsw
            .search(&query, &mut search)
            .take(limit)
            .map(|item| {
                let row = self.rows[item.pid.into_inner() as usize];
                (dot(&item.point.0, &query.0), row)
            })
            .collect();
        found.sort_by(best_first);
        found
    }

    /// Writes the graph in its file format.
    pub fn write_to(&self, out: &mut impl Write) -> Result<(), Error> {
        let io = |err| Error::storage("cannot write the vector graph", err);
        out.write_all(MAGIC).map_err(io)?;
        let file = FileRef {
            dimension: self.dimension as u32,
            points: &self.points,
            hnsw: &self.hnsw,
        };
        postcard::to_io(&file, out)
            .map_err(|err| Error::storage("cannot write the vector graph", err))?;
        Ok(())
    }

    /// Reads a graph written by [`Graph::write_to`], checking that it holds `count` rows of
    /// `dimension` values.
    pub fn read_from(mut input: impl Read, count: usize, dimension: usize) -> Result<Self, Error> {
        let mut magic = [0u8; 8];
        input
            .read_exact(&mut magic)
            .map_err(|err| Error::storage("cannot read the vector graph", err))?;
        if &magic != MAGIC {
            return Err(corrupt("not a groundkit vector graph"));
        }
        let mut scratch = [0u8; 64];
        let (file, _): (FileOwned, _) = postcard::from_io((input, &mut scratch[..]))
            .map_err(|err| Error::storage("the vector graph is not valid", err))?;
        let matches = file.dimension as usize == dimension
            && file.points.len() == count
            && file.hnsw.iter().count() == count
            && file.hnsw.iter().all(|(_, unit)| unit.0.len() == dimension);
        let rows = invert(&file.points).filter(|_| matches);
        let Some(rows) = rows else {
            return Err(corrupt(
                "the vector graph does not match the generation's vectors",
            ));
        };
        Ok(Self {
            dimension,
            hnsw: file.hnsw,
            points: file.points,
            rows,
        })
    }
}

/// The row of each point id, if `points` names each point once.
fn invert(points: &[PointId]) -> Option<Vec<u32>> {
    let mut rows = vec![u32::MAX; points.len()];
    for (row, point) in points.iter().enumerate() {
        let slot = rows.get_mut(point.into_inner() as usize)?;
        if *slot != u32::MAX {
            return None;
        }
        *slot = u32::try_from(row).ok()?;
    }
    Some(rows)
}

/// The `limit` rows of `rows` (unit vectors of `dimension` values, row after row) most similar
/// to `query`, best first, by exact cosine similarity; ties keep row order.
pub fn exact_nearest(
    rows: &[f32],
    dimension: usize,
    query: &[f32],
    limit: usize,
) -> Vec<(f32, u32)> {
    let scored: Vec<(f32, u32)> = rows
        .chunks_exact(dimension)
        .map(|v| dot(v, query))
        .zip(0..)
        .collect();
    best(scored, limit)
}

/// The best `limit` of `scored` rows, best first; ties keep row order.
pub(crate) fn best(mut scored: Vec<(f32, u32)>, limit: usize) -> Vec<(f32, u32)> {
    let limit = limit.min(scored.len());
    if limit < scored.len() && limit > 0 {
        scored.select_nth_unstable_by(limit - 1, best_first);
    }
    scored.truncate(limit);
    scored.sort_by(best_first);
    scored
}

/// Higher score first; between equal scores, the earlier row.
fn best_first(a: &(f32, u32), b: &(f32, u32)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}
