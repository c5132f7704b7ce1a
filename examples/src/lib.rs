//! Tool sets served with the groundkit framework alone (no retrieval engine linked).
//!
//! [`hello`] is a small read-only tool set with nothing to do with retrieval: a GET with path
//! parameters, a no-argument GET, and a POST with a bounded free-text field and a nested output;
//! and a static resource and a resource template. [`conformance`] holds the fixture tools and
//! resources the official MCP conformance suite calls by name.
//! [`serve`] is the whole `main` of the binaries that serve them.

pub mod conformance;
pub mod hello;
pub mod serve;
