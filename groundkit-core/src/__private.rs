//! What `#[tool]`, `#[resource]` and `#[prompt]` expansions call. Not public API: paths here change without notice.
//!
//! Generated code names everything through `::groundkit_core::__private` (or the path given with
//! `crate = ...`), so it never depends on what the user's crate imports or shadows.

pub use ::core;
pub use ::linkme;
pub use ::serde_json;
pub use ::std;

pub use crate::call::RequestContext;
pub use crate::complete::{CompleteHandler, Completer, Completion};
pub use crate::error::Error;
pub use crate::prompt::{Message, PromptHandler, PromptParts, PromptSpec};
pub use crate::registry::{PROMPTS, RESOURCES, TOOLS};
pub use crate::resource::{
    Content, ResourceHandler, ResourceParts, ResourceSpec, Segment, UriTemplate,
};
pub use crate::schema::{input_schema, output_schema};
pub use crate::tool::{
    BoxFuture, ErasedContext, Handler, HttpMethod, ReadOnly, RestRoute, ToolParts, ToolSpec,
};

use std::any::TypeId;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A type a tool can take as its request.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool request type",
    label = "a tool request must derive `serde::Deserialize`, `schemars::JsonSchema` and `garde::Validate`",
    note = "add `#[derive(Deserialize, JsonSchema, garde::Validate)]` and `#[serde(deny_unknown_fields)]` to the request type"
)]
pub trait Request: DeserializeOwned + schemars::JsonSchema + garde::Validate<Context = ()> {}
impl<T: DeserializeOwned + schemars::JsonSchema + garde::Validate<Context = ()>> Request for T {}

/// A type a tool can use as its context.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool context",
    label = "a tool context must be `Send + Sync + 'static`",
    note = "the context is shared by every request on every transport"
)]
pub trait Context: Send + Sync + 'static {}
impl<T: Send + Sync + 'static> Context for T {}

/// What a tool function returns: `Result<Response, E>` with `E: Into<groundkit_core::Error>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool return type",
    label = "a tool must return `Result<Response, E>`",
    note = "`Response` must derive `serde::Serialize` and `schemars::JsonSchema`, and `E` must convert into `groundkit_core::Error`"
)]
pub trait ToolReturn {
    /// The response type.
    type Response: Serialize + schemars::JsonSchema;
    /// Into the stack's error type.
    fn into_result(self) -> Result<Self::Response, Error>;
}

impl<T, E> ToolReturn for Result<T, E>
where
    T: Serialize + schemars::JsonSchema,
    E: Into<Error>,
{
    type Response = T;
    fn into_result(self) -> Result<T, Error> {
        self.map_err(Into::into)
    }
}

/// What a resource function returns: `Result<Content, E>` with `E: Into<groundkit_core::Error>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource return type",
    label = "a resource must return `Result<groundkit_core::Content, E>`",
    note = "`E` must convert into `groundkit_core::Error`; `Content::json(&value)` renders a serializable value as JSON text"
)]
pub trait ResourceReturn {
    /// Into the stack's error type.
    fn into_content(self) -> Result<Content, Error>;
}

impl<E: Into<Error>> ResourceReturn for Result<Content, E> {
    fn into_content(self) -> Result<Content, Error> {
        self.map_err(Into::into)
    }
}

/// What a prompt function returns: `Result<Vec<Message>, E>` with `E: Into<groundkit_core::Error>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt return type",
    label = "a prompt must return `Result<Vec<groundkit_core::Message>, E>`",
    note = "`E` must convert into `groundkit_core::Error`; `Message::user(text)` is a text message from the user"
)]
pub trait PromptReturn {
    /// Into the stack's error type.
    fn into_messages(self) -> Result<Vec<Message>, Error>;
}

impl<E: Into<Error>> PromptReturn for Result<Vec<Message>, E> {
    fn into_messages(self) -> Result<Vec<Message>, Error> {
        self.map_err(Into::into)
    }
}

/// Compile-time check that a type can be a prompt's return type.
pub const fn assert_prompt_return<T: PromptReturn>() {}

/// What a completer returns: `Result<Vec<String>, E>` with `E: Into<groundkit_core::Error>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a completer's return type",
    label = "a completer must return `Result<Vec<String>, E>`",
    note = "a completer is `async fn(ctx: &Context, completion: groundkit_core::Completion) -> Result<Vec<String>, E>`"
)]
pub trait CompleterReturn {
    /// Into the stack's error type.
    fn into_values(self) -> Result<Vec<String>, Error>;
}

impl<E: Into<Error>> CompleterReturn for Result<Vec<String>, E> {
    fn into_values(self) -> Result<Vec<String>, Error> {
        self.map_err(Into::into)
    }
}

/// Compile-time check that a type can be a resource's return type.
pub const fn assert_resource_return<T: ResourceReturn>() {}

/// The parameters of a static resource: none (an empty object schema).
pub fn no_params_schema(_: crate::schema::Definitions) -> serde_json::Value {
    serde_json::json!({ "type": "object", "additionalProperties": false })
}

/// A field a `{param}` path segment can fill.
#[diagnostic::on_unimplemented(
    message = "a path parameter must be a `String` field, not `{Self}`",
    label = "path segments arrive as text",
    note = "declare the field as `String` and validate its shape with a garde rule"
)]
pub trait PathParam {}
impl PathParam for String {}

/// Compile-time check that a request field can be filled from a path segment.
pub fn path_param<T: PathParam + ?Sized>(_: &T) {}

/// The request context a function may take as its last argument.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not groundkit's request context",
    label = "a last argument named `RequestContext` must be `groundkit_core::RequestContext`",
    note = "take `call: groundkit_core::RequestContext` (by value) to see the request id, transport, deadline and cancellation"
)]
pub trait IsRequestContext {}
impl IsRequestContext for RequestContext {}

/// Compile-time check that a type is the request context.
pub const fn assert_request_context<T: IsRequestContext>() {}

/// Compile-time check that a type can be a tool context.
pub const fn assert_context<T: Context + ?Sized>() {}

/// Compile-time check that a type can be a tool request.
pub const fn assert_request<T: Request>() {}

/// Compile-time check that a type can be a tool's return type.
pub const fn assert_return<T: ToolReturn>() {}

/// The `TypeId` of a context type.
pub fn type_id<T: 'static>() -> TypeId {
    TypeId::of::<T>()
}

/// The typed context behind an erased one.
pub fn downcast_context<Ctx: Context>(context: &ErasedContext) -> Result<&Ctx, Error> {
    context.downcast_ref::<Ctx>().ok_or_else(|| {
        Error::internal(format!(
            "tool called with the wrong context type (expected {})",
            std::any::type_name::<Ctx>()
        ))
    })
}

/// Parse and validate arguments by the request type's own rules.
pub fn parse_arguments<Req: Request>(arguments: serde_json::Value) -> Result<Req, Error> {
    crate::request::parse(arguments)
}

/// Serialize a tool's response.
pub fn to_output<T: Serialize>(response: &T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(response)
        .map_err(|err| Error::internal(format!("response did not serialize: {err}")))
}
