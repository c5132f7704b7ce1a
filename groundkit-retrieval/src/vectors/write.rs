//! Writing a generation's vectors, for ingest only: every live chunk of the committed (not yet
//! published) lexical generation gets a vector of its embedding input ([`input`]), reused from
//! the previous generation when the same embedder embedded the same input there, computed
//! otherwise; a large generation also gets its HNSW graph.
//!
//! [`input`]: crate::vectors::input

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};
use tantivy::{DocAddress, Index, ReloadPolicy, Searcher};

use crate::collection::{VECTOR_GRAPH_FILE, VECTORS_FILE};
use crate::embed::{Embedder, Role, unit_vector};
use crate::lexical::Fields;
use crate::vectors::graph::Graph;
use crate::vectors::input::Inputs;
use crate::vectors::{Header, MAGIC, Vectors, segment_ids};
use groundkit_core::Error;

/// Texts per call to the embedder.
const EMBED_BATCH: usize = 256;

/// What writing a generation's vectors did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct VectorCounts {
    /// Chunks whose vector was computed by this ingest.
    pub(crate) embedded: u64,
    /// Chunks whose vector was taken from the previous generation.
    pub(crate) reused: u64,
}

/// The content key of an embedding input.
fn key_of(input: &str) -> [u8; 16] {
    let digest = Sha256::digest(input.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// How far writing a generation's vectors is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum VectorProgress {
    /// (embedded so far, to embed), after every batch.
    Embedded(u64, u64),
    /// The graph is being built.
    Indexing,
}

/// What the ingest writes with a generation's vectors.
pub(crate) struct VectorPlan<'a> {
    /// Computes the vectors that cannot be reused.
    pub(crate) embedder: &'a dyn Embedder,
    /// The vectors of the generation being replaced; reused only if `embedder` computed them.
    pub(crate) previous: Option<&'a Vectors>,
    /// The fewest vectors for which the generation gets a graph.
    pub(crate) graph_min_vectors: usize,
}

/// Computes and writes `vectors.bin` for the generation committed in `dir`, and `vectors.hnsw`
/// when it has at least `plan.graph_min_vectors` vectors, reporting to `progress`.
pub(crate) fn write_generation(
    dir: &Path,
    fields: &Fields,
    plan: &VectorPlan<'_>,
    progress: &mut dyn FnMut(VectorProgress),
) -> Result<VectorCounts, Error> {
    let (embedder, previous) = (plan.embedder, plan.previous);
    let index = Index::open_in_dir(dir)
        .map_err(|err| Error::storage("cannot open the new lexical generation", err))?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(|err| Error::storage("cannot open the new lexical generation", err))?;
    let searcher: Searcher = reader.searcher();
    let identity = embedder.identity();
    let reusable: HashMap<[u8; 16], usize> = match previous {
        Some(prev) if prev.identity().fingerprint == identity.fingerprint => {
            (0..prev.len()).map(|row| (*prev.key(row), row)).collect()
        }
        _ => HashMap::new(),
    };
    // Pass 1: every live chunk's address and content key; which keys need a new vector.
    let mut inputs = Inputs::new(&searcher, fields);
    let mut rows: Vec<(DocAddress, [u8; 16])> = Vec::new();
    let mut missing: Vec<DocAddress> = Vec::new();
    let mut pending_keys = std::collections::HashSet::new();
    for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        for doc in segment.doc_ids_alive() {
            let address = DocAddress::new(ord as u32, doc);
            let key = key_of(&inputs.of(address)?);
            if !reusable.contains_key(&key) && pending_keys.insert(key) {
                missing.push(address);
            }
            rows.push((address, key));
        }
    }
    // Pass 2: embed what is missing, in batches.
    let total = missing.len() as u64;
    let mut computed: HashMap<[u8; 16], Vec<f32>> = HashMap::with_capacity(missing.len());
    progress(VectorProgress::Embedded(0, total));
    for batch in missing.chunks(EMBED_BATCH) {
        let texts: Vec<String> = batch
            .iter()
            .map(|&address| inputs.of(address))
            .collect::<Result<_, _>>()?;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = embedder.embed(&refs, Role::Document)?;
        if vectors.len() != texts.len() {
            return Err(Error::embedding(
                "the embedder returned too few vectors",
                None,
            ));
        }
        for (text, vector) in texts.iter().zip(vectors) {
            if vector.len() != identity.dimension as usize {
                return Err(Error::embedding(
                    "the embedder returned a vector of the wrong dimension",
                    None,
                ));
            }
            computed.insert(key_of(text), unit_vector(vector)?);
        }
        progress(VectorProgress::Embedded(computed.len() as u64, total));
    }
    let vector_of = |key: &[u8; 16]| {
        computed
            .get(key)
            .map(Vec::as_slice)
            .or_else(|| Some(previous?.vector(*reusable.get(key)?)))
    };
    write_file(dir, &searcher, identity, &rows, vector_of)?;
    if !rows.is_empty() && rows.len() >= plan.graph_min_vectors {
        progress(VectorProgress::Indexing);
        let vectors: Vec<&[f32]> = rows
            .iter()
            .map(|(_, key)| vector_of(key).ok_or_else(|| Error::internal("a chunk has no vector")))
            .collect::<Result<_, _>>()?;
        let graph = Graph::build(vectors, identity.dimension as usize);
        write_graph(dir, &graph)?;
    }
    Ok(VectorCounts {
        embedded: total,
        reused: (rows.len() as u64).saturating_sub(total),
    })
}

fn write_graph(dir: &Path, graph: &Graph) -> Result<(), Error> {
    let io = |err| Error::storage("cannot write the vector graph", err);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(VECTOR_GRAPH_FILE))
        .map_err(io)?;
    let mut out = std::io::BufWriter::new(file);
    graph.write_to(&mut out)?;
    let file = out.into_inner().map_err(|err| io(err.into_error()))?;
    file.sync_all().map_err(io)
}

fn write_file<'a>(
    dir: &Path,
    searcher: &Searcher,
    identity: &crate::model::EmbeddingIdentity,
    rows: &[(DocAddress, [u8; 16])],
    vector_of: impl Fn(&[u8; 16]) -> Option<&'a [f32]>,
) -> Result<(), Error> {
    let io = |err| Error::storage("cannot write the generation's vectors", err);
    let header = serde_json::to_vec(&Header {
        identity: identity.clone(),
        count: rows.len() as u64,
        dimension: identity.dimension,
        segments: segment_ids(searcher),
    })
    .map_err(|err| Error::storage("cannot write the generation's vectors", err))?;
    // A new file, never an existing one: a file of that name could share its inode with a
    // published generation.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(VECTORS_FILE))
        .map_err(io)?;
    let mut out = std::io::BufWriter::new(file);
    out.write_all(MAGIC).map_err(io)?;
    out.write_all(&(header.len() as u32).to_le_bytes())
        .map_err(io)?;
    out.write_all(&header).map_err(io)?;
    for (address, key) in rows {
        let vector = vector_of(key).ok_or_else(|| Error::internal("a chunk has no vector"))?;
        out.write_all(&address.segment_ord.to_le_bytes())
            .map_err(io)?;
        out.write_all(&address.doc_id.to_le_bytes()).map_err(io)?;
        out.write_all(key).map_err(io)?;
        for value in vector {
            out.write_all(&value.to_le_bytes()).map_err(io)?;
        }
    }
    let file = out.into_inner().map_err(|err| io(err.into_error()))?;
    file.sync_all().map_err(io)
}
