//! The registry's digest: a SHA-256 over what a registry serves and what it declares of each
//! operation's effect, so that a client or a gateway can check, rather than trust, that a
//! server serves what a published build declares.
//!
//! It is computed from exactly what a client sees: for each tool its name, effect,
//! `inputSchema` and `outputSchema` as `tools/list` gives them; for each resource its name,
//! effect, URI or URI template and MIME type as `resources/list` and
//! `resources/templates/list` give them; for each prompt its name, effect and arguments (each
//! `{"name", "required"}`, in order) as `prompts/list` gives them. Each operation is the JSON
//! object `{"kind": "tool" | "resource" | "prompt", "name", "effect", ...}` with those members
//! (`uri` and `mimeType` for a resource, `arguments` for a prompt); the objects, ordered by kind then name, form an array, written
//! as canonical JSON (object members sorted by key, recursively, no white space, strings and
//! numbers as `serde_json` writes them); the digest is `sha256:` and the lower-case hex of the
//! SHA-256 of those bytes. Descriptions and titles are left out: they are prose, and may be
//! reworded without changing what is served.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::registry::Registry;
use crate::tool::SideEffect;

/// The `_meta` key (MCP) under which an operation's effect class is given.
pub const EFFECT_META_KEY: &str = "groundkit/effect";

/// The `_meta` key (MCP) under which a list or discovery result gives the registry's digest.
pub const DIGEST_META_KEY: &str = "groundkit/registry-digest";

impl SideEffect {
    /// The effect class's name, as `_meta` and OpenAPI give it.
    pub const fn as_str(self) -> &'static str {
        match self {
            SideEffect::ReadOnly => "read_only",
        }
    }
}

impl<Ctx> Registry<Ctx> {
    /// The registry's digest (see the module documentation for exactly what it covers).
    pub fn digest(&self) -> String {
        let mut operations: Vec<(&str, &str, Value)> = Vec::new();
        for spec in self.tools() {
            let tool = json!({
                "kind": "tool",
                "name": spec.name(),
                "effect": spec.side_effect().as_str(),
                "inputSchema": spec.input_schema(),
                "outputSchema": spec.output_schema(),
            });
            operations.push(("tool", spec.name(), tool));
        }
        for spec in self.resources() {
            let resource = json!({
                "kind": "resource",
                "name": spec.name(),
                "effect": spec.side_effect().as_str(),
                "uri": spec.uri().template,
                "mimeType": spec.mime_type(),
            });
            operations.push(("resource", spec.name(), resource));
        }
        for spec in self.prompts() {
            let prompt = json!({
                "kind": "prompt",
                "name": spec.name(),
                "effect": spec.side_effect().as_str(),
                "arguments": spec
                    .arguments()
                    .into_iter()
                    .map(|a| json!({ "name": a.name, "required": a.required }))
                    .collect::<Vec<_>>(),
            });
            operations.push(("prompt", spec.name(), prompt));
        }
        operations.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let mut bytes = String::from("[");
        for (i, (_, _, operation)) in operations.iter().enumerate() {
            if i > 0 {
                bytes.push(',');
            }
            canonical(operation, &mut bytes);
        }
        bytes.push(']');
        let hash = Sha256::digest(bytes.as_bytes());
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }
}

/// `value` as canonical JSON: object members sorted by key, recursively, no white space.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(member, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_members_at_every_depth_and_keeps_array_order() {
        let value = json!({"b": [{"y": 1, "x": "é\n"}, 2], "a": null});
        let mut out = String::new();
        canonical(&value, &mut out);
        assert_eq!(out, r#"{"a":null,"b":[{"x":"é\n","y":1},2]}"#);
    }

    #[test]
    fn an_empty_registry_digests_the_empty_array() {
        let registry = Registry::<()>::from_parts([], []).expect("empty");
        // SHA-256 of the two bytes `[]`.
        assert_eq!(
            registry.digest(),
            "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
        );
    }
}
