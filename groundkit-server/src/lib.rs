//! groundkit transports.

#[cfg(feature = "retrieval")]
pub mod cli;
