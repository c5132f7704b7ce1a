//! What a resource is: the const [`ResourceSpec`] that `#[resource]` emits, its URI template,
//! and the [`Content`] a read answers with.
//!
//! A resource is read-only by the same sealed rule as a tool: a spec is built only through
//! [`ResourceSpec::new`], whose side effect must implement the sealed
//! [`SideEffectKind`], which only [`ReadOnly`](crate::tool::ReadOnly)
//! does.
//!
//! # URI templates
//!
//! A URI is `scheme://segment/segment/...`, each segment a literal of `A-Z a-z 0-9 - . _ ~` or a
//! whole `{var}` (RFC 6570 level 1, simple string expansion, one variable per segment). A URI
//! without a variable is a static resource (`resources/list`); one with variables a template
//! (`resources/templates/list`), whose variables are the fields of its parameter type. The
//! macro parses and checks the template at compile time and emits it already split into
//! [`Segment`]s, so nothing here parses a template; [`UriTemplate::matches`] reads a concrete URI
//! against one, percent-decoding each variable, and the parameter type's own validation then
//! refuses what its rules refuse (a `..` or a `/` in a name) before the function runs.
//!
//! The REST route of a resource is derived from its URI, `GET /resources/{scheme}/{segments}`,
//! so one declaration gives both and they cannot disagree.

use std::any::TypeId;

use serde_json::{Map, Value};

use crate::call::RequestContext;
use crate::complete::Completer;
use crate::error::Error;
use crate::schema::Definitions;
use crate::tool::{BoxFuture, ErasedContext, Operation, RestRoute, SideEffect, SideEffectKind};

/// One segment of a URI template after `scheme://`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// A literal segment, matched exactly.
    Literal(&'static str),
    /// A `{var}` segment: one non-empty, percent-decoded value.
    Var(&'static str),
}

/// A parsed URI template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UriTemplate {
    /// The template as written, e.g. `grk://{collection}/status`.
    pub template: &'static str,
    /// The scheme, without `://`.
    pub scheme: &'static str,
    /// The segments after `scheme://`.
    pub segments: &'static [Segment],
}

impl UriTemplate {
    /// Whether the template has no variable: the URI of exactly one resource.
    pub fn is_static(&self) -> bool {
        self.segments
            .iter()
            .all(|s| matches!(s, Segment::Literal(_)))
    }

    /// The variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.segments.iter().filter_map(|s| match s {
            Segment::Var(name) => Some(*name),
            Segment::Literal(_) => None,
        })
    }

    /// The values of the variables if `uri` is an instance of this template, as the arguments
    /// object of a read: `None` when it is not; each value percent-decoded, and a value that
    /// does not decode to UTF-8 kept as sent (its validation then refuses it).
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let rest = uri.strip_prefix(self.scheme)?.strip_prefix("://")?;
        let parts: Vec<&str> = rest.split('/').collect();
        if parts.len() != self.segments.len() {
            return None;
        }
        let mut arguments = Map::new();
        for (segment, part) in self.segments.iter().zip(parts) {
            match segment {
                Segment::Literal(literal) if *literal == part => {}
                Segment::Var(name) if !part.is_empty() && !part.contains(['?', '#']) => {
                    let value = percent_decode(part).unwrap_or_else(|| part.to_owned());
                    arguments.insert((*name).to_owned(), Value::String(value));
                }
                _ => return None,
            }
        }
        Some(arguments)
    }

    /// Whether some URI could match both templates (same scheme and segment count, every pair
    /// of segments equal or one of them a variable).
    pub fn overlaps(&self, other: &UriTemplate) -> bool {
        self.scheme == other.scheme
            && self.segments.len() == other.segments.len()
            && self
                .segments
                .iter()
                .zip(other.segments)
                .all(|pair| match pair {
                    (Segment::Literal(a), Segment::Literal(b)) => a == b,
                    _ => true,
                })
    }
}

/// `%XX` sequences decoded; `None` when one is malformed or the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What a read answers with; the spec's MIME type goes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text (`text` in MCP, the body as is on REST).
    Text(String),
    /// Bytes (base64 `blob` in MCP, the body as is on REST).
    Blob(Vec<u8>),
}

impl Content {
    /// `value` as compact JSON text, for a resource whose MIME type is `application/json`.
    pub fn json<T: serde::Serialize>(value: &T) -> Result<Content, Error> {
        serde_json::to_string(value)
            .map(Content::Text)
            .map_err(|err| Error::internal(format!("resource did not serialize: {err}")))
    }
}

/// A type-erased resource handler: context and the template's arguments in, content out.
pub type ResourceHandler =
    for<'a> fn(&'a ErasedContext, Value, RequestContext) -> BoxFuture<'a, Result<Content, Error>>;

/// Everything one resource declares. Built by `#[resource]`; read by registries and transports.
#[derive(Clone, Copy)]
pub struct ResourceSpec {
    parts: ResourceParts,
    side_effect: SideEffect,
}

