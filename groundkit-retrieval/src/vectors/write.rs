//! Writing a generation's vectors, for ingest only: every live chunk of the committed (not yet
//! published) lexical generation gets a vector of its embedding input ([`input`]), reused from
//! the previous generation when the same embedder embedded the same input there, computed
//! otherwise; a large generation also gets an HNSW graph: the previous generation's, carried
//! (`crate::vectors::carried`), while it still fits, else one built for it.
//!
//! [`input`]: crate::vectors::input

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tantivy::{DocAddress, Index, ReloadPolicy, Searcher};

use crate::collection::{VECTOR_GRAPH_FILE, VECTORS_FILE};
use crate::embed::{Embedder, Role, unit_vector};
use crate::lexical::Fields;
use crate::model::VectorGraph;
use crate::vectors::carried::worth_carrying;
use crate::vectors::graph::{Graph, Key};
use crate::vectors::input::Inputs;
use crate::vectors::{Header, MAGIC, ROW_PREFIX, Vectors, segment_ids};
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
    /// Whether the generation got a graph, and how.
    pub(crate) graph: VectorGraph,
}

/// The content key of an embedding input.
fn key_of(input: &str) -> Key {
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

/// The graph of the generation being replaced: its file and what it holds.
pub(crate) struct PreviousGraph {
    file: PathBuf,
    dimension: usize,
    keys: Vec<Key>,
}

impl PreviousGraph {
    /// Reads which inputs the graph of the generation in `dir` holds (not the graph itself);
    /// `None` if it has no graph, or one of the earlier format.
    pub(crate) fn read(dir: &Path) -> Result<Option<Self>, Error> {
        let file = dir.join(VECTOR_GRAPH_FILE);
        let input = match std::fs::File::open(&file) {
            Ok(input) => std::io::BufReader::new(input),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(Error::storage("cannot read the vector graph", err)),
        };
        Ok(Graph::read_keys(input)?.map(|(dimension, keys)| Self {
            file,
            dimension,
            keys,
        }))
    }
}

/// What the ingest writes with a generation's vectors.
pub(crate) struct VectorPlan<'a> {
    /// Computes the vectors that cannot be reused.
    pub(crate) embedder: &'a dyn Embedder,
    /// The vectors of the generation being replaced; reused only if `embedder` computed them.
    pub(crate) previous: Option<&'a Vectors>,
    /// The graph of the generation being replaced; carried only if `embedder` computed it.
    pub(crate) previous_graph: Option<&'a PreviousGraph>,
    /// The fewest vectors for which the generation gets a graph.
    pub(crate) graph_min_vectors: usize,
}

