//! OpenAPI 3.1 description of a registry's REST surface, from the same specs and schemas: a
//! tool's route, a resource's `GET` route whose `200` is its content under its MIME type, and a
//! prompt's `POST` route whose body is its arguments and whose `200` is its messages
//! (`PromptMessages`).
//!
//! OpenAPI 3.1 uses JSON Schema 2020-12, so the tool schemas go in unchanged, except that named
//! types (a tool's request body and response, and every type they contain) are written once under
//! `components.schemas` and referenced, so generated clients get short, shared names. A POST body
//! is the input schema without the path parameters (they travel in the path); a GET has no body.
//!
//! Every operation declares its result (`200`), each error status it can answer with
//! ([`ErrorStatuses`], which the serving transport supplies: the status of a failure is its
//! decision, not this crate's) as the problem schema under `application/problem+json`, naming the
//! `kind`s that status carries, and a `default` problem for what the parser in front of it may
//! answer. Component names are a contract: code written against a generated client uses them.

use serde_json::{Map, Value, json};

use crate::error::GENERIC_DETAIL;
use crate::registry::Registry;
use crate::tool::{HttpMethod, Operation};

/// Title and version shown in the document's `info`.
#[derive(Debug, Clone)]
pub struct ApiInfo {
    /// API title.
    pub title: String,
    /// API version.
    pub version: String,
}

impl ApiInfo {
    /// Title and version.
    pub fn new(title: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            version: version.into(),
        }
    }
}

/// One error status a route can answer with, and the `kind`s it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorStatus {
    /// The HTTP status.
    pub status: u16,
    /// Its reason phrase (`Not Found`), the start of the response's description.
    pub reason: &'static str,
    /// The `kind`s a problem with this status carries.
    pub kinds: Vec<&'static str>,
}

/// The error statuses a server's REST routes can answer with, as the serving transport maps
/// failures to statuses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorStatuses {
    /// Statuses every route can answer with.
    pub every_route: Vec<ErrorStatus>,
    /// Statuses routes that take a JSON body (POST) can answer with besides.
    pub body_routes: Vec<ErrorStatus>,
}

impl ErrorStatuses {
    /// The statuses a route of `method` can answer with, in ascending order, kinds merged.
    fn for_method(&self, method: HttpMethod) -> Vec<ErrorStatus> {
        let mut merged: Vec<ErrorStatus> = Vec::new();
        let body: &[ErrorStatus] = match method {
            HttpMethod::Post => &self.body_routes,
            HttpMethod::Get => &[],
        };
        for status in self.every_route.iter().chain(body) {
            match merged.iter_mut().find(|m| m.status == status.status) {
                Some(held) => held.kinds.extend(&status.kinds),
                None => merged.push(status.clone()),
            }
        }
        merged.sort_by_key(|s| s.status);
        merged
    }
}

/// The OpenAPI 3.1 document for every tool, resource and prompt in `registry`, each route declaring
/// the error statuses `errors` gives its method.
pub fn document<Ctx>(registry: &Registry<Ctx>, info: &ApiInfo, errors: &ErrorStatuses) -> Value {
    let mut paths = Map::new();
    let mut components = Map::new();
    components.insert("Problem".into(), problem_schema());
    for spec in registry.tools() {
        let route = spec.route();
        let mut input = spec.input_schema_with_components();
        let mut output = spec.output_schema_with_components();
        lift_components(&mut input, &mut components);
        lift_components(&mut output, &mut components);
        let mut operation = operation(*spec, &input);
        if route.method == HttpMethod::Post {
            operation.insert(
                "requestBody".into(),
                json!({
                    "required": true,
                    "content": {"application/json": {"schema": named(body_schema(input, route.params), &mut components)}},
                }),
            );
        }
        let ok = json!({
            "description": "The tool's result.",
            "content": {"application/json": {"schema": named(output, &mut components)}},
        });
        operation.insert("responses".into(), responses(ok, route.method, errors));
        add(&mut paths, route.path, route.method, operation);
    }
    for spec in registry.resources() {
        let route = spec.route();
        let mut operation = operation(*spec, &spec.params_schema());
        operation.insert(
            "x-groundkit-resource-uri".into(),
            json!(spec.uri().template),
        );
        let ok = json!({
            "description": format!("The content of the resource `{}`.", spec.uri().template),
            "content": {spec.mime_type(): {}},
        });
        operation.insert("responses".into(), responses(ok, route.method, errors));
        add(&mut paths, route.path, route.method, operation);
    }
    for spec in registry.prompts() {
        let route = spec.route();
        let arguments = spec.arguments_schema();
        let mut operation = operation(*spec, &arguments);
        operation.insert(
            "requestBody".into(),
            json!({
                "required": true,
                "content": {"application/json": {"schema": named(arguments, &mut components)}},
            }),
        );
        components
            .entry("PromptMessages")
            .or_insert_with(crate::prompt::rendered_schema);
        let ok = json!({
            "description": "The prompt's messages.",
            "content": {"application/json": {"schema": reference("PromptMessages")}},
        });
        operation.insert("responses".into(), responses(ok, route.method, errors));
        add(&mut paths, route.path, route.method, operation);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": info.title,
            "version": info.version,
            "x-groundkit-registry-digest": registry.digest(),
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": paths,
        "components": {"schemas": components},
    })
}

