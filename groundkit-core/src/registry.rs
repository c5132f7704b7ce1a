//! Scoped registries: the tools, resources and prompts of one context type, checked once when
//! built.
//!
//! `#[tool]` puts every spec into one link-time slice ([`TOOLS`]), `#[resource]` and `#[prompt]`
//! each into another ([`RESOURCES`], [`PROMPTS`]). A binary may link several tool sets, so a [`Registry`] never serves
//! "everything linked in": it keeps only the specs whose context type is `Ctx`. Building it
//! checks what the compiler could not: unique names, routes (tools', resources' and prompts'
//! together)
//! that do not collide with each other or with a path a linked transport serves itself
//! ([`RESERVED_PATHS`]), path parameters that are fields of the request type, GET routes whose
//! every argument is a path parameter, object-rooted schemas, URI templates no URI could
//! match twice, and prompt arguments that are text. Transports iterate a registry and nothing else.

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;

use crate::prompt::{self, PromptSpec};
use crate::resource::ResourceSpec;
use crate::tool::{HttpMethod, RestRoute, ToolSpec};

/// Every spec `#[tool]` emitted in the linked binary, across all context types.
#[linkme::distributed_slice]
pub static TOOLS: [ToolSpec];

/// Every spec `#[resource]` emitted in the linked binary, across all context types.
#[linkme::distributed_slice]
pub static RESOURCES: [ResourceSpec];

/// Every spec `#[prompt]` emitted in the linked binary, across all context types.
#[linkme::distributed_slice]
pub static PROMPTS: [PromptSpec];

/// Paths the linked transports serve themselves; no tool may claim them.
///
/// Empty here: each transport adds the paths it serves (groundkit-server adds its OpenAPI and
/// MCP paths), so the check covers exactly the transports a binary links and this crate names
/// none of them.
#[linkme::distributed_slice]
pub static RESERVED_PATHS: [&'static str];

/// Why a set of specs cannot be served together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two tools share a name.
    #[error("two tools are named `{name}`; tool names must be unique within a registry")]
    DuplicateName {
        /// The shared name.
        name: String,
    },
    /// Two resources share a name.
    #[error("two resources are named `{name}`; resource names must be unique within a registry")]
    DuplicateResourceName {
        /// The shared name.
        name: String,
    },
    /// A prompt shares its name with another operation.
    #[error(
        "two operations are named `{name}`; a prompt's name must be unique among tools, resources and prompts"
    )]
    DuplicatePromptName {
        /// The shared name.
        name: String,
    },
    /// A server setting names a tool the registry does not have.
    #[error("the registry has no tool named `{name}`")]
    UnknownTool {
        /// The name given.
        name: String,
    },
    /// A prompt argument is not text.
    #[error(
        "prompt `{prompt}`: argument `{argument}` must be a `String` or an `Option<String>`; MCP gives prompt arguments as text"
    )]
    PromptArgumentNotText {
        /// The prompt.
        prompt: String,
        /// The argument.
        argument: String,
    },
    /// Two URI templates could match the same URI.
    #[error("resource URIs `{first}` and `{second}` could match the same URI")]
    UriOverlap {
        /// The first template.
        first: String,
        /// The second template.
        second: String,
    },
    /// Two routes could match the same request.
    #[error("routes `{first}` (`{first_tool}`) and `{second}` (`{second_tool}`) collide")]
    RouteCollision {
        /// The first route, `METHOD /path`.
        first: String,
        /// Its tool or resource.
        first_tool: String,
        /// The second route.
        second: String,
        /// Its tool or resource.
        second_tool: String,
    },
    /// A route claims a path the transports serve themselves.
    #[error("`{tool}` claims `{path}`, which the server reserves for itself")]
    ReservedPath {
        /// The tool or resource.
        tool: String,
        /// The reserved path.
        path: String,
    },
    /// A path parameter is not a property of the request schema.
    #[error("`{tool}`: path parameter `{param}` is not a field of its request type")]
    PathParamNotInRequest {
        /// The tool or resource.
        tool: String,
        /// The parameter.
        param: String,
    },
    /// A GET tool has an argument that no path segment can carry.
    #[error(
        "tool `{tool}`: GET routes take every argument from the path, but `{field}` is not a path parameter; use POST for arguments that travel in a body"
    )]
    GetFieldNotInPath {
        /// The tool.
        tool: String,
        /// The field.
        field: String,
    },
    /// A resource template's parameter type has a field that no URI variable fills.
    #[error(
        "resource `{resource}`: parameter `{field}` is not a variable of its URI; every parameter is a `{{var}}` segment"
    )]
    ParamNotInUri {
        /// The resource.
        resource: String,
        /// The field.
        field: String,
    },
    /// A schema root is not a plain object schema.
    #[error("`{tool}`: the {which} schema must have an object root without `$ref`")]
    SchemaRoot {
        /// The tool or resource.
        tool: String,
        /// "input", "output", "parameters" or "arguments".
        which: &'static str,
    },
    /// The output can hold `null`: clients that map schemas onto a single-`type` dialect reject
    /// it. An optional field is omitted instead (`skip_serializing_if = "Option::is_none"`).
    #[error(
        "tool `{tool}`: output field `{field}` may be null; omit it when absent with #[serde(skip_serializing_if = \"Option::is_none\")]"
    )]
    NullableOutput {
        /// The tool.
        tool: String,
        /// Where in the output schema (a JSON pointer).
        field: String,
    },
}

