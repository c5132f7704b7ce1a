//! JSON Schemas of tool inputs and outputs, in the one dialect every surface sends.
//!
//! JSON Schema 2020-12 (the MCP default dialect, so no `$schema` key is emitted), rendered for
//! the strictest consumers that read it (MCP clients validating `structuredContent`, Ajv, code
//! generators):
//!
//! - **Definitions** are inlined for MCP, so the root is never a `$ref` and no client has to
//!   resolve one; OpenAPI gets the same schemas with named types as shared
//!   `#/components/schemas/<Name>` ([`Definitions`]).
//! - **A unit enum is an `enum`** of its spellings, never a `oneOf` of `const` branches (which
//!   some generators read as its first branch only); the variants' doc comments are folded into
//!   the field's description.
//! - **Only standard `format`s.** The non-standard ones schemars writes for Rust numbers
//!   (`uint32`, `double`, ...) are dropped; bounds stay as `minimum`/`maximum`.
//! - **No `null`, no `type` arrays.** A field that may be absent is optional and plain: requests
//!   omit it (sending `null` is refused) and responses omit it (`skip_serializing_if`), so a
//!   schema never needs `["string", "null"]` or an `anyOf` with a null branch.

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::{Map, Value};

/// How the named types inside a schema are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Definitions {
    /// Every subschema in place (what MCP `tools/list` sends).
    Inline,
    /// Named types as `{"$ref": "#/components/schemas/<Name>"}`, their schemas under the
    /// root's `components.schemas` (for an OpenAPI document to lift into its own components).
    Components,
}

/// The formats JSON Schema 2020-12 defines; any other `format` is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The schema of a request type `T` as every surface (REST, MCP, OpenAPI) sends it: what it
/// deserializes (an `Option` field may be omitted).
pub fn input_schema<T: JsonSchema + ?Sized>(definitions: Definitions) -> Value {
    schema_for::<T>(Contract::Deserialize, definitions)
}

/// The schema of a response type `T` as every surface sends it: what it serializes. An
/// `Option` field is optional only with `#[serde(skip_serializing_if = "Option::is_none")]`;
/// without it the field is required and may be `null`, which the registry refuses
/// ([`RegistryError::NullableOutput`](crate::RegistryError::NullableOutput)).
pub fn output_schema<T: JsonSchema + ?Sized>(definitions: Definitions) -> Value {
    schema_for::<T>(Contract::Serialize, definitions)
}

fn schema_for<T: JsonSchema + ?Sized>(contract: Contract, definitions: Definitions) -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.contract = contract;
            match definitions {
                Definitions::Inline => settings.inline_subschemas = true,
                Definitions::Components => {
                    settings.definitions_path = "/components/schemas".into();
                }
            }
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("$defs");
    }
    normalize(&mut schema);
    if let Some(Value::Object(named)) = schema.pointer_mut("/components/schemas") {
        named.values_mut().for_each(normalize);
    }
    schema
}

/// Apply the module's rules to `schema` and every subschema it holds.
fn normalize(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    enum_from_consts(object);
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
    {
        object.remove("format");
    }
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                drop_null_branch(property);
            }
        }
    }
    for (key, value) in object.iter_mut() {
        match (key.as_str(), value) {
            ("properties" | "patternProperties", Value::Object(children)) => {
                children.values_mut().for_each(normalize)
            }
            ("items" | "additionalProperties" | "not" | "contains", child) => normalize(child),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(children)) => {
                children.iter_mut().for_each(normalize)
            }
            _ => {}
        }
    }
}

/// Rewrite a `oneOf` (or `anyOf`) whose every branch is a string `const` into `enum`, folding
/// the branches' descriptions into the schema's own.
fn enum_from_consts(object: &mut Map<String, Value>) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(branches)) = object.get(key) else {
            continue;
        };
        let constants: Option<Vec<(String, Option<String>)>> = branches
            .iter()
            .map(|branch| {
                let branch = branch.as_object()?;
                let only_known = branch
                    .keys()
                    .all(|k| matches!(k.as_str(), "const" | "type" | "description"));
                let constant = branch.get("const")?.as_str()?;
                only_known.then(|| {
                    let description = branch.get("description").and_then(Value::as_str);
                    (constant.to_owned(), description.map(str::to_owned))
                })
            })
            .collect();
        let Some(constants) = constants.filter(|c| !c.is_empty()) else {
            continue;
        };
        object.remove(key);
        let explained: Vec<String> = constants
            .iter()
            .filter_map(|(value, description)| {
                description.as_ref().map(|d| format!("`{value}`: {d}"))
            })
            .collect();
        if !explained.is_empty() {
            let own = object.get("description").and_then(Value::as_str);
            let text = match own {
                Some(own) => format!("{own} {}", explained.join(" ")),
                None => explained.join(" "),
            };
            object.insert("description".into(), Value::String(text));
        }
        object.insert("type".into(), Value::String("string".into()));
        object.insert(
            "enum".into(),
            constants
                .into_iter()
                .map(|(v, _)| Value::String(v))
                .collect(),
        );
    }
}

fn drop_null_branch(property: &mut Value) {
    let Value::Object(object) = property else {
        return;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            object.insert("type".into(), only);
        }
    }
    let branches = object.get("anyOf").and_then(Value::as_array).cloned();
    if let Some(mut branches) = branches {
        branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
        if branches.len() == 1 {
            object.remove("anyOf");
            if let Value::Object(inner) = branches.remove(0) {
                merge_into(object, inner);
            }
        } else {
            object.insert("anyOf".into(), Value::Array(branches));
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
}

fn merge_into(target: &mut Map<String, Value>, source: Map<String, Value>) {
    for (key, value) in source {
        target.entry(key).or_insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[allow(dead_code, reason = "only the schema of these types is used")]
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        label: String,
    }

    #[allow(dead_code, reason = "only the schema of these types is used")]
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Request {
        name: String,
        limit: Option<u32>,
        inner: Option<Inner>,
    }

    #[test]
    fn optional_fields_are_plain_and_definitions_inlined() {
        let schema = input_schema::<Request>(Definitions::Inline);
        assert_eq!(schema["type"], "object");
        assert!(schema.get("$schema").is_none());
        assert!(schema.get("$defs").is_none());
        assert!(!schema.to_string().contains("$ref"));
        assert_eq!(schema["properties"]["limit"]["type"], "integer");
        assert_eq!(schema["properties"]["inner"]["type"], "object");
        assert_eq!(
            schema["properties"]["inner"]["properties"]["label"],
            json!({"type": "string"})
        );
        assert_eq!(schema["required"], json!(["name"]));
        assert_eq!(schema["additionalProperties"], false);
    }
}