/// The parts of a [`ResourceSpec`] that are not its side effect.
#[derive(Clone, Copy)]
pub struct ResourceParts {
    /// Resource name (MCP `name`; unique among a registry's resources).
    pub name: &'static str,
    /// Optional human title.
    pub title: Option<&'static str>,
    /// Optional icon: an `https` URL or an image `data:` URI.
    pub icon: Option<&'static str>,
    /// First sentence of the doc comment.
    pub summary: &'static str,
    /// The whole doc comment.
    pub description: &'static str,
    /// MIME type of what a read answers.
    pub mime_type: &'static str,
    /// The URI template.
    pub uri: UriTemplate,
    /// The REST route derived from the URI (always GET).
    pub route: RestRoute,
    /// `TypeId` of the context type the handler expects.
    pub context: fn() -> TypeId,
    /// Name of the context type, for error messages.
    pub context_name: fn() -> &'static str,
    /// JSON Schema of the template's parameters (an empty object for a static resource).
    pub params_schema: fn(Definitions) -> Value,
    /// The completers of its URI template's variables.
    pub completers: &'static [Completer],
    /// The type-erased handler.
    pub handler: ResourceHandler,
}

impl ResourceSpec {
    /// Build a spec. `E` must be a sealed [`SideEffectKind`]: in practice `ReadOnly`.
    pub const fn new<E: SideEffectKind>(parts: ResourceParts) -> Self {
        ResourceSpec {
            parts,
            side_effect: E::EFFECT,
        }
    }

    /// Resource name.
    pub const fn name(&self) -> &'static str {
        self.parts.name
    }
    /// Human title, when declared.
    pub const fn title(&self) -> Option<&'static str> {
        self.parts.title
    }
    /// Icon source, when declared.
    pub const fn icon(&self) -> Option<&'static str> {
        self.parts.icon
    }
    /// First sentence of the doc comment.
    pub const fn summary(&self) -> &'static str {
        self.parts.summary
    }
    /// The whole doc comment.
    pub const fn description(&self) -> &'static str {
        self.parts.description
    }
    /// MIME type of its content.
    pub const fn mime_type(&self) -> &'static str {
        self.parts.mime_type
    }
    /// The URI template.
    pub const fn uri(&self) -> UriTemplate {
        self.parts.uri
    }
    /// The REST route (GET, derived from the URI).
    pub const fn route(&self) -> RestRoute {
        self.parts.route
    }
    /// Declared side effect.
    pub const fn side_effect(&self) -> SideEffect {
        self.side_effect
    }
    /// The completers of its URI template's variables.
    pub const fn completers(&self) -> &'static [Completer] {
        self.parts.completers
    }
    /// Name of the context type this resource is served with.
    pub fn context_name(&self) -> &'static str {
        (self.parts.context_name)()
    }
    /// Whether this resource belongs to the registry of context type `Ctx`.
    pub fn serves<Ctx: 'static>(&self) -> bool {
        (self.parts.context)() == TypeId::of::<Ctx>()
    }
    /// JSON Schema of the parameters (2020-12, object root, definitions inlined).
    pub fn params_schema(&self) -> Value {
        (self.parts.params_schema)(Definitions::Inline)
    }
    /// Read with the template's arguments, against a context of the registered type, as the
    /// call `request` describes.
    pub fn read<'a>(
        &self,
        ctx: &'a ErasedContext,
        arguments: Value,
        request: RequestContext,
    ) -> BoxFuture<'a, Result<Content, Error>> {
        (self.parts.handler)(ctx, arguments, request)
    }
}

impl Operation for ResourceSpec {
    fn name(&self) -> &'static str {
        self.parts.name
    }
    fn summary(&self) -> &'static str {
        self.parts.summary
    }
    fn description(&self) -> &'static str {
        self.parts.description
    }
    fn side_effect(&self) -> SideEffect {
        self.side_effect
    }
    fn route(&self) -> RestRoute {
        self.parts.route
    }
}

impl std::fmt::Debug for ResourceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceSpec")
            .field("name", &self.parts.name)
            .field("uri", &self.parts.uri.template)
            .field("side_effect", &self.side_effect)
            .field("context", &self.context_name())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::{Segment, UriTemplate};

    const CHUNK: UriTemplate = UriTemplate {
        template: "grk://{collection}/chunks/{chunk_id}",
        scheme: "grk",
        segments: &[
            Segment::Var("collection"),
            Segment::Literal("chunks"),
            Segment::Var("chunk_id"),
        ],
    };

    #[test]
    fn a_uri_matches_its_template_with_each_variable_percent_decoded() {
        let arguments = CHUNK.matches("grk://a%20b/chunks/..%2Fetc").expect("match");
        assert_eq!(arguments["collection"], "a b");
        assert_eq!(arguments["chunk_id"], "../etc");
        for other in [
            "grk://a/chunks",
            "grk://a/chunk/b",
            "grk://a/chunks/b/c",
            "grk:///chunks/b",
            "file://a/chunks/b",
            "grk://a/chunks/b?x=1",
        ] {
            assert_eq!(CHUNK.matches(other), None, "{other}");
        }
    }

    #[test]
    fn templates_overlap_when_one_uri_could_match_both() {
        let status = UriTemplate {
            template: "grk://{collection}/status",
            scheme: "grk",
            segments: &[Segment::Var("collection"), Segment::Literal("status")],
        };
        let fixed = UriTemplate {
            template: "grk://sample/status",
            scheme: "grk",
            segments: &[Segment::Literal("sample"), Segment::Literal("status")],
        };
        assert!(status.overlaps(&fixed));
        assert!(!status.overlaps(&CHUNK));
        assert!(fixed.is_static() && !status.is_static());
    }
}
