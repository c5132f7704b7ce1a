//! `tools/list` and `tools/call` rendering: registry specs in, MCP JSON out; and the cursor
//! pagination every list method shares.
//!
//! Nothing here knows a tool by name: definitions are rendered from [`ToolSpec`]s in registry
//! order, and results and errors from the one error mapping. The MCP surface can therefore serve
//! exactly the registry and nothing else.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use groundkit_core::digest;
use groundkit_core::{SideEffect, ToolSpec};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::jsonrpc;
use super::protocol::Revision;
use crate::edge::problem::{McpRendering, Problem, mapping};

/// Tools per `tools/list` page. Clients follow `nextCursor` until it is absent.
pub const PAGE_SIZE: usize = 50;

/// How long a stateless-era client may cache `tools/list` (the registry is fixed for the life of
/// the process, and the same for every caller, hence `public`).
pub const LIST_TTL_MS: u64 = 60_000;

/// One tool as `tools/list` describes it.
pub fn definition(spec: &ToolSpec, revision: Revision) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(spec.name()));
    if revision.has_structured_output()
        && let Some(title) = spec.title()
    {
        tool.insert("title".into(), json!(title));
    }
    tool.insert("description".into(), json!(spec.description()));
    if let Some(icons) = icons(spec.icon(), revision) {
        tool.insert("icons".into(), icons);
    }
    tool.insert("inputSchema".into(), spec.input_schema());
    if revision.has_structured_output() {
        tool.insert("outputSchema".into(), spec.output_schema());
    }
    let mut annotations = Map::new();
    if let Some(title) = spec.title() {
        annotations.insert("title".into(), json!(title));
    }
    annotations.insert(
        "readOnlyHint".into(),
        json!(spec.side_effect().is_read_only()),
    );
    tool.insert("annotations".into(), Value::Object(annotations));
    if revision.has_structured_output() {
        tool.insert("_meta".into(), effect_meta(spec.side_effect()));
    }
    Value::Object(tool)
}

/// An operation's `icons` (from 2025-11-25): its one declared icon, by its source alone (a
/// client reads the image's type from the response or the `data:` URI).
pub fn icons(icon: Option<&str>, revision: Revision) -> Option<Value> {
    let icon = icon.filter(|_| revision.has_icons())?;
    Some(json!([{ "src": icon }]))
}

/// An operation's `_meta` (from 2025-06-18): its effect class, from the sealed enum, which a
/// client can check against the registry's digest where `readOnlyHint` is only a hint.
pub fn effect_meta(effect: SideEffect) -> Value {
    json!({ digest::EFFECT_META_KEY: effect.as_str() })
}

/// Why a cursor is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidCursor;

/// One page of `items` (tools, resources or templates, each named by `name`), starting after
/// `cursor`: the page and the cursor of the next, if any.
///
/// A cursor is the opaque encoding of the last name on the previous page, so it stays valid
/// across calls and names exactly one position; anything that does not decode to a listed name is
/// refused.
pub fn page<'a, T>(
    items: &'a [T],
    name: impl Fn(&T) -> &str,
    cursor: Option<&str>,
    size: usize,
) -> Result<(&'a [T], Option<String>), InvalidCursor> {
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            let last = URL_SAFE_NO_PAD
                .decode(cursor)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or(InvalidCursor)?;
            items
                .iter()
                .position(|item| name(item) == last)
                .ok_or(InvalidCursor)?
                + 1
        }
    };
    let end = (start + size.max(1)).min(items.len());
    let page = &items[start.min(end)..end];
    let next = (end < items.len())
        .then(|| page.last().map(|last| URL_SAFE_NO_PAD.encode(name(last))))
        .flatten();
    Ok((page, next))
}

/// The answer to a `tools/call`, written whole: the JSON-RPC success frame around its result.
///
/// A tool's output can be large, so the frame is written in one buffer rather than the result
/// first and the envelope around a copy of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReply {
    /// The frame.
    pub frame: String,
    /// Whether the result is a tool error (`isError: true`).
    pub is_error: bool,
}

