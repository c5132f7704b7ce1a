//! Every rule a prompt declaration must follow, checked together so all violations are
//! reported: the rules it shares with tools ([`valid::common`]), and completers only when it has
//! arguments to complete. Whether each completed argument is a field of the argument type is
//! left to the compiler: expansion reads the field, spanned at the argument's name.

use proc_macro2::TokenStream;
use syn::{ItemFn, Path, Type};

use crate::ast::Function;
use crate::attr::{self, Attrs, Completer, Kind};
use crate::ctxt::Ctxt;
use crate::valid;

/// A declaration that passed every rule.
pub struct Prompt<'a> {
    pub name: String,
    pub title: Option<String>,
    pub icon: Option<String>,
    pub summary: String,
    pub description: String,
    pub krate: Path,
    pub context: &'a Type,
    /// The argument type; `None` for a prompt without arguments.
    pub arguments: Option<&'a Type>,
    pub output: &'a Type,
    pub completers: Vec<Completer>,
    pub call_context: Option<&'a Type>,
}

pub fn check(args: TokenStream, item: &ItemFn) -> syn::Result<Prompt<'_>> {
    let cx = Ctxt::new();
    let attrs = attr::parse(args, Kind::Prompt, &cx);
    let function = Function::from_item(item, Kind::Prompt, &cx);
    let prompt = validate(&attrs, &function, &cx);
    cx.check()?;
    Ok(prompt.expect("a prompt is built whenever no error was recorded"))
}

fn validate<'a>(attrs: &Attrs, function: &Function<'a>, cx: &Ctxt) -> Option<Prompt<'a>> {
    valid::require_read_only(attrs, function, Kind::Prompt, cx);
    if !function.takes_request {
        for completer in &attrs.complete {
            cx.error_spanned_by(
                &completer.argument,
                format!(
                    "this prompt takes no arguments, so `{}` has nothing to complete",
                    completer.argument
                ),
            );
        }
    }
    let common = valid::common(attrs, function, Kind::Prompt, cx)?;
    if common.name.chars().all(|c| c == '.') {
        cx.error_spanned_by(
            &function.item.sig.ident,
            "a prompt name cannot be only dots: it is a segment of its REST path",
        );
    }
    Some(Prompt {
        name: common.name,
        title: common.title,
        icon: common.icon,
        summary: common.summary,
        description: common.description,
        krate: common.krate,
        context: function.context?,
        arguments: function.request,
        output: function.output?,
        completers: attrs.complete.clone(),
        call_context: function.call_context,
    })
}
