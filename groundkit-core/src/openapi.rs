//! OpenAPI 3.1 description of a registry's REST surface, from the same specs and schemas.
//!
//! OpenAPI 3.1 uses JSON Schema 2020-12, so the tool schemas go in unchanged. A POST body is the
//! input schema without the path parameters (they travel in the path); a GET has no body.

use serde_json::{Map, Value, json};

use crate::error::GENERIC_DETAIL;
use crate::registry::Registry;
use crate::tool::HttpMethod;

/// Title and version shown in the document's `info`.
#[derive(Debug, Clone)]
pub struct ApiInfo {
    /// API title.
    pub title: String,
    /// API version.
    pub version: String,
}

/// The OpenAPI 3.1 document for every tool in `registry`.
pub fn document<Ctx>(registry: &Registry<Ctx>, info: &ApiInfo) -> Value {
    let mut paths = Map::new();
    for spec in registry.tools() {
        let route = spec.route();
        let input = spec.input_schema();
        let mut operation = Map::new();
        operation.insert("operationId".into(), json!(spec.name()));
        operation.insert("summary".into(), json!(spec.summary()));
        operation.insert("description".into(), json!(spec.description()));
        operation.insert(
            "x-groundkit-read-only".into(),
            json!(spec.side_effect().is_read_only()),
        );
        if !route.params.is_empty() {
            let parameters: Vec<Value> = route
                .params
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
        if route.method == HttpMethod::Post {
            operation.insert(
                "requestBody".into(),
                json!({
                    "required": true,
                    "content": {"application/json": {"schema": body_schema(input, route.params)}},
                }),
            );
        }
        operation.insert(
            "responses".into(),
            json!({
                "200": {
                    "description": "The tool's result.",
                    "content": {"application/json": {"schema": spec.output_schema()}},
                },
                "default": {
                    "description": "An error, rendered as RFC 9457 problem details.",
                    "content": {"application/problem+json": {"schema": problem_schema()}},
                },
            }),
        );
        let method = route.method.as_str().to_ascii_lowercase();
        let entry = paths
            .entry(route.path.to_owned())
            .or_insert_with(|| json!({}));
        entry[method] = Value::Object(operation);
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": info.title, "version": info.version},
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": paths,
    })
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
