//! The framework contract: registries, the REST surface, parity, schemas.
//!
//! What this module guards:
//!
//! - REST serves exactly the registry, and a route added behind its back fails the check:
//!   `parity::rest_serves_exactly_the_registry`, `parity::a_hand_added_route_breaks_parity`.
//! - A registry keeps one context type's tools and refuses what cannot be served together
//!   (duplicate names, colliding routes, a path a transport serves, a nullable output):
//!   `registry.rs`.
//! - Only read-only tools compile, each broken declaration fails with its own message, and
//!   generated code names everything by absolute path: groundkit-macros' unit test
//!   `compile_time_rules` (`groundkit-macros/tests/ui`).
//! - Schemas are portable: `schemas::schemas_are_portable_2020_12_objects_without_refs_nulls_or_const_enums`;
//!   the `hello` schemas and OpenAPI document match their snapshots.
//! - REST refuses bad input with its `kind`, shows nothing of an opaque failure and accepts no
//!   query string: `rest.rs`.

mod parity;
mod registry;
mod rest;
pub(crate) mod schemas;
mod toolsets;
