//! The typed view of a tool, resource or prompt function: its context, request (or parameters) and
//! return types, and its docs.

use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

use crate::attr::Kind;
use crate::ctxt::Ctxt;

/// The parts of `async fn name(ctx: &Ctx, request: Req) -> Ret` that expansion needs. A
/// resource or prompt may take its context alone (`async fn name(ctx: &Ctx) -> Ret`): `request`
/// is then `None` and `takes_request` false. Any of them may take a last argument of type
/// `RequestContext` (`call_context`), which is not counted among the others.
pub struct Function<'a> {
    pub item: &'a ItemFn,
    pub context: Option<&'a Type>,
    pub request: Option<&'a Type>,
    pub takes_request: bool,
    pub call_context: Option<&'a Type>,
    pub output: Option<&'a Type>,
    pub docs: Option<String>,
}

impl<'a> Function<'a> {
    pub fn from_item(item: &'a ItemFn, kind: Kind, cx: &Ctxt) -> Self {
        let sig = &item.sig;
        let noun = kind.noun();
        if sig.asyncness.is_none() {
            cx.error_spanned_by(sig.fn_token, format!("a {noun} must be an `async fn`"));
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            cx.error_spanned_by(
                &sig.generics,
                format!(
                    "a {noun} cannot be generic: its schemas and route are fixed when it is declared"
                ),
            );
        }
        if let Some(variadic) = &sig.variadic {
            cx.error_spanned_by(variadic, format!("a {noun} cannot be variadic"));
        }
        let typed: Vec<&syn::PatType> = sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                FnArg::Typed(typed) => Some(typed),
                FnArg::Receiver(receiver) => {
                    cx.error_spanned_by(
                        receiver,
                        format!("a {noun} is a free function; it cannot take `self`"),
                    );
                    None
                }
            })
            .collect();
        let mut typed = typed;
        let call_context = typed
            .last()
            .filter(|last| names_request_context(&last.ty))
            .map(|last| &*last.ty);
        if call_context.is_some() {
            typed.pop();
        }
        let inputs = sig.inputs.len() - usize::from(call_context.is_some());
        let (mut context, mut request) = (None, None);
        let arities: &[usize] = match kind {
            Kind::Tool => &[2],
            Kind::Resource | Kind::Prompt => &[1, 2],
        };
        if !arities.contains(&inputs) {
            let message = match kind {
                Kind::Tool => {
                    "a tool takes exactly two arguments: `(ctx: &Context, request: Request)`"
                }
                Kind::Resource => {
                    "a resource takes its context and, when its URI has variables, its parameters: \
                     `(ctx: &Context)` or `(ctx: &Context, params: Params)`"
                }
                Kind::Prompt => {
                    "a prompt takes its context and, when it has arguments, its argument type: \
                     `(ctx: &Context)` or `(ctx: &Context, args: Args)`"
                }
            };
            cx.error_spanned_by(&sig.inputs, message);
        } else if typed.len() == inputs {
            context = match &*typed[0].ty {
                Type::Reference(reference) if reference.mutability.is_none() => {
                    reject_lifetime(reference, noun, cx);
                    Some(&*reference.elem)
                }
                other => {
                    cx.error_spanned_by(
                        other,
                        format!(
                            "the first argument of a {noun} is its shared context, taken as `&Context`"
                        ),
                    );
                    None
                }
            };
            request = match typed.get(1).map(|t| &*t.ty) {
                Some(Type::Reference(reference)) => {
                    let what = match kind {
                        Kind::Tool => "request",
                        Kind::Resource => "parameters",
                        Kind::Prompt => "arguments",
                    };
                    cx.error_spanned_by(
                        reference,
                        format!("the second argument of a {noun} is its {what}, taken by value"),
                    );
                    None
                }
                other => other,
            };
            for typed in &typed {
                if !matches!(&*typed.pat, Pat::Ident(_) | Pat::Wild(_)) {
                    cx.error_spanned_by(
                        &typed.pat,
                        format!("{noun} arguments must be plain names"),
                    );
                }
            }
        }
        let output = match &sig.output {
            ReturnType::Type(_, ty) => Some(&**ty),
            ReturnType::Default => {
                let message = match kind {
                    Kind::Tool => "a tool must return `Result<Response, Error>`",
                    Kind::Resource => {
                        "a resource must return `Result<groundkit_core::Content, Error>`"
                    }
                    Kind::Prompt => {
                        "a prompt must return `Result<Vec<groundkit_core::Message>, Error>`"
                    }
                };
                cx.error_spanned_by(&sig.ident, message);
                None
            }
        };
        Function {
            item,
            context,
            request,
            takes_request: inputs == 2,
            call_context,
            output,
            docs: docs(item),
        }
    }
}

/// Whether `ty` is spelled as the request context, `RequestContext` by value at the end of
/// some path; expansion asserts it is `groundkit_core::RequestContext` itself.
fn names_request_context(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "RequestContext"),
        _ => false,
    }
}

fn reject_lifetime(reference: &syn::TypeReference, noun: &str, cx: &Ctxt) {
    if let Some(lifetime) = &reference.lifetime {
        cx.error_spanned_by(
            lifetime,
            format!("the context reference of a {noun} cannot name a lifetime"),
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