/// A link from a tool's MCP result to a resource: a `resource_link` content block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceLink {
    /// The resource's URI, as `resources/read` takes it.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A title for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The MIME type of what reading it gives.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// The resource links of a tool's answer, found in the call's arguments and its output (both as
/// JSON): see [`AppState::link_results`](crate::AppState::link_results).
pub type ResultLinks = fn(&Value, &Value) -> Vec<ResourceLink>;

/// The answer to a successful call answering request `id`: the output as `structuredContent`,
/// the same JSON as a text block, then a `resource_link` block per link where `revision` has
/// them.
pub fn success(
    id: &RawValue,
    output: &Value,
    links: &[ResourceLink],
    revision: Revision,
) -> ToolReply {
    reply(id, false, output, links, revision)
}

/// How a failed call is answered: a result the model can read, or a protocol error.
pub enum Failure {
    /// A `tools/call` result with `isError: true`.
    Result(ToolReply),
    /// A JSON-RPC error: code, message, data.
    Protocol(i32, String, Value),
}

/// Render `problem`, for request `id`, through the one mapping. The text shown is
/// [`Problem::public_detail`]: never a cause, a path or `Debug` output.
pub fn failure(id: &RawValue, problem: &Problem, request_id: &str, revision: Revision) -> Failure {
    let rendering = mapping(problem);
    let mut body = json!({
        "kind": rendering.kind,
        "detail": problem.public_detail(),
        "request_id": request_id,
    });
    if let Some(field) = problem.field() {
        body["field"] = json!(field);
    }
    match rendering.mcp {
        None | Some(McpRendering::ToolResult) => {
            Failure::Result(reply(id, true, &body, &[], revision))
        }
        Some(McpRendering::Protocol(code)) => {
            let message = problem.public_detail().into_owned();
            Failure::Protocol(code, message, body)
        }
    }
}

