//! What an expansion that failed still emits: the user's function, untouched, and the errors.
//!
//! Keeping the function means one clear error per problem instead of a cascade of "cannot find
//! function" errors at every call site, and IDEs keep completing it.

use proc_macro2::TokenStream;
use quote::quote;

pub fn emit(input: TokenStream, err: syn::Error) -> TokenStream {
    let errors = err.to_compile_error();
    quote! {
        #errors
        #input
    }
}
