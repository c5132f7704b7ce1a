//! Expansion of a validated resource: the function unchanged, one const `ResourceSpec` in the
//! registry's resource slice, and compile-time assertions spanned at the user's code (each URI
//! variable read as a `String` field of the parameter type, spanned at the URI, so a variable
//! without its field is a compile error there).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::resource::Resource;
use crate::uri::Segment;

pub fn resource(function: &ItemFn, resource: &Resource<'_>) -> TokenStream {
    let krate = &resource.krate;
    let private = quote!(#krate::__private);
    let ident = &function.sig.ident;
    let spec_ident = format_ident!(
        "__GROUNDKIT_RESOURCE_{}",
        ident.unraw().to_string().to_uppercase()
    );
    let Resource {
        name,
        summary,
        description,
        mime_type,
        context,
        output,
        template,
        ..
    } = resource;
    let title = match &resource.title {
        Some(title) => quote!(#private::core::option::Option::Some(#title)),
        None => quote!(#private::core::option::Option::None),
    };
    let icon = match &resource.icon {
        Some(icon) => quote!(#private::core::option::Option::Some(#icon)),
        None => quote!(#private::core::option::Option::None),
    };
    let uri_text = resource.uri.value();
    let scheme = &template.scheme;
    let segments = template.segments.iter().map(|segment| match segment {
        Segment::Literal(literal) => quote!(#private::Segment::Literal(#literal)),
        Segment::Var(var) => quote!(#private::Segment::Var(#var)),
    });
    let variables = template.variables();
    let path = template.rest_path();
    let (call_check, call_arg) = crate::expand::call_context(&private, resource.call_context);
    let (completer_fns, completers) =
        crate::complete::expand(&private, context, &resource.completers);

    let context_check = quote_spanned! {context.span()=>
        #private::assert_context::<#context>();
    };
    let output_check = quote_spanned! {output.span()=>
        #private::assert_resource_return::<#output>();
    };
    let (checks, read, params_schema) = match resource.params {
        Some(params) => {
            let params_check = quote_spanned! {params.span()=>
                #private::assert_request::<#params>();
            };
            let field_checks = variables.iter().map(|var| {
                let field = syn::Ident::new(var, resource.uri.span());
                quote_spanned! {resource.uri.span()=> #private::path_param(&params.#field); }
            });
            let checks = quote! {
                #[allow(dead_code, clippy::needless_borrow)]
                fn __groundkit_checks(params: &#params) {
                    #context_check
                    #params_check
                    #output_check
                    #call_check
                    #(#field_checks)*
                }
            };
            let read = quote_spanned! {function.sig.span()=>
                let params = #private::parse_arguments::<#params>(arguments)?;
                #private::ResourceReturn::into_content(#ident(context, params #call_arg).await)
            };
            (checks, read, quote!(#private::input_schema::<#params>))
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
            let read = quote_spanned! {function.sig.span()=>
                let _ = arguments;
                #private::ResourceReturn::into_content(#ident(context #call_arg).await)
            };
            (checks, read, quote!(#private::no_params_schema))
        }
    };

    quote! {
        #function

        #[doc(hidden)]
        #[#private::linkme::distributed_slice(#private::RESOURCES)]
        #[linkme(crate = #private::linkme)]
        static #spec_ident: #private::ResourceSpec = {
            #checks

            #[allow(unused_variables)]
            fn __groundkit_handler<'a>(
                context: &'a #private::ErasedContext,
                arguments: #private::serde_json::Value,
                call: #private::RequestContext,
            ) -> #private::BoxFuture<
                'a,
                #private::core::result::Result<#private::Content, #private::Error>,
            > {
                #private::std::boxed::Box::pin(async move {
                    let context = #private::downcast_context::<#context>(context)?;
                    #read
                })
            }

            #completer_fns

            #private::ResourceSpec::new::<#private::ReadOnly>(#private::ResourceParts {
                name: #name,
                title: #title,
                icon: #icon,
                summary: #summary,
                description: #description,
                mime_type: #mime_type,
                uri: #private::UriTemplate {
                    template: #uri_text,
                    scheme: #scheme,
                    segments: &[#(#segments),*],
                },
                route: #private::RestRoute {
                    method: #private::HttpMethod::Get,
                    path: #path,
                    params: &[#(#variables),*],
                },
                context: #private::type_id::<#context>,
                context_name: #private::core::any::type_name::<#context>,
                params_schema: #params_schema,
                completers: #completers,
                handler: __groundkit_handler,
            })
        };
    }
}
