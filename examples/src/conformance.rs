//! The fixture tools, resources and prompts the official MCP conformance suite's `tools-call-*`,
//! `resources-*`, `prompts-*` and `completion-complete` scenarios call by name.
//!
//! Only the scenarios a read-only server can honour have a tool here: a text result, a tool
//! error, and progress notifications; the resources `resources-read-text`,
//! `resources-read-binary` and `resources-templates-read` read; the four prompts of the
//! `prompts-get-*` scenarios, and a completer of `test_prompt_with_arguments`'s `arg1`. The
//! others (tools answering image, audio and embedded-resource content, logging, sampling,
//! elicitation) need content types or server-to-client requests that groundkit tools do not
//! produce; `tests/clients/conformance-expected-failures.yml` says why for each.

use std::time::Duration;

use garde::Validate;
use groundkit_core::progress;
use groundkit_core::{Block, Completion, Content, Error, Message, prompt, resource, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The fixture needs no state.
#[derive(Debug, Clone, Default)]
pub struct ConformanceContext;

/// The fixture tools take no arguments.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

/// A text result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TextResult {
    /// The text.
    pub text: String,
}

/// Return a fixed text (conformance scenario `tools-call-simple-text`).
#[tool(read_only, rest = "GET /conformance/simple-text")]
pub async fn test_simple_text(
    _ctx: &ConformanceContext,
    _request: NoArguments,
) -> Result<TextResult, Error> {
    Ok(TextResult {
        text: "This is a simple text response for testing.".into(),
    })
}

/// Always fail with a tool error (conformance scenario `tools-call-error`).
#[tool(read_only, rest = "GET /conformance/error")]
pub async fn test_error_handling(
    _ctx: &ConformanceContext,
    _request: NoArguments,
) -> Result<TextResult, Error> {
    Err(Error::InvalidRequest {
        field: None,
        message: "This tool intentionally returns an error for testing".into(),
    })
}

/// Report progress 0, 50 and 100 of 100, about 50 ms apart (conformance scenario
/// `tools-call-with-progress`).
#[tool(read_only, rest = "GET /conformance/progress")]
pub async fn test_tool_with_progress(
    _ctx: &ConformanceContext,
    _request: NoArguments,
) -> Result<TextResult, Error> {
    for step in [0.0, 50.0, 100.0] {
        if step > 0.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        progress::report(step, Some(100.0), None);
    }
    Ok(TextResult {
        text: "Progress tool completed".into(),
    })
}

/// A fixed text (conformance scenario `resources-read-text`).
#[resource(read_only, uri = "test://static-text", mime_type = "text/plain")]
pub async fn static_text(_ctx: &ConformanceContext) -> Result<Content, Error> {
    Ok(Content::Text(
        "This is the content of the static text resource.".into(),
    ))
}

/// A resource clients follow (conformance scenarios `resources-subscribe` and
/// `resources-unsubscribe`).
#[resource(read_only, uri = "test://watched-resource", mime_type = "text/plain")]
pub async fn watched_resource(_ctx: &ConformanceContext) -> Result<Content, Error> {
    Ok(Content::Text("A resource clients may subscribe to.".into()))
}

/// A 1x1 PNG image (conformance scenario `resources-read-binary`).
#[resource(read_only, uri = "test://static-binary", mime_type = "image/png")]
pub async fn static_binary(_ctx: &ConformanceContext) -> Result<Content, Error> {
    Ok(Content::Blob(PNG_1X1.to_vec()))
}

/// The smallest PNG: one transparent pixel.
const PNG_1X1: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f,
    0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// The id a template read substitutes.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct TemplateParams {
    /// Letters, digits, `-` and `_`.
    #[garde(length(chars, min = 1, max = 64), pattern(r"^[A-Za-z0-9_-]+$"))]
    pub id: String,
}

/// What a template read answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateData {
    id: String,
    template_test: bool,
    data: String,
}

/// The data of one id, as JSON (conformance scenario `resources-templates-read`).
#[resource(
    read_only,
    uri = "test://template/{id}/data",
    mime_type = "application/json"
)]
pub async fn template_data(
    _ctx: &ConformanceContext,
    params: TemplateParams,
) -> Result<Content, Error> {
    Content::json(&TemplateData {
        data: format!("Data for ID: {}", params.id),
        id: params.id,
        template_test: true,
    })
}

/// A prompt without arguments (conformance scenario `prompts-get-simple`).
#[prompt(read_only)]
pub async fn test_simple_prompt(_ctx: &ConformanceContext) -> Result<Vec<Message>, Error> {
    Ok(vec![Message::user("This is a simple prompt for testing.")])
}

/// The two arguments of `test_prompt_with_arguments`.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct TwoArguments {
    /// First test argument.
    #[garde(length(chars, max = 256))]
    pub arg1: String,
    /// Second test argument.
    #[garde(length(chars, max = 256))]
    pub arg2: String,
}

/// A prompt that repeats its arguments (conformance scenarios `prompts-get-with-args` and
/// `completion-complete`).
#[prompt(read_only, complete(arg1 = words))]
pub async fn test_prompt_with_arguments(
    _ctx: &ConformanceContext,
    arguments: TwoArguments,
) -> Result<Vec<Message>, Error> {
    Ok(vec![Message::user(format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        arguments.arg1, arguments.arg2
    ))])
}

/// Values offered for `arg1`.
pub async fn words(
    _ctx: &ConformanceContext,
    _completion: Completion,
) -> Result<Vec<String>, Error> {
    Ok(["paris", "park", "party", "test", "testing"]
        .map(String::from)
        .to_vec())
}

/// The resource `test_prompt_with_embedded_resource` embeds.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct EmbedArguments {
    /// URI of the resource to embed.
    #[serde(rename = "resourceUri")]
    #[garde(length(chars, min = 1, max = 256))]
    pub resource_uri: String,
}

/// A prompt holding an embedded resource (conformance scenario `prompts-get-embedded-resource`).
#[prompt(read_only)]
pub async fn test_prompt_with_embedded_resource(
    _ctx: &ConformanceContext,
    arguments: EmbedArguments,
) -> Result<Vec<Message>, Error> {
    Ok(vec![
        Message::user_block(Block::Resource {
            uri: arguments.resource_uri,
            mime_type: "text/plain".into(),
            content: Content::Text("Embedded resource content for testing.".into()),
        }),
        Message::user("Please process the embedded resource above."),
    ])
}

/// A prompt holding an image (conformance scenario `prompts-get-with-image`).
#[prompt(read_only)]
pub async fn test_prompt_with_image(_ctx: &ConformanceContext) -> Result<Vec<Message>, Error> {
    Ok(vec![
        Message::user_block(Block::Image {
            data: PNG_1X1.to_vec(),
            mime_type: "image/png".into(),
        }),
        Message::user("Please analyze the image above."),
    ])
}
