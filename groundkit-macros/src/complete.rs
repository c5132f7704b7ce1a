//! Expansion of `complete(argument = completer, ...)`, shared by resources and prompts: one
//! type-erased wrapper per completer, spanned at the completer's path so that a function of the
//! wrong shape is an error there, and the `&[Completer]` slice of the spec.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use crate::attr::Completer;

/// The wrappers (items to place inside the spec's const block) and the slice expression.
pub fn expand(
    private: &TokenStream,
    context: &Type,
    completers: &[Completer],
) -> (TokenStream, TokenStream) {
    let mut wrappers = TokenStream::new();
    let mut entries = Vec::new();
    for (i, completer) in completers.iter().enumerate() {
        let wrapper = format_ident!("__groundkit_complete_{i}");
        let function = &completer.function;
        let argument = completer.argument.to_string();
        let call = quote_spanned! {function.span()=>
            #private::CompleterReturn::into_values(#function(context, completion).await)
        };
        wrappers.extend(quote! {
            fn #wrapper<'a>(
                context: &'a #private::ErasedContext,
                completion: #private::Completion,
                _call: #private::RequestContext,
            ) -> #private::BoxFuture<
                'a,
                #private::core::result::Result<
                    #private::std::vec::Vec<#private::std::string::String>,
                    #private::Error,
                >,
            > {
                #private::std::boxed::Box::pin(async move {
                    let context = #private::downcast_context::<#context>(context)?;
                    #call
                })
            }
        });
        entries.push(quote! {
            #private::Completer { argument: #argument, handler: #wrapper }
        });
    }
    (wrappers, quote!(&[#(#entries),*]))
}
