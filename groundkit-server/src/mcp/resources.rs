//! `resources/list`, `resources/templates/list` and `resources/read` rendering: registry specs
//! in, MCP JSON out.
//!
//! A spec whose URI has no variable is a resource (`resources/list`), one with variables a
//! template (`resources/templates/list`); both are read through `resources/read` with a concrete
//! URI. A read's content is `text` or base64 `blob`, with the spec's MIME type. A failed read is
//! a JSON-RPC error whose code is the one mapping's ([`Rendering::rpc`](crate::edge::problem::Rendering)),
//! with the URI and the problem (`kind`, `detail`, `request_id`, `field`) in `data`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use groundkit_core::{Content, ResourceSpec};
use jsonrpsee::types::ErrorObjectOwned;
use serde_json::{Map, Value, json};

use super::protocol::Revision;
use crate::edge::problem::{Problem, mapping, rpc_code};

/// What both list entries hold: name, title (from 2025-06-18), description, MIME type.
fn entry(spec: &ResourceSpec, key: &str, uri: &str, revision: Revision) -> Value {
    let mut entry = Map::new();
    entry.insert(key.into(), json!(uri));
    entry.insert("name".into(), json!(spec.name()));
    if revision.has_structured_output()
        && let Some(title) = spec.title()
    {
        entry.insert("title".into(), json!(title));
    }
    entry.insert("description".into(), json!(spec.description()));
    if let Some(icons) = super::tools::icons(spec.icon(), revision) {
        entry.insert("icons".into(), icons);
    }
    entry.insert("mimeType".into(), json!(spec.mime_type()));
    if revision.has_structured_output() {
        entry.insert(
            "_meta".into(),
            super::tools::effect_meta(spec.side_effect()),
        );
    }
    Value::Object(entry)
}

/// A static resource as `resources/list` describes it.
pub fn resource(spec: &ResourceSpec, revision: Revision) -> Value {
    entry(spec, "uri", spec.uri().template, revision)
}

/// A template as `resources/templates/list` describes it.
pub fn template(spec: &ResourceSpec, revision: Revision) -> Value {
    entry(spec, "uriTemplate", spec.uri().template, revision)
}

/// The result of reading `uri`, an instance of `spec`.
pub fn contents(uri: &str, spec: &ResourceSpec, content: &Content, revision: Revision) -> Value {
    let mut item = json!({ "uri": uri, "mimeType": spec.mime_type() });
    match content {
        Content::Text(text) => item["text"] = json!(text),
        Content::Blob(bytes) => item["blob"] = json!(STANDARD.encode(bytes)),
    }
    let mut result = json!({ "contents": [item] });
    if revision.is_stateless() {
        // Not to be cached: a read answers what is true now (a chunk is verified against its
        // source on every read), and the same for every caller.
        result["ttlMs"] = json!(0);
        result["cacheScope"] = json!("public");
        result["resultType"] = json!("complete");
    }
    result
}

/// The error answering a read of `uri` (or a prompt's get or a completion, without a URI) that
/// failed with `problem`.
pub fn failure(
    problem: &Problem,
    uri: Option<&str>,
    request_id: &str,
    revision: Revision,
) -> ErrorObjectOwned {
    let rendering = mapping(problem);
    let mut data = json!({
        "kind": rendering.kind,
        "detail": problem.public_detail(),
        "request_id": request_id,
    });
    if let Some(uri) = uri {
        data["uri"] = json!(uri);
    }
    if let Some(field) = problem.field() {
        data["field"] = json!(field);
    }
    let (code, message) = match rendering.rpc.unwrap_or(rpc_code::INTERNAL_ERROR) {
        // Without a URI, what was not found was named by an argument: invalid params, as MCP
        // answers a prompt's missing or wrong arguments.
        rpc_code::RESOURCE_NOT_FOUND if uri.is_none() => (
            rpc_code::INVALID_PARAMS,
            problem.public_detail().into_owned(),
        ),
        rpc_code::RESOURCE_NOT_FOUND => (
            revision.resource_not_found_code(),
            "Resource not found".to_owned(),
        ),
        code => (code, problem.public_detail().into_owned()),
    };
    ErrorObjectOwned::owned(code, message, Some(data))
}
