//! The vectors of one generation: the file `vectors.bin` inside the generation's directory, read
//! whole when the generation is opened, and the exact nearest-neighbour search over it.
//!
//! A generation's vectors are written into its directory before the directory is published
//! (`write`, with the `ingest` feature), so they are published, read and removed together with
//! the lexical index they belong to, under the same generation invariant.
//!
//! # Format
//!
//! ```text
//! "GRKVEC01"                      8 bytes
//! header length                   u32, little endian
//! header                          JSON: identity, count, dimension, segment ids
//! count rows, each:               segment ordinal (u32 LE), document id in the segment (u32 LE),
//!                                 content key (16 bytes: SHA-256 prefix of the chunk text),
//!                                 dimension x f32 LE (unit length)
//! ```
//!
//! A row names its chunk by its address in the generation's lexical index, whose segments are
//! fixed once the generation is committed; the header lists the segment ids in searcher order,
//! and opening checks them, so a row can never point into a different index.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tantivy::{DocAddress, Searcher};

use crate::Error;
use crate::retrieval::embed::dot;
use crate::retrieval::model::EmbeddingIdentity;

#[cfg(feature = "ingest")]
pub(crate) mod write;

pub(crate) use crate::retrieval::lexical::VECTORS_FILE_NAME as FILE_NAME;
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
    data: Vec<f32>,
}

fn corrupt(message: impl Into<String>) -> Error {
    Error::Storage {
        message: message.into(),
        source: None,
    }
}

impl Vectors {
    /// Reads the vectors of the generation in `dir`, if it has any, checking them against the
    /// generation's lexical index.
    pub(crate) fn open(dir: &Path, searcher: &Searcher) -> Result<Option<Self>, Error> {
        let bytes = match std::fs::read(dir.join(FILE_NAME)) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(Error::storage("cannot read the generation's vectors", err)),
        };
        let (segments, vectors) = Self::parse(&bytes)?;
        if segments != segment_ids(searcher) {
            return Err(corrupt(format!(
                "the vectors in {} belong to other segments than the lexical index",
                dir.display()
            )));
        }
        Ok(Some(vectors))
    }

    /// Parses a whole vectors file: the segment ids it was written for, and the vectors.
    pub(crate) fn parse(bytes: &[u8]) -> Result<(Vec<String>, Self), Error> {
        let (header, body) = parse_header(bytes)?;
        let dimension = header.dimension as usize;
        let row = ROW_PREFIX + 4 * dimension;
        let count = usize::try_from(header.count).map_err(|_| corrupt("vector count too large"))?;
        if dimension == 0 || body.len() != count.saturating_mul(row) {
            return Err(corrupt("the vectors file's size does not match its header"));
        }
        let mut addresses = Vec::with_capacity(count);
        let mut keys = Vec::with_capacity(count);
        let mut data = Vec::with_capacity(count * dimension);
        for chunk in body.chunks_exact(row) {
            let u32_at = |at: usize| {
                u32::from_le_bytes([chunk[at], chunk[at + 1], chunk[at + 2], chunk[at + 3]])
            };
            addresses.push(DocAddress::new(u32_at(0), u32_at(4)));
            let mut key = [0u8; 16];
            key.copy_from_slice(&chunk[8..24]);
            keys.push(key);
            data.extend(
                chunk[ROW_PREFIX..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        }
        let vectors = Self {
            identity: header.identity,
            dimension,
            addresses,
            keys,
            data,
        };
        Ok((header.segments, vectors))
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

    /// The vector of row `row`.
    #[cfg_attr(not(feature = "ingest"), allow(dead_code))]
    pub(crate) fn vector(&self, row: usize) -> &[f32] {
        &self.data[row * self.dimension..(row + 1) * self.dimension]
    }

    /// The content key of row `row`.
    #[cfg_attr(not(feature = "ingest"), allow(dead_code))]
    pub(crate) fn key(&self, row: usize) -> &[u8; 16] {
        &self.keys[row]
    }

    /// The `limit` chunks most similar to `query` (a unit vector), best first, by exact cosine
    /// similarity. Ties keep index order.
    pub fn nearest(&self, query: &[f32], limit: usize) -> Result<Vec<(f32, DocAddress)>, Error> {
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
        let mut scored: Vec<(f32, usize)> = self
            .data
            .chunks_exact(self.dimension)
            .map(|v| dot(v, query))
            .zip(0..)
            .collect();
        let limit = limit.min(scored.len());
        let by_score = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if limit < scored.len() && limit > 0 {
            scored.select_nth_unstable_by(limit - 1, by_score);
        }
        scored.truncate(limit);
        scored.sort_by(by_score);
        Ok(scored
            .into_iter()
            .map(|(score, row)| (score, self.addresses[row]))
            .collect())
    }
}

fn parse_header(bytes: &[u8]) -> Result<(Header, &[u8]), Error> {
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(corrupt("not a groundkit vectors file"));
    }
    let len = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
    let end = 12usize.checked_add(len).filter(|&end| end <= bytes.len());
    let Some(end) = end else {
        return Err(corrupt("the vectors file's header is truncated"));
    };
    let header: Header = serde_json::from_slice(&bytes[12..end])
        .map_err(|err| Error::storage("the vectors file's header is not valid", err))?;
    Ok((header, &bytes[end..]))
}
