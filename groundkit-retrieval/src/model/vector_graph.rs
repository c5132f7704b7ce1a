//! What an ingest reports of a generation's HNSW graph (`IngestSummary::vector_graph`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What an ingest did about its generation's HNSW graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VectorGraph {
    /// No graph was written: no new generation, no vectors, or fewer than
    /// `graph_min_vectors` of them (searched exactly).
    #[default]
    None,
    /// The generation carries the previous generation's graph: the chunks embedded since are
    /// searched exactly beside it.
    Carried,
    /// A graph was built for the generation from all its vectors.
    Built,
}
