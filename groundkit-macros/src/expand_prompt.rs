//! Expansion of a validated prompt: the function unchanged, one const `PromptSpec` in the
//! registry's prompt slice, and compile-time assertions spanned at the user's code (each
//! completed argument read as a field of the argument type, spanned at its name, so an argument
//! without its field is a compile error there).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::prompt::Prompt;

pub fn prompt(function: &ItemFn, prompt: &Prompt<'_>) -> TokenStream {
    let krate = &prompt.krate;
    let private = quote!(#krate::__private);
    let ident = &function.sig.ident;
    let spec_ident = format_ident!(
        "__GROUNDKIT_PROMPT_{}",
        ident.unraw().to_string().to_uppercase()
    );
    let Prompt {
        name,
        summary,
        description,
        context,
        output,
        ..
    } = prompt;
    let optional = |value: &Option<String>| match value {
        Some(value) => quote!(#private::core::option::Option::Some(#value)),
        None => quote!(#private::core::option::Option::None),
    };
    let title = optional(&prompt.title);
    let icon = optional(&prompt.icon);
    let path = format!("/prompts/{name}");
    let (call_check, call_arg) = crate::expand::call_context(&private, prompt.call_context);
    let (completer_fns, completers) =
        crate::complete::expand(&private, context, &prompt.completers);

    let context_check = quote_spanned! {context.span()=>
        #private::assert_context::<#context>();
    };
    let output_check = quote_spanned! {output.span()=>
        #private::assert_prompt_return::<#output>();
    };
    let (checks, get, arguments_schema) = match prompt.arguments {
        Some(arguments) => {
            let arguments_check = quote_spanned! {arguments.span()=>
                #private::assert_request::<#arguments>();
            };
            let field_checks = prompt.completers.iter().map(|completer| {
                let field = &completer.argument;
                quote_spanned! {field.span()=> let _ = &arguments.#field; }
            });
            let checks = quote! {
                #[allow(dead_code)]
                fn __groundkit_checks(arguments: &#arguments) {
                    #context_check
                    #arguments_check
                    #output_check
                    #call_check
                    #(#field_checks)*
                }
            };
            let get = quote_spanned! {function.sig.span()=>
                let arguments = #private::parse_arguments::<#arguments>(arguments)?;
                #private::PromptReturn::into_messages(#ident(context, arguments #call_arg).await)
            };
            (checks, get, quote!(#private::input_schema::<#arguments>))
        }
        None => {
            let checks = quote! {
                #[allow(dead_code)]
                fn __groundkit_checks() {
                    #context_check
                    #output_check
                    #call_check
                }
            };
            let get = quote_spanned! {function.sig.span()=>
                let _ = arguments;
                #private::PromptReturn::into_messages(#ident(context #call_arg).await)
            };
            (checks, get, quote!(#private::no_params_schema))
        }
    };

    quote! {
        #function

        #[doc(hidden)]
        #[#private::linkme::distributed_slice(#private::PROMPTS)]
        #[linkme(crate = #private::linkme)]
        static #spec_ident: #private::PromptSpec = {
            #checks

            #[allow(unused_variables)]
            fn __groundkit_handler<'a>(
                context: &'a #private::ErasedContext,
                arguments: #private::serde_json::Value,
                call: #private::RequestContext,
            ) -> #private::BoxFuture<
                'a,
                #private::core::result::Result<
                    #private::std::vec::Vec<#private::Message>,
                    #private::Error,
                >,
            > {
                #private::std::boxed::Box::pin(async move {
                    let context = #private::downcast_context::<#context>(context)?;
                    #get
                })
            }

            #completer_fns

            #private::PromptSpec::new::<#private::ReadOnly>(#private::PromptParts {
                name: #name,
                title: #title,
                icon: #icon,
                summary: #summary,
                description: #description,
                route: #private::RestRoute {
                    method: #private::HttpMethod::Post,
                    path: #path,
                    params: &[],
                },
                context: #private::type_id::<#context>,
                context_name: #private::core::any::type_name::<#context>,
                arguments_schema: #arguments_schema,
                completers: #completers,
                handler: __groundkit_handler,
            })
        };
    }
}