/// Write a `tools/call` answer, serializing `payload` once (valid JSON by construction:
/// `serde_json` wrote every piece): `payload` as JSON text for the text block and, for a success
/// where the revision has structured output, the same text as `structuredContent`; for stateless
/// revisions, `resultType`. An error result carries its problem JSON in the text block only: as
/// `structuredContent` it would not match the tool's `outputSchema`, and clients validate it.
/// Written by hand so the payload is serialized a single time and spliced without being parsed
/// again.
fn reply(
    id: &RawValue,
    is_error: bool,
    payload: &Value,
    links: &[ResourceLink],
    revision: Revision,
) -> ToolReply {
    // Not `payload.to_string()`: `Display` writes through `fmt::Write` a token at a time, and
    // serializing a search answer that way took 40% more instructions (222,000 against
    // 156,000). (Serializing a `Value` does not fail; were it ever to, `Display` gives the same
    // text.)
    let text = serde_json::to_string(payload).unwrap_or_else(|_| payload.to_string());
    let mut out = String::with_capacity(
        2 * text.len() + text.len() / 8 + 128 + id.get().len() + jsonrpc::SUCCESS_ENVELOPE_LEN,
    );
    jsonrpc::open_success(&mut out, id);
    out.push_str(if is_error {
        r#"{"isError":true"#
    } else {
        r#"{"isError":false"#
    });
    out.push_str(r#","content":[{"type":"text","text":"#);
    push_json_string(&mut out, &text);
    out.push('}');
    if revision.has_resource_links() {
        for link in links {
            // A link serializes as an object of at least `uri` and `name` (serializing strings
            // does not fail): its members follow the block's `type`.
            if let Ok(block) = serde_json::to_string(link)
                && let Some(members) = block.strip_prefix('{')
            {
                out.push_str(r#",{"type":"resource_link","#);
                out.push_str(members);
            }
        }
    }
    out.push(']');
    if !is_error && revision.has_structured_output() {
        out.push_str(r#","structuredContent":"#);
        // The text block holds exactly this JSON; reuse it rather than serialize again.
        out.push_str(&text);
    }
    if revision.is_stateless() {
        out.push_str(r#","resultType":"complete""#);
    }
    // The result, then the frame.
    out.push_str("}}");
    ToolReply {
        frame: out,
        is_error,
    }
}

/// Append `text`, JSON that `serde_json` wrote, to `out` as a JSON string literal.
///
/// Compact `serde_json` output never holds a raw control character (they are escaped inside
/// strings, and no whitespace is written between tokens), so only `"` and `\` need escaping;
/// `memchr` finds them, and the runs between are copied whole. (Testing eight bytes at a time
/// instead made writing a search's answer cost 10% more instructions: the runs between are long
/// enough for `memchr`'s 32-byte steps to pay for its start-up.)
fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    let mut run_start = 0;
    for at in memchr::memchr2_iter(b'"', b'\\', text.as_bytes()) {
        out.push_str(&text[run_start..at]);
        out.push('\\');
        run_start = at;
    }
    out.push_str(&text[run_start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::push_json_string;

    #[cfg(feature = "retrieval")]
    #[test]
    fn pages_follow_the_cursor_to_every_tool_exactly_once_and_a_bogus_cursor_is_refused() {
        use super::{InvalidCursor, page};
        use crate::service::ServiceContext;

        let registry = groundkit_core::Registry::<ServiceContext>::collect().expect("registry");
        let tools = registry.tools();
        assert!(tools.len() > 1, "a page of one leaves a cursor to follow");
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let (items, next) =
                page(tools, |s| s.name(), cursor.as_deref(), 1).expect("valid cursor");
            seen.extend(items.iter().map(|s| s.name()));
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        let all: Vec<&str> = tools.iter().map(|s| s.name()).collect();
        assert_eq!(seen, all);
        assert_eq!(
            page(tools, |s| s.name(), Some("bm9wZQ"), 1).err(),
            Some(InvalidCursor)
        );
        assert_eq!(
            page(tools, |s| s.name(), Some("%%%"), 1).err(),
            Some(InvalidCursor)
        );
    }

    fn escaped(text: &str) -> String {
        let mut ours = String::new();
        push_json_string(&mut ours, text);
        ours
    }

    #[test]
    fn json_text_is_escaped_exactly_as_serde_json_escapes_it() {
        let values = [
            json!({}),
            json!("plain"),
            json!({"a": "q\"uote", "b": "back\\slash", "c": ["\\\"", "\\\\"]}),
            json!({"text": "new\nline\ttab\rreturn \u{8}\u{c} \u{1} \u{1f}"}),
            json!({"unicode": "naïve — 抹茶 ✓ 🦀", "n": [1, 2.5, null, true]}),
        ];
        for value in values {
            let text = value.to_string();
            assert_eq!(
                escaped(&text),
                serde_json::to_string(&text).expect("serde_json escapes"),
                "{text}"
            );
        }
    }

    /// Every `"` and `\` is escaped wherever it stands: first, last, alone, in runs, and among
    /// multi-byte characters, in texts shorter and longer than one 32-byte search step.
    #[test]
    fn quotes_and_backslashes_are_escaped_at_every_position() {
        for len in 0..=70 {
            for at in 0..len {
                for special in ['"', '\\'] {
                    for filler in ['a', 'é', '"', '\\', '\u{7f}', 'ÿ'] {
                        let mut text: Vec<char> = vec![filler; len];
                        text[at] = special;
                        let text: String = text.into_iter().collect();
                        assert_eq!(
                            escaped(&text),
                            serde_json::to_string(&text).expect("serde_json escapes"),
                            "{text:?}"
                        );
                    }
                }
            }
        }
    }
}
