//! The framework contract: registries, the REST surface, parity, schemas.

mod parity;
mod registry;
mod rest;
mod schemas;
mod toolsets;
