//! The vectors of one generation: the file `vectors.bin` inside the generation's directory, read
//! when the generation is opened, and nearest-neighbour search over them: exact, or through the
//! generation's HNSW graph (`vectors.hnsw`, [`graph`]) when it has one, built for it or carried
//! from an earlier generation (`carried`).
//!
//! A generation's vectors (and graph) are written into its directory before the directory is
//! published (`write`, with the `ingest` feature), so they are published, read and removed
//! together with the lexical index they belong to, under the same generation invariant.
//!
//! # Format
//!
//! ```text
//! "GRKVEC01"                      8 bytes
//! header length                   u32, little endian
//! header                          JSON: identity, count, dimension, segment ids
//! count rows, each:               segment ordinal (u32 LE), document id in the segment (u32 LE),
//!                                 content key (16 bytes: SHA-256 prefix of the chunk's
//!                                 embedding input, `input`),
//!                                 dimension x f32 LE (unit length)
//! ```
//!
//! A row names its chunk by its address in the generation's lexical index, whose segments are
//! fixed once the generation is committed; the header lists the segment ids in searcher order,
//! and opening checks them, so a row can never point into a different index.

use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tantivy::{DocAddress, Searcher};

use crate::collection::{VECTOR_GRAPH_FILE, VECTORS_FILE};
use crate::embed::dot;
use crate::lexical::Keep;
use crate::model::{DenseIndex, EmbeddingIdentity};
use groundkit_core::Error;

mod carried;
pub mod graph;
#[cfg(feature = "ingest")]
pub(crate) mod input;
#[cfg(feature = "ingest")]
pub(crate) mod write;

use carried::Carried;
use graph::{Graph, Key};

pub(crate) const MAGIC: &[u8; 8] = b"GRKVEC01";
/// Bytes of a row before its vector.
pub(crate) const ROW_PREFIX: usize = 4 + 4 + 16;

/// The header of a vectors file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Header {
    pub(crate) identity: EmbeddingIdentity,
    pub(crate) count: u64,
    pub(crate) dimension: u32,
    /// The lexical index's segment ids, in searcher order.
    pub(crate) segments: Vec<String>,
}

/// The segment ids of a searcher, in order.
pub(crate) fn segment_ids(searcher: &Searcher) -> Vec<String> {
    searcher
        .segment_readers()
        .iter()
        .map(|s| s.segment_id().uuid_string())
        .collect()
}

/// One generation's vectors, in memory.
#[derive(Debug)]
pub struct Vectors {
    identity: EmbeddingIdentity,
    dimension: usize,
    addresses: Vec<DocAddress>,
    /// Content keys, read by the next ingest to reuse vectors.
    #[cfg_attr(not(feature = "ingest"), allow(dead_code))]
    keys: Vec<[u8; 16]>,
    /// The lexical index's segment ids the rows address, in searcher order.
    #[cfg_attr(not(feature = "ingest"), allow(dead_code))]
    segments: Vec<String>,
    store: Store,
}

/// Where the vectors themselves are held.
#[derive(Debug)]
enum Store {
    /// Row after row; searched exactly.
    Rows(Vec<f32>),
    /// As the entries of a graph, and the rows it lacks; searched through it.
    Graph(Box<Carried>),
}

fn corrupt(message: impl Into<String>) -> Error {
    Error::Storage {
        message: message.into(),
        source: None,
    }
}

fn read_error(err: std::io::Error) -> Error {
    Error::storage("cannot read the generation's vectors", err)
}

