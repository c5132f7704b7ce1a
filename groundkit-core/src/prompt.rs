//! What a prompt is: the const [`PromptSpec`] that `#[prompt]` emits, and the [`Message`]s a
//! prompt answers with.
//!
//! A prompt is a template of messages a client offers its user (a slash command, a menu
//! entry): its arguments are text, and getting it with arguments answers the messages to send a
//! model. It is read-only by the same sealed rule as a tool: a spec is built only through
//! [`PromptSpec::new`], whose side effect must implement the sealed
//! [`SideEffectKind`], which only [`ReadOnly`](crate::tool::ReadOnly) does.
//!
//! A prompt's arguments are the fields of its argument type, each a `String` (required) or an
//! `Option<String>` (optional), since MCP gives prompt arguments as text; the registry refuses
//! any other field type when it is built ([`RegistryError::PromptArgumentNotText`]). The REST
//! route of a prompt is derived from its name, `POST /prompts/{name}` with the arguments as the
//! JSON body, and answers the same JSON as MCP's `prompts/get` ([`rendered`]).
//!
//! [`RegistryError::PromptArgumentNotText`]: crate::registry::RegistryError::PromptArgumentNotText

use std::any::TypeId;

use serde_json::{Map, Value, json};

use crate::call::RequestContext;
use crate::complete::Completer;
use crate::error::Error;
use crate::resource::Content;
use crate::schema::Definitions;
use crate::tool::{BoxFuture, ErasedContext, Operation, RestRoute, SideEffect, SideEffectKind};

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// What one message holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// Text.
    Text(String),
    /// An image: its bytes and MIME type (`image/png`, ...).
    Image {
        /// The encoded image.
        data: Vec<u8>,
        /// Its MIME type.
        mime_type: String,
    },
    /// A resource's content, embedded: its URI, MIME type and content.
    Resource {
        /// The resource's URI.
        uri: String,
        /// The MIME type of its content.
        mime_type: String,
        /// Its content.
        content: Content,
    },
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who says it.
    pub role: Role,
    /// What it holds.
    pub content: Block,
}

impl Message {
    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: Block::Text(text.into()),
        }
    }

    /// A text message from the model.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: Block::Text(text.into()),
        }
    }

    /// A message from the user holding `content`.
    pub fn user_block(content: Block) -> Self {
        Self {
            role: Role::User,
            content,
        }
    }

    /// The message as MCP's `PromptMessage` gives it (images and blobs in base64).
    pub fn to_json(&self) -> Value {
        let role = match self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let content = match &self.content {
            Block::Text(text) => json!({ "type": "text", "text": text }),
            Block::Image { data, mime_type } => {
                json!({ "type": "image", "data": base64(data), "mimeType": mime_type })
            }
            Block::Resource {
                uri,
                mime_type,
                content,
            } => {
                let mut resource = json!({ "uri": uri, "mimeType": mime_type });
                match content {
                    Content::Text(text) => resource["text"] = json!(text),
                    Content::Blob(bytes) => resource["blob"] = json!(base64(bytes)),
                }
                json!({ "type": "resource", "resource": resource })
            }
        };
        json!({ "role": role, "content": content })
    }
}

/// Standard base64 with padding, as MCP's `data` and `blob` fields carry bytes.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A prompt's answer as `prompts/get` and its REST route give it: the prompt's description
/// and the messages.
pub fn rendered(spec: &PromptSpec, messages: &[Message]) -> Value {
    json!({
        "description": spec.description(),
        "messages": messages.iter().map(Message::to_json).collect::<Vec<_>>(),
    })
}

/// JSON Schema of [`rendered`]'s answer, for OpenAPI.
pub fn rendered_schema() -> Value {
    let text = json!({ "type": "string" });
    json!({
        "type": "object",
        "required": ["description", "messages"],
        "properties": {
            "description": text,
            "messages": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["role", "content"],
                    "properties": {
                        "role": { "enum": ["user", "assistant"] },
                        "content": {
                            "type": "object",
                            "required": ["type"],
                            "properties": {
                                "type": { "enum": ["text", "image", "resource"] },
                                "text": text,
                                "data": text,
                                "mimeType": text,
                                "resource": { "type": "object" },
                            },
                        },
                    },
                },
            },
        },
    })
}

/// One argument of a prompt, as `prompts/list` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    /// Its name: a field of the argument type.
    pub name: String,
    /// The field's doc comment, when it has one.
    pub description: Option<String>,
    /// Whether it must be given (a `String` field; an `Option<String>` is optional).
    pub required: bool,
}

/// A type-erased prompt handler: context and arguments in, messages out.
pub type PromptHandler = for<'a> fn(
    &'a ErasedContext,
    Value,
    RequestContext,
) -> BoxFuture<'a, Result<Vec<Message>, Error>>;

/// Everything one prompt declares. Built by `#[prompt]`; read by registries and transports.
#[derive(Clone, Copy)]
pub struct PromptSpec {
    parts: PromptParts,
    side_effect: SideEffect,
}

