//! The framework contract: registries, the REST surface, parity, schemas, compile-time rules.

mod parity;
mod registry;
mod rest;
mod schemas;
mod toolsets;
mod ui;
