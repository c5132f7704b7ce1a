//! The `#[tool]`, `#[resource]` and `#[prompt]` attributes of groundkit.
//!
//! This crate is a thin shim over three stages, each in its own module: `attr` and `ast`
//! parse the attribute and the function into a typed view that keeps the original syntax nodes
//! for spans, `valid` (and, for resources, `resource` and `uri`; for prompts, `prompt`) checks
//! every rule and collects all violations, and `expand` (`expand_resource`, `expand_prompt`,
//! with `complete` for their completers) emits the function unchanged plus one const
//! `ToolSpec` (`ResourceSpec`, `PromptSpec`) in the registry's link-time slice. On any error,
//! `fallback` emits the user's function untouched beside the `compile_error!`s, so the user
//! sees every problem at once and the function stays callable for tooling.

mod ast;
mod attr;
mod complete;
mod ctxt;
mod expand;
mod expand_prompt;
mod expand_resource;
mod fallback;
mod prompt;
mod resource;
mod uri;
mod valid;

#[cfg(test)]
mod readme;
#[cfg(test)]
mod snapshots;
#[cfg(test)]
mod ui;

use proc_macro::TokenStream;

/// Declare an async function as a groundkit tool.
///
/// The function takes a shared context (`&Ctx`, built once at start) and a request type, and
/// returns `Result<Response, E>` where `E` converts into `groundkit_core::Error`. The request
/// derives `serde::Deserialize` (with `deny_unknown_fields`), `schemars::JsonSchema` and
/// `garde::Validate`; the response `serde::Serialize` and `schemars::JsonSchema`.
///
/// Keys: `read_only` (required: groundkit serves read-only tools only), `rest = "GET|POST
/// /path/{param}"` (required; every `{param}` is a `String` field of the request), and
/// optionally `name = "..."`, `title = "..."`, `icon = "https://..."` (or an image `data:` URI;
/// listed as the tool's `icons` from MCP 2025-11-25), `crate = path` (where `groundkit_core`
/// is, when renamed). The doc comment is required: its first sentence is the summary, the whole of it
/// the description MCP clients show.
///
/// A complete program, one tool served over REST and MCP: `doc/library.rs`, which the workspace
/// builds (the `library` binary of groundkit-examples) and its README shows.
///
/// ```ignore
// `ignore`: this crate's doctests cannot depend on groundkit-server. The file is compiled as the
// `library` binary of groundkit-examples instead.
#[doc = include_str!("../doc/library.rs")]
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_tool(args.into(), input.into()).into()
}

/// Declare an async function as a groundkit resource: an MCP resource (or resource template)
/// and a REST `GET` route, from one declaration.
///
/// `#[resource(read_only, uri = "docs://{name}", mime_type = "text/markdown")]`. The URI is
/// `scheme://segment/...`, each segment a literal or one whole `{var}` (RFC 6570 level 1). A URI
/// without a variable is a static resource, and its function takes the context alone:
/// `async fn readme(ctx: &Ctx) -> Result<Content, E>`. A URI with variables is a template, and
/// its function takes a parameter type whose fields are exactly the variables, each a `String`
/// validated like a tool request: `async fn doc(ctx: &Ctx, params: DocParams) -> Result<Content,
/// E>`. The REST route is `GET /resources/{scheme}/{segments}`. Optional keys: `name`, `title`,
/// `icon`, `crate`, as for `#[tool]`, and `complete(var = completer, ...)` naming the completer
/// of a variable (see `#[prompt]`); the doc comment is required.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_resource(args.into(), input.into()).into()
}

/// Declare an async function as a groundkit prompt: an MCP prompt (`prompts/list`,
/// `prompts/get`) and a REST `POST /prompts/{name}` route, from one declaration.
///
/// `#[prompt(read_only)]` on `async fn name(ctx: &Ctx, args: Args) -> Result<Vec<Message>, E>`,
/// or `async fn name(ctx: &Ctx)` for a prompt without arguments. The argument type is validated
/// like a tool request; its fields are the prompt's arguments, each a `String` (required) or an
/// `Option<String>` (optional), described by their doc comments. Optional keys: `name`, `title`,
/// `icon`, `crate`, as for `#[tool]`, and `complete(arg = completer, ...)`: `completer` is an
/// `async fn(ctx: &Ctx, completion: groundkit_core::Completion) -> Result<Vec<String>, E>`
/// offering values for the argument `arg` (`completion/complete`). The doc comment is required.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_prompt(args.into(), input.into()).into()
}

/// The whole expansion of `#[prompt]`, callable in-process.
fn expand_prompt(
    args: proc_macro2::TokenStream,
    input: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    expand_with(input, |function| {
        prompt::check(args, function).map(|prompt| expand_prompt::prompt(function, &prompt))
    })
}

/// The whole expansion of `#[resource]`, callable in-process.
fn expand_resource(
    args: proc_macro2::TokenStream,
    input: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    expand_with(input, |function| {
        resource::check(args, function)
            .map(|resource| expand_resource::resource(function, &resource))
    })
}

/// The whole expansion, callable in-process (expansion snapshot tests use it).
fn expand_tool(
    args: proc_macro2::TokenStream,
    input: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    expand_with(input, |function| {
        valid::check(args, function).map(|tool| expand::tool(function, &tool))
    })
}

/// Parse the function and expand it, or emit it untouched beside the errors.
fn expand_with(
    input: proc_macro2::TokenStream,
    expand: impl FnOnce(&syn::ItemFn) -> syn::Result<proc_macro2::TokenStream>,
) -> proc_macro2::TokenStream {
    let function: syn::ItemFn = match syn::parse2(input.clone()) {
        Ok(function) => function,
        Err(err) => return fallback::emit(input, err),
    };
    expand(&function).unwrap_or_else(|err| fallback::emit(input, err))
}