/// The tools, resources and prompts served with context type `Ctx`, each in a deterministic
/// (name) order.
pub struct Registry<Ctx> {
    tools: Vec<&'static ToolSpec>,
    resources: Vec<&'static ResourceSpec>,
    prompts: Vec<&'static PromptSpec>,
    _context: PhantomData<fn(&Ctx)>,
}

impl<Ctx> Clone for Registry<Ctx> {
    fn clone(&self) -> Self {
        Self {
            tools: self.tools.clone(),
            resources: self.resources.clone(),
            prompts: self.prompts.clone(),
            _context: PhantomData,
        }
    }
}

impl<Ctx> std::fmt::Debug for Registry<Ctx> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name()))
            .entries(self.resources.iter().map(|r| r.uri().template))
            .entries(self.prompts.iter().map(|p| p.name()))
            .finish()
    }
}

impl<Ctx: Send + Sync + 'static> Registry<Ctx> {
    /// The registry of every linked tool, resource and prompt whose context type is `Ctx`.
    pub fn collect() -> Result<Self, RegistryError> {
        Self::from_operations(
            TOOLS.iter().filter(|spec| spec.serves::<Ctx>()),
            RESOURCES.iter().filter(|spec| spec.serves::<Ctx>()),
            PROMPTS.iter().filter(|spec| spec.serves::<Ctx>()),
        )
    }

    /// A registry of exactly these tools (each must be for context `Ctx`) and no resource.
    ///
    /// # Panics
    ///
    /// If a spec is for another context type: that is a programming error, not input.
    pub fn from_specs(
        specs: impl IntoIterator<Item = &'static ToolSpec>,
    ) -> Result<Self, RegistryError> {
        Self::from_parts(specs, [])
    }

    /// A registry of exactly these tools and resources (each must be for context `Ctx`).
    ///
    /// # Panics
    ///
    /// If a spec is for another context type: that is a programming error, not input.
    pub fn from_parts(
        tools: impl IntoIterator<Item = &'static ToolSpec>,
        resources: impl IntoIterator<Item = &'static ResourceSpec>,
    ) -> Result<Self, RegistryError> {
        Self::from_operations(tools, resources, [])
    }

    /// A registry of exactly these tools, resources and prompts (each must be for context
    /// `Ctx`).
    ///
    /// # Panics
    ///
    /// If a spec is for another context type: that is a programming error, not input.
    pub fn from_operations(
        tools: impl IntoIterator<Item = &'static ToolSpec>,
        resources: impl IntoIterator<Item = &'static ResourceSpec>,
        prompts: impl IntoIterator<Item = &'static PromptSpec>,
    ) -> Result<Self, RegistryError> {
        let mut tools: Vec<&'static ToolSpec> = tools.into_iter().collect();
        let mut resources: Vec<&'static ResourceSpec> = resources.into_iter().collect();
        let mut prompts: Vec<&'static PromptSpec> = prompts.into_iter().collect();
        let wrong_context = tools
            .iter()
            .filter(|spec| !spec.serves::<Ctx>())
            .map(|spec| (spec.name(), spec.context_name()))
            .chain(
                resources
                    .iter()
                    .filter(|spec| !spec.serves::<Ctx>())
                    .map(|spec| (spec.name(), spec.context_name())),
            )
            .chain(
                prompts
                    .iter()
                    .filter(|spec| !spec.serves::<Ctx>())
                    .map(|spec| (spec.name(), spec.context_name())),
            )
            .next();
        if let Some((name, context)) = wrong_context {
            panic!(
                "`{name}` is for context `{context}`, not `{}`",
                std::any::type_name::<Ctx>()
            );
        }
        tools.sort_by_key(|spec| spec.name());
        resources.sort_by_key(|spec| spec.name());
        prompts.sort_by_key(|spec| spec.name());
        check(&tools)?;
        check_resources(&tools, &resources)?;
        check_prompts(&tools, &resources, &prompts)?;
        Ok(Self {
            tools,
            resources,
            prompts,
            _context: PhantomData,
        })
    }
}

