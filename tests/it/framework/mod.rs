//! The framework contract: registries, the REST surface, parity, schemas.
//!
//! What this module guards:
//!
//! - REST serves exactly the registry, and a route added behind its back fails the check:
//!   `parity::rest_serves_exactly_the_registry`, `parity::a_hand_added_route_breaks_parity`;
//!   both MCP transports list exactly its resources and templates:
//!   `parity::both_mcp_transports_list_exactly_the_registrys_resources_and_templates`.
//! - A `#[resource]` declares its URI template, route and MIME type; the registry refuses
//!   overlapping templates, a resource named like a tool, colliding routes and parameters no
//!   URI variable fills; each resource is a `GET` route answering its content, refusing a
//!   traversal before the function runs, with an OpenAPI operation: `resources.rs`.
//! - A registry keeps one context type's tools and refuses what cannot be served together
//!   (duplicate names, colliding routes, a path a transport serves, a nullable output):
//!   `registry.rs`.
//! - Only read-only tools and resources compile, each broken declaration (a resource's URI
//!   template included) fails with its own message, and
//!   generated code names everything by absolute path: groundkit-macros' unit test
//!   `compile_time_rules` (`groundkit-macros/tests/ui`).
//! - Schemas are portable: `schemas::schemas_are_portable_2020_12_objects_without_refs_nulls_or_const_enums`;
//!   the `hello` schemas and OpenAPI document match their snapshots.
//! - The README's complete example serves everything it declares over REST, MCP and OpenAPI:
//!   `examples::the_notes_example_serves_everything_it_declares_over_rest_mcp_and_openapi`.
//! - An interceptor added in one line sees every kind of call on every transport, refuses with
//!   the same `kind` everywhere, and can answer a call without the function running:
//!   `intercept.rs`.
//! - REST refuses bad input with its `kind`, shows nothing of an opaque failure and accepts no
//!   query string: `rest.rs`.

mod examples;
mod intercept;
mod parity;
mod registry;
mod resources;
mod rest;
pub(crate) mod schemas;
mod toolsets;
