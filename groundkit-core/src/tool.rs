//! What a tool is: the const [`ToolSpec`] that `#[tool]` emits, and the sealed side-effect model.
//!
//! A spec is data, not a route: both transports read the same specs from a
//! [`Registry`](crate::registry::Registry) and neither may add an operation of its own.
//!
//! # Why side effects are sealed
//!
//! groundkit serves tools to unauthenticated callers on a loopback socket; its only safe
//! operations are reads. [`SideEffect`] therefore has exactly one variant, and a spec can only be
//! built through [`ToolSpec::new`], whose side-effect parameter must implement the sealed
//! [`SideEffectKind`] trait. The only implementor is [`ReadOnly`]. Serving a mutating tool would
//! need a deliberate change in this one file (a new variant, a new marker type, and a decision in
//! every transport about what protects it) — which is the point.

use std::any::TypeId;
use std::future::Future;
use std::pin::Pin;

use crate::call::RequestContext;
use crate::error::Error;
use crate::schema::Definitions;

/// The side effect of a tool. Sealed to read-only: see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SideEffect {
    /// The tool reads and never writes: safe to call any number of times, in any order.
    ReadOnly,
}

impl SideEffect {
    /// Whether MCP's `readOnlyHint` is set for this side effect.
    pub const fn is_read_only(self) -> bool {
        match self {
            SideEffect::ReadOnly => true,
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ReadOnly {}
}

/// Marker type for [`SideEffect::ReadOnly`]; the only [`SideEffectKind`].
#[derive(Debug, Clone, Copy)]
pub struct ReadOnly;

/// A side effect a tool may declare. Sealed: [`ReadOnly`] is the only implementor.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a side effect a groundkit tool may have",
    label = "groundkit serves read-only tools only",
    note = "groundkit has no authentication, so every served tool must be read-only; `SideEffect` and `SideEffectKind` are sealed in groundkit-core/src/tool.rs, the one place a new side effect would have to be added deliberately"
)]
pub trait SideEffectKind: sealed::Sealed {
    /// The side effect this marker stands for.
    const EFFECT: SideEffect;
}

impl SideEffectKind for ReadOnly {
    const EFFECT: SideEffect = SideEffect::ReadOnly;
}

/// HTTP method of a tool's REST route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HttpMethod {
    /// A read without free text; every parameter is a path segment.
    Get,
    /// A read that takes a JSON body (free text never travels in a URL).
    Post,
}

impl HttpMethod {
    /// Upper-case name, as on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
        }
    }
}

impl std::fmt::Display for HttpMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool's REST route: method, path template and the names of its `{param}` segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestRoute {
    /// The method.
    pub method: HttpMethod,
    /// Path template, e.g. `/collections/{collection}/status`.
    pub path: &'static str,
    /// Names of the path parameters, in order; each is a field of the request type.
    pub params: &'static [&'static str],
}

/// What a tool and a resource both declare about the operation that serves them: how OpenAPI
/// and the transports name, describe and route it.
pub trait Operation {
    /// Its name (unique within a registry, tools and resources together).
    fn name(&self) -> &'static str;
    /// First sentence of the doc comment.
    fn summary(&self) -> &'static str;
    /// The whole doc comment.
    fn description(&self) -> &'static str;
    /// Declared side effect.
    fn side_effect(&self) -> SideEffect;
    /// REST route.
    fn route(&self) -> RestRoute;
}

impl Operation for ToolSpec {
    fn name(&self) -> &'static str {
        self.name
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn description(&self) -> &'static str {
        self.description
    }
    fn side_effect(&self) -> SideEffect {
        self.side_effect
    }
    fn route(&self) -> RestRoute {
        self.route
    }
}

/// A boxed, `Send` future as returned by type-erased handlers.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The context a handler receives, type-erased so one slice can hold every tool set.
pub type ErasedContext = dyn std::any::Any + Send + Sync;

/// A type-erased handler: context and JSON arguments in, JSON output out.
///
/// Arguments are parsed and validated inside, by the request type's own rules, so every
/// transport gets the same errors.
pub type Handler = for<'a> fn(
    &'a ErasedContext,
    serde_json::Value,
    RequestContext,
) -> BoxFuture<'a, Result<serde_json::Value, Error>>;