impl<Ctx> Registry<Ctx> {
    /// The tools, ordered by name.
    pub fn tools(&self) -> &[&'static ToolSpec] {
        &self.tools
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&'static ToolSpec> {
        self.tools.iter().copied().find(|spec| spec.name() == name)
    }

    /// The resources (static and templates), ordered by name.
    pub fn resources(&self) -> &[&'static ResourceSpec] {
        &self.resources
    }

    /// The resource `uri` is an instance of, with the arguments its template gives it. At most
    /// one matches: the registry refuses templates that overlap.
    pub fn resource_for(
        &self,
        uri: &str,
    ) -> Option<(
        &'static ResourceSpec,
        serde_json::Map<String, serde_json::Value>,
    )> {
        self.resources
            .iter()
            .find_map(|spec| spec.uri().matches(uri).map(|arguments| (*spec, arguments)))
    }

    /// The prompts, ordered by name.
    pub fn prompts(&self) -> &[&'static PromptSpec] {
        &self.prompts
    }

    /// The prompt with this name.
    pub fn prompt(&self, name: &str) -> Option<&'static PromptSpec> {
        self.prompts
            .iter()
            .copied()
            .find(|spec| spec.name() == name)
    }

    /// The resource whose URI template is exactly `template` (how a completion request names
    /// the template whose variable it completes).
    pub fn resource_template(&self, template: &str) -> Option<&'static ResourceSpec> {
        self.resources
            .iter()
            .copied()
            .find(|spec| spec.uri().template == template)
    }

    /// Whether any prompt or resource declares a completer.
    pub fn has_completers(&self) -> bool {
        self.prompts.iter().any(|p| !p.completers().is_empty())
            || self.resources.iter().any(|r| !r.completers().is_empty())
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

fn check(tools: &[&'static ToolSpec]) -> Result<(), RegistryError> {
    let mut names = BTreeSet::new();
    for spec in tools {
        if !names.insert(spec.name()) {
            return Err(RegistryError::DuplicateName {
                name: spec.name().to_owned(),
            });
        }
        check_schemas(spec)?;
    }
    Ok(())
}

/// Resource names, URI templates and parameters (routes are checked with the prompts').
fn check_resources(
    tools: &[&'static ToolSpec],
    resources: &[&'static ResourceSpec],
) -> Result<(), RegistryError> {
    let mut names = BTreeSet::new();
    for (i, a) in resources.iter().enumerate() {
        if !names.insert(a.name()) || tools.iter().any(|t| t.name() == a.name()) {
            return Err(RegistryError::DuplicateResourceName {
                name: a.name().to_owned(),
            });
        }
        if let Some(b) = resources[i + 1..]
            .iter()
            .find(|b| a.uri().overlaps(&b.uri()))
        {
            return Err(RegistryError::UriOverlap {
                first: a.uri().template.to_owned(),
                second: b.uri().template.to_owned(),
            });
        }
        let params = a.params_schema();
        check_object_root(a.name(), "parameters", &params)?;
        check_path_params(a.name(), a.route(), &params).map_err(|err| match err {
            RegistryError::GetFieldNotInPath { tool, field } => RegistryError::ParamNotInUri {
                resource: tool,
                field,
            },
            other => other,
        })?;
    }
    Ok(())
}

/// Prompt names against every other operation's, argument schemas, and prompt routes against
/// every other route.
fn check_prompts(
    tools: &[&'static ToolSpec],
    resources: &[&'static ResourceSpec],
    prompts: &[&'static PromptSpec],
) -> Result<(), RegistryError> {
    let mut names: BTreeSet<&str> = tools
        .iter()
        .map(|t| t.name())
        .chain(resources.iter().map(|r| r.name()))
        .collect();
    for spec in prompts {
        if !names.insert(spec.name()) {
            return Err(RegistryError::DuplicatePromptName {
                name: spec.name().to_owned(),
            });
        }
        let schema = spec.arguments_schema();
        check_object_root(spec.name(), "arguments", &schema)?;
        if let Some(argument) = prompt::non_text_argument(&schema) {
            return Err(RegistryError::PromptArgumentNotText {
                prompt: spec.name().to_owned(),
                argument,
            });
        }
    }
    let routes: Vec<(&str, RestRoute)> = tools
        .iter()
        .map(|t| (t.name(), t.route()))
        .chain(resources.iter().map(|r| (r.name(), r.route())))
        .chain(prompts.iter().map(|p| (p.name(), p.route())))
        .collect();
    check_routes(&routes)
}

fn check_routes(routes: &[(&str, RestRoute)]) -> Result<(), RegistryError> {
    for (i, (name, route)) in routes.iter().enumerate() {
        if let Some(path) = RESERVED_PATHS
            .iter()
            .find(|p| segments_overlap(route.path, p))
        {
            return Err(RegistryError::ReservedPath {
                tool: (*name).to_owned(),
                path: (*path).to_owned(),
            });
        }
        for (other_name, other) in &routes[i + 1..] {
            if route.method == other.method && segments_overlap(route.path, other.path) {
                return Err(RegistryError::RouteCollision {
                    first: format!("{} {}", route.method, route.path),
                    first_tool: (*name).to_owned(),
                    second: format!("{} {}", other.method, other.path),
                    second_tool: (*other_name).to_owned(),
                });
            }
        }
    }
    Ok(())
}

fn check_object_root(
    name: &str,
    which: &'static str,
    schema: &serde_json::Value,
) -> Result<(), RegistryError> {
    let is_object = schema.get("type").and_then(|t| t.as_str()) == Some("object");
    if !is_object || schema.get("$ref").is_some() {
        return Err(RegistryError::SchemaRoot {
            tool: name.to_owned(),
            which,
        });
    }
    Ok(())
}

fn check_schemas(spec: &ToolSpec) -> Result<(), RegistryError> {
    let input = spec.input_schema();
    let output = spec.output_schema();
    check_object_root(spec.name(), "input", &input)?;
    check_object_root(spec.name(), "output", &output)?;
    if let Some(field) = nullable(&output, String::new()) {
        return Err(RegistryError::NullableOutput {
            tool: spec.name().to_owned(),
            field,
        });
    }
    check_path_params(spec.name(), spec.route(), &input)
}

/// Every path parameter is a property of `input`, and a GET route takes no other.
fn check_path_params(
    name: &str,
    route: RestRoute,
    input: &serde_json::Value,
) -> Result<(), RegistryError> {
    let tool = || name.to_owned();
    let properties: BTreeMap<&str, _> = input
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default();
    for param in route.params {
        if !properties.contains_key(param) {
            return Err(RegistryError::PathParamNotInRequest {
                tool: tool(),
                param: (*param).to_owned(),
            });
        }
    }
    let body_field = properties
        .keys()
        .find(|field| !route.params.contains(field));
    match (route.method, body_field) {
        (HttpMethod::Get, Some(field)) => Err(RegistryError::GetFieldNotInPath {
            tool: tool(),
            field: (*field).to_owned(),
        }),
        _ => Ok(()),
    }
}

/// The JSON pointer of the first place in `schema` that admits `null`.
fn nullable(schema: &serde_json::Value, at: String) -> Option<String> {
    use serde_json::Value;
    match schema {
        Value::Object(object) => {
            let admits_null = match object.get("type") {
                Some(Value::String(t)) => t == "null",
                Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
                _ => false,
            };
            if admits_null {
                return Some(at);
            }
            object
                .iter()
                .find_map(|(key, child)| nullable(child, format!("{at}/{key}")))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nullable(item, format!("{at}/{i}"))),
        _ => None,
    }
}

/// Whether some concrete path could match both templates: same segment count, and every pair of
/// segments equal or at least one of them a `{param}`.
fn segments_overlap(a: &str, b: &str) -> bool {
    let a: Vec<&str> = a.split('/').collect();
    let b: Vec<&str> = b.split('/').collect();
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x == y || is_param(x) || is_param(y))
}

fn is_param(segment: &str) -> bool {
    segment.starts_with('{') && segment.ends_with('}')
}

#[cfg(test)]
mod tests {
    use super::segments_overlap;

    #[test]
    fn overlapping_templates_are_detected() {
        assert!(segments_overlap("/a/{x}", "/a/{y}"));
        assert!(segments_overlap("/a/{x}/s", "/a/b/s"));
        assert!(!segments_overlap("/a/{x}/s", "/a/{x}/t"));
        assert!(!segments_overlap("/a/{x}", "/a/{x}/t"));
        assert!(segments_overlap("/status", "/{tool}"));
    }
}