impl Vectors {
    /// Reads the vectors of the generation in `dir` (`None` if it has none) and its graph if it
    /// has one, checking them against the generation's lexical index. A graph of the same
    /// entries, by the same embedder, as the one `previous` (an earlier generation's vectors)
    /// holds (a graph this generation carried) is not read again past its keys: the graph in
    /// memory is shared.
    pub(crate) fn open(
        dir: &Path,
        searcher: &Searcher,
        previous: Option<&Vectors>,
    ) -> Result<Option<Self>, Error> {
        let file = match std::fs::File::open(dir.join(VECTORS_FILE)) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(read_error(err)),
        };
        let len = file.metadata().map_err(read_error)?.len();
        let mut input = BufReader::new(file);
        let header = Self::read_header(&mut input, len)?;
        let dimension = header.dimension as usize;
        if header.segments != segment_ids(searcher) {
            return Err(corrupt(format!(
                "the vectors in {} belong to other segments than the lexical index",
                crate::collection::in_index_dir(dir)
            )));
        }
        let graph = match std::fs::File::open(dir.join(VECTOR_GRAPH_FILE)) {
            Ok(mut file) => {
                let same_embedder = previous
                    .filter(|earlier| earlier.identity.fingerprint == header.identity.fingerprint);
                match same_embedder.and_then(Vectors::carried) {
                    Some(earlier) => {
                        let keys = Graph::read_keys(BufReader::new(&mut file))?;
                        let shared = keys.filter(|(d, keys)| {
                            *d == dimension && keys.as_slice() == earlier.graph().keys()
                        });
                        match shared {
                            Some(_) => Some(earlier.graph()),
                            None => {
                                std::io::Seek::rewind(&mut file).map_err(|err| {
                                    Error::storage("cannot read the vector graph", err)
                                })?;
                                Graph::read_from(BufReader::new(file), dimension)?.map(Arc::new)
                            }
                        }
                    }
                    None => Graph::read_from(BufReader::new(file), dimension)?.map(Arc::new),
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(Error::storage("cannot read the vector graph", err)),
        };
        let Some(graph) = graph else {
            return Self::read_rows(input, header, |_| true).map(Some);
        };
        // Only the rows the graph lacks keep their vectors here; the others are the graph's.
        let entry_of: HashMap<Key, u32> =
            (0u32..).zip(graph.keys()).map(|(e, k)| (*k, e)).collect();
        let mut vectors = Self::read_rows(input, header, |key| !entry_of.contains_key(key))?;
        let Store::Rows(delta) = std::mem::replace(&mut vectors.store, Store::Rows(Vec::new()))
        else {
            return Err(Error::internal("vectors read as rows"));
        };
        let carried = Carried::new(graph, &entry_of, &vectors.keys, delta, dimension)?;
        vectors.store = Store::Graph(Box::new(carried));
        Ok(Some(vectors))
    }

    /// Parses a whole vectors file.
    #[cfg_attr(not(feature = "ingest"), allow(dead_code))]
    pub(crate) fn parse(mut bytes: &[u8]) -> Result<Self, Error> {
        let len = bytes.len() as u64;
        let header = Self::read_header(&mut bytes, len)?;
        Self::read_rows(bytes, header, |_| true)
    }

    /// Reads the header of a vectors file of `len` bytes from `input`, checking the file's size
    /// against it.
    fn read_header(input: &mut impl Read, len: u64) -> Result<Header, Error> {
        let mut prefix = [0u8; 12];
        input
            .read_exact(&mut prefix)
            .map_err(|_| corrupt("not a groundkit vectors file"))?;
        if &prefix[..8] != MAGIC {
            return Err(corrupt("not a groundkit vectors file"));
        }
        let header_len = u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]);
        if u64::from(header_len) > len.saturating_sub(12) {
            return Err(corrupt("the vectors file's header is truncated"));
        }
        let mut header = vec![0u8; header_len as usize];
        input.read_exact(&mut header).map_err(read_error)?;
        let header: Header = serde_json::from_slice(&header)
            .map_err(|err| Error::storage("the vectors file's header is not valid", err))?;
        let row = ROW_PREFIX + 4 * header.dimension as usize;
        let body = len.saturating_sub(12 + u64::from(header_len));
        usize::try_from(header.count).map_err(|_| corrupt("vector count too large"))?;
        if header.dimension == 0 || Some(body) != header.count.checked_mul(row as u64) {
            return Err(corrupt("the vectors file's size does not match its header"));
        }
        Ok(header)
    }

    /// Reads the rows that follow `header` (checked by [`Vectors::read_header`]) from `input`,
    /// keeping the vectors of the rows whose content key `keep` keeps, in row order.
    fn read_rows(
        mut input: impl Read,
        header: Header,
        keep: impl Fn(&Key) -> bool,
    ) -> Result<Self, Error> {
        let dimension = header.dimension as usize;
        let row = ROW_PREFIX + 4 * dimension;
        let count = header.count as usize;
        let mut addresses = Vec::with_capacity(count);
        let mut keys = Vec::with_capacity(count);
        let mut data = Vec::new();
        // A row buffer only when there are rows: then the size check bounds it by the file.
        let mut chunk = vec![0u8; if count == 0 { 0 } else { row }];
        for _ in 0..count {
            input.read_exact(&mut chunk).map_err(read_error)?;
            let u32_at = |at: usize| {
                u32::from_le_bytes([chunk[at], chunk[at + 1], chunk[at + 2], chunk[at + 3]])
            };
            addresses.push(DocAddress::new(u32_at(0), u32_at(4)));
            let mut key = [0u8; 16];
            key.copy_from_slice(&chunk[8..24]);
            if keep(&key) {
                data.extend(
                    chunk[ROW_PREFIX..]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
            }
            keys.push(key);
        }
        Ok(Self {
            identity: header.identity,
            dimension,
            addresses,
            keys,
            segments: header.segments,
            store: Store::Rows(data),
        })
    }

    /// The graph and the rows matched to it, when the vectors are searched through one.
    fn carried(&self) -> Option<&Carried> {
        match &self.store {
            Store::Graph(carried) => Some(carried),
            Store::Rows(_) => None,
        }
    }

    /// What computed these vectors.
    pub fn identity(&self) -> &EmbeddingIdentity {
        &self.identity
    }

    /// How many chunks have a vector.
    pub fn len(&self) -> usize {
        self.addresses.len()
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.addresses.is_empty()
    }

    /// How search finds the nearest vectors: over every vector, or through the HNSW graph.
    pub fn dense_index(&self) -> DenseIndex {
        match self.store {
            Store::Rows(_) => DenseIndex::Exact,
            Store::Graph(_) => DenseIndex::Hnsw,
        }
    }

    /// The chunk address of every row, in row order.
    pub(crate) fn addresses(&self) -> &[DocAddress] {
        &self.addresses
    }

    /// The vector of row `row`.
    pub(crate) fn vector(&self, row: usize) -> &[f32] {
        match &self.store {
            Store::Rows(data) => &data[row * self.dimension..(row + 1) * self.dimension],
            Store::Graph(carried) => carried.vector(row),
        }
    }

    /// The content key of row `row`.
    #[cfg_attr(not(feature = "ingest"), allow(dead_code))]
    pub(crate) fn key(&self, row: usize) -> &Key {
        &self.keys[row]
    }

    /// The content key of every row, by the id of the segment its chunk is in and its document
    /// id there: what a later generation that keeps the segment knows of the chunk without
    /// reading it (a segment never changes; its documents are only deleted).
    #[cfg_attr(not(feature = "ingest"), allow(dead_code))]
    pub(crate) fn keys_by_segment(&self) -> HashMap<(&str, u32), &Key> {
        self.addresses
            .iter()
            .zip(&self.keys)
            .filter_map(|(address, key)| {
                let segment = self.segments.get(address.segment_ord as usize)?;
                Some(((segment.as_str(), address.doc_id), key))
            })
            .collect()
    }

    /// The `limit` chunks most similar to `query` (a unit vector), best first: by exact cosine
    /// similarity (ties keep index order), or through the generation's graph when it has one
    /// (approximate: at most [`graph::EF_SEARCH`] of the graph's chunks, with the chunks it lacks
    /// scored exactly).
    ///
    /// With `keep`, only the chunks it keeps: exact search scores only those; through the
    /// graph, the graph's candidates that pass, when at least `wanted` of them do (the
    /// unfiltered answer's passing part; `wanted`, at most `limit`, is how many results the
    /// search returns: a hybrid search fuses `limit` candidates for fewer results), else exact
    /// search over the passing chunks, so a selective filter is answered exactly and a broad one
    /// at the graph's speed. Candidates of a carried graph that this generation no longer holds
    /// count as not passing.
    pub(crate) fn nearest(
        &self,
        query: &[f32],
        limit: usize,
        keep: Option<Keep<'_>>,
        wanted: usize,
    ) -> Result<Vec<(f32, DocAddress)>, Error> {
        if query.len() != self.dimension {
            return Err(Error::embedding(
                format!(
                    "the query vector has {} values, the collection's vectors {}",
                    query.len(),
                    self.dimension
                ),
                None,
            ));
        }
        let keeps = |row: u32| keep.is_none_or(|keep| keep(self.addresses[row as usize]));
        let found = match (&self.store, keep) {
            (Store::Rows(data), None) => graph::exact_nearest(data, self.dimension, query, limit),
            (Store::Rows(_), Some(_)) => self.exact_where(query, limit, keeps),
            (Store::Graph(carried), _) => match carried.nearest(query, limit, keeps, wanted) {
                Some(found) => found,
                None => self.exact_where(query, limit, keeps),
            },
        };
        Ok(found
            .into_iter()
            .map(|(score, row)| (score, self.addresses[row as usize]))
            .collect())
    }

    /// The `limit` rows `keeps` keeps that are most similar to `query`, by exact cosine
    /// similarity, best first.
    fn exact_where(
        &self,
        query: &[f32],
        limit: usize,
        keeps: impl Fn(u32) -> bool,
    ) -> Vec<(f32, u32)> {
        let scored = (0..self.len() as u32)
            .filter(|&row| keeps(row))
            .map(|row| (dot(self.vector(row as usize), query), row))
            .collect();
        graph::best(scored, limit)
    }
}
