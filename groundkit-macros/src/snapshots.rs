//! Expansion snapshots: the expansion function called in-process on fixed inputs, formatted with
//! prettyplease, and compared with the checked-in files in this crate's `tests/expand/`. A change
//! to what `#[tool]` emits shows up there as a diff to review. Regenerate with
//! `GROUNDKIT_BLESS=1 cargo test -p groundkit-macros`.

use std::path::PathBuf;

use quote::quote;

use crate::expand_tool;

fn check(name: &str, args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) {
    let expanded = expand_tool(args, item);
    let file: syn::File = syn::parse2(expanded).expect("expansion parses as a file");
    let rendered = prettyplease::unparse(&file);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expand")
        .join(format!("{name}.expanded.rs"));
    if std::env::var_os("GROUNDKIT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &rendered).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing {}; run with GROUNDKIT_BLESS=1", path.display()));
    assert_eq!(
        rendered, expected,
        "expansion of {name} changed; review and re-bless"
    );
}

#[test]
fn get_tool_with_path_parameters() {
    check(
        "get_with_path_params",
        quote!(
            read_only,
            rest = "GET /greetings/{language}/{name}",
            title = "Greet someone"
        ),
        quote! {
            /// Greet someone by name.
            ///
            /// In one of the server's languages.
            pub async fn greet(ctx: &HelloContext, request: GreetRequest) -> Result<Greeting, Error> {
                ctx.greet(request)
            }
        },
    );
}

#[test]
fn post_tool_renamed_through_a_crate_path() {
    check(
        "post_renamed_crate_path",
        quote!(
            read_only,
            rest = "POST /text/stats",
            name = "stats",
            crate = ::my_framework::gk
        ),
        quote! {
            /// Count words.
            async fn text_stats(_ctx: &Ctx, request: StatsRequest) -> Result<Stats, MyError> {
                Ok(Stats::of(&request.text))
            }
        },
    );
}

#[test]
fn raw_identifier_is_named_without_its_prefix() {
    check(
        "raw_identifier",
        quote!(read_only, rest = "POST /match"),
        quote! {
            /// Whether a pattern occurs in a text.
            pub async fn r#match(ctx: &Ctx, request: MatchRequest) -> Result<Found, Error> {
                ctx.find(&request.pattern, &request.text)
            }
        },
    );
}

#[test]
fn invalid_declaration_keeps_the_function_beside_its_errors() {
    check(
        "invalid_keeps_function",
        quote!(mutating, rest = "DELETE /things/{id}"),
        quote! {
            async fn delete(ctx: &Ctx, request: Req) -> Result<Resp, Error> {
                ctx.delete(request.id)
            }
        },
    );
}
