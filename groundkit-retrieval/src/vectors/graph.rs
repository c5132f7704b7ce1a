//! The approximate nearest-neighbour index of a large generation: an HNSW graph
//! ([`instant_distance`]) over unit vectors, each entry named by the content key of the
//! embedding input it is the vector of, stored beside a generation's vectors as `vectors.hnsw`,
//! so a reader loads it instead of building it.
//!
//! A generation gets a graph when it has at least [`DEFAULT_MIN_VECTORS`] vectors (the ingest's
//! `graph_min_vectors`); below that, exact search costs little (at 20,000 vectors it is as fast
//! as the graph; see `bench/README.md`, "Approximate dense search", for the measurements the
//! threshold and the parameters come from). Because entries are named by content, not by row, a
//! generation can carry the graph of the one before it (`crate::vectors::carried` says how a
//! generation searches a graph its rows have moved on from, and when the ingest builds anew).
//!
//! # Format
//!
//! ```text
//! "GRKHNSW2"                      8 bytes
//! postcard                        dimension (u32), the content key of every entry in entry
//!                                 order, the point id of every entry in entry order, the graph
//!                                 (its points are the entries' vectors)
//! ```
//!
//! The keys come first, so an ingest reads which inputs a graph holds without reading the graph.
//! A graph of the earlier format (`"GRKHNSW1"`, entries named by row) is not read: its
//! generation is searched exactly until the next ingest builds a graph.

use std::io::{Read, Write};

use instant_distance::{Builder, Hnsw, Point, PointId, Search};
use serde::{Deserialize, Serialize};

use crate::embed::dot;
use groundkit_core::Error;

const MAGIC: &[u8; 8] = b"GRKHNSW2";
/// The magic of the earlier format, whose entries were rows.
const MAGIC_ROWS: &[u8; 8] = b"GRKHNSW1";

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

/// A content key: the SHA-256 prefix of an embedding input.
pub type Key = [u8; 16];

#[derive(Serialize)]
struct FileRef<'a> {
    dimension: u32,
    keys: &'a [Key],
    points: &'a [PointId],
    hnsw: &'a Hnsw<Unit>,
}

#[derive(Deserialize)]
struct FileOwned {
    dimension: u32,
    keys: Vec<Key>,
    points: Vec<PointId>,
    hnsw: Hnsw<Unit>,
}

/// The start of the file: what a graph holds, without the graph.
#[derive(Deserialize)]
struct FileKeys {
    dimension: u32,
    keys: Vec<Key>,
}

/// An HNSW graph over entries (unit vectors, each named by a content key), answering
/// nearest-entry queries. Entries are numbered in the order they were given to
/// [`Graph::build`].
pub struct Graph {
    dimension: usize,
    hnsw: Hnsw<Unit>,
    /// The content key of each entry.
    keys: Vec<Key>,
    /// The graph's point id of each entry.
    points: Vec<PointId>,
    /// The entry of each point id.
    entries: Vec<u32>,
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
    /// Builds the graph of `entries` (content keys, each with its unit vector of `dimension`
    /// values), on every thread of the global rayon pool.
    ///
    /// # Panics
    ///
    /// When a vector does not have `dimension` values.
    pub fn build<'a>(
        entries: impl IntoIterator<Item = (Key, &'a [f32])>,
        dimension: usize,
    ) -> Self {
        let (keys, units): (Vec<Key>, Vec<Unit>) = entries
            .into_iter()
            .map(|(key, v)| (key, Unit(v.into())))
            .unzip();
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
        let entries = invert(&points).expect("the builder numbers every point once");
        Self {
            dimension,
            hnsw,
            keys,
            points,
            entries,
        }
    }

    /// How many entries the graph holds.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the graph holds no entries.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The vector of entry `entry`.
    pub fn vector(&self, entry: usize) -> &[f32] {
        &self.hnsw[self.points[entry]].0
    }

    /// The content key of every entry, in entry order.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// Up to `limit` entries nearest to `query` (a unit vector), best first, with their cosine
    /// similarity. At most [`EF_SEARCH`] entries.
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
                let entry = self.entries[item.pid.into_inner() as usize];
                (dot(&item.point.0, &query.0), entry)
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
            keys: &self.keys,
            points: &self.points,
            hnsw: &self.hnsw,
        };
        postcard::to_io(&file, out)
            .map_err(|err| Error::storage("cannot write the vector graph", err))?;
        Ok(())
    }

    /// Reads a graph written by [`Graph::write_to`], checking that its vectors have `dimension`
    /// values and that it is whole. `None` for a graph of the earlier format.
    pub fn read_from(mut input: impl Read, dimension: usize) -> Result<Option<Self>, Error> {
        if !read_magic(&mut input)? {
            return Ok(None);
        }
        let mut scratch = [0u8; 64];
        let (file, _): (FileOwned, _) = postcard::from_io((input, &mut scratch[..]))
            .map_err(|err| Error::storage("the vector graph is not valid", err))?;
        let count = file.keys.len();
        let matches = file.dimension as usize == dimension
            && file.points.len() == count
            && file.hnsw.iter().count() == count
            && file.hnsw.iter().all(|(_, unit)| unit.0.len() == dimension);
        let entries = invert(&file.points).filter(|_| matches);
        let Some(entries) = entries else {
            return Err(corrupt(
                "the vector graph does not match the generation's vectors",
            ));
        };
        Ok(Some(Self {
            dimension,
            hnsw: file.hnsw,
            keys: file.keys,
            points: file.points,
            entries,
        }))
    }

    /// Reads only the start of a graph file: the dimension of its vectors and the content key of
    /// each entry. `None` for a graph of the earlier format.
    pub fn read_keys(mut input: impl Read) -> Result<Option<(usize, Vec<Key>)>, Error> {
        if !read_magic(&mut input)? {
            return Ok(None);
        }
        let mut scratch = [0u8; 64];
        let (file, _): (FileKeys, _) = postcard::from_io((input, &mut scratch[..]))
            .map_err(|err| Error::storage("the vector graph is not valid", err))?;
        Ok(Some((file.dimension as usize, file.keys)))
    }
}

/// Reads the magic: whether the file is a graph of the current format (`false` for the earlier
/// one).
fn read_magic(input: &mut impl Read) -> Result<bool, Error> {
    let mut magic = [0u8; 8];
    input
        .read_exact(&mut magic)
        .map_err(|err| Error::storage("cannot read the vector graph", err))?;
    match &magic {
        m if m == MAGIC => Ok(true),
        m if m == MAGIC_ROWS => Ok(false),
        _ => Err(corrupt("not a groundkit vector graph")),
    }
}

/// The entry of each point id, if `points` names each point once.
fn invert(points: &[PointId]) -> Option<Vec<u32>> {
    let mut entries = vec![u32::MAX; points.len()];
    for (entry, point) in points.iter().enumerate() {
        let slot = entries.get_mut(point.into_inner() as usize)?;
        if *slot != u32::MAX {
            return None;
        }
        *slot = u32::try_from(entry).ok()?;
    }
    Some(entries)
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