/// Computes and writes `vectors.bin` for the generation committed in `dir`, and `vectors.hnsw`
/// when it has at least `plan.graph_min_vectors` vectors (the previous generation's, linked, while
/// it is worth carrying), reporting to `progress`.
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
    let same_embedder = previous.is_some_and(|p| p.identity().fingerprint == identity.fingerprint);
    let reusable: HashMap<Key, usize> = match previous {
        Some(prev) if same_embedder => (0..prev.len()).map(|row| (*prev.key(row), row)).collect(),
        _ => HashMap::new(),
    };
    // Pass 1: every live chunk's address and content key; which keys need a new vector. A chunk
    // of a segment the previous generation had keeps the key recorded there (its input cannot
    // have changed); only the chunks of new segments are read.
    let mut inputs = Inputs::new(&searcher, fields);
    let recorded = previous.map(Vectors::keys_by_segment).unwrap_or_default();
    let mut rows: Vec<(DocAddress, Key)> = Vec::new();
    let mut missing: Vec<DocAddress> = Vec::new();
    let mut pending_keys = HashSet::new();
    for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        let segment_id = segment.segment_id().uuid_string();
        for doc in segment.doc_ids_alive() {
            let address = DocAddress::new(ord as u32, doc);
            let key = match recorded.get(&(segment_id.as_str(), doc)) {
                Some(key) => **key,
                None => key_of(&inputs.of(address)?),
            };
            if !reusable.contains_key(&key) && pending_keys.insert(key) {
                missing.push(address);
            }
            rows.push((address, key));
        }
    }
    // Pass 2: embed what is missing, in batches.
    let total = missing.len() as u64;
    let mut computed: HashMap<Key, Vec<f32>> = HashMap::with_capacity(missing.len());
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
    let vector_of = |key: &Key| {
        computed
            .get(key)
            .map(Vec::as_slice)
            .or_else(|| Some(previous?.vector(*reusable.get(key)?)))
    };
    write_file(dir, &searcher, identity, &rows, vector_of)?;
    let mut graph = VectorGraph::None;
    if !rows.is_empty() && rows.len() >= plan.graph_min_vectors {
        let carried = plan
            .previous_graph
            .filter(|g| same_embedder && g.dimension == identity.dimension as usize)
            .filter(|g| fits(g, &rows));
        graph = match carried.map(|g| link_graph(&g.file, dir)) {
            Some(Ok(())) => VectorGraph::Carried,
            failed => {
                if let Some(Err(err)) = failed {
                    tracing::warn!(error = %err, "building a new vector graph: cannot link the previous one");
                }
                progress(VectorProgress::Indexing);
                // One entry per input: rows of the same input share it.
                let mut seen = HashSet::with_capacity(rows.len());
                let entries: Vec<(Key, &[f32])> = rows
                    .iter()
                    .filter(|(_, key)| seen.insert(*key))
                    .map(|(_, key)| {
                        let vector = vector_of(key)
                            .ok_or_else(|| Error::internal("a chunk has no vector"))?;
                        Ok((*key, vector))
                    })
                    .collect::<Result<_, Error>>()?;
                write_graph(dir, &Graph::build(entries, identity.dimension as usize))?;
                VectorGraph::Built
            }
        };
    }
    Ok(VectorCounts {
        embedded: total,
        reused: (rows.len() as u64).saturating_sub(total),
        graph,
    })
}

/// Whether `graph` is worth carrying into a generation of `rows` ([`worth_carrying`]).
fn fits(graph: &PreviousGraph, rows: &[(DocAddress, Key)]) -> bool {
    let held: HashSet<&Key> = graph.keys.iter().collect();
    let delta = rows.iter().filter(|(_, key)| !held.contains(key)).count();
    let live: HashSet<&Key> = rows.iter().map(|(_, key)| key).collect();
    let dead = graph.keys.iter().filter(|key| !live.contains(key)).count();
    worth_carrying(graph.keys.len(), delta, dead)
}

/// Links the previous generation's graph file into the generation in `dir` (copies it where
/// linking fails). Graph files are never written in place, so the link is as good as a copy.
fn link_graph(file: &Path, dir: &Path) -> Result<(), Error> {
    let io = |err| Error::storage("cannot carry the vector graph", err);
    let to = dir.join(VECTOR_GRAPH_FILE);
    if std::fs::hard_link(file, &to).is_err() {
        std::fs::copy(file, &to).map_err(io)?;
        std::fs::File::open(&to)
            .and_then(|f| f.sync_all())
            .map_err(io)?;
    }
    Ok(())
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
    rows: &[(DocAddress, Key)],
    vector_of: impl Fn(&Key) -> Option<&'a [f32]>,
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
    // Each row is laid out in one buffer and written with one call.
    let mut row = Vec::with_capacity(ROW_PREFIX + 4 * identity.dimension as usize);
    for (address, key) in rows {
        let vector = vector_of(key).ok_or_else(|| Error::internal("a chunk has no vector"))?;
        row.clear();
        row.extend_from_slice(&address.segment_ord.to_le_bytes());
        row.extend_from_slice(&address.doc_id.to_le_bytes());
        row.extend_from_slice(key);
        row.extend(vector.iter().flat_map(|value| value.to_le_bytes()));
        out.write_all(&row).map_err(io)?;
    }
    let file = out.into_inner().map_err(|err| io(err.into_error()))?;
    file.sync_all().map_err(io)
}
