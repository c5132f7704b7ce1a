//! JSON Schemas of tool inputs and outputs, in the one dialect every surface sends.
//!
//! JSON Schema 2020-12 (the MCP default dialect, so no `$schema` key is emitted) with definitions
//! inlined so the root is never a `$ref`. In *input* schemas an optional field is rendered as its
//! plain type: a field that may be omitted does not also need to admit `null`, and
//! `["string", "null"]` or an `anyOf` with a null branch is rejected by some MCP clients. Output
//! schemas keep `null` where the response really serializes it, because clients validate
//! `structuredContent` against them.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The schema of a request type `T` as every surface (REST, MCP, OpenAPI) sends it.
pub fn input_schema<T: JsonSchema + ?Sized>() -> Value {
    let mut schema = output_schema::<T>();
    strip_optional_nulls(&mut schema);
    schema
}

/// The schema of a response type `T` as every surface sends it.
pub fn output_schema<T: JsonSchema + ?Sized>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("$defs");
    }
    schema
}

/// Rewrite every non-required property whose schema admits `null` into the plain schema.
fn strip_optional_nulls(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
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
                children.values_mut().for_each(strip_optional_nulls)
            }
            ("items" | "additionalProperties" | "not" | "contains", child) => {
                strip_optional_nulls(child)
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(children)) => {
                children.iter_mut().for_each(strip_optional_nulls)
            }
            _ => {}
        }
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
        let schema = input_schema::<Request>();
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
