//! The typed view of a tool function: its context, request and return types, and its docs.

use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

use crate::ctxt::Ctxt;

/// The parts of `async fn name(ctx: &Ctx, request: Req) -> Ret` that expansion needs.
pub struct Function<'a> {
    pub item: &'a ItemFn,
    pub context: Option<&'a Type>,
    pub request: Option<&'a Type>,
    pub output: Option<&'a Type>,
    pub docs: Option<String>,
}

impl<'a> Function<'a> {
    pub fn from_item(item: &'a ItemFn, cx: &Ctxt) -> Self {
        let sig = &item.sig;
        if sig.asyncness.is_none() {
            cx.error_spanned_by(sig.fn_token, "a tool must be an `async fn`");
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            cx.error_spanned_by(
                &sig.generics,
                "a tool cannot be generic: its schemas and route are fixed when it is declared",
            );
        }
        if let Some(variadic) = &sig.variadic {
            cx.error_spanned_by(variadic, "a tool cannot be variadic");
        }
        let typed: Vec<&syn::PatType> = sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                FnArg::Typed(typed) => Some(typed),
                FnArg::Receiver(receiver) => {
                    cx.error_spanned_by(
                        receiver,
                        "a tool is a free function; it cannot take `self`",
                    );
                    None
                }
            })
            .collect();
        let (mut context, mut request) = (None, None);
        if sig.inputs.len() != 2 {
            cx.error_spanned_by(
                &sig.inputs,
                "a tool takes exactly two arguments: `(ctx: &Context, request: Request)`",
            );
        } else if typed.len() == 2 {
            context = match &*typed[0].ty {
                Type::Reference(reference) if reference.mutability.is_none() => {
                    reject_lifetime(reference, cx);
                    Some(&*reference.elem)
                }
                other => {
                    cx.error_spanned_by(
                        other,
                        "the first argument of a tool is its shared context, taken as `&Context`",
                    );
                    None
                }
            };
            request = match &*typed[1].ty {
                Type::Reference(reference) => {
                    cx.error_spanned_by(
                        reference,
                        "the second argument of a tool is its request, taken by value",
                    );
                    None
                }
                other => Some(other),
            };
            for typed in &typed {
                if !matches!(&*typed.pat, Pat::Ident(_) | Pat::Wild(_)) {
                    cx.error_spanned_by(&typed.pat, "tool arguments must be plain names");
                }
            }
        }
        let output = match &sig.output {
            ReturnType::Type(_, ty) => Some(&**ty),
            ReturnType::Default => {
                cx.error_spanned_by(&sig.ident, "a tool must return `Result<Response, Error>`");
                None
            }
        };
        Function {
            item,
            context,
            request,
            output,
            docs: docs(item),
        }
    }
}

fn reject_lifetime(reference: &syn::TypeReference, cx: &Ctxt) {
    if let Some(lifetime) = &reference.lifetime {
        cx.error_spanned_by(
            lifetime,
            "the context reference of a tool cannot name a lifetime",
        );
    }
}

/// The doc comment, one line per `#[doc]`, with the conventional leading space removed.
fn docs(item: &ItemFn) -> Option<String> {
    let lines: Vec<String> = item
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value:
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(lit),
                        ..
                    }),
                ..
            }) => Some(lit.value()),
            _ => None,
        })
        .flat_map(|doc| {
            doc.split('\n')
                .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
