//! Expansion of a validated tool: the function unchanged, one const `ToolSpec` in the registry
//! slice, and compile-time assertions spanned at the user's code.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{ItemFn, Type};

use crate::valid::{Method, Tool};

/// A function's `RequestContext` argument, when it takes one: the compile-time check that the
/// type is groundkit's (spanned at it), and the argument expansion passes (`, call`, or nothing).
pub fn call_context(private: &TokenStream, ty: Option<&Type>) -> (TokenStream, TokenStream) {
    match ty {
        Some(ty) => (
            quote_spanned! {ty.span()=> #private::assert_request_context::<#ty>(); },
            quote!(, call),
        ),
        None => (TokenStream::new(), TokenStream::new()),
    }
}

pub fn tool(function: &ItemFn, tool: &Tool<'_>) -> TokenStream {
    let krate = &tool.krate;
    let private = quote!(#krate::__private);
    let ident = &function.sig.ident;
    let spec_ident = format_ident!(
        "__GROUNDKIT_TOOL_{}",
        ident.unraw().to_string().to_uppercase()
    );
    let Tool {
        name,
        summary,
        description,
        path,
        context,
        request,
        output,
        ..
    } = tool;
    let title = match &tool.title {
        Some(title) => quote!(#private::core::option::Option::Some(#title)),
        None => quote!(#private::core::option::Option::None),
    };
    let icon = match &tool.icon {
        Some(icon) => quote!(#private::core::option::Option::Some(#icon)),
        None => quote!(#private::core::option::Option::None),
    };
    let method = match tool.method {
        Method::Get => quote!(#private::HttpMethod::Get),
        Method::Post => quote!(#private::HttpMethod::Post),
    };
    let params = &tool.params;

    // Type-level rules, spanned at the user's types so the diagnostics land there.
    let context_check = quote_spanned! {context.span()=>
        #private::assert_context::<#context>();
    };
    let request_check = quote_spanned! {request.span()=>
        #private::assert_request::<#request>();
    };
    let output_check = quote_spanned! {output.span()=>
        #private::assert_return::<#output>();
    };
    let param_checks = params.iter().map(|param| {
        let field = syn::Ident::new(param, tool.rest.span());
        quote_spanned! {tool.rest.span()=> #private::path_param(&request.#field); }
    });
    let (call_check, call_arg) = call_context(&private, tool.call_context);
    let call = quote_spanned! {function.sig.span()=>
        #private::std::boxed::Box::pin(async move {
            let context = #private::downcast_context::<#context>(context)?;
            let request = #private::parse_arguments::<#request>(arguments)?;
            let response = #private::ToolReturn::into_result(#ident(context, request #call_arg).await)?;
            #private::to_output(&response)
        })
    };

    quote! {
        #function

        #[doc(hidden)]
        #[#private::linkme::distributed_slice(#private::TOOLS)]
        #[linkme(crate = #private::linkme)]
        static #spec_ident: #private::ToolSpec = {
            #[allow(dead_code, clippy::needless_borrow)]
            fn __groundkit_checks(request: &#request) {
                #context_check
                #request_check
                #output_check
                #call_check
                #(#param_checks)*
            }

            #[allow(unused_variables)]
            fn __groundkit_handler<'a>(
                context: &'a #private::ErasedContext,
                arguments: #private::serde_json::Value,
                call: #private::RequestContext,
            ) -> #private::BoxFuture<
                'a,
                #private::core::result::Result<#private::serde_json::Value, #private::Error>,
            > {
                #call
            }

            #private::ToolSpec::new::<#private::ReadOnly>(#private::ToolParts {
                name: #name,
                title: #title,
                icon: #icon,
                summary: #summary,
                description: #description,
                route: #private::RestRoute {
                    method: #method,
                    path: #path,
                    params: &[#(#params),*],
                },
                context: #private::type_id::<#context>,
                context_name: #private::core::any::type_name::<#context>,
                input_schema: #private::input_schema::<#request>,
                output_schema: #private::output_schema::<<#output as #private::ToolReturn>::Response>,
                handler: __groundkit_handler,
            })
        };
    }
}
