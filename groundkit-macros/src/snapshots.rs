//! Expansion snapshots: the expansion function called in-process on fixed inputs, formatted with
//! prettyplease, and compared with the checked-in files in this crate's `tests/expand/`. A change
//! to what `#[tool]` or `#[resource]` emits shows up there as a diff to review. One snapshot per
//! accepted form (each key, each route shape, each signature and doc shape; a static resource, a
//! template, a resource's optional keys and completers; a prompt without and with arguments,
//! with completers, and its optional keys), each otherwise minimal, so a diff names the form it
//! concerns. Regenerate with `GROUNDKIT_BLESS=1 cargo test -p groundkit-macros`.

use std::path::PathBuf;

use quote::quote;

use crate::{expand_prompt, expand_resource, expand_tool};

fn check(name: &str, args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) {
    compare(name, expand_tool(args, item));
}

fn check_resource(name: &str, args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) {
    compare(name, expand_resource(args, item));
}

fn check_prompt(name: &str, args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) {
    compare(name, expand_prompt(args, item));
}

fn compare(name: &str, expanded: proc_macro2::TokenStream) {
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

/// The function most snapshots declare, under the given doc comment.
fn text_stats(docs: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    quote! {
        #docs
        pub async fn text_stats(ctx: &Ctx, request: StatsRequest) -> Result<Stats, Error> {
            ctx.stats(&request.text)
        }
    }
}

#[test]
fn post_route() {
    check(
        "post",
        quote!(read_only, rest = "POST /text/stats"),
        text_stats(quote! {
            /// Count the words of a text.
        }),
    );
}

#[test]
fn get_route_without_path_parameters() {
    check(
        "get_without_params",
        quote!(read_only, rest = "GET /languages"),
        quote! {
            /// List the languages the server can greet in.
            pub async fn languages(ctx: &Ctx, _request: NoArguments) -> Result<Languages, Error> {
                Ok(ctx.languages())
            }
        },
    );
}

#[test]
fn get_route_with_path_parameters() {
    check(
        "get_with_path_params",
        quote!(read_only, rest = "GET /greetings/{language}/{name}"),
        quote! {
            /// Greet someone by name.
            pub async fn greet(ctx: &Ctx, request: GreetRequest) -> Result<Greeting, Error> {
                ctx.greet(request)
            }
        },
    );
}

#[test]
fn name_overrides_the_function_name() {
    check(
        "name_override",
        quote!(read_only, rest = "POST /text/stats", name = "stats"),
        text_stats(quote! {
            /// Count the words of a text.
        }),
    );
}

#[test]
fn title_is_carried_into_the_spec() {
    check(
        "title",
        quote!(
            read_only,
            rest = "POST /text/stats",
            title = "Text statistics"
        ),
        text_stats(quote! {
            /// Count the words of a text.
        }),
    );
}

#[test]
fn icon_is_carried_into_the_spec() {
    check(
        "icon",
        quote!(
            read_only,
            rest = "POST /text/stats",
            icon = "https://example.com/stats.svg"
        ),
        text_stats(quote! {
            /// Count the words of a text.
        }),
    );
}

#[test]
fn crate_path_replaces_groundkit_core_everywhere() {
    check(
        "crate_path",
        quote!(
            read_only,
            rest = "POST /text/stats",
            crate = ::my_framework::gk
        ),
        text_stats(quote! {
            /// Count the words of a text.
        }),
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
fn context_argument_without_a_name() {
    check(
        "unnamed_context",
        quote!(read_only, rest = "POST /echo"),
        quote! {
            /// Echo the text back.
            pub async fn echo(_: &Ctx, request: EchoRequest) -> Result<Echo, Error> {
                Ok(Echo { text: request.text })
            }
        },
    );
}

#[test]
fn doc_of_one_paragraph_on_several_lines() {
    check(
        "doc_one_paragraph",
        quote!(read_only, rest = "POST /text/stats"),
        text_stats(quote! {
            /// Count the words of a text,
            /// split on whitespace. Punctuation counts as part of a word.
        }),
    );
}

#[test]
fn doc_of_several_paragraphs() {
    check(
        "doc_several_paragraphs",
        quote!(read_only, rest = "POST /text/stats"),
        text_stats(quote! {
            /// Count the words of a text. Punctuation counts as part of a word.
            ///
            /// Whitespace is Unicode's: a non-breaking space separates words.
            ///
            /// The counts are of the text as sent, before any normalisation.
        }),
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

#[test]
fn static_resource_takes_its_context_alone() {
    check_resource(
        "resource_static",
        quote!(
            read_only,
            uri = "hello://languages",
            mime_type = "text/plain"
        ),
        quote! {
            /// The languages, one a line.
            pub async fn languages(ctx: &Ctx) -> Result<Content, Error> {
                Ok(Content::Text(ctx.languages()))
            }
        },
    );
}

#[test]
fn resource_template_takes_its_variables_as_parameters() {
    check_resource(
        "resource_template",
        quote!(
            read_only,
            uri = "grk://{collection}/chunks/{chunk_id}",
            mime_type = "application/json"
        ),
        quote! {
            /// A verified chunk.
            pub async fn chunk(ctx: &Ctx, params: ChunkParams) -> Result<Content, Error> {
                Content::json(&ctx.chunk(params)?)
            }
        },
    );
}

#[test]
fn resource_name_title_and_crate_path() {
    check_resource(
        "resource_keys",
        quote!(
            read_only,
            uri = "docs://{name}",
            mime_type = "text/markdown",
            name = "document",
            title = "A document",
            crate = ::my_framework::gk
        ),
        quote! {
            /// A document by name.
            pub async fn doc(ctx: &Ctx, params: DocParams) -> Result<Content, Error> {
                ctx.doc(&params.name)
            }
        },
    );
}

#[test]
fn resource_template_with_a_completer() {
    check_resource(
        "resource_completer",
        quote!(
            read_only,
            uri = "grk://{collection}/status",
            mime_type = "application/json",
            complete(collection = collection_names)
        ),
        quote! {
            /// A collection's status.
            pub async fn status(ctx: &Ctx, params: StatusParams) -> Result<Content, Error> {
                Content::json(&ctx.status(params)?)
            }
        },
    );
}

#[test]
fn prompt_without_arguments() {
    check_prompt(
        "prompt_static",
        quote!(read_only),
        quote! {
            /// Say hello.
            pub async fn hello(ctx: &Ctx) -> Result<Vec<Message>, Error> {
                Ok(vec![Message::user(ctx.hello())])
            }
        },
    );
}

#[test]
fn prompt_with_arguments_and_completers() {
    check_prompt(
        "prompt_arguments",
        quote!(
            read_only,
            complete(collection = collection_names, language = languages)
        ),
        quote! {
            /// Answer from cited chunks.
            pub async fn grounded_answer(ctx: &Ctx, arguments: AnswerArguments) -> Result<Vec<Message>, Error> {
                ctx.answer(arguments).await
            }
        },
    );
}

#[test]
fn prompt_name_title_icon_and_crate_path() {
    check_prompt(
        "prompt_keys",
        quote!(
            read_only,
            name = "card",
            title = "A card",
            icon = "https://example.com/card.png",
            crate = ::my_framework::gk
        ),
        quote! {
            /// Write a card.
            pub async fn greeting_card(ctx: &Ctx, arguments: CardArguments) -> Result<Vec<Message>, Error> {
                ctx.card(arguments)
            }
        },
    );
}

#[test]
fn tool_taking_the_request_context() {
    check(
        "request_context",
        quote!(read_only, rest = "POST /text/stats"),
        quote! {
            /// Count the words of a text.
            pub async fn text_stats(ctx: &Ctx, request: StatsRequest, call: RequestContext) -> Result<Stats, Error> {
                ctx.stats(&request.text, call.deadline())
            }
        },
    );
}
