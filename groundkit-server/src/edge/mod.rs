//! What every transport shares at the boundary.
//!
//! - [`problem`]: [`Refusal`](problem::Refusal)s (failures only an edge meets), the one
//!   [`mapping`](problem::mapping) from a failure to its HTTP status and MCP rendering, and
//!   problem+json.

pub mod problem;