/// Everything one tool declares. Built by `#[tool]`; read by registries and transports.
#[derive(Clone, Copy)]
pub struct ToolSpec {
    name: &'static str,
    title: Option<&'static str>,
    icon: Option<&'static str>,
    summary: &'static str,
    description: &'static str,
    side_effect: SideEffect,
    route: RestRoute,
    context: fn() -> TypeId,
    context_name: fn() -> &'static str,
    input_schema: fn(Definitions) -> serde_json::Value,
    output_schema: fn(Definitions) -> serde_json::Value,
    handler: Handler,
}

/// The parts of a [`ToolSpec`] that are not its side effect.
#[derive(Clone, Copy)]
pub struct ToolParts {
    /// Tool name (MCP name; unique within a registry).
    pub name: &'static str,
    /// Optional human title.
    pub title: Option<&'static str>,
    /// Optional icon: an `https` URL or an image `data:` URI.
    pub icon: Option<&'static str>,
    /// First sentence of the doc comment.
    pub summary: &'static str,
    /// The whole doc comment.
    pub description: &'static str,
    /// The REST route.
    pub route: RestRoute,
    /// `TypeId` of the context type the handler expects.
    pub context: fn() -> TypeId,
    /// Name of the context type, for error messages.
    pub context_name: fn() -> &'static str,
    /// JSON Schema of the arguments, with named types written as asked.
    pub input_schema: fn(Definitions) -> serde_json::Value,
    /// JSON Schema of the output, with named types written as asked.
    pub output_schema: fn(Definitions) -> serde_json::Value,
    /// The type-erased handler.
    pub handler: Handler,
}

impl ToolSpec {
    /// Build a spec. `E` must be a sealed [`SideEffectKind`]: in practice [`ReadOnly`].
    pub const fn new<E: SideEffectKind>(parts: ToolParts) -> Self {
        let ToolParts {
            name,
            title,
            icon,
            summary,
            description,
            route,
            context,
            context_name,
            input_schema,
            output_schema,
            handler,
        } = parts;
        ToolSpec {
            name,
            title,
            icon,
            summary,
            description,
            side_effect: E::EFFECT,
            route,
            context,
            context_name,
            input_schema,
            output_schema,
            handler,
        }
    }

    /// Tool name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
    /// Human title, when declared.
    pub const fn title(&self) -> Option<&'static str> {
        self.title
    }
    /// Icon source, when declared.
    pub const fn icon(&self) -> Option<&'static str> {
        self.icon
    }
    /// First sentence of the doc comment.
    pub const fn summary(&self) -> &'static str {
        self.summary
    }
    /// The whole doc comment.
    pub const fn description(&self) -> &'static str {
        self.description
    }
    /// Declared side effect.
    pub const fn side_effect(&self) -> SideEffect {
        self.side_effect
    }
    /// REST route.
    pub const fn route(&self) -> RestRoute {
        self.route
    }
    /// Name of the context type this tool is served with.
    pub fn context_name(&self) -> &'static str {
        (self.context_name)()
    }
    /// Whether this tool belongs to the registry of context type `Ctx`.
    pub fn serves<Ctx: 'static>(&self) -> bool {
        (self.context)() == TypeId::of::<Ctx>()
    }
    /// JSON Schema of the arguments (2020-12, object root, definitions inlined).
    pub fn input_schema(&self) -> serde_json::Value {
        (self.input_schema)(Definitions::Inline)
    }
    /// JSON Schema of the output (2020-12, object root, definitions inlined).
    pub fn output_schema(&self) -> serde_json::Value {
        (self.output_schema)(Definitions::Inline)
    }
    /// JSON Schema of the arguments with named types as `#/components/schemas/<Name>`.
    pub fn input_schema_with_components(&self) -> serde_json::Value {
        (self.input_schema)(Definitions::Components)
    }
    /// JSON Schema of the output with named types as `#/components/schemas/<Name>`.
    pub fn output_schema_with_components(&self) -> serde_json::Value {
        (self.output_schema)(Definitions::Components)
    }
    /// Call the handler with a context of the type this tool is registered for, as the call
    /// `request` describes.
    pub fn call<'a>(
        &self,
        ctx: &'a ErasedContext,
        arguments: serde_json::Value,
        request: RequestContext,
    ) -> BoxFuture<'a, Result<serde_json::Value, Error>> {
        (self.handler)(ctx, arguments, request)
    }
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .field("side_effect", &self.side_effect)
            .field("route", &self.route)
            .field("context", &self.context_name())
            .finish_non_exhaustive()
    }
}