/// The parts of a [`PromptSpec`] that are not its side effect.
#[derive(Clone, Copy)]
pub struct PromptParts {
    /// Prompt name (MCP `name`; unique among a registry's operations).
    pub name: &'static str,
    /// Optional human title.
    pub title: Option<&'static str>,
    /// Optional icon: an `https` URL or an image `data:` URI.
    pub icon: Option<&'static str>,
    /// First sentence of the doc comment.
    pub summary: &'static str,
    /// The whole doc comment.
    pub description: &'static str,
    /// The REST route derived from the name (always POST).
    pub route: RestRoute,
    /// `TypeId` of the context type the handler expects.
    pub context: fn() -> TypeId,
    /// Name of the context type, for error messages.
    pub context_name: fn() -> &'static str,
    /// JSON Schema of the argument type (an empty object for a prompt without arguments).
    pub arguments_schema: fn(Definitions) -> Value,
    /// The completers of its arguments.
    pub completers: &'static [Completer],
    /// The type-erased handler.
    pub handler: PromptHandler,
}

impl PromptSpec {
    /// Build a spec. `E` must be a sealed [`SideEffectKind`]: in practice `ReadOnly`.
    pub const fn new<E: SideEffectKind>(parts: PromptParts) -> Self {
        PromptSpec {
            parts,
            side_effect: E::EFFECT,
        }
    }

    /// Prompt name.
    pub const fn name(&self) -> &'static str {
        self.parts.name
    }
    /// Human title, when declared.
    pub const fn title(&self) -> Option<&'static str> {
        self.parts.title
    }
    /// Icon source, when declared.
    pub const fn icon(&self) -> Option<&'static str> {
        self.parts.icon
    }
    /// First sentence of the doc comment.
    pub const fn summary(&self) -> &'static str {
        self.parts.summary
    }
    /// The whole doc comment.
    pub const fn description(&self) -> &'static str {
        self.parts.description
    }
    /// The REST route (POST, derived from the name).
    pub const fn route(&self) -> RestRoute {
        self.parts.route
    }
    /// Declared side effect.
    pub const fn side_effect(&self) -> SideEffect {
        self.side_effect
    }
    /// The completers of its arguments.
    pub const fn completers(&self) -> &'static [Completer] {
        self.parts.completers
    }
    /// Name of the context type this prompt is served with.
    pub fn context_name(&self) -> &'static str {
        (self.parts.context_name)()
    }
    /// Whether this prompt belongs to the registry of context type `Ctx`.
    pub fn serves<Ctx: 'static>(&self) -> bool {
        (self.parts.context)() == TypeId::of::<Ctx>()
    }
    /// JSON Schema of the arguments (2020-12, object root, definitions inlined).
    pub fn arguments_schema(&self) -> Value {
        (self.parts.arguments_schema)(Definitions::Inline)
    }
    /// The arguments, in the schema's (declaration) order; an argument whose schema is not
    /// text is listed all the same (the registry refuses such a prompt before it is served).
    pub fn arguments(&self) -> Vec<Argument> {
        let schema = self.arguments_schema();
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        properties
            .iter()
            .map(|(name, property)| Argument {
                name: name.clone(),
                description: property
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                required: required.contains(&name.as_str()),
            })
            .collect()
    }
    /// Get the prompt with `arguments`, against a context of the registered type, as the call
    /// `request` describes.
    pub fn get<'a>(
        &self,
        ctx: &'a ErasedContext,
        arguments: Value,
        request: RequestContext,
    ) -> BoxFuture<'a, Result<Vec<Message>, Error>> {
        (self.parts.handler)(ctx, arguments, request)
    }
}

/// The first argument of `schema` whose type is not text (`string`, or `string` or `null`).
pub(crate) fn non_text_argument(schema: &Value) -> Option<String> {
    let properties = schema.get("properties")?.as_object()?;
    properties.iter().find_map(|(name, property)| {
        let text = match property.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(types)) => {
                types.iter().any(|t| t == "string")
                    && types.iter().all(|t| t == "string" || t == "null")
            }
            _ => false,
        };
        (!text).then(|| name.clone())
    })
}

impl Operation for PromptSpec {
    fn name(&self) -> &'static str {
        self.parts.name
    }
    fn summary(&self) -> &'static str {
        self.parts.summary
    }
    fn description(&self) -> &'static str {
        self.parts.description
    }
    fn side_effect(&self) -> SideEffect {
        self.side_effect
    }
    fn route(&self) -> RestRoute {
        self.parts.route
    }
}

impl std::fmt::Debug for PromptSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptSpec")
            .field("name", &self.parts.name)
            .field("side_effect", &self.side_effect)
            .field("context", &self.context_name())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_render_as_mcp_prompt_messages() {
        let image = Message::user_block(Block::Image {
            data: vec![0xff, 0x00],
            mime_type: "image/png".into(),
        });
        assert_eq!(
            image.to_json(),
            json!({"role": "user", "content": {"type": "image", "data": "/wA=", "mimeType": "image/png"}})
        );
        let embedded = Message::user_block(Block::Resource {
            uri: "docs://a".into(),
            mime_type: "text/plain".into(),
            content: Content::Text("body".into()),
        });
        assert_eq!(
            embedded.to_json(),
            json!({"role": "user", "content": {"type": "resource", "resource": {"uri": "docs://a", "mimeType": "text/plain", "text": "body"}}})
        );
        assert_eq!(
            Message::assistant("ok").to_json(),
            json!({"role": "assistant", "content": {"type": "text", "text": "ok"}})
        );
    }

    #[test]
    fn only_text_and_optional_text_are_prompt_arguments() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": ["string", "null"]}}});
        assert_eq!(non_text_argument(&schema), None);
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string"}, "n": {"type": "integer"}}});
        assert_eq!(non_text_argument(&schema).as_deref(), Some("n"));
    }
}
