//! The `#[tool]` attribute of groundkit.
//!
//! This crate is a thin shim over three stages, each in its own module: `attr` and `ast`
//! parse the attribute and the function into a typed view that keeps the original syntax nodes
//! for spans, `valid` checks every rule and collects all violations, and `expand` emits the
//! function unchanged plus one const `ToolSpec` in the registry's link-time slice. On any error,
//! `fallback` emits the user's function untouched beside the `compile_error!`s, so the user
//! sees every problem at once and the function stays callable for tooling.

mod ast;
mod attr;
mod ctxt;
mod expand;
mod fallback;
mod valid;

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
/// optionally `name = "..."`, `title = "..."`, `crate = path` (where `groundkit_core` is, when
/// renamed). The doc comment is required: its first sentence is the summary, the whole of it
/// the description MCP clients show.
///
/// A complete program, one tool served over REST and MCP (the same program is in the
/// workspace README, where `cargo test` compiles it):
///
/// ```ignore
/// use std::collections::BTreeMap;
/// use std::process::ExitCode;
///
/// use clap::Parser;
/// use garde::Validate;
/// use groundkit_core::openapi::ApiInfo;
/// use groundkit_core::{Error, tool};
/// use groundkit_server::Limits;
/// use groundkit_server::serve::{ServeArgs, run_tools};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// /// Shared state, built once at start and handed to every call.
/// pub struct Library {
///     books: BTreeMap<String, Book>,
/// }
///
/// impl Library {
///     fn find(&self, id: &str) -> Option<Book> {
///         self.books.get(id).cloned()
///     }
/// }
///
/// /// Which book to look up.
/// #[derive(Deserialize, JsonSchema, Validate)]
/// #[serde(deny_unknown_fields)]
/// pub struct LookupRequest {
///     /// Catalogue number.
///     #[garde(length(min = 1, max = 32))]
///     pub id: String,
/// }
///
/// /// A book in the catalogue.
/// #[derive(Clone, Serialize, JsonSchema)]
/// pub struct Book {
///     /// Catalogue number.
///     pub id: String,
///     /// Title.
///     pub title: String,
/// }
///
/// /// Look a book up by catalogue number.
/// #[tool(read_only, rest = "GET /books/{id}")]
/// pub async fn lookup(library: &Library, request: LookupRequest) -> Result<Book, Error> {
///     library.find(&request.id).ok_or(Error::NotFound { resource: "book", id: request.id })
/// }
///
/// /// `--port`, `--stdio` and the other serving flags every groundkit binary takes.
/// #[derive(Parser)]
/// struct Cli {
///     #[command(flatten)]
///     serve: ServeArgs,
/// }
///
/// fn main() -> ExitCode {
///     let cli = Cli::parse();
///     groundkit_server::logging::init();
///     let book = Book { id: "b1".into(), title: "Middlemarch".into() };
///     let library = Library { books: BTreeMap::from([(book.id.clone(), book)]) };
///     let info = ApiInfo { title: "library".into(), version: "0.1.0".into() };
///     run_tools(library, info, Limits::default(), &cli.serve)
/// }
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_tool(args.into(), input.into()).into()
}

/// The whole expansion, callable in-process (expansion snapshot tests use it).
fn expand_tool(
    args: proc_macro2::TokenStream,
    input: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let function: syn::ItemFn = match syn::parse2(input.clone()) {
        Ok(function) => function,
        Err(err) => return fallback::emit(input, err),
    };
    match valid::check(args, &function) {
        Ok(tool) => expand::tool(&function, &tool),
        Err(err) => fallback::emit(input, err),
    }
}
