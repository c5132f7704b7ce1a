//! groundkit transports.
