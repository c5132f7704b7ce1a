//! The OpenSearch backend: collections served from an OpenSearch cluster instead of this
//! machine's disk, with the same tools, results and citations as the local backend.
//!
//! # Layout in the cluster
//!
//! A collection `NAME` is the alias `<prefix>NAME` (the prefix is `groundkit-` unless the
//! operator names another). Each published generation `N` is its own index `<prefix>NAME--gN`,
//! holding one document per live chunk: the chunk record `fetch_chunk` verifies (ids, offsets,
//! text, source, extractor) and, when the generation has vectors, its vector as a `knn_vector`
//! (Lucene HNSW, cosine). The index's mapping `_meta` records the generation, the document and
//! chunk counts and the embedding identity. Names must be lowercase and free of `--` so that
//! alias and index names can never collide ([`check_name`]).
//!
//! # Publishing a generation
//!
//! [`publish`] loads the committed generation of a local collection (the ingest's staging copy,
//! built and committed by the local engine exactly as for the local backend) into a new index,
//! write-blocks it, checks its document count, waits for every copy of every shard to start,
//! and then moves the alias to it in one atomic
//! `_aliases` request that also removes it from the index that held it. Until that request
//! succeeds, every reader stays on the previous generation; a publish that dies before it leaves
//! an index no alias names, which the next publish deletes. Indices of older generations are
//! deleted once their successor is older than the retention window, so a citation from any
//! generation in the window can still be fetched.
//!
//! # Reading
//!
//! [`ClusterBackend`] answers `search`, `fetch_chunk`, `list_collections` and `index_status` from
//! the cluster alone: a serving process holds nothing the cluster does not (the generation it
//! remembers per collection only prepares a query; the answer names the generation that gave
//! it), so any number of them may serve the same collections. Queries are analysed by groundkit (the same terms as the
//! local engine) and sent as term queries; lexical search over several shards runs as
//! `dfs_query_then_fetch`, so BM25 uses collection-wide statistics whatever the number of shards. Dense search is a k-NN
//! query; hybrid fuses both rankings' chunk ids and scores, fetched in one `_msearch`, with
//! groundkit's own fusion (min-max or Reciprocal Rank Fusion, as the local engine), then reads the fused chunks' records from the generation index that
//! ranked them. A filter becomes a clause of the query (`filter`). Several collections are
//! searched as one by searching their generation indices together, so the term statistics are
//! all of theirs, as the local engine scores several collections. A search refuses partial results (a shard with no live copy fails it rather than
//! silently dropping that shard's chunks) and is retried twice, so a node's loss is bridged by
//! the replicas of its shards.
//!
//! # Errors
//!
//! Every failure of the cluster becomes a `storage_error`: the cluster's status and text are
//! logged for the operator and never reach a caller, and neither does the cluster's URL.

mod client;
mod filter;
mod layout;
mod publish;
mod query;
mod read;

pub use client::{Cluster, ClusterConfig, DEFAULT_PREFIX};
pub use layout::check_name;
pub use publish::{PublishOptions, Published, publish};
pub use read::ClusterBackend;
