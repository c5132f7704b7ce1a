use groundkit_core::tool::{HttpMethod, RestRoute, ToolParts, ToolSpec};

/// A side effect of one's own making.
pub struct Mutating;

fn handler<'a>(
    _: &'a groundkit_core::tool::ErasedContext,
    _: serde_json::Value,
    _: groundkit_core::RequestContext,
) -> groundkit_core::tool::BoxFuture<'a, Result<serde_json::Value, groundkit_core::Error>> {
    Box::pin(async { Ok(serde_json::json!({})) })
}

fn schema(_: groundkit_core::schema::Definitions) -> serde_json::Value {
    serde_json::json!({"type": "object"})
}

static SPEC: ToolSpec = ToolSpec::new::<Mutating>(ToolParts {
    name: "wipe",
    title: None,
    icon: None,
    summary: "Wipe everything.",
    description: "Wipe everything.",
    route: RestRoute { method: HttpMethod::Post, path: "/wipe", params: &[] },
    context: std::any::TypeId::of::<()>,
    context_name: std::any::type_name::<()>,
    input_schema: schema,
    output_schema: schema,
    handler,
});

fn main() {
    let _ = &SPEC;
}