/// An operation's identity and its path parameters, typed by `input`'s properties.
fn operation(spec: &impl Operation, input: &Value) -> Map<String, Value> {
    let params = spec.route().params;
    let mut operation = Map::new();
    operation.insert("operationId".into(), json!(spec.name()));
    operation.insert("summary".into(), json!(spec.summary()));
    operation.insert("description".into(), json!(spec.description()));
    operation.insert(
        "x-groundkit-read-only".into(),
        json!(spec.side_effect().is_read_only()),
    );
    operation.insert(
        "x-groundkit-effect".into(),
        json!(spec.side_effect().as_str()),
    );
    if !params.is_empty() {
        let parameters: Vec<Value> = params
            .iter()
            .map(|param| {
                json!({
                    "name": param,
                    "in": "path",
                    "required": true,
                    "schema": input["properties"][param],
                })
            })
            .collect();
        operation.insert("parameters".into(), Value::Array(parameters));
    }
    operation
}

/// `ok` as the `200`, each error status of `method`, and the `default` problem.
fn responses(ok: Value, method: HttpMethod, errors: &ErrorStatuses) -> Value {
    let mut responses = Map::new();
    responses.insert("200".into(), ok);
    for status in errors.for_method(method) {
        responses.insert(status.status.to_string(), error_response(&status));
    }
    responses.insert(
        "default".into(),
        problem_response("Any other error, rendered as RFC 9457 problem details.".into()),
    );
    Value::Object(responses)
}

fn add(
    paths: &mut Map<String, Value>,
    path: &str,
    method: HttpMethod,
    operation: Map<String, Value>,
) {
    let entry = paths.entry(path.to_owned()).or_insert_with(|| json!({}));
    entry[method.as_str().to_ascii_lowercase()] = Value::Object(operation);
}

/// A response of problem details with `description`.
fn problem_response(description: String) -> Value {
    json!({
        "description": description,
        "content": {"application/problem+json": {"schema": reference("Problem")}},
    })
}

/// The response of one error status: problem details, its kinds named in the description and,
/// for tools that read extensions, in `x-groundkit-kinds`.
fn error_response(status: &ErrorStatus) -> Value {
    let kinds: Vec<String> = status.kinds.iter().map(|k| format!("`{k}`")).collect();
    let mut response = problem_response(format!(
        "{}: problem details whose `kind` is {}.",
        status.reason,
        kinds.join(", ")
    ));
    response["x-groundkit-kinds"] = json!(status.kinds);
    response
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// Move the named types `schema` carries (under its `components.schemas`) into `components`.
///
/// Types are named by their Rust name; two different types of one name (from two modules) keep
/// the first name and are told apart by a numeric suffix, rewriting the references to the
/// second.
fn lift_components(schema: &mut Value, components: &mut Map<String, Value>) {
    let Some(Value::Object(mut named)) = schema
        .as_object_mut()
        .and_then(|root| root.remove("components"))
        .and_then(|mut c| c.get_mut("schemas").map(Value::take))
    else {
        return;
    };
    let mut renames = Vec::new();
    for (name, definition) in &named {
        let unique = unique_name(name, definition, components);
        if &unique != name {
            renames.push((name.clone(), unique));
        }
    }
    for (from, to) in &renames {
        rewrite_refs(schema, from, to);
        named.values_mut().for_each(|d| rewrite_refs(d, from, to));
    }
    for (name, definition) in named {
        let unique = renames
            .iter()
            .find(|(from, _)| *from == name)
            .map_or(name, |(_, to)| to.clone());
        components.entry(unique).or_insert(definition);
    }
}

/// `name`, or `name2`, `name3`, ... : the first that is free or already holds `definition`.
fn unique_name(name: &str, definition: &Value, components: &Map<String, Value>) -> String {
    (1..)
        .map(|n| match n {
            1 => name.to_owned(),
            n => format!("{name}{n}"),
        })
        .find(|candidate| {
            components
                .get(candidate)
                .is_none_or(|held| held == definition)
        })
        .unwrap_or_else(|| name.to_owned())
}

fn rewrite_refs(schema: &mut Value, from: &str, to: &str) {
    let target = format!("#/components/schemas/{from}");
    match schema {
        Value::Object(object) => {
            if object.get("$ref").and_then(Value::as_str) == Some(target.as_str()) {
                object.insert("$ref".into(), json!(format!("#/components/schemas/{to}")));
            }
            object.values_mut().for_each(|v| rewrite_refs(v, from, to));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, from, to)),
        _ => {}
    }
}

/// A root schema (a request body or a response) as a component named by its `title`, and the
/// reference to it; a schema without a title stays in place.
fn named(mut schema: Value, components: &mut Map<String, Value>) -> Value {
    let Some(title) = schema
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return schema;
    };
    if let Some(root) = schema.as_object_mut() {
        root.remove("title");
    }
    let unique = unique_name(&title, &schema, components);
    components.entry(unique.clone()).or_insert(schema);
    reference(&unique)
}

fn body_schema(mut input: Value, params: &[&str]) -> Value {
    if let Some(properties) = input.get_mut("properties").and_then(Value::as_object_mut) {
        for param in params {
            properties.remove(*param);
        }
    }
    if let Some(required) = input.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| !params.iter().any(|param| name == param));
    }
    input
}

/// Schema of the problem-details body every REST error carries.
pub fn problem_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "type": {"type": "string"},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string", "description": format!("The error's message when it names caller input; otherwise \"{GENERIC_DETAIL}\".")},
            "kind": {"type": "string", "description": "Stable machine-readable error kind."},
            "field": {"type": "string", "description": "The request field to fix, when there is one."},
            "request_id": {"type": "string"},
        },
        "required": ["type", "title", "status", "detail", "kind", "request_id"],
    })
}
